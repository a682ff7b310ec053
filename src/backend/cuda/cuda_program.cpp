// The CUDA target: the shared pipeline, the CUDA printer, NVRTC, and an executor that runs the
// plan on one stream over one device allocation, replayed as a CUDA graph when asked.
#include "backend/cuda/cuda_program.h"

#include <cstring>

#include "backend/cuda/cuda_device.h"
#include "backend/cuda/device_layout.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "backend/cuda/staging_pool.h"
#include "codegen/cuda_printer.h"
#include "core/error.h"
#include "core/sha256.h"
#include "passes/pipeline.h"
#include "runtime/checked.h"
#include "runtime/memory_plan.h"
#include "verify/faults.h"

namespace lockstep::cuda {

namespace {


// One kernel launch with its arguments bound to device addresses.
struct Launch {
  CUfunction fn = nullptr;
  LaunchShape shape;
  std::vector<CUdeviceptr> args;
  std::vector<void*> params;  // pointers into args, as cuLaunchKernel takes them
  bool empty = false;         // no elements: nothing to launch
};

class CudaProgram : public Program {
 public:
  CudaProgram(const Graph& g, const CompileOptions& o) : graph_(g), opts_(o) {
    std::string why;
    if (!nvrtc(&why)) throw Error("target 'cuda' is unavailable: " + why);
    fault_ = parse_fault(o.fault);
    dev_ = Device::get(&why_no_device_);
  }
  ~CudaProgram() override { release(); }
  const std::string& target() const override { return name_; }

  void prepare(const TensorMap& inputs) override {
    std::string sig = input_signature(graph_, inputs);
    if (code_ && !sig.empty() && sig == signature_) return;
    specialise(specialisation_for(graph_, inputs));
    signature_ = sig;
  }

  std::vector<Tensor> run(const TensorMap& inputs) override {
    start(inputs);
    if (opts_.cuda_graph && (opts_.checked || has_launches())) replay();  // an empty graph is not worth capturing
    else enqueue_plan(false);
    return read_outputs();
  }

  std::vector<GroupValue> run_capture(const TensorMap& inputs) override {
    captured_.clear();  // nothing left over from a capture that threw
    start(inputs);
    enqueue_plan(true);
    std::vector<GroupValue> values = std::move(captured_);
    captured_.clear();
    read_outputs();
    return values;
  }

  // Plain launches with an event after each (and one before the first): the device's times.
  std::vector<KernelTime> profile(const TensorMap& inputs) override {
    start(inputs);
    std::vector<CUevent> marks(launches_.size() + 1, nullptr);
    std::vector<KernelTime> times;
    try {
      for (CUevent& e : marks) check(api().cuEventCreate(&e, 0), "cuEventCreate");
      marks_ = &marks;
      enqueue_plan(false);
      marks_ = nullptr;
      read_outputs();
      for (size_t k = 0; k < launches_.size(); ++k) {
        float ms = 0;
        check(api().cuEventElapsedTime(&ms, marks[k], marks[k + 1]), "cuEventElapsedTime");
        times.push_back({plan_.kernels[k].name, plan_.kernels[k].nodes, ms});
      }
    } catch (...) {
      marks_ = nullptr;
      for (CUevent e : marks)
        if (e) api().cuEventDestroy(e);
      throw;
    }
    for (CUevent e : marks) api().cuEventDestroy(e);
    return times;
  }

  std::vector<ConstantCheck> check_constants() override {
    need_device();
    if (!block_) throw Error("cuda: nothing compiled yet: run or prepare the program first");
    std::vector<ConstantCheck> checks;
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      const kir::Buffer& buf = plan_.buffers[b];
      if (buf.kind != kir::Buffer::Constant) continue;
      std::vector<unsigned char> resident = read_back(address(b), buf.bytes());
      checks.push_back({buf.name, sha256_hex(buf.data->bytes.data(), buf.data->bytes.size()),
                        sha256_hex(resident.data(), resident.size())});
    }
    return checks;
  }

  std::vector<std::string> pass_log() const override {
    std::vector<std::string> lines;
    for (const PassRecord& r : log_) lines.push_back(format_record(r));
    return lines;
  }

  std::vector<std::pair<std::string, std::string>> sources() const override {
    codegen::CudaPrinter printer;
    std::vector<std::pair<std::string, std::string>> files = {{"prelude.cuh", printer.prelude()}};
    for (const kir::Kernel& k : plan_.kernels) files.emplace_back(k.name + ".cu", printer.kernel(plan_, k));
    files.emplace_back("epilogue.cu", printer.epilogue(plan_));
    files.emplace_back("program.cu", source_);  // the translation unit NVRTC compiled
    return files;
  }

 private:
  void need_device() const {
    if (!dev_) throw Error("target 'cuda' cannot run here: " + why_no_device_);
    dev_->make_current();
  }

  // Compiles for these input types (and shape-deciding values) unless already compiled for them.
  void specialise(const Specialisation& s) {
    if (code_ && s == spec_) return;
    release();
    PipelineResult r = run_pipeline(graph_, s, pipeline_options(opts_));
    plan_ = std::move(r.plan);
    log_ = std::move(r.log);
    mem_ = plan_memory(plan_);
    if (opts_.checked) check_memory_plan(plan_, mem_);
    source_ = codegen::cuda_program_source(plan_);
    code_ = cached_device_code(source_, dev_ ? dev_->limits().cc : default_compute_capability(), opts_.use_cache,
                               fault_.kind == Fault::CacheByName);
    spec_ = s;
    if (!dev_) return;
    try {
      load();
    } catch (...) {
      release();
      code_.reset();  // not compiled for these types until a load succeeds
      throw;
    }
  }

  // Module, launch checks, device memory and constants for the compiled plan.
  void load() {
    dev_->make_current();
    std::vector<std::string> names;
    for (const kir::Kernel& k : plan_.kernels) names.push_back(k.name);
    std::vector<long long> sizes;
    for (const kir::Buffer& b : plan_.buffers) sizes.push_back(static_cast<long long>(b.bytes()));
    module_ = load_module(*dev_, *code_, names, sizes, opts_.use_cache);
    layout_ = layout_device_memory(plan_, mem_, opts_.checked);
    block_ = std::make_unique<DeviceBuffer>(*dev_, static_cast<size_t>(layout_.total));
    if ((uninit_kernel_ = uninit_kernel(plan_, fault_)) >= 0)
      kept_ = std::make_unique<DeviceBuffer>(*dev_, plan_.buffers[plan_.kernels[uninit_kernel_].out].bytes());
    check(api().cuStreamCreate(&stream_, kStreamNonBlocking), "cuStreamCreate");
    bind_launches();
    if (opts_.checked) guard_regions();
    upload_constants();
    if (opts_.verify_constants) verify_constants();
  }

  void bind_launches() {
    launches_.clear();
    for (size_t k = 0; k < plan_.kernels.size(); ++k) {
      const kir::Kernel& kern = plan_.kernels[k];
      Launch l;
      l.fn = module_->functions[k];
      int64_t n = codegen::cuda_kernel_threads(plan_, kern);
      l.empty = n == 0;
      l.shape = launch_shape(n, codegen::kCudaBlock, dev_->limits());
      validate_launch(kern, l.shape, function_limits(api(), l.fn), dev_->limits());
      for (int b : codegen::cuda_kernel_params(kern)) l.args.push_back(address(b));
      launches_.push_back(std::move(l));
    }
    for (Launch& l : launches_)  // after the moves: params point into each launch's own args
      for (CUdeviceptr& a : l.args) l.params.push_back(&a);
  }

  void guard_regions() {
    for (const DeviceLayout::Region& r : layout_.regions) {
      fill(base() + r.at - layout_.guard, kSentinelByte, static_cast<size_t>(layout_.guard));
      fill(base() + r.at + r.bytes, kSentinelByte, static_cast<size_t>(layout_.guard));
    }
  }

  void upload_constants() {
    UploadBatch batch(staging(), stream_, fault_.kind == Fault::StagingReuse);
    for (size_t b = 0; b < plan_.buffers.size(); ++b)
      if (plan_.buffers[b].kind == kir::Buffer::Constant)
        batch.upload(address(b), plan_.buffers[b].data->bytes.data(), plan_.buffers[b].bytes());
  }

  void verify_constants() {
    for (const ConstantCheck& c : check_constants())
      if (c.host_sha256 != c.resident_sha256)
        throw Error("cuda: constant '" + c.value + "' on the device differs from the host bytes (sha256 " +
                    c.resident_sha256.substr(0, 16) + " on the device, " + c.host_sha256.substr(0, 16) +
                    " on the host): its upload was corrupted");
  }

  // Compiles if needed and uploads the inputs.
  void start(const TensorMap& inputs) {
    need_device();
    prepare(inputs);
    dev_->make_current();
    UploadBatch batch(staging(), stream_, fault_.kind == Fault::StagingReuse);
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      const kir::Buffer& buf = plan_.buffers[b];
      if (buf.kind != kir::Buffer::Input) continue;
      const Tensor& t = inputs.at(graph_.values[graph_.inputs[buf.io_index]].name);
      batch.upload(address(b), t.bytes.data(), buf.bytes());
    }
  }

  // Every kernel in order on the stream (checked: poison first, and dead temporaries after
  // their last reader). With `capture`, each group's output is read back after its kernel.
  void enqueue_plan(bool capture) {
    if (opts_.checked) {
      fill(base() + layout_.arena_at, kPoisonByte, static_cast<size_t>(layout_.arena_bytes));
      for (int b : plan_.outputs) fill(address(b), kPoisonByte, plan_.buffers[b].bytes());
    }
    if (marks_) check(api().cuEventRecord(marks_->front(), stream_), "cuEventRecord");
    for (size_t k = 0; k < launches_.size(); ++k) {
      Launch& l = launches_[k];
      unwritten_half(k, true);
      if (!l.empty)
        check(api().cuLaunchKernel(l.fn, l.shape.grid, 1, 1, l.shape.block, 1, 1, l.shape.dynamic_shared, stream_,
                                   l.params.data(), nullptr),
              ("cuLaunchKernel(" + plan_.kernels[k].name + ")").c_str());
      unwritten_half(k, false);
      if (marks_) check(api().cuEventRecord((*marks_)[k + 1], stream_), "cuEventRecord");
      if (capture) capture_group(k);
      if (opts_.checked) poison_dead(static_cast<int>(k));
    }
  }

  // The planted uninit:NODE fault: the second half of the kernel's output is saved before the
  // launch and put back after it, so it keeps whatever bytes were there (poison when checked).
  void unwritten_half(size_t k, bool before) {
    if (static_cast<int>(k) != uninit_kernel_) return;
    const kir::Buffer& buf = plan_.buffers[plan_.kernels[k].out];
    size_t half = buf.bytes() / 2, rest = buf.bytes() - half;
    CUdeviceptr out = address(plan_.kernels[k].out) + half;
    if (!rest) return;
    if (before) check(api().cuMemcpyDtoDAsync(kept_->ptr(), out, rest, stream_), "cuMemcpyDtoDAsync (uninit fault)");
    else check(api().cuMemcpyDtoDAsync(out, kept_->ptr(), rest, stream_), "cuMemcpyDtoDAsync (uninit fault)");
  }

  void capture_group(size_t k) {
    const kir::Kernel& kern = plan_.kernels[k];
    const kir::Buffer& buf = plan_.buffers[kern.out];
    Tensor t(buf.dtype, buf.shape);
    std::vector<unsigned char> bytes = read_back(address(kern.out), buf.bytes());
    copy_bytes(t.bytes.data(), bytes.data(), bytes.size());
    captured_.push_back({kern.name, kern.nodes, buf.name, std::move(t)});
  }

  void poison_dead(int k) {
    for (size_t b = 0; b < plan_.buffers.size(); ++b)
      if (plan_.buffers[b].kind == kir::Buffer::Temp && mem_.offset[b] >= 0 && mem_.last[b] == k)
        fill(address(b), kPoisonByte, plan_.buffers[b].bytes());
  }

  void fill(CUdeviceptr at, unsigned char byte, size_t bytes) {
    if (bytes) check(api().cuMemsetD8Async(at, byte, bytes, stream_), "cuMemsetD8Async");
  }

  // The whole plan captured once per compiled shape, then replayed.
  void replay() {
    if (!graph_exec_) {
      check(api().cuStreamBeginCapture(stream_, kCaptureThreadLocal), "cuStreamBeginCapture");
      try {
        enqueue_plan(false);
      } catch (...) {
        CUgraph broken = nullptr;
        api().cuStreamEndCapture(stream_, &broken);
        if (broken) api().cuGraphDestroy(broken);
        throw;
      }
      CUgraph graph = nullptr;
      check(api().cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture");
      CUresult r = api().cuGraphInstantiateWithFlags(&graph_exec_, graph, 0);
      api().cuGraphDestroy(graph);
      check(r, "cuGraphInstantiate");
    }
    check(api().cuGraphLaunch(graph_exec_, stream_), "cuGraphLaunch");
  }

  std::vector<Tensor> read_outputs() {
    std::vector<Tensor> outs;
    for (int b : plan_.outputs) {
      const kir::Buffer& buf = plan_.buffers[b];
      outs.emplace_back(buf.dtype, buf.shape);
      if (buf.bytes())
        check(api().cuMemcpyDtoHAsync(outs.back().bytes.data(), address(b), buf.bytes(), stream_), "cuMemcpyDtoHAsync");
    }
    std::vector<int64_t> counts(plan_.checks.size());  // read with the outputs, one wait for all
    for (size_t k = 0; k < counts.size(); ++k)
      check(api().cuMemcpyDtoHAsync(&counts[k], address(plan_.checks[k].buf), sizeof counts[k], stream_), "cuMemcpyDtoHAsync");
    check(api().cuStreamSynchronize(stream_), "cuStreamSynchronize (running the plan)");  // before the host reads
    if (opts_.checked) check_guards();
    kir::require_checks_pass(plan_, counts);
    return outs;
  }

  void check_guards() {
    for (const DeviceLayout::Region& r : layout_.regions) {
      for (int64_t at : {r.at - layout_.guard, r.at + r.bytes}) {
        std::vector<unsigned char> g = read_back(base() + at, static_cast<size_t>(layout_.guard));
        for (unsigned char c : g)
          if (c != kSentinelByte) throw Error("cuda: a kernel wrote out of bounds of the " + r.what);
      }
    }
  }

  std::vector<unsigned char> read_back(CUdeviceptr from, size_t bytes) {
    std::vector<unsigned char> host(bytes);
    if (bytes) check(api().cuMemcpyDtoHAsync(host.data(), from, bytes, stream_), "cuMemcpyDtoHAsync");
    check(api().cuStreamSynchronize(stream_), "cuStreamSynchronize (read-back)");
    return host;
  }

  void release() {
    if (!dev_) return;
    dev_->make_current();
    if (stream_) api().cuStreamSynchronize(stream_);
    if (graph_exec_) api().cuGraphExecDestroy(graph_exec_);
    graph_exec_ = nullptr;
    if (stream_) api().cuStreamDestroy(stream_);
    stream_ = nullptr;
    block_.reset();
    kept_.reset();
    launches_.clear();
    module_.reset();
  }

  bool has_launches() const {
    for (const Launch& l : launches_)
      if (!l.empty) return true;
    return false;
  }

  const Driver& api() const { return dev_->api(); }
  StagingPool& staging() { return dev_->staging(opts_.staging_slots, opts_.staging_slot_bytes); }
  CUdeviceptr base() const { return block_->ptr(); }
  CUdeviceptr address(int b) const { return layout_.offset[b] < 0 ? 0 : base() + layout_.offset[b]; }

  const Graph graph_;  // a copy: the program outlives whatever graph it was made from
  CompileOptions opts_;
  std::string name_ = "cuda";
  Device* dev_ = nullptr;
  Fault fault_;  // a planted test fault (--inject-fault), or none
  int uninit_kernel_ = -1;               // uninit:NODE: the kernel that leaves half its output unwritten
  std::unique_ptr<DeviceBuffer> kept_;   // ... and where that half's old bytes wait during its launch
  std::string why_no_device_;
  Specialisation spec_;
  std::string signature_;  // input_signature of the inputs spec_ was made for
  kir::Plan plan_;
  std::vector<PassRecord> log_;
  MemoryPlan mem_;
  std::string source_;
  std::shared_ptr<const DeviceCode> code_;
  std::shared_ptr<LoadedModule> module_;
  DeviceLayout layout_;
  std::unique_ptr<DeviceBuffer> block_;
  CUstream stream_ = nullptr;
  std::vector<Launch> launches_;
  CUgraphExec graph_exec_ = nullptr;
  std::vector<GroupValue> captured_;
  std::vector<CUevent>* marks_ = nullptr;  // profile(): an event before the first kernel and after each
};

}  // namespace

std::unique_ptr<Program> compile_cuda(const Graph& g, const CompileOptions& opts) {
  return std::make_unique<CudaProgram>(g, opts);
}

}  // namespace lockstep::cuda
