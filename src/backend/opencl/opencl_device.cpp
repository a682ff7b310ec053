#include "backend/opencl/opencl_device.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "backend/opencl/opencl_compiler.h"
#include "codegen/gpu_printer.h"
#include "core/error.h"
#include "core/sha256.h"
#include "runtime/device_toolkit.h"

namespace lockstep::opencl {

namespace {

constexpr size_t kMaxGroups = size_t{1} << 20;           // a grid-stride loop covers the rest

// A built program shared by every program of the process with the same binary; each
// device makes its own kernels from it (a cl_kernel holds its arguments).
struct SharedProgram {
  const Api& a;
  cl_program p;
  SharedProgram(const Api& api, cl_program program) : a(api), p(program) {}
  SharedProgram(const SharedProgram&) = delete;
  ~SharedProgram() { a.clReleaseProgram(p); }
};

std::shared_ptr<SharedProgram> shared_program(Context& c, const std::string& binary) {
  static std::mutex mu;
  static std::map<std::pair<cl_context, std::string>, std::weak_ptr<SharedProgram>> built;  // by content
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = built[{c.ctx, sha256_hex(binary.data(), binary.size())}];
  std::shared_ptr<SharedProgram> p = slot.lock();
  if (!p) slot = p = std::shared_ptr<SharedProgram>(new SharedProgram(c.api, program_from_code(c, binary)));
  return p;
}

class EventFence : public Fence {
 public:
  EventFence(const Api& a, cl_command_queue q) : a_(a) {
    check(a_.clEnqueueMarkerWithWaitList(q, 0, nullptr, &e_), "clEnqueueMarkerWithWaitList");
  }
  ~EventFence() override { a_.clReleaseEvent(e_); }
  void wait() override { check(a_.clWaitForEvents(1, &e_), "clWaitForEvents(staging slot)"); }

 private:
  const Api& a_;
  cl_event e_ = nullptr;
};

class EventTimer : public Timer {
 public:
  EventTimer(const Api& a, cl_command_queue q) : a_(a), q_(q) {}
  ~EventTimer() override {
    for (cl_event e : marks_) a_.clReleaseEvent(e);
  }
  void mark() override {
    cl_event e = nullptr;
    check(a_.clEnqueueMarkerWithWaitList(q_, 0, nullptr, &e), "clEnqueueMarkerWithWaitList");
    marks_.push_back(e);
  }
  std::vector<double> intervals_ms() override {
    std::vector<double> ms;
    cl_ulong last = 0;
    for (size_t k = 0; k < marks_.size(); ++k) {
      cl_ulong end = 0;
      check(a_.clGetEventProfilingInfo(marks_[k], kProfilingCommandEnd, sizeof end, &end, nullptr),
            "clGetEventProfilingInfo");
      if (k) ms.push_back(static_cast<double>(end - last) / 1e6);
      last = end;
    }
    return ms;
  }

 private:
  const Api& a_;
  cl_command_queue q_;
  std::vector<cl_event> marks_;
};

struct Launch {
  cl_kernel kernel = nullptr;
  size_t global = 0, local = 0;  // work items in all, per group; 0: nothing to launch
};

class ClDevice : public Device {
 public:
  ClDevice(Context& c, int index) : c_(c), a_(c.api), index_(index), allocs_("opencl") {
    cl_int e = kSuccess;
    q_ = a_.clCreateCommandQueue(c_.ctx, c_.device.id, kQueueProfilingEnable, &e);
    check(e, "clCreateCommandQueue(" + c_.device.name + ")");
  }
  ~ClDevice() override {
    a_.clFinish(q_);
    release_kernels();
    allocs_.for_each([this](cl_mem m) { a_.clReleaseMemObject(m); });
    a_.clReleaseCommandQueue(q_);
  }
  std::string key() const override { return "opencl:" + std::to_string(index_); }
  bool host_memory() const override { return !c_.device.gpu; }
  void narrow(kir::TargetDesc& d) const override { d.has_f64 = d.has_f64 && c_.device.fp64; }

  void load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>& entries) override {
    release_kernels();
    program_ = shared_program(c_, code);
    plan_ = &plan;
    check_plan_info(plan);
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      launches_.push_back({make_kernel(entries[k]), 0, 0});
      params_.push_back(codegen::kernel_params(plan.kernels[k]));  // the same at every length of a symbolic plan
    }
  }

  void bind(const std::vector<DevicePtr>& address) override {
    for (size_t k = 0; k < plan_->kernels.size(); ++k) {
      const kir::Kernel& kern = plan_->kernels[k];
      Launch& l = launches_[k];
      const std::vector<int>& params = params_[k];
      for (size_t a = 0; a < params.size(); ++a) {
        auto [mem, at] = allocs_.resolve(address[params[a]], 0);
        cl_ulong offset = at;
        check(a_.clSetKernelArg(l.kernel, static_cast<cl_uint>(2 * a), sizeof mem, &mem), "clSetKernelArg(" + kern.name + ")");
        check(a_.clSetKernelArg(l.kernel, static_cast<cl_uint>(2 * a + 1), sizeof offset, &offset),
              "clSetKernelArg(" + kern.name + ")");
      }
      l.local = static_cast<size_t>(kern.schedule.group);
      l.global = launch_groups(kern.schedule.threads, kern.schedule.group, kMaxGroups) * l.local;
      validate(kern, l);
    }
  }

  DevicePtr allocate(size_t bytes) override {
    cl_int e = kSuccess;
    cl_mem m = a_.clCreateBuffer(c_.ctx, kMemReadWrite, std::max<size_t>(bytes, 1), nullptr, &e);
    check(e, "clCreateBuffer(" + std::to_string(bytes) + " bytes)");
    return allocs_.add(m, bytes);
  }
  void free(DevicePtr p) override {
    cl_mem m = nullptr;
    if (allocs_.take(p, m)) a_.clReleaseMemObject(m);
  }

  void upload(DevicePtr dst, const void* src, size_t bytes) override {
    if (!bytes) return;
    auto [mem, at] = allocs_.resolve(dst, bytes);
    check(a_.clEnqueueWriteBuffer(q_, mem, 0, at, bytes, src, 0, nullptr, nullptr), "clEnqueueWriteBuffer");
  }
  void download(void* dst, DevicePtr src, size_t bytes) override {
    if (!bytes) return;
    auto [mem, at] = allocs_.resolve(src, bytes);
    check(a_.clEnqueueReadBuffer(q_, mem, 0, at, bytes, dst, 0, nullptr, nullptr), "clEnqueueReadBuffer");
  }
  void copy(DevicePtr dst, DevicePtr src, size_t bytes) override {
    if (!bytes) return;
    auto [to, to_at] = allocs_.resolve(dst, bytes);
    auto [from, from_at] = allocs_.resolve(src, bytes);
    check(a_.clEnqueueCopyBuffer(q_, from, to, from_at, to_at, bytes, 0, nullptr, nullptr), "clEnqueueCopyBuffer");
  }
  void fill(DevicePtr dst, unsigned char byte, size_t bytes) override {
    if (!bytes) return;
    auto [mem, at] = allocs_.resolve(dst, bytes);
    check(a_.clEnqueueFillBuffer(q_, mem, &byte, 1, at, bytes, 0, nullptr, nullptr), "clEnqueueFillBuffer");
  }
  void launch(int k) override {
    const Launch& l = launches_[k];
    if (!l.global) return;
    check(a_.clEnqueueNDRangeKernel(q_, l.kernel, 1, nullptr, &l.global, &l.local, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel(" + plan_->kernels[k].name + ")");
  }
  std::shared_ptr<Fence> fence() override { return std::make_shared<EventFence>(a_, q_); }
  void synchronize() override { check(a_.clFinish(q_), "clFinish"); }
  std::unique_ptr<Timer> timer() override { return std::make_unique<EventTimer>(a_, q_); }

 private:
  cl_kernel make_kernel(const std::string& name) {
    cl_int e = kSuccess;
    cl_kernel k = a_.clCreateKernel(program_->p, name.c_str(), &e);
    check(e, "clCreateKernel(" + name + ")");
    return k;
  }

  // The binary must be the one built for this plan: a wrong one would index past buffers.
  void check_plan_info(const kir::Plan& plan) {
    cl_kernel info = make_kernel("ls_plan_info");
    size_t n = plan.buffers.size() + 1;
    DevicePtr out = allocate(n * sizeof(int64_t));
    std::vector<int64_t> got(n, -2);
    try {
      cl_mem mem = allocs_.resolve(out, 0).first;  // its own allocation: no offset parameter
      cl_long room = static_cast<cl_long>(n);
      check(a_.clSetKernelArg(info, 0, sizeof mem, &mem), "clSetKernelArg(ls_plan_info)");
      check(a_.clSetKernelArg(info, 1, sizeof room, &room), "clSetKernelArg(ls_plan_info)");
      size_t one = 1;
      check(a_.clEnqueueNDRangeKernel(q_, info, 1, nullptr, &one, &one, 0, nullptr, nullptr), "clEnqueueNDRangeKernel(ls_plan_info)");
      download(got.data(), out, n * sizeof(int64_t));
      synchronize();
    } catch (...) {
      a_.clReleaseKernel(info);
      free(out);
      throw;
    }
    a_.clReleaseKernel(info);
    free(out);
    check_loaded_plan("opencl", got, plan);
  }

  void validate(const kir::Kernel& k, const Launch& l) const {
    size_t kernel_max = 0;
    cl_ulong local = 0;
    check(a_.clGetKernelWorkGroupInfo(l.kernel, c_.device.id, kKernelWorkGroupSize, sizeof kernel_max, &kernel_max, nullptr),
          "clGetKernelWorkGroupInfo");
    check(a_.clGetKernelWorkGroupInfo(l.kernel, c_.device.id, kKernelLocalMemSize, sizeof local, &local, nullptr),
          "clGetKernelWorkGroupInfo");
    std::string why;
    if (l.local < 1) why = "an empty work group";
    else if (l.local > c_.device.max_group)
      why = std::to_string(l.local) + " work items per group, the device allows " + std::to_string(c_.device.max_group);
    else if (l.local > kernel_max)
      why = std::to_string(l.local) + " work items per group, the compiled kernel allows " + std::to_string(kernel_max);
    else if (local > c_.device.local_bytes)
      why = std::to_string(local) + " bytes of local memory, the device has " + std::to_string(c_.device.local_bytes);
    refuse_launch("opencl", k, why);
  }

  void release_kernels() {
    for (Launch& l : launches_) a_.clReleaseKernel(l.kernel);
    launches_.clear();
    params_.clear();
    program_.reset();
  }

  Context& c_;
  const Api& a_;
  int index_;
  cl_command_queue q_ = nullptr;
  AddressMap<cl_mem> allocs_;
  std::shared_ptr<SharedProgram> program_;
  const kir::Plan* plan_ = nullptr;
  std::vector<Launch> launches_;
  std::vector<std::vector<int>> params_;  // each kernel's buffers, in argument order
};

}  // namespace

std::unique_ptr<Device> make_device(Context& c, int index) { return std::make_unique<ClDevice>(c, index); }

}  // namespace lockstep::opencl
