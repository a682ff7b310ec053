#include "backend/cuda/cuda_device.h"

#include <map>
#include <mutex>

#include "backend/cuda/staging_pool.h"
#include "core/error.h"

namespace lockstep::cuda {

namespace {

struct DeviceLoad {
  Device* dev = nullptr;
  std::string why;
};

int attribute(const Driver& d, int attr, CUdevice dev) {
  int v = 0;
  check(d.cuDeviceGetAttribute(&v, attr, dev), "cuDeviceGetAttribute");
  return v;
}

}  // namespace

Device* Device::get(std::string* why) {
  // Never destroyed: tearing down a context at exit races the driver's own teardown.
  static const DeviceLoad loaded = [] {
    DeviceLoad r;
    const Driver* d = driver(&r.why);
    if (!d) return r;
    if (CUresult e = d->cuInit(0)) {
      r.why = e == kErrorNoDevice ? "no CUDA device (cuInit: " + error_text(e) + ")"
                                  : "the CUDA driver cannot start: cuInit failed: " + error_text(e);
      return r;
    }
    int count = 0;
    if (d->cuDeviceGetCount(&count) != 0 || count == 0) {
      r.why = "no CUDA device";
      return r;
    }
    try {
      auto* dev = new Device;
      dev->api_ = d;
      CUdevice h = 0;
      check(d->cuDeviceGet(&h, 0), "cuDeviceGet");
      check(d->cuDevicePrimaryCtxRetain(&dev->ctx_, h), "cuDevicePrimaryCtxRetain");
      char name[256] = {};
      d->cuDeviceGetName(name, sizeof name, h);
      DeviceLimits& l = dev->limits_;
      l.name = name;
      l.cc = attribute(*d, kAttrCcMajor, h) * 10 + attribute(*d, kAttrCcMinor, h);
      l.max_threads_per_block = attribute(*d, kAttrMaxThreadsPerBlock, h);
      l.max_shared_per_block = attribute(*d, kAttrMaxSharedPerBlock, h);
      l.max_registers_per_block = attribute(*d, kAttrMaxRegistersPerBlock, h);
      l.max_grid_x = attribute(*d, kAttrMaxGridDimX, h);
      l.multiprocessors = attribute(*d, kAttrMultiprocessors, h);
      r.dev = dev;
    } catch (const Error& e) {
      r.why = e.what();
    }
    return r;
  }();
  if (why) *why = loaded.why;
  if (loaded.dev) loaded.dev->make_current();
  return loaded.dev;
}

void Device::make_current() const { check(api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

StagingPool& Device::staging(int slots, size_t slot_bytes) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  for (auto& p : pools_)
    if (p->slots() == slots && p->slot_bytes() == slot_bytes) return *p;
  pools_.push_back(std::make_unique<StagingPool>(*this, slots, slot_bytes));
  return *pools_.back();
}

std::string unavailable_reason() {
  std::string why;
  if (!nvrtc(&why)) return why;
  if (!Device::get(&why)) return why;
  return "";
}

DeviceBuffer::DeviceBuffer(const Device& d, size_t bytes) : dev_(&d), bytes_(bytes) {
  check(d.api().cuMemAlloc(&ptr_, bytes ? bytes : 1), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) dev_->api().cuMemFree(ptr_);
}

LoadedModule::~LoadedModule() {
  if (module) dev->api().cuModuleUnload(module);
}

std::shared_ptr<LoadedModule> load_module(const Device& d, const DeviceCode& code, const std::vector<std::string>& names,
                                          bool use_cache) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<LoadedModule>> loaded;  // keyed by content, never by name
  std::lock_guard<std::mutex> lock(mu);
  if (use_cache)
    if (auto m = loaded[code.key].lock()) return m;
  auto m = std::make_shared<LoadedModule>();
  m->dev = &d;
  m->key = code.key;
  check(d.api().cuModuleLoadData(&m->module, code.image.c_str()), "cuModuleLoadData");
  for (const std::string& n : names) {
    CUfunction f = nullptr;
    check(d.api().cuModuleGetFunction(&f, m->module, n.c_str()), ("cuModuleGetFunction(" + n + ")").c_str());
    m->functions.push_back(f);
  }
  if (use_cache) loaded[code.key] = m;
  return m;
}

}  // namespace lockstep::cuda
