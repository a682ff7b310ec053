// The process's CUDA GPU: driver context, the limits launches are checked against, and loaded
// modules (shared by content, never by name).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/cuda_api.h"
#include "kernel/kernel.h"

namespace lockstep::cuda {

struct DeviceLimits {
  std::string name;  // "NVIDIA H200"
  int cc = 0;        // compute capability, 90 for sm_90
  int max_threads_per_block = 0, max_shared_per_block = 0, max_registers_per_block = 0;
  int max_grid_x = 0, multiprocessors = 0;
};

class Gpu {
 public:
  // GPU 0, made current on this thread; null with `why` set when none can run kernels.
  static Gpu* get(std::string* why = nullptr);
  const Driver& api() const { return *api_; }
  const DeviceLimits& limits() const { return limits_; }
  void make_current() const;
  // Device memory comes from the driver's stream-ordered pool, which keeps freed memory for
  // the next allocation: a symbolic program growing its arena at a new length binds in well
  // under a millisecond instead of a cuMemFree (which synchronises) and a cuMemAlloc.
  bool pooled() const { return pooled_; }

 private:
  const Driver* api_ = nullptr;
  bool pooled_ = false;
  CUcontext ctx_ = nullptr;
  DeviceLimits limits_;
};

struct LoadedModule {
  const Gpu* dev = nullptr;
  std::string key;
  std::vector<CUmodule> modules;  // one an image (a translation unit)
  std::map<std::string, CUmodule> holder;  // each kernel's module
  std::vector<CUfunction> functions;  // in the order of the names asked for
  std::vector<int64_t> plan_words;    // the module's own buffer count and bytes: the plan it was built for
  ~LoadedModule();
};

// Loads `code` (pack_images of cubins or PTX) and looks up `names`, each in the image that has
// it; modules already loaded from the same bytes are shared. Throws when the module was built
// for another plan than `plan` (a stale cache entry).
std::shared_ptr<LoadedModule> load_module(const Gpu& d, const std::string& code, const std::vector<std::string>& names,
                                          const kir::Plan& plan);

}  // namespace lockstep::cuda
