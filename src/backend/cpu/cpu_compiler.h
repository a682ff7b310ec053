// The cpu target's compiler: generated C++ -> a shared object, with the system compiler run
// from an argument vector in a private temporary folder. The kernel cache (runtime/
// kernel_cache.h) keeps what it produces.
#pragma once
#include <string>
#include <vector>

#include "runtime/device.h"

namespace lockstep::cpu {

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
