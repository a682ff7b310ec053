#pragma once
#include <memory>

#include "runtime/program.h"

namespace lockstep::cpu {

std::unique_ptr<Program> compile_cpu(const Graph& g, const CompileOptions& opts);

}  // namespace lockstep::cpu
