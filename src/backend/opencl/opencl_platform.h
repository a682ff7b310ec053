// OpenCL platforms and devices as this machine's ICD loader lists them, and one context per
// device shared by the compiler and every program on it. `--device N` numbers the devices of
// all platforms, GPUs first (so device 0 is a GPU where there is one), else in the loader's order.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backend/opencl/opencl_api.h"

namespace lockstep::opencl {

struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string platform_name, platform_version, name, vendor, driver, version, c_version, extensions;
  size_t max_group = 0;         // work items per group
  cl_ulong local_bytes = 0;     // local memory per group
  cl_ulong max_alloc = 0;       // bytes of one buffer
  size_t max_parameter_bytes = 0;
  bool gpu = false;
  bool fp64 = false;
  bool correctly_rounded_divide_sqrt = false;
  // Everything that decides the bytes a build produces: part of the kernel cache key.
  std::string identity() const;
  // "PoCL 3.1 / pthread-skylake (OpenCL 3.0, driver 3.1)": for info and messages.
  std::string describe() const;
};

// Every device of every platform; empty, with `why` set, where there are none.
const std::vector<DeviceInfo>& devices(std::string* why = nullptr);

// The context of device `index`, made once; throws Error saying why when there is none.
struct Context {
  const Api& api;
  const DeviceInfo& device;
  cl_context ctx;
};
Context& context(int index);
// "" when device `index` can run here, else why not.
std::string unavailable(int index);

}  // namespace lockstep::opencl
