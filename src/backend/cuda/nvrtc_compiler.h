// CUDA source -> device code with NVRTC (no GPU needed). The kernel cache (runtime/
// kernel_cache.h) keeps what it produces, keyed by the source and NvrtcCompiler::identity().
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace lockstep::cuda {

struct DeviceCode {
  std::string image;  // cubin, or PTX (NUL-terminated) when NVRTC cannot target the architecture itself
  bool is_cubin = true;
  std::string arch;   // "sm_90", or "compute_90" for PTX
};

// NVRTC's options for compute capability `cc` (90 for sm_90): float code as the CPU's
// (no FMA contraction, IEEE division and square root, denormals kept).
std::vector<std::string> nvrtc_options(int cc, bool* cubin = nullptr);

// Compiles `source`; throws Error with NVRTC's log when it is rejected (a lockstep bug),
// or when NVRTC cannot be loaded.
DeviceCode nvrtc_compile(const std::string& source, int cc);

// NVRTC for compute capability `cc`: its options, NVRTC's version and `cc` are its identity.
class NvrtcCompiler : public CodeCompiler {
 public:
  explicit NvrtcCompiler(int cc) : cc_(cc) {}
  std::string identity() override;
  std::string compile(const std::string& source) override { return nvrtc_compile(source, cc_).image; }

 private:
  int cc_;
};

// Compute capability used to compile where there is no device: LOCKSTEP_CUDA_ARCH ("90"), else 90.
int default_compute_capability();

}  // namespace lockstep::cuda
