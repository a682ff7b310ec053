// The old cpu code generation API, kept until the runtime calls cpu::program_source and
// cpu::source_files (backend/cpu/cpu_codegen.h); defined there. Plans without schedules are
// scheduled for the cpu on the fly.
#pragma once
#include <string>

#include "kernel/kernel.h"

namespace lockstep::codegen {

class CpuPrinter {
 public:
  std::string kernel(const kir::Plan& p, const kir::Kernel& k) const;
  std::string prelude() const;
  std::string epilogue(const kir::Plan& p) const;
};

std::string cpu_program_source(const kir::Plan& p);

}  // namespace lockstep::codegen
