#include "backend/opencl/opencl_platform.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "core/error.h"

namespace lockstep::opencl {

namespace {

std::string platform_text(const Api& a, cl_platform_id p, cl_uint what) {
  size_t n = 0;
  if (a.clGetPlatformInfo(p, what, 0, nullptr, &n) != kSuccess || n == 0) return "";
  std::string s(n, '\0');
  a.clGetPlatformInfo(p, what, n, s.data(), nullptr);
  return s.c_str();  // without the terminating NUL
}

std::string device_text(const Api& a, cl_device_id d, cl_uint what) {
  size_t n = 0;
  if (a.clGetDeviceInfo(d, what, 0, nullptr, &n) != kSuccess || n == 0) return "";
  std::string s(n, '\0');
  a.clGetDeviceInfo(d, what, n, s.data(), nullptr);
  return s.c_str();
}

template <class T>
T device_value(const Api& a, cl_device_id d, cl_uint what) {
  T v{};
  if (a.clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != kSuccess) return T{};
  return v;
}

DeviceInfo describe_device(const Api& a, cl_platform_id p, cl_device_id d) {
  DeviceInfo i;
  i.platform = p;
  i.id = d;
  i.platform_name = platform_text(a, p, kPlatformName);
  i.platform_version = platform_text(a, p, kPlatformVersion);
  i.name = device_text(a, d, kDeviceName);
  i.vendor = device_text(a, d, kDeviceVendor);
  i.driver = device_text(a, d, kDriverVersion);
  i.version = device_text(a, d, kDeviceVersion);
  i.c_version = device_text(a, d, kDeviceOpenclCVersion);
  i.extensions = device_text(a, d, kDeviceExtensions);
  i.max_group = device_value<size_t>(a, d, kDeviceMaxWorkGroupSize);
  i.local_bytes = device_value<cl_ulong>(a, d, kDeviceLocalMemSize);
  i.max_alloc = device_value<cl_ulong>(a, d, kDeviceMaxMemAllocSize);
  i.max_parameter_bytes = device_value<size_t>(a, d, kDeviceMaxParameterSize);
  i.gpu = device_value<cl_bitfield>(a, d, kDeviceType) & kDeviceTypeGpu;
  i.fp64 = (" " + i.extensions + " ").find(" cl_khr_fp64 ") != std::string::npos;
  i.correctly_rounded_divide_sqrt = device_value<cl_bitfield>(a, d, kDeviceSingleFpConfig) & kFpCorrectlyRoundedDivideSqrt;
  return i;
}

struct Listing {
  std::vector<DeviceInfo> devices;
  std::string why;
};

const Listing& listing() {
  static const Listing l = [] {
    Listing r;
    std::string why;
    const Api* a = api(&why);
    if (!a) {
      r.why = why;
      return r;
    }
    cl_uint n = 0;
    cl_int e = a->clGetPlatformIDs(0, nullptr, &n);
    if (e != kSuccess || n == 0) {
      r.why = "no OpenCL platform is installed (the ICD loader found none: " +
              (e == kSuccess ? std::string("0 platforms") : error_text(e)) +
              "; Debian: apt-get install pocl-opencl-icd, NVIDIA: /etc/OpenCL/vendors/nvidia.icd)";
      return r;
    }
    std::vector<cl_platform_id> ps(n);
    a->clGetPlatformIDs(n, ps.data(), nullptr);
    for (cl_platform_id p : ps) {
      cl_uint m = 0;
      if (a->clGetDeviceIDs(p, kDeviceTypeAll, 0, nullptr, &m) != kSuccess || m == 0) continue;
      std::vector<cl_device_id> ds(m);
      a->clGetDeviceIDs(p, kDeviceTypeAll, m, ds.data(), nullptr);
      for (cl_device_id d : ds) r.devices.push_back(describe_device(*a, p, d));
    }
    std::stable_partition(r.devices.begin(), r.devices.end(), [](const DeviceInfo& d) { return d.gpu; });
    if (r.devices.empty()) r.why = "the OpenCL platforms installed list no device";
    return r;
  }();
  return l;
}

}  // namespace

std::string DeviceInfo::identity() const {
  return "opencl platform " + platform_name + " (" + platform_version + "); device " + name + " (" + vendor + ", " +
         version + ", " + c_version + "); driver " + driver;
}

std::string DeviceInfo::describe() const {
  return platform_name + ": " + name + (gpu ? " (GPU, " : " (") + version + ", driver " + driver + (fp64 ? ", fp64" : ", no fp64") + ")";
}

const std::vector<DeviceInfo>& devices(std::string* why) {
  if (why) *why = listing().why;
  return listing().devices;
}

std::string unavailable(int index) {
  std::string why;
  const std::vector<DeviceInfo>& ds = devices(&why);
  if (ds.empty()) return why;
  if (index < 0 || static_cast<size_t>(index) >= ds.size())
    return "there is no OpenCL device " + std::to_string(index) + " (" + std::to_string(ds.size()) +
           " found: lockstep info --targets lists them)";
  return "";
}

Context& context(int index) {
  static std::mutex m;
  static std::map<int, std::unique_ptr<Context>> made;  // kept for the process: programs share them
  std::lock_guard<std::mutex> lock(m);
  if (auto it = made.find(index); it != made.end()) return *it->second;
  if (std::string why = unavailable(index); !why.empty()) throw Error("target 'opencl' is unavailable: " + why);
  const DeviceInfo& d = devices()[static_cast<size_t>(index)];
  const Api& a = *api();
  cl_int e = kSuccess;
  intptr_t props[] = {0x1084 /* CL_CONTEXT_PLATFORM */, reinterpret_cast<intptr_t>(d.platform), 0};
  cl_context ctx = a.clCreateContext(props, 1, &d.id, nullptr, nullptr, &e);
  check(e, "clCreateContext(" + d.name + ")");
  return *(made[index] = std::make_unique<Context>(Context{a, d, ctx}));
}

}  // namespace lockstep::opencl
