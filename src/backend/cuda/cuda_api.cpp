#include "backend/cuda/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "core/error.h"

namespace lockstep::cuda {

namespace {

// Fills `fn` from `lib`; false (with `missing` set) when a symbol is absent.
template <class F>
bool bind(void* lib, F& fn, const char* name, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn && missing.empty()) missing = name;
  return fn != nullptr;
}

struct DriverLoad {
  Driver d{};
  std::string why;
  bool ok = false;
};

const DriverLoad& load_driver() {
  static const DriverLoad loaded = [] {
    DriverLoad r;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      r.why = "no NVIDIA driver: libcuda.so.1 could not be loaded (" + std::string(e ? e : "not found") + ")";
      return r;
    }
    std::string m;
    Driver& d = r.d;
    // Versioned names: the unversioned symbols keep their old ABI for old binaries.
    bind(lib, d.cuInit, "cuInit", m);
    bind(lib, d.cuDriverGetVersion, "cuDriverGetVersion", m);
    bind(lib, d.cuDeviceGetCount, "cuDeviceGetCount", m);
    bind(lib, d.cuDeviceGet, "cuDeviceGet", m);
    bind(lib, d.cuDeviceGetName, "cuDeviceGetName", m);
    bind(lib, d.cuDeviceGetAttribute, "cuDeviceGetAttribute", m);
    bind(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", m);
    bind(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent", m);
    bind(lib, d.cuGetErrorName, "cuGetErrorName", m);
    bind(lib, d.cuGetErrorString, "cuGetErrorString", m);
    bind(lib, d.cuMemAlloc, "cuMemAlloc_v2", m);
    bind(lib, d.cuMemFree, "cuMemFree_v2", m);
    bind(lib, d.cuMemHostAlloc, "cuMemHostAlloc", m);
    bind(lib, d.cuMemFreeHost, "cuMemFreeHost", m);
    bind(lib, d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", m);
    bind(lib, d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", m);
    bind(lib, d.cuMemsetD8Async, "cuMemsetD8Async", m);
    bind(lib, d.cuStreamCreate, "cuStreamCreate", m);
    bind(lib, d.cuStreamDestroy, "cuStreamDestroy_v2", m);
    bind(lib, d.cuStreamSynchronize, "cuStreamSynchronize", m);
    bind(lib, d.cuEventCreate, "cuEventCreate", m);
    bind(lib, d.cuEventDestroy, "cuEventDestroy_v2", m);
    bind(lib, d.cuEventRecord, "cuEventRecord", m);
    bind(lib, d.cuEventSynchronize, "cuEventSynchronize", m);
    bind(lib, d.cuLaunchHostFunc, "cuLaunchHostFunc", m);
    bind(lib, d.cuModuleLoadData, "cuModuleLoadData", m);
    bind(lib, d.cuModuleUnload, "cuModuleUnload", m);
    bind(lib, d.cuModuleGetFunction, "cuModuleGetFunction", m);
    bind(lib, d.cuFuncGetAttribute, "cuFuncGetAttribute", m);
    bind(lib, d.cuLaunchKernel, "cuLaunchKernel", m);
    bind(lib, d.cuStreamBeginCapture, "cuStreamBeginCapture_v2", m);
    bind(lib, d.cuStreamEndCapture, "cuStreamEndCapture", m);
    bind(lib, d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", m);
    bind(lib, d.cuGraphLaunch, "cuGraphLaunch", m);
    bind(lib, d.cuGraphDestroy, "cuGraphDestroy", m);
    bind(lib, d.cuGraphExecDestroy, "cuGraphExecDestroy", m);
    if (!m.empty()) {
      r.why = "the NVIDIA driver is too old: libcuda.so.1 has no " + m;
      return r;
    }
    r.ok = true;
    return r;
  }();
  return loaded;
}

struct NvrtcLoad {
  Nvrtc n{};
  std::string why;
  bool ok = false;
};

std::vector<std::string> nvrtc_candidates() {
  std::vector<std::string> c;
  if (const char* p = std::getenv("LOCKSTEP_NVRTC"); p && *p) c.push_back(p);
  for (const char* dir : {"", "/usr/local/cuda/lib64/", "/usr/local/cuda/lib/"})
    for (const char* name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) c.push_back(std::string(dir) + name);
  return c;
}

const NvrtcLoad& load_nvrtc() {
  static const NvrtcLoad loaded = [] {
    NvrtcLoad r;
    void* lib = nullptr;
    std::string tried;
    for (const std::string& path : nvrtc_candidates()) {
      if ((lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) {
        r.n.path = path;
        break;
      }
      tried += (tried.empty() ? "" : ", ") + path;
    }
    if (!lib) {
      r.why = "NVRTC not found (tried " + tried + "; set LOCKSTEP_NVRTC to its path)";
      return r;
    }
    std::string m;
    Nvrtc& n = r.n;
    bind(lib, n.nvrtcVersion, "nvrtcVersion", m);
    bind(lib, n.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", m);
    bind(lib, n.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", m);
    bind(lib, n.nvrtcCreateProgram, "nvrtcCreateProgram", m);
    bind(lib, n.nvrtcDestroyProgram, "nvrtcDestroyProgram", m);
    bind(lib, n.nvrtcCompileProgram, "nvrtcCompileProgram", m);
    bind(lib, n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", m);
    bind(lib, n.nvrtcGetProgramLog, "nvrtcGetProgramLog", m);
    bind(lib, n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", m);
    bind(lib, n.nvrtcGetCUBIN, "nvrtcGetCUBIN", m);
    bind(lib, n.nvrtcGetPTXSize, "nvrtcGetPTXSize", m);
    bind(lib, n.nvrtcGetPTX, "nvrtcGetPTX", m);
    bind(lib, n.nvrtcGetErrorString, "nvrtcGetErrorString", m);
    if (!m.empty()) {
      r.why = "NVRTC at " + r.n.path + " is too old: no " + m;
      return r;
    }
    int major = 0, minor = 0;
    n.nvrtcVersion(&major, &minor);
    n.version = std::to_string(major) + "." + std::to_string(minor);
    r.ok = true;
    return r;
  }();
  return loaded;
}

}  // namespace

const Driver* driver(std::string* why) {
  const DriverLoad& l = load_driver();
  if (why) *why = l.why;
  return l.ok ? &l.d : nullptr;
}

const Nvrtc* nvrtc(std::string* why) {
  const NvrtcLoad& l = load_nvrtc();
  if (why) *why = l.why;
  return l.ok ? &l.n : nullptr;
}

std::string error_text(CUresult r) {
  const Driver* d = driver();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
  }
  return std::string(name ? name : "CUDA error " + std::to_string(r)) + (text ? " (" + std::string(text) + ")" : "");
}

void check(CUresult r, const char* what) {
  if (r != 0) throw Error(std::string("cuda: ") + what + " failed: " + error_text(r));
}

}  // namespace lockstep::cuda
