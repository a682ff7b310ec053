#include "backend/cuda/cuda_device.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "backend/cuda/nvrtc_compiler.h"
#include "core/error.h"
#include "core/sha256.h"
#include "runtime/device_toolkit.h"

namespace lockstep::cuda {

namespace {

struct DeviceLoad {
  Gpu* dev = nullptr;
  std::string why;
};

int attribute(const Driver& d, int attr, CUdevice dev) {
  int v = 0;
  check(d.cuDeviceGetAttribute(&v, attr, dev), "cuDeviceGetAttribute");
  return v;
}

}  // namespace

Gpu* Gpu::get(std::string* why) {
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
      auto* dev = new Gpu;
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
      CUmemoryPool pool = nullptr;
      int pools = 0;
      unsigned long long keep = ~0ull;  // never hand freed memory back to the system early
      dev->pooled_ = d->cuDeviceGetAttribute(&pools, kAttrMemoryPoolsSupported, h) == 0 && pools == 1 &&
                     d->cuDeviceGetDefaultMemPool(&pool, h) == 0 &&
                     d->cuMemPoolSetAttribute(pool, kPoolReleaseThreshold, &keep) == 0;
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

void Gpu::make_current() const { check(api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

LoadedModule::~LoadedModule() {
  for (CUmodule m : modules)
    if (m) dev->api().cuModuleUnload(m);
}

namespace {

// The buffer count and sizes a program was built for (plan_words), from the ls_buffer_count
// and ls_buffer_bytes of its last image (the epilogue is the last unit's).
std::vector<int64_t> module_plan_words(const Gpu& d, CUmodule m) {
  CUdeviceptr table = 0, count_at = 0;
  size_t table_bytes = 0, count_bytes = 0;
  int count = -1;
  if (d.api().cuModuleGetGlobal(&table, &table_bytes, m, "ls_buffer_bytes") ||
      d.api().cuModuleGetGlobal(&count_at, &count_bytes, m, "ls_buffer_count") || count_bytes != sizeof count)
    return {};
  check(d.api().cuMemcpyDtoH(&count, count_at, sizeof count), "cuMemcpyDtoH(ls_buffer_count)");
  std::vector<long long> sizes(table_bytes / sizeof(long long));
  if (!sizes.empty()) check(d.api().cuMemcpyDtoH(sizes.data(), table, table_bytes), "cuMemcpyDtoH(ls_buffer_bytes)");
  sizes.resize(std::min(sizes.size(), static_cast<size_t>(std::max(count, 0))));
  std::vector<int64_t> words = {count};
  words.insert(words.end(), sizes.begin(), sizes.end());
  return words;
}

}  // namespace

std::shared_ptr<LoadedModule> load_module(const Gpu& d, const std::string& code, const std::vector<std::string>& names,
                                          const kir::Plan& plan) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<LoadedModule>> loaded;  // keyed by content, never by name
  std::string key = sha256_hex(code.data(), code.size());
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<LoadedModule> m = loaded[key].lock();
  if (!m) {
    m = std::make_shared<LoadedModule>();
    m->dev = &d;
    m->key = key;
    for (const std::string& image : unpack_images(code)) {
      m->modules.push_back(nullptr);
      check(d.api().cuModuleLoadData(&m->modules.back(), image.c_str()), "cuModuleLoadData");  // PTX ends in NUL
      for (const std::string& n : entry_names(image)) m->holder.emplace(n, m->modules.back());
    }
    m->plan_words = module_plan_words(d, m->modules.back());
    loaded[key] = m;
  }
  // The module must be the one built for this plan: a wrong one would index past buffers.
  check_loaded_plan("cuda", m->plan_words, plan);
  if (m->functions.size() != names.size()) {  // a module shared by key has the same kernels
    m->functions.clear();
    for (const std::string& n : names) {
      CUfunction f = nullptr;
      auto at = m->holder.find(n);  // not there: the last image's lookup fails with the driver's error
      check(d.api().cuModuleGetFunction(&f, at == m->holder.end() ? m->modules.back() : at->second, n.c_str()),
            ("cuModuleGetFunction(" + n + ")").c_str());
      m->functions.push_back(f);
    }
  }
  return m;
}

}  // namespace lockstep::cuda
