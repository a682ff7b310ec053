// The CPU target: C++ with OpenMP loops over output elements; the last dim is processed in
// tiles of lanes so reductions keep one accumulator per lane and vectorise across lanes.
#pragma once
#include "codegen/c_printer.h"

namespace lockstep::codegen {

class CpuPrinter : public CPrinter {
 public:
  std::string kernel(const kir::Plan& p, const kir::Kernel& k) const override;
  std::string prelude() const override;
  // The kernel table and thread control that the runtime looks up with dlsym.
  std::string epilogue(const kir::Plan& p) const;
};

// Prelude + every kernel + epilogue: the translation unit the CPU backend compiles.
std::string cpu_program_source(const kir::Plan& p);

}  // namespace lockstep::codegen
