#include "backend/cuda/cuda_target.h"

#include "backend/cuda/cuda_codegen.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "codegen/gpu_printer.h"
#include "core/error.h"

namespace lockstep::cuda {

namespace {

// One kernel launch with its arguments bound to device addresses.
struct Launch {
  CUfunction fn = nullptr;
  LaunchShape shape;
  std::vector<CUdeviceptr> args;
  std::vector<void*> params;  // pointers into args, as cuLaunchKernel takes them
  bool empty = false;         // no work items: nothing to launch
};

class EventFence : public Fence {
 public:
  EventFence(const Driver& api, CUstream s) : api_(api) {
    check(api_.cuEventCreate(&e_, kEventDisableTiming), "cuEventCreate");
    check(api_.cuEventRecord(e_, s), "cuEventRecord");
  }
  ~EventFence() override { api_.cuEventDestroy(e_); }
  void wait() override { check(api_.cuEventSynchronize(e_), "cuEventSynchronize(staging slot)"); }

 private:
  const Driver& api_;
  CUevent e_ = nullptr;
};

class EventTimer : public Timer {
 public:
  EventTimer(const Driver& api, CUstream s) : api_(api), s_(s) {}
  ~EventTimer() override {
    for (CUevent e : marks_) api_.cuEventDestroy(e);
  }
  void mark() override {
    CUevent e = nullptr;
    check(api_.cuEventCreate(&e, 0), "cuEventCreate");
    marks_.push_back(e);
    check(api_.cuEventRecord(e, s_), "cuEventRecord");
  }
  std::vector<double> intervals_ms() override {
    std::vector<double> ms;
    for (size_t k = 1; k < marks_.size(); ++k) {
      float t = 0;
      check(api_.cuEventElapsedTime(&t, marks_[k - 1], marks_[k]), "cuEventElapsedTime");
      ms.push_back(t);
    }
    return ms;
  }

 private:
  const Driver& api_;
  CUstream s_;
  std::vector<CUevent> marks_;
};

class CudaDevice : public Device {
 public:
  explicit CudaDevice(Gpu& gpu) : gpu_(gpu) {
    gpu_.make_current();
    check(api().cuStreamCreate(&stream_, kStreamNonBlocking), "cuStreamCreate");
  }
  ~CudaDevice() override {
    gpu_.make_current();
    api().cuStreamSynchronize(stream_);
    drop_graph();
    api().cuStreamDestroy(stream_);
  }
  std::string key() const override { return "cuda:0"; }
  // Every entry point a run may start from makes the context current, so a program prepared
  // on one thread runs on another; launches, fills and copies follow one of these (and run
  // inside a capture, where nothing else may be called).

  void load(const std::string& code, const kir::Plan& plan, const std::vector<std::string>& entries) override {
    gpu_.make_current();
    drop_graph();
    module_ = load_module(gpu_, code, entries, plan);
    plan_ = &plan;
    launches_.clear();  // made at the first bind of this module
    params_.clear();  // the same at every length: walking the kernels for them is most of a bind
    for (const kir::Kernel& k : plan.kernels) params_.push_back(codegen::kernel_params(k));
  }

  // A symbolic program binds every new length: the launches of the module loaded are updated
  // in place (grids and addresses), so a bind allocates nothing.
  void bind(const std::vector<DevicePtr>& address) override {
    gpu_.make_current();  // the graph stays: the next capture updates it in place
    if (launches_.size() != plan_->kernels.size()) {
      launches_.assign(plan_->kernels.size(), Launch{});
      limits_.clear();
      for (size_t k = 0; k < plan_->kernels.size(); ++k) {
        launches_[k].fn = module_->functions[k];
        launches_[k].args.resize(params_[k].size());
        for (CUdeviceptr& a : launches_[k].args) launches_[k].params.push_back(&a);
        limits_.push_back(function_limits(api(), launches_[k].fn));
      }
    }
    for (size_t k = 0; k < plan_->kernels.size(); ++k) {
      const kir::Kernel& kern = plan_->kernels[k];
      Launch& l = launches_[k];
      l.empty = kern.schedule.threads == 0;
      l.shape = launch_shape(kern.schedule.threads, static_cast<int>(kern.schedule.group), gpu_.limits());
      l.shape.dynamic_shared = static_cast<unsigned>(kern.schedule.shared);  // the staged copy at this length
      validate_launch(kern, l.shape, limits_[k], gpu_.limits());
      for (size_t a = 0; a < params_[k].size(); ++a) l.args[a] = address[params_[k][a]];
    }
  }

  // Stream-ordered where the GPU has memory pools: every use of device memory is on stream_.
  DevicePtr allocate(size_t bytes) override {
    gpu_.make_current();
    CUdeviceptr p = 0;
    if (gpu_.pooled()) check(api().cuMemAllocAsync(&p, bytes ? bytes : 1, stream_), "cuMemAllocAsync");
    else check(api().cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
    return p;
  }
  void free(DevicePtr p) override {
    gpu_.make_current();
    if (gpu_.pooled()) api().cuMemFreeAsync(p, stream_);
    else api().cuMemFree(p);
  }

  HostBlock host_alloc(size_t bytes) override {  // pinned: copies from it are truly asynchronous
    gpu_.make_current();
    void* p = nullptr;
    check(api().cuMemHostAlloc(&p, bytes ? bytes : 1, 0), "cuMemHostAlloc");
    const Driver* d = &api();
    return {static_cast<unsigned char*>(p), bytes, [d](unsigned char* q) { d->cuMemFreeHost(q); }};
  }

  void upload(DevicePtr dst, const void* src, size_t bytes) override {
    gpu_.make_current();
    if (bytes) check(api().cuMemcpyHtoDAsync(dst, src, bytes, stream_), "cuMemcpyHtoDAsync");
  }
  void download(void* dst, DevicePtr src, size_t bytes) override {
    gpu_.make_current();
    if (bytes) check(api().cuMemcpyDtoHAsync(dst, src, bytes, stream_), "cuMemcpyDtoHAsync");
  }
  void copy(DevicePtr dst, DevicePtr src, size_t bytes) override {
    if (bytes) check(api().cuMemcpyDtoDAsync(dst, src, bytes, stream_), "cuMemcpyDtoDAsync");
  }
  void fill(DevicePtr dst, unsigned char byte, size_t bytes) override {
    if (bytes) check(api().cuMemsetD8Async(dst, byte, bytes, stream_), "cuMemsetD8Async");
  }
  void launch(int k) override {
    Launch& l = launches_[k];
    if (l.empty) return;
    check(api().cuLaunchKernel(l.fn, l.shape.grid, 1, 1, l.shape.block, 1, 1, l.shape.dynamic_shared, stream_,
                               l.params.data(), nullptr),
          ("cuLaunchKernel(" + plan_->kernels[k].name + ")").c_str());
  }
  std::shared_ptr<Fence> fence() override {
    gpu_.make_current();
    return std::make_shared<EventFence>(api(), stream_);
  }
  void synchronize() override {
    gpu_.make_current();
    check(api().cuStreamSynchronize(stream_), "cuStreamSynchronize");
  }

  std::unique_ptr<Timer> timer() override {
    gpu_.make_current();
    return std::make_unique<EventTimer>(api(), stream_);
  }
  bool begin_capture() override {
    gpu_.make_current();
    check(api().cuStreamBeginCapture(stream_, kCaptureThreadLocal), "cuStreamBeginCapture");
    return true;
  }
  // A graph of the same shape (a symbolic program at another length: new grids and
  // addresses) updates the instantiated one in place, which costs far less than a new one.
  void end_capture() override {
    CUgraph graph = nullptr;
    check(api().cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture");
    CUgraphExecUpdateResultInfo info{};
    CUresult r = 0;
    if (!exec_ || api().cuGraphExecUpdate(exec_, graph, &info) != 0) {
      drop_graph();
      r = api().cuGraphInstantiateWithFlags(&exec_, graph, 0);
    }
    api().cuGraphDestroy(graph);
    check(r, "cuGraphInstantiate");
  }
  void replay() override {
    gpu_.make_current();
    check(api().cuGraphLaunch(exec_, stream_), "cuGraphLaunch");
  }

 private:
  const Driver& api() const { return gpu_.api(); }
  void drop_graph() {
    if (exec_) api().cuGraphExecDestroy(exec_);
    exec_ = nullptr;
  }

  Gpu& gpu_;
  CUstream stream_ = nullptr;
  std::shared_ptr<LoadedModule> module_;
  const kir::Plan* plan_ = nullptr;
  std::vector<Launch> launches_;
  std::vector<FunctionLimits> limits_;  // of each function of the loaded module
  std::vector<std::vector<int>> params_;  // each kernel's buffer arguments
  CUgraphExec exec_ = nullptr;
};

}  // namespace

TargetInfo target_info() {
  TargetInfo t;
  t.name = "cuda";
  t.summary = "NVIDIA GPUs: CUDA C++ compiled by NVRTC, run through the driver API";
  t.desc = target_desc();
  t.opens_alongside = true;  // CudaDevice does not narrow
  t.program_source = program_source;
  t.source_files = source_files;
  t.make_compiler = [](const CompileOptions&, const Device* dev) -> std::unique_ptr<CodeCompiler> {
    std::string why;
    if (!nvrtc(&why)) throw Error("target 'cuda' is unavailable: " + why);
    Gpu* gpu = dev ? Gpu::get() : nullptr;
    return std::make_unique<NvrtcCompiler>(gpu ? gpu->limits().cc : default_compute_capability());
  };
  t.make_device = [](const CompileOptions&, std::string* why) -> std::unique_ptr<Device> {
    Gpu* gpu = Gpu::get(why);
    if (!gpu) return nullptr;
    return std::make_unique<CudaDevice>(*gpu);
  };
  return t;
}

}  // namespace lockstep::cuda
