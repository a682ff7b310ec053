#include "backend/cuda/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/shared_library.h"

namespace lockstep::cuda {

namespace {

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
    std::string m = bind_library(lib, {
        library_symbol(d.cuInit, "cuInit"),
        library_symbol(d.cuDriverGetVersion, "cuDriverGetVersion"),
        library_symbol(d.cuDeviceGetCount, "cuDeviceGetCount"),
        library_symbol(d.cuDeviceGet, "cuDeviceGet"),
        library_symbol(d.cuDeviceGetName, "cuDeviceGetName"),
        library_symbol(d.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
        library_symbol(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
        library_symbol(d.cuCtxSetCurrent, "cuCtxSetCurrent"),
        library_symbol(d.cuGetErrorName, "cuGetErrorName"),
        library_symbol(d.cuGetErrorString, "cuGetErrorString"),
        library_symbol(d.cuMemAlloc, "cuMemAlloc_v2"),
        library_symbol(d.cuMemFree, "cuMemFree_v2"),
        library_symbol(d.cuMemAllocAsync, "cuMemAllocAsync"),
        library_symbol(d.cuMemFreeAsync, "cuMemFreeAsync"),
        library_symbol(d.cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool"),
        library_symbol(d.cuMemPoolSetAttribute, "cuMemPoolSetAttribute"),
        library_symbol(d.cuMemHostAlloc, "cuMemHostAlloc"),
        library_symbol(d.cuMemFreeHost, "cuMemFreeHost"),
        library_symbol(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
        library_symbol(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
        library_symbol(d.cuMemsetD8Async, "cuMemsetD8Async"),
        library_symbol(d.cuStreamCreate, "cuStreamCreate"),
        library_symbol(d.cuStreamDestroy, "cuStreamDestroy_v2"),
        library_symbol(d.cuStreamSynchronize, "cuStreamSynchronize"),
        library_symbol(d.cuEventCreate, "cuEventCreate"),
        library_symbol(d.cuEventDestroy, "cuEventDestroy_v2"),
        library_symbol(d.cuEventRecord, "cuEventRecord"),
        library_symbol(d.cuEventSynchronize, "cuEventSynchronize"),
        library_symbol(d.cuEventElapsedTime, "cuEventElapsedTime_v2"),
        library_symbol(d.cuLaunchHostFunc, "cuLaunchHostFunc"),
        library_symbol(d.cuModuleLoadData, "cuModuleLoadData"),
        library_symbol(d.cuModuleUnload, "cuModuleUnload"),
        library_symbol(d.cuModuleGetFunction, "cuModuleGetFunction"),
        library_symbol(d.cuFuncGetAttribute, "cuFuncGetAttribute"),
        library_symbol(d.cuLaunchKernel, "cuLaunchKernel"),
        library_symbol(d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"),
        library_symbol(d.cuStreamEndCapture, "cuStreamEndCapture"),
        library_symbol(d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"),
        library_symbol(d.cuGraphLaunch, "cuGraphLaunch"),
        library_symbol(d.cuGraphDestroy, "cuGraphDestroy"),
        library_symbol(d.cuGraphExecDestroy, "cuGraphExecDestroy"),
        library_symbol(d.cuGraphExecUpdate, "cuGraphExecUpdate_v2"),
        library_symbol(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
        library_symbol(d.cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
        library_symbol(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2")});
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
    std::string m = bind_library(lib, {
        library_symbol(n.nvrtcVersion, "nvrtcVersion"),
        library_symbol(n.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs"),
        library_symbol(n.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs"),
        library_symbol(n.nvrtcCreateProgram, "nvrtcCreateProgram"),
        library_symbol(n.nvrtcDestroyProgram, "nvrtcDestroyProgram"),
        library_symbol(n.nvrtcCompileProgram, "nvrtcCompileProgram"),
        library_symbol(n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
        library_symbol(n.nvrtcGetProgramLog, "nvrtcGetProgramLog"),
        library_symbol(n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
        library_symbol(n.nvrtcGetCUBIN, "nvrtcGetCUBIN"),
        library_symbol(n.nvrtcGetPTXSize, "nvrtcGetPTXSize"),
        library_symbol(n.nvrtcGetPTX, "nvrtcGetPTX"),
        library_symbol(n.nvrtcGetErrorString, "nvrtcGetErrorString")});
    if (!m.empty()) {
      r.why = "NVRTC at " + r.n.path + " is too old: no " + m;
      return r;
    }
    n.nvrtcVersion(&n.major, &n.minor);
    n.version = std::to_string(n.major) + "." + std::to_string(n.minor);
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
