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
// (no FMA contraction, IEEE division and square root, denormals kept); `split`: NVRTC's
// optimiser on every core.
std::vector<std::string> nvrtc_options(int cc, bool* cubin = nullptr, bool split = true);

// Compiles `source` as one NVRTC program; throws Error with NVRTC's log when it is rejected (a
// lockstep bug), or when NVRTC cannot be loaded.
DeviceCode nvrtc_compile(const std::string& source, int cc, bool split = true);

// Several device images as one string (what the kernel cache keeps), and back; unpack throws
// Error on anything pack did not write.
std::string pack_images(const std::vector<std::string>& images);
std::vector<std::string> unpack_images(const std::string& packed);
// The kernels (global functions) a cubin's symbol table or a PTX image's .entry lines name, so
// a loader asks each module only for its own; throws Error on a cubin it cannot read.
std::vector<std::string> entry_names(const std::string& image);

// NVRTC for compute capability `cc`: its options, NVRTC's version and `cc` are its identity.
// A program is compiled as translation units (codegen/units.h), one NVRTC program each, all at
// once: NVRTC translates PTX to machine code on one thread, most of a large program's time.
class NvrtcCompiler : public CodeCompiler {
 public:
  explicit NvrtcCompiler(int cc) : cc_(cc) {}
  std::string identity() override;
  // The units' images, packed.
  std::string compile(const std::string& source) override;

 private:
  int cc_;
};

// Compute capability used to compile where there is no device: LOCKSTEP_CUDA_ARCH ("90"), else 90.
int default_compute_capability();

}  // namespace lockstep::cuda
