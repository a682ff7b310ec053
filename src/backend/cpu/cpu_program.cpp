// The CPU target: the shared pipeline, the CPU printer, the system compiler, and an executor
// that runs the kernels in order over one arena of temporaries.
#include "backend/cpu/cpu_program.h"

#include <cstring>

#include "backend/cpu/cpu_compiler.h"
#include "codegen/cpu_printer.h"
#include "core/error.h"
#include "passes/pipeline.h"
#include "runtime/memory_plan.h"

namespace lockstep::cpu {

namespace {

constexpr size_t kGuard = 4096;            // sentinel bytes around checked buffers
constexpr unsigned char kSentinel = 0xA5;
constexpr unsigned char kPoison = 0xFF;    // all-ones: NaN for every float type

bool same_types(const std::vector<TypeInfo>& a, const std::vector<TypeInfo>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].dtype != b[k].dtype || a[k].dims != b[k].dims) return false;
  return true;
}

bool same_values(const std::vector<std::optional<RefTensor>>& a, const std::vector<std::optional<RefTensor>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].has_value() != b[k].has_value()) return false;
    if (a[k] && (a[k]->shape != b[k]->shape || a[k]->i != b[k]->i)) return false;
  }
  return true;
}

// A byte region with sentinel guards on both sides when checked.
struct Region {
  std::vector<unsigned char> bytes;
  size_t size = 0, guard = 0;
  Region(size_t n, bool checked) : size(n), guard(checked ? kGuard : 0) {
    bytes.assign(n + 2 * guard + 64, checked ? kPoison : 0);
    if (guard) {
      std::memset(base(), kSentinel, guard);
      std::memset(data() + n, kSentinel, guard);
    }
  }
  unsigned char* base() { return bytes.data() + (64 - reinterpret_cast<uintptr_t>(bytes.data()) % 64) % 64; }
  unsigned char* data() { return base() + guard; }
  bool intact() {
    for (size_t k = 0; k < guard; ++k)
      if (base()[k] != kSentinel || data()[size + k] != kSentinel) return false;
    return true;
  }
};

class CpuProgram : public Program {
 public:
  CpuProgram(const Graph& g, const CompileOptions& o) : graph_(g), opts_(o) {}
  const std::string& target() const override { return name_; }

  void prepare(const TensorMap& inputs) override {
    std::vector<TypeInfo> types = bind_inputs(graph_, inputs);
    std::vector<const Tensor*> given;
    for (int v : graph_.inputs) given.push_back(&inputs.at(graph_.values[v].name));
    specialise(types, specialisation_values(graph_, types, given));
  }

  // Compiles for these input types (and values, where shapes depend on them) unless the
  // loaded module already is for exactly these.
  void specialise(const std::vector<TypeInfo>& types, const std::vector<std::optional<RefTensor>>& values) {
    if (module_ && same_types(types, types_) && same_values(values, values_)) return;
    PipelineOptions po{opts_.pass_limit, opts_.verify_each, opts_.dump_ir_dir};
    std::vector<const RefTensor*> vp;
    for (const auto& v : values) vp.push_back(v ? &*v : nullptr);
    PipelineResult r = run_pipeline(graph_, types, po, vp);
    plan_ = std::move(r.plan);
    log_ = std::move(r.log);
    mem_ = plan_memory(plan_);
    if (opts_.checked) check_memory_plan(plan_, mem_);
    module_ = load_module(codegen::cpu_program_source(plan_), CompilerOptions{opts_.use_cache});
    if (module_->kernels.size() != plan_.kernels.size()) throw Error("internal: cpu module kernel count mismatch");
    types_ = types;
    values_ = values;
  }

  std::vector<Tensor> run(const TensorMap& inputs) override {
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
      else if (buf.kind == kir::Buffer::Constant) bufs[b] = const_cast<uint8_t*>(buf.data->bytes.data());
      else if (mem_.offset[b] >= 0) bufs[b] = arena.data() + mem_.offset[b];
    }
    for (int b : plan_.outputs) {
      outs.emplace_back(plan_.buffers[b].bytes(), opts_.checked);
      bufs[b] = outs.back().data();
    }
    for (size_t k = 0; k < plan_.kernels.size(); ++k) {
      module_->kernels[k](bufs.data());
      if (opts_.checked) poison_dead(static_cast<int>(k), bufs);
    }
    return collect(outs, arena);
  }

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
      if (mem_.offset[b] >= 0 && mem_.last[b] == k) std::memset(bufs[b], kPoison, plan_.buffers[b].bytes());
  }

  std::vector<Tensor> collect(std::vector<Region>& outs, Region& arena) {
    if (opts_.checked && !arena.intact()) throw Error("cpu: a kernel wrote past the end of the temporary arena");
    std::vector<Tensor> result;
    for (size_t o = 0; o < plan_.outputs.size(); ++o) {
      const kir::Buffer& buf = plan_.buffers[plan_.outputs[o]];
      if (opts_.checked && !outs[o].intact())
        throw Error("cpu: a kernel wrote out of bounds of output '" + buf.name + "'");
      Tensor t(buf.dtype, buf.shape);
      std::memcpy(t.bytes.data(), outs[o].data(), t.bytes.size());
      result.push_back(std::move(t));
    }
    return result;
  }

  const Graph graph_;  // a copy: the program outlives whatever graph it was made from
  CompileOptions opts_;
  std::string name_ = "cpu";
  std::vector<TypeInfo> types_;
  std::vector<std::optional<RefTensor>> values_;
  kir::Plan plan_;
  std::vector<PassRecord> log_;
  MemoryPlan mem_;
  std::shared_ptr<Module> module_;
};

}  // namespace

std::unique_ptr<Program> compile_cpu(const Graph& g, const CompileOptions& opts) {
  return std::make_unique<CpuProgram>(g, opts);
}

}  // namespace lockstep::cpu
