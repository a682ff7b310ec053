#include "backend/opencl/opencl_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>

#include "core/error.h"
#include "core/shared_library.h"

namespace lockstep::opencl {

namespace {

struct Load {
  Api a{};
  std::string why;
  bool ok = false;
};

const Load& load_api() {
  static const Load loaded = [] {
    Load r;
    const char* env = std::getenv("LOCKSTEP_OPENCL");
    std::string path = env && *env ? env : "libOpenCL.so.1";
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      r.why = "no OpenCL ICD loader: " + path + " could not be loaded (" + (e ? e : "not found") +
              "; Debian: apt-get install ocl-icd-libopencl1 pocl-opencl-icd)";
      return r;
    }
    Api& a = r.a;
    std::string m = bind_library(lib, {
        library_symbol(a.clGetPlatformIDs, "clGetPlatformIDs"),
        library_symbol(a.clGetPlatformInfo, "clGetPlatformInfo"),
        library_symbol(a.clGetDeviceIDs, "clGetDeviceIDs"),
        library_symbol(a.clGetDeviceInfo, "clGetDeviceInfo"),
        library_symbol(a.clCreateContext, "clCreateContext"),
        library_symbol(a.clReleaseContext, "clReleaseContext"),
        library_symbol(a.clCreateCommandQueue, "clCreateCommandQueue"),
        library_symbol(a.clReleaseCommandQueue, "clReleaseCommandQueue"),
        library_symbol(a.clCreateBuffer, "clCreateBuffer"),
        library_symbol(a.clCreateSubBuffer, "clCreateSubBuffer"),
        library_symbol(a.clReleaseMemObject, "clReleaseMemObject"),
        library_symbol(a.clCreateProgramWithSource, "clCreateProgramWithSource"),
        library_symbol(a.clCreateProgramWithBinary, "clCreateProgramWithBinary"),
        library_symbol(a.clBuildProgram, "clBuildProgram"),
        library_symbol(a.clGetProgramBuildInfo, "clGetProgramBuildInfo"),
        library_symbol(a.clGetProgramInfo, "clGetProgramInfo"),
        library_symbol(a.clReleaseProgram, "clReleaseProgram"),
        library_symbol(a.clCreateKernel, "clCreateKernel"),
        library_symbol(a.clReleaseKernel, "clReleaseKernel"),
        library_symbol(a.clSetKernelArg, "clSetKernelArg"),
        library_symbol(a.clGetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo"),
        library_symbol(a.clEnqueueNDRangeKernel, "clEnqueueNDRangeKernel"),
        library_symbol(a.clEnqueueWriteBuffer, "clEnqueueWriteBuffer"),
        library_symbol(a.clEnqueueReadBuffer, "clEnqueueReadBuffer"),
        library_symbol(a.clEnqueueCopyBuffer, "clEnqueueCopyBuffer"),
        library_symbol(a.clEnqueueFillBuffer, "clEnqueueFillBuffer"),
        library_symbol(a.clEnqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList"),
        library_symbol(a.clGetEventProfilingInfo, "clGetEventProfilingInfo"),
        library_symbol(a.clWaitForEvents, "clWaitForEvents"),
        library_symbol(a.clReleaseEvent, "clReleaseEvent"),
        library_symbol(a.clFlush, "clFlush"),
        library_symbol(a.clFinish, "clFinish")});
    if (!m.empty()) {
      r.why = "the OpenCL loader " + path + " is older than OpenCL 1.2: it has no " + m;
      return r;
    }
    r.ok = true;
    return r;
  }();
  return loaded;
}

}  // namespace

const Api* api(std::string* why) {
  const Load& l = load_api();
  if (why) *why = l.why;
  return l.ok ? &l.a : nullptr;
}

std::string error_text(cl_int r) {
  static const std::map<cl_int, const char*> names = {
      {-1, "CL_DEVICE_NOT_FOUND"}, {-2, "CL_DEVICE_NOT_AVAILABLE"}, {-3, "CL_COMPILER_NOT_AVAILABLE"},
      {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"}, {-5, "CL_OUT_OF_RESOURCES"}, {-6, "CL_OUT_OF_HOST_MEMORY"},
      {-11, "CL_BUILD_PROGRAM_FAILURE"}, {-13, "CL_MISALIGNED_SUB_BUFFER_OFFSET"}, {-30, "CL_INVALID_VALUE"},
      {-33, "CL_INVALID_DEVICE"}, {-34, "CL_INVALID_CONTEXT"}, {-36, "CL_INVALID_COMMAND_QUEUE"},
      {-38, "CL_INVALID_MEM_OBJECT"}, {-42, "CL_INVALID_BINARY"}, {-43, "CL_INVALID_BUILD_OPTIONS"},
      {-44, "CL_INVALID_PROGRAM"}, {-45, "CL_INVALID_PROGRAM_EXECUTABLE"}, {-46, "CL_INVALID_KERNEL_NAME"},
      {-48, "CL_INVALID_KERNEL"}, {-49, "CL_INVALID_ARG_INDEX"}, {-50, "CL_INVALID_ARG_VALUE"},
      {-51, "CL_INVALID_ARG_SIZE"}, {-52, "CL_INVALID_KERNEL_ARGS"}, {-53, "CL_INVALID_WORK_DIMENSION"},
      {-54, "CL_INVALID_WORK_GROUP_SIZE"}, {-55, "CL_INVALID_WORK_ITEM_SIZE"}, {-56, "CL_INVALID_GLOBAL_OFFSET"},
      {-58, "CL_INVALID_EVENT"}, {-61, "CL_INVALID_BUFFER_SIZE"}, {-63, "CL_INVALID_GLOBAL_WORK_SIZE"},
      {-1001, "CL_PLATFORM_NOT_FOUND_KHR"}};
  auto it = names.find(r);
  return std::string(it != names.end() ? it->second : "OpenCL error") + " (" + std::to_string(r) + ")";
}

void check(cl_int r, const std::string& what) {
  if (r != kSuccess) throw Error("opencl: " + what + " failed: " + error_text(r));
}

}  // namespace lockstep::opencl
