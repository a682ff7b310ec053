#pragma once
#include <memory>

#include "runtime/program.h"

namespace lockstep::cuda {

// The `cuda` target. Throws Error when NVRTC cannot be loaded; without a device the program
// still compiles (prepare(), sources()) and run() says why it cannot run.
std::unique_ptr<Program> compile_cuda(const Graph& g, const CompileOptions& opts);

}  // namespace lockstep::cuda
