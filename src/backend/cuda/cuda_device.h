// The process's CUDA device: driver context, the limits launches are checked against, device
// allocations, and loaded modules (cached by content key, never by name).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/nvrtc_compiler.h"

namespace lockstep::cuda {

struct DeviceLimits {
  std::string name;  // "NVIDIA H200"
  int cc = 0;        // compute capability, 90 for sm_90
  int max_threads_per_block = 0, max_shared_per_block = 0, max_registers_per_block = 0;
  int max_grid_x = 0, multiprocessors = 0;
};

class StagingPool;

class Device {
 public:
  // Device 0, made current on this thread; null with `why` set when none can run kernels.
  static Device* get(std::string* why = nullptr);
  const Driver& api() const { return *api_; }
  const DeviceLimits& limits() const { return limits_; }
  void make_current() const;
  // The process-wide pool for this geometry: pinned memory and its ring outlive programs.
  StagingPool& staging(int slots, size_t slot_bytes);

 private:
  const Driver* api_ = nullptr;
  CUcontext ctx_ = nullptr;
  DeviceLimits limits_;
  std::vector<std::unique_ptr<StagingPool>> pools_;
};

// "" when `--target cuda` can run here, else why not (no driver, no device, no NVRTC).
std::string unavailable_reason();

// One device allocation, freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const Device& d, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  const Device* dev_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

struct LoadedModule {
  const Device* dev = nullptr;
  std::string key;
  CUmodule module = nullptr;
  std::vector<CUfunction> functions;  // in the order of the names asked for
  std::vector<long long> buffer_bytes;  // the module's own ls_buffer_bytes: the plan it was built for
  ~LoadedModule();
};

// Loads `code` and looks up `names`; a module already loaded for the same key is shared.
// Throws when the module was built for buffers other than `buffer_bytes` (a stale cache entry).
std::shared_ptr<LoadedModule> load_module(const Device& d, const DeviceCode& code, const std::vector<std::string>& names,
                                          const std::vector<long long>& buffer_bytes, bool use_cache);

}  // namespace lockstep::cuda
