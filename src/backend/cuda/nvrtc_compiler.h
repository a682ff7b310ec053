// CUDA source -> device code with NVRTC (no GPU needed), behind a cache keyed by the hash of
// source, options, NVRTC version and architecture: in memory, and on disk in
// $XDG_CACHE_HOME/lockstep/cuda (written atomically, checksummed, checked on load).
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace lockstep::cuda {

struct DeviceCode {
  std::string key;    // sha256 of everything that decides the bytes
  std::string image;  // cubin, or PTX when NVRTC cannot target the architecture itself
  bool is_cubin = true;
  std::string arch;   // "sm_90", or "compute_90" for PTX
};

// NVRTC's options for compute capability `cc` (90 for sm_90): float code as the CPU's
// (no FMA contraction, IEEE division and square root, denormals kept).
std::vector<std::string> nvrtc_options(int cc, bool* cubin = nullptr);

// Compiles `source`; throws Error with NVRTC's log when it is rejected (a lockstep bug),
// or when NVRTC cannot be loaded.
DeviceCode nvrtc_compile(const std::string& source, int cc);

// nvrtc_compile through the memory and disk caches (`use_cache` false: neither). `key_by_name`
// is the planted bug of --inject-fault cache-by-name: one slot for every program in the process.
std::shared_ptr<const DeviceCode> cached_device_code(const std::string& source, int cc, bool use_cache,
                                                     bool key_by_name = false);

// "$XDG_CACHE_HOME/lockstep/cuda" (or ~/.cache/lockstep/cuda).
std::string cuda_cache_dir();

// Compute capability used to compile where there is no device: LOCKSTEP_CUDA_ARCH ("90"), else 90.
int default_compute_capability();

}  // namespace lockstep::cuda
