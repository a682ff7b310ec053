#include "backend/cuda/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "core/error.h"

namespace lockstep::cuda {

namespace {

// One entry point to resolve: where its pointer goes, and its exported name.
struct Symbol {
  void* slot;
  const char* name;
};

template <class F>
Symbol sym(F& fn, const char* name) {
  return {reinterpret_cast<void*>(&fn), name};
}

// Fills every slot from `lib`; the name of the first symbol it lacks, or "".
std::string bind_all(void* lib, std::initializer_list<Symbol> symbols) {
  for (const Symbol& s : symbols) {
    void* p = dlsym(lib, s.name);
    if (!p) return s.name;
    std::memcpy(s.slot, &p, sizeof p);  // a function pointer's bytes, as dlsym hands them out
  }
  return "";
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
    Driver& d = r.d;
    // Versioned names: the unversioned symbols keep their old ABI for old binaries.
    std::string m = bind_all(lib, {
        sym(d.cuInit, "cuInit"),
        sym(d.cuDriverGetVersion, "cuDriverGetVersion"),
        sym(d.cuDeviceGetCount, "cuDeviceGetCount"),
        sym(d.cuDeviceGet, "cuDeviceGet"),
        sym(d.cuDeviceGetName, "cuDeviceGetName"),
        sym(d.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
        sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
        sym(d.cuCtxSetCurrent, "cuCtxSetCurrent"),
        sym(d.cuGetErrorName, "cuGetErrorName"),
        sym(d.cuGetErrorString, "cuGetErrorString"),
        sym(d.cuMemAlloc, "cuMemAlloc_v2"),
        sym(d.cuMemFree, "cuMemFree_v2"),
        sym(d.cuMemHostAlloc, "cuMemHostAlloc"),
        sym(d.cuMemFreeHost, "cuMemFreeHost"),
        sym(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
        sym(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
        sym(d.cuMemsetD8Async, "cuMemsetD8Async"),
        sym(d.cuStreamCreate, "cuStreamCreate"),
        sym(d.cuStreamDestroy, "cuStreamDestroy_v2"),
        sym(d.cuStreamSynchronize, "cuStreamSynchronize"),
        sym(d.cuEventCreate, "cuEventCreate"),
        sym(d.cuEventDestroy, "cuEventDestroy_v2"),
        sym(d.cuEventRecord, "cuEventRecord"),
        sym(d.cuEventSynchronize, "cuEventSynchronize"),
        sym(d.cuEventElapsedTime, "cuEventElapsedTime_v2"),
        sym(d.cuLaunchHostFunc, "cuLaunchHostFunc"),
        sym(d.cuModuleLoadData, "cuModuleLoadData"),
        sym(d.cuModuleUnload, "cuModuleUnload"),
        sym(d.cuModuleGetFunction, "cuModuleGetFunction"),
        sym(d.cuFuncGetAttribute, "cuFuncGetAttribute"),
        sym(d.cuLaunchKernel, "cuLaunchKernel"),
        sym(d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"),
        sym(d.cuStreamEndCapture, "cuStreamEndCapture"),
        sym(d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"),
        sym(d.cuGraphLaunch, "cuGraphLaunch"),
        sym(d.cuGraphDestroy, "cuGraphDestroy"),
        sym(d.cuGraphExecDestroy, "cuGraphExecDestroy"),
        sym(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
        sym(d.cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
        sym(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2")});
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
    Nvrtc& n = r.n;
    std::string m = bind_all(lib, {
        sym(n.nvrtcVersion, "nvrtcVersion"),
        sym(n.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs"),
        sym(n.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs"),
        sym(n.nvrtcCreateProgram, "nvrtcCreateProgram"),
        sym(n.nvrtcDestroyProgram, "nvrtcDestroyProgram"),
        sym(n.nvrtcCompileProgram, "nvrtcCompileProgram"),
        sym(n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
        sym(n.nvrtcGetProgramLog, "nvrtcGetProgramLog"),
        sym(n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
        sym(n.nvrtcGetCUBIN, "nvrtcGetCUBIN"),
        sym(n.nvrtcGetPTXSize, "nvrtcGetPTXSize"),
        sym(n.nvrtcGetPTX, "nvrtcGetPTX"),
        sym(n.nvrtcGetErrorString, "nvrtcGetErrorString")});
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
