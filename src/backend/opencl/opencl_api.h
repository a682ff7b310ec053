// The OpenCL 1.2 entry points lockstep uses, loaded from the ICD loader (libOpenCL.so.1) with
// dlopen at run time: one build runs with or without an OpenCL platform, and needs no OpenCL
// headers to build.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace lockstep::opencl {

// API types (ABI-compatible with CL/cl.h).
using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_long = int64_t;
using cl_bitfield = cl_ulong;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;
struct cl_buffer_region {
  size_t origin, size;
};

// Enumerators (values from CL/cl.h).
enum : cl_uint {
  kPlatformVersion = 0x0901,
  kPlatformName = 0x0902,
  kPlatformVendor = 0x0903,
  kDeviceType = 0x1000,
  kDeviceMaxComputeUnits = 0x1002,
  kDeviceMaxWorkGroupSize = 0x1004,
  kDeviceMaxMemAllocSize = 0x1010,
  kDeviceMaxParameterSize = 0x1017,
  kDeviceMemBaseAddrAlign = 0x1019,
  kDeviceSingleFpConfig = 0x101B,
  kDeviceGlobalMemSize = 0x101F,
  kDeviceLocalMemSize = 0x1023,
  kDeviceName = 0x102B,
  kDeviceVendor = 0x102C,
  kDriverVersion = 0x102D,
  kDeviceVersion = 0x102F,
  kDeviceExtensions = 0x1030,
  kDeviceOpenclCVersion = 0x103D,
  kProgramBinarySizes = 0x1165,
  kProgramBinaries = 0x1166,
  kProgramBuildLog = 0x1183,
  kKernelWorkGroupSize = 0x11B0,
  kKernelLocalMemSize = 0x11B2,
  kKernelPrivateMemSize = 0x11B4,
  kBufferCreateTypeRegion = 0x1220,
  kProfilingCommandEnd = 0x1283,
};
constexpr cl_bitfield kDeviceTypeGpu = 1 << 2;
constexpr cl_bitfield kDeviceTypeAll = 0xFFFFFFFF;
constexpr cl_bitfield kMemReadWrite = 1 << 0;
constexpr cl_bitfield kQueueProfilingEnable = 1 << 1;
constexpr cl_bitfield kFpCorrectlyRoundedDivideSqrt = 1 << 7;
constexpr cl_int kSuccess = 0;
constexpr cl_int kDeviceNotFound = -1;
constexpr cl_int kBuildProgramFailure = -11;
constexpr cl_int kPlatformNotFoundKhr = -1001;

// ICD loader entry points; null until the loader is found.
struct Api {
  cl_int (*clGetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*);
  cl_int (*clGetPlatformInfo)(cl_platform_id, cl_uint, size_t, void*, size_t*);
  cl_int (*clGetDeviceIDs)(cl_platform_id, cl_bitfield, cl_uint, cl_device_id*, cl_uint*);
  cl_int (*clGetDeviceInfo)(cl_device_id, cl_uint, size_t, void*, size_t*);
  cl_context (*clCreateContext)(const intptr_t*, cl_uint, const cl_device_id*, void (*)(const char*, const void*, size_t, void*),
                                void*, cl_int*);
  cl_int (*clReleaseContext)(cl_context);
  cl_command_queue (*clCreateCommandQueue)(cl_context, cl_device_id, cl_bitfield, cl_int*);
  cl_int (*clReleaseCommandQueue)(cl_command_queue);
  cl_mem (*clCreateBuffer)(cl_context, cl_bitfield, size_t, void*, cl_int*);
  cl_mem (*clCreateSubBuffer)(cl_mem, cl_bitfield, cl_uint, const void*, cl_int*);
  cl_int (*clReleaseMemObject)(cl_mem);
  cl_program (*clCreateProgramWithSource)(cl_context, cl_uint, const char**, const size_t*, cl_int*);
  cl_program (*clCreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**,
                                          cl_int*, cl_int*);
  cl_int (*clBuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*, void (*)(cl_program, void*), void*);
  cl_int (*clGetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, size_t, void*, size_t*);
  cl_int (*clGetProgramInfo)(cl_program, cl_uint, size_t, void*, size_t*);
  cl_int (*clReleaseProgram)(cl_program);
  cl_kernel (*clCreateKernel)(cl_program, const char*, cl_int*);
  cl_int (*clReleaseKernel)(cl_kernel);
  cl_int (*clSetKernelArg)(cl_kernel, cl_uint, size_t, const void*);
  cl_int (*clGetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_uint, size_t, void*, size_t*);
  cl_int (*clEnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*,
                                   cl_uint, const cl_event*, cl_event*);
  cl_int (*clEnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void*, cl_uint,
                                 const cl_event*, cl_event*);
  cl_int (*clEnqueueReadBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void*, cl_uint, const cl_event*,
                                cl_event*);
  cl_int (*clEnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event*,
                                cl_event*);
  cl_int (*clEnqueueFillBuffer)(cl_command_queue, cl_mem, const void*, size_t, size_t, size_t, cl_uint,
                                const cl_event*, cl_event*);
  cl_int (*clEnqueueMarkerWithWaitList)(cl_command_queue, cl_uint, const cl_event*, cl_event*);
  cl_int (*clGetEventProfilingInfo)(cl_event, cl_uint, size_t, void*, size_t*);
  cl_int (*clWaitForEvents)(cl_uint, const cl_event*);
  cl_int (*clReleaseEvent)(cl_event);
  cl_int (*clFlush)(cl_command_queue);
  cl_int (*clFinish)(cl_command_queue);
};

// The ICD loader, or null with `why` set. Loaded once; LOCKSTEP_OPENCL names another library.
const Api* api(std::string* why = nullptr);

// "CL_OUT_OF_RESOURCES (-5)" for an error code.
std::string error_text(cl_int r);
// Throws Error("opencl: <what> failed: CL_X (-n)") unless r is CL_SUCCESS.
void check(cl_int r, const std::string& what);

}  // namespace lockstep::opencl
