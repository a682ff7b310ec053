// The cpu target's compiler: generated C++ -> a shared object, with the system compiler run
// from an argument vector in a private temporary folder. The kernel cache (runtime/
// kernel_cache.h) keeps what it produces.
#pragma once
#include <string>
#include <vector>

#include "runtime/device.h"

namespace lockstep::cpu {

// Kernels per translation unit at least, below which a program is not split further.
inline constexpr size_t kPiecesPerUnit = 8;
// `source` (a HostPrinter program) as at most `most` translation units (see cpu_compiler.cpp).
std::vector<std::string> translation_units(const std::string& source, size_t most);

class SystemCompiler : public CodeCompiler {
 public:
  // Throws Error when no C++ compiler runs ($LOCKSTEP_CXX, else c++).
  SystemCompiler();
  std::string identity() override { return identity_; }
  std::string compile(const std::string& source) override;

 private:
  std::string identity_;
};

}  // namespace lockstep::cpu
