// The few CUDA driver and NVRTC declarations lockstep uses, loaded with dlopen at run time:
// one build runs with or without a GPU, and needs no CUDA headers to build.
#pragma once
#include <cstddef>
#include <string>

namespace lockstep::cuda {

// Driver API types (ABI-compatible with cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUhostFn = void (*)(void*);
using CUgraphNode = struct CUgraphNode_st*;
using CUmemoryPool = struct CUmemPoolHandle_st*;
struct CUgraphExecUpdateResultInfo {
  int result;
  CUgraphNode errorNode, errorFromNode;
};
using nvrtcProgram = struct _nvrtcProgram*;
using nvrtcResult = int;

// Enumerators (values from cuda.h).
enum : int {
  kAttrMaxThreadsPerBlock = 1,
  kAttrMaxGridDimX = 5,
  kAttrMaxSharedPerBlock = 8,
  kAttrMaxRegistersPerBlock = 12,
  kAttrMultiprocessors = 16,
  kAttrCcMajor = 75,
  kAttrCcMinor = 76,
  kAttrMemoryPoolsSupported = 115,
  kPoolReleaseThreshold = 4,
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedBytes = 1,
  kFuncLocalBytes = 3,
  kFuncNumRegs = 4,
  kStreamNonBlocking = 1,
  kEventDisableTiming = 2,
  kCaptureThreadLocal = 1,
  kErrorNoDevice = 100,
};

// Driver entry points; null until load_driver() succeeds.
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemAllocAsync)(CUdeviceptr*, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool*, CUdevice);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void*);
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned);
  CUresult (*cuMemFreeHost)(void*);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuLaunchHostFunc)(CUstream, CUhostFn, void*);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr*, size_t*, CUmodule, const char*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphDestroy)(CUgraph);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphExecUpdate)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo*);
};

struct Nvrtc {
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int*);
  nvrtcResult (*nvrtcGetSupportedArchs)(int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  std::string version;  // "13.0"
  int major = 0, minor = 0;  // of the version
  std::string path;     // the library that was loaded
};

// The driver, or null with `why` set ("libcuda.so.1 not found: ..."). Loaded once.
const Driver* driver(std::string* why = nullptr);
// NVRTC, or null with `why` set (every path tried). Loaded once.
const Nvrtc* nvrtc(std::string* why = nullptr);

// Throws Error("cuda: <what> failed: CUDA_ERROR_X (text)") unless r is success.
void check(CUresult r, const char* what);
std::string error_text(CUresult r);

}  // namespace lockstep::cuda
