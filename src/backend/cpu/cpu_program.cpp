// The CPU target: the shared pipeline, the CPU printer, the system compiler, and an executor
// that runs the kernels in order over one arena of temporaries.
#include "backend/cpu/cpu_program.h"

#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <functional>

#include "backend/cpu/cpu_compiler.h"
#include "codegen/cpu_printer.h"
#include "core/error.h"
#include "core/sha256.h"
#include "passes/pipeline.h"
#include "runtime/checked.h"
#include "runtime/memory_plan.h"
#include "verify/faults.h"

namespace lockstep::cpu {

namespace {


// A byte region with sentinel guards on both sides when checked.
struct Region {
  std::vector<unsigned char> bytes;
  size_t size = 0, guard = 0;
  Region(size_t n, bool checked) : size(n), guard(checked ? kGuardBytes : 0) {
    bytes.assign(n + 2 * guard + 64, checked ? kPoisonByte : 0);
    if (guard) {
      std::memset(base(), kSentinelByte, guard);
      std::memset(data() + n, kSentinelByte, guard);
    }
  }
  unsigned char* base() { return bytes.data() + (64 - reinterpret_cast<uintptr_t>(bytes.data()) % 64) % 64; }
  unsigned char* data() { return base() + guard; }
  bool intact() {
    for (size_t k = 0; k < guard; ++k)
      if (base()[k] != kSentinelByte || data()[size + k] != kSentinelByte) return false;
    return true;
  }
};

class CpuProgram : public Program {
 public:
  CpuProgram(const Graph& g, const CompileOptions& o) : graph_(g), opts_(o) {}
  const std::string& target() const override { return name_; }

  void prepare(const TensorMap& inputs) override {
    std::string sig = input_signature(graph_, inputs);
    if (module_ && !sig.empty() && sig == signature_) return;
    specialise(specialisation_for(graph_, inputs));
    signature_ = sig;
  }

  // Compiles for these input types (and values, where shapes depend on them) unless the
  // loaded module already is for exactly these.
  void specialise(const Specialisation& s) {
    if (module_ && s == spec_) return;
    module_.reset();  // compiled for nothing until this compile has succeeded
    PipelineResult r = run_pipeline(graph_, s, pipeline_options(opts_));
    plan_ = std::move(r.plan);
    log_ = std::move(r.log);
    mem_ = plan_memory(plan_);
    if (opts_.checked) check_memory_plan(plan_, mem_);
    Fault fault = parse_fault(opts_.fault);
    module_ = load_module(codegen::cpu_program_source(plan_), CompilerOptions{opts_.use_cache, fault.kind == Fault::CacheByName});
    check_module_fits();
    upload_constants(fault);
    spec_ = s;
  }

  std::vector<Tensor> run(const TensorMap& inputs) override {
    return execute(inputs, nullptr);
  }

  std::vector<GroupValue> run_capture(const TensorMap& inputs) override {
    std::vector<GroupValue> groups;
    execute(inputs, [&](int k, void* data) {
      const kir::Kernel& kern = plan_.kernels[k];
      const kir::Buffer& buf = plan_.buffers[kern.out];
      Tensor t(buf.dtype, buf.shape);
      copy_bytes(t.bytes.data(), data, t.bytes.size());
      groups.push_back({kern.name, kern.nodes, buf.name, std::move(t)});
    });
    return groups;
  }

  std::vector<KernelTime> profile(const TensorMap& inputs) override {
    std::vector<double> ms;
    timing_ = &ms;
    try {
      execute(inputs, nullptr);
    } catch (...) {
      timing_ = nullptr;
      throw;
    }
    timing_ = nullptr;
    std::vector<KernelTime> times;
    for (size_t k = 0; k < plan_.kernels.size(); ++k) times.push_back({plan_.kernels[k].name, plan_.kernels[k].nodes, ms[k]});
    return times;
  }

  std::vector<ConstantCheck> check_constants() override {
    std::vector<ConstantCheck> checks;
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      const kir::Buffer& buf = plan_.buffers[b];
      if (buf.kind != kir::Buffer::Constant) continue;
      checks.push_back({buf.name, sha256_hex(buf.data->bytes.data(), buf.data->bytes.size()),
                        sha256_hex(resident_[b].data(), resident_[b].size())});
    }
    return checks;
  }

 private:
  // Runs every kernel; `after` sees each kernel's output right after it ran.
  std::vector<Tensor> execute(const TensorMap& inputs, const std::function<void(int, void*)>& after) {
    prepare(inputs);
    module_->set_threads(opts_.threads);
    std::vector<void*> bufs(plan_.buffers.size(), nullptr);
    Region arena(static_cast<size_t>(mem_.arena_bytes), opts_.checked);
    std::vector<Region> outs;
    outs.reserve(plan_.outputs.size());
    for (size_t b = 0; b < plan_.buffers.size(); ++b) {
      const kir::Buffer& buf = plan_.buffers[b];
      if (buf.kind == kir::Buffer::Input)
        bufs[b] = const_cast<uint8_t*>(inputs.at(graph_.values[graph_.inputs[buf.io_index]].name).bytes.data());
      else if (buf.kind == kir::Buffer::Constant) bufs[b] = resident_[b].data();
      else if (mem_.offset[b] >= 0) bufs[b] = arena.data() + mem_.offset[b];
    }
    for (int b : plan_.outputs) {
      outs.emplace_back(plan_.buffers[b].bytes(), opts_.checked);
      bufs[b] = outs.back().data();
    }
    for (size_t k = 0; k < plan_.kernels.size(); ++k) {
      auto t0 = std::chrono::steady_clock::now();
      run_kernel(static_cast<int>(k), bufs);
      if (timing_) timing_->push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (after) after(static_cast<int>(k), bufs[plan_.kernels[k].out]);
      if (opts_.checked) poison_dead(static_cast<int>(k), bufs);
    }
    return collect(outs, arena);
  }

  // One kernel, with the planted runtime faults: uninit:NODE keeps the old bytes of the second
  // half of its output; staging-reuse overwrites a constant once its first reader ran.
  void run_kernel(int k, std::vector<void*>& bufs) {
    std::vector<uint8_t> kept;
    size_t bytes = plan_.buffers[plan_.kernels[k].out].bytes(), half = bytes / 2;
    auto* out = static_cast<uint8_t*>(bufs[plan_.kernels[k].out]);
    if (k == uninit_kernel_) kept.assign(out + half, out + bytes);
    module_->kernels[k](bufs.data());
    if (k == uninit_kernel_) copy_bytes(out + half, kept.data(), kept.size());
    if (k == staging_reader_) copy_bytes(resident_[staging_victim_].data(), staging_bytes_.data(), staging_bytes_.size());
  }

  // The module must be the one built for this plan: a wrong one would index past buffers.
  void check_module_fits() {
    auto sizes = reinterpret_cast<const long long*>(dlsym(module_->handle, "ls_buffer_bytes"));
    auto count = reinterpret_cast<const int*>(dlsym(module_->handle, "ls_buffer_count"));
    bool fits = sizes && count && *count == static_cast<int>(plan_.buffers.size()) &&
                module_->kernels.size() == plan_.kernels.size();
    for (size_t b = 0; fits && b < plan_.buffers.size(); ++b)
      fits = sizes[b] == static_cast<long long>(plan_.buffers[b].bytes());
    if (!fits)
      throw Error("cpu: the module cache returned a module built for a different program (" +
                  std::to_string(module_->kernels.size()) + " kernels, this plan has " +
                  std::to_string(plan_.kernels.size()) + "): a stale cache entry");
  }

  // Constants are copied once to where kernels read them, as a GPU uploads them; check_constants
  // compares that copy with the host bytes.
  void upload_constants(const Fault& fault) {
    resident_.assign(plan_.buffers.size(), {});
    for (size_t b = 0; b < plan_.buffers.size(); ++b)
      if (plan_.buffers[b].kind == kir::Buffer::Constant) resident_[b] = plan_.buffers[b].data->bytes;
    uninit_kernel_ = uninit_kernel(plan_, fault);
    staging_victim_ = staging_reader_ = -1;
    if (fault.kind != Fault::StagingReuse || (staging_victim_ = staging_victim(plan_)) < 0) return;
    for (size_t k = 0; k < plan_.kernels.size() && staging_reader_ < 0; ++k)
      for (int b : kir::kernel_inputs(plan_.kernels[k]))
        if (b == staging_victim_) staging_reader_ = static_cast<int>(k);
    // The slot's next upload: the following constant's bytes, repeated to the victim's size.
    std::vector<uint8_t> next;
    for (size_t d = 1; d < plan_.buffers.size() && next.empty(); ++d) {
      size_t b = (staging_victim_ + d) % plan_.buffers.size();
      if (plan_.buffers[b].kind == kir::Buffer::Constant && plan_.buffers[b].bytes() > 0) next = resident_[b];
    }
    staging_bytes_.assign(resident_[staging_victim_].size(), 0);
    for (size_t i = 0; !next.empty() && i < staging_bytes_.size(); ++i) staging_bytes_[i] = next[i % next.size()];
  }

 public:
  std::vector<std::string> pass_log() const override {
    std::vector<std::string> lines;
    for (const PassRecord& r : log_) lines.push_back(format_record(r));
    return lines;
  }

  std::vector<std::pair<std::string, std::string>> sources() const override {
    codegen::CpuPrinter printer;
    std::vector<std::pair<std::string, std::string>> files = {{"prelude.h", printer.prelude()}};
    for (const kir::Kernel& k : plan_.kernels) files.emplace_back(k.name + ".cpp", printer.kernel(plan_, k));
    files.emplace_back("kernels.cpp", printer.epilogue(plan_));
    return files;
  }

 private:
  // Fills temporaries whose last reader just ran with NaN, so a stale read shows.
  void poison_dead(int k, std::vector<void*>& bufs) {
    for (size_t b = 0; b < plan_.buffers.size(); ++b)
      if (mem_.offset[b] >= 0 && mem_.last[b] == k) std::memset(bufs[b], kPoisonByte, plan_.buffers[b].bytes());
  }

  std::vector<Tensor> collect(std::vector<Region>& outs, Region& arena) {
    if (opts_.checked && !arena.intact()) throw Error("cpu: a kernel wrote past the end of the temporary arena");
    std::vector<int64_t> counts(plan_.checks.size());
    for (size_t k = 0; k < counts.size(); ++k)
      std::memcpy(&counts[k], arena.data() + mem_.offset[plan_.checks[k].buf], sizeof counts[k]);
    kir::require_checks_pass(plan_, counts);
    std::vector<Tensor> result;
    for (size_t o = 0; o < plan_.outputs.size(); ++o) {
      const kir::Buffer& buf = plan_.buffers[plan_.outputs[o]];
      if (opts_.checked && !outs[o].intact())
        throw Error("cpu: a kernel wrote out of bounds of output '" + buf.name + "'");
      Tensor t(buf.dtype, buf.shape);
      copy_bytes(t.bytes.data(), outs[o].data(), t.bytes.size());
      result.push_back(std::move(t));
    }
    return result;
  }

  const Graph graph_;  // a copy: the program outlives whatever graph it was made from
  CompileOptions opts_;
  std::string name_ = "cpu";
  Specialisation spec_;
  std::string signature_;  // input_signature of the inputs spec_ was made for
  kir::Plan plan_;
  std::vector<PassRecord> log_;
  MemoryPlan mem_;
  std::shared_ptr<Module> module_;
  std::vector<std::vector<uint8_t>> resident_;  // per buffer: a constant's copy kernels read
  int uninit_kernel_ = -1, staging_victim_ = -1, staging_reader_ = -1;
  std::vector<double>* timing_ = nullptr;  // profile(): each kernel's wall time, in ms
  std::vector<uint8_t> staging_bytes_;
};

}  // namespace

std::unique_ptr<Program> compile_cpu(const Graph& g, const CompileOptions& opts) {
  return std::make_unique<CpuProgram>(g, opts);
}

}  // namespace lockstep::cpu
