#include "runtime/compiled_program.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "core/error.h"
#include "core/sha256.h"
#include "kernel/symbols.h"
#include "runtime/checked.h"

namespace lockstep {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

PipelineOptions pipeline_options(const CompileOptions& o, const kir::TargetDesc& t) {
  PipelineOptions p;
  p.pass_limit = o.pass_limit;
  p.verify_each = o.verify_each;
  p.dump_ir_dir = o.dump_ir_dir;
  p.fault = o.fault.get();  // kernel:NODE and pass:N act in the shared pipeline
  p.target = &t;
  return p;
}

// The host's clock where the device has none of its own: each mark waits for the queue.
class HostTimer : public Timer {
 public:
  explicit HostTimer(Device& d) : dev_(d) {}
  void mark() override {
    dev_.synchronize();
    at_.push_back(std::chrono::steady_clock::now());
  }
  std::vector<double> intervals_ms() override {
    std::vector<double> ms;
    for (size_t k = 1; k < at_.size(); ++k)
      ms.push_back(std::chrono::duration<double, std::milli>(at_[k] - at_[k - 1]).count());
    return ms;
  }

 private:
  Device& dev_;
  std::vector<std::chrono::steady_clock::time_point> at_;
};

}  // namespace

CompiledProgram::CompiledProgram(const TargetInfo& t, const Graph& g, const CompileOptions& o)
    : target_(t), graph_(g), opts_(o), desc_(t.desc) {
  auto open = [&t, o] {
    Opened d;
    Clock::time_point t0 = Clock::now();
    d.dev = t.make_device(o, &d.why);
    d.ms = ms_since(t0);
    return d;
  };
  if (t.opens_alongside) {
    t.make_compiler(nullptr);  // throws now if this target cannot compile here; compiler() makes the one used
    opening_ = std::async(std::launch::async, open);
    stats_.device_alongside = true;
    return;
  }
  Opened d = open();
  dev_ = std::move(d.dev);
  why_no_device_ = std::move(d.why);
  stats_.device_ms = d.ms;
  if (dev_) dev_->narrow(desc_);
  compiler_ = t.make_compiler(dev_.get());
}

// Takes the device opened alongside once the compile needs it; true if it had to (the caller
// times the wait). Its errors surface here, as they would have in the constructor.
bool CompiledProgram::await_device() {
  if (!opening_.valid()) return false;
  Opened d = opening_.get();
  dev_ = std::move(d.dev);
  why_no_device_ = std::move(d.why);
  stats_.device_ms = d.ms;
  return true;
}

// A device opening alongside is awaited here; a run with none stops here, not after the
// native compiler's seconds.
void CompiledProgram::before_native(Clock::time_point& t) {
  if (await_device()) lap("device", t);
  if (running_) need_device();
}

CodeCompiler& CompiledProgram::compiler() {
  if (!compiler_) {  // made once the device opened alongside (or its absence) is known
    await_device();
    compiler_ = target_.make_compiler(dev_.get());
  }
  return *compiler_;
}

CompiledProgram::~CompiledProgram() {
  try {
    release();
  } catch (...) {  // a device that fails while tearing down has nothing left to report to
  }
}

void CompiledProgram::prepare(const TensorMap& inputs) {
  std::string sig = input_signature(graph_, inputs);
  if (code_ && !sig.empty() && sig == signature_) return;
  std::vector<TypeInfo> types = bind_inputs(graph_, inputs);
  try {
    if (sym_ && bind_symbolic(types)) {
      signature_ = sig;
      return;
    }
    Specialisation s = specialisation_for(graph_, inputs);
    stats_.phases_ms.clear();  // a compile: its phases replace the last one's
    if (opts_.symbolic && !sym_tried_ && make_symbolic(s) && bind_symbolic(s.types)) {
      signature_ = sig;
      return;
    }
    specialise(s);
  } catch (const InternalError&) {
    throw;
  } catch (const Unsupported&) {
    throw;
  } catch (const Error& e) {  // a shape rule that rejects this length: say which length
    std::string at = length_of(types);
    if (at.empty()) throw;
    throw Error("at " + at + ": " + e.what());
  }
  stats_.symbolic = false;
  signature_ = sig;
}

// "T=1 (input 'x' axis 2)": the model's symbols at these input types; "" when it has none.
std::string CompiledProgram::length_of(const std::vector<TypeInfo>& types) const {
  std::vector<std::string> names = graph_symbols(graph_), where;
  std::vector<int64_t> values = symbol_values(graph_, types, names, &where);
  std::string s;
  for (size_t j = 0; j < names.size(); ++j)
    s += (j ? ", " : "") + names[j] + "=" + std::to_string(values[j]) + " (" + where[j] + ")";
  return s;
}

// The symbolic program for inputs like these, compiled (not loaded); false with the reason in
// the stats where the plan depends on the length in a way it cannot express.
bool CompiledProgram::make_symbolic(const Specialisation& s) {
  sym_tried_ = true;
  std::string why;
  Clock::time_point t = Clock::now();
  std::optional<SymbolicPlan> sp = generalise(graph_, s, pipeline_options(opts_, desc_), &why);
  lap("generalise", t);
  if (!sp) {
    stats_.note = "compiled for each shape: " + why;
    return false;
  }
  std::string source = target_.program_source(sp->plan);
  lap("source", t);
  try {
    before_native(t);
  } catch (...) {  // no device to run on: the symbolic program is still worth making later
    sym_tried_ = false;
    throw;
  }
  sym_code_ = cached_code(compiler(), {target_.name, std::move(source), opts_.use_cache, opts_.fault.get()});
  lap("native", t);
  ++stats_.compiles;
  sym_ = std::move(sp);
  sym_like_ = s;
  return true;
}

// Same dtypes and fixed dims as the inputs the symbolic program was made for.
bool CompiledProgram::fits_symbolic(const std::vector<TypeInfo>& types) const {
  const std::vector<std::string>& names = sym_->plan.symbols;
  for (size_t k = 0; k < types.size(); ++k) {
    const TypeInfo& want = sym_like_.types[k];
    if (types[k].dtype != want.dtype || types[k].dims.size() != want.dims.size()) return false;
    for (size_t d = 0; d < want.dims.size(); ++d)
      if (symbol_index(graph_, k, d, names) < 0 && types[k].dims[d] != want.dims[d]) return false;
  }
  return true;
}

// Serves these input types with the symbolic program: no code generation, no native compile.
// False where the model's shape rules give this length shapes the program does not compute
// (a Slice with a fixed end on the time axis, say): that length is compiled on its own.
bool CompiledProgram::bind_symbolic(const std::vector<TypeInfo>& types) {
  if (!fits_symbolic(types)) return false;
  Clock::time_point t0 = Clock::now();
  const std::vector<std::string>& names = sym_->plan.symbols;
  std::vector<int64_t> values = symbol_values(graph_, types, names);
  std::string why;
  if (!sym_covered_.count(values)) {  // the shape rules at a length never bound before
    if (!covers(graph_, *sym_, types, values, &why, &bind_types_)) {
      stats_.note = "at " + length_of(types) + " " + why + ": compiled for that length on its own";
      return false;
    }
    sym_covered_.insert(values);
  }
  bool fresh = code_ != sym_code_;
  try {
    if (fresh && sym_bound_) stats_.phases_ms.clear();  // loaded again after a specialised program
    Clock::time_point t = Clock::now();
    if (fresh) {
      code_.reset();
      release();
      plan_ = instantiate(*sym_, values);
      log_ = sym_->log;
    } else {
      reinstantiate(*sym_, plan_, values);
    }
    mem_ = plan_memory(plan_, fresh ? nullptr : &mem_);
    if (fresh) lap("plan", t);
    if (opts_.checked) check_memory_plan(plan_, mem_);
    sym_values_ = values;
    sym_words_ = kir::symbol_words(plan_, values);
    spec_ = {};  // a later concrete compile is never mistaken for this one
    if (dev_) {
      code_ = sym_code_;  // load() loads code_
      if (fresh) load();
      else rebind();
    }
  } catch (...) {  // bound to nothing: the next run binds (and loads) again from scratch
    code_.reset();
    signature_.clear();
    try {
      release();
    } catch (...) {  // the first error is the one to report
    }
    throw;
  }
  code_ = sym_code_;
  stats_.binds += sym_bound_ ? 1 : 0;  // the first bind is part of the compile
  sym_bound_ = true;
  stats_.symbolic = true;
  stats_.last_bind_ms = ms_since(t0);
  return true;
}

// Compiles for these input types (and shape-deciding values) unless already compiled for them.
void CompiledProgram::specialise(const Specialisation& s) {
  if (code_ && s == spec_) return;
  code_.reset();  // compiled for nothing until this compile has succeeded (even if release throws)
  release();
  Clock::time_point t = Clock::now();
  PipelineResult r = run_pipeline(graph_, s, pipeline_options(opts_, desc_));
  ++stats_.compiles;
  plan_ = std::move(r.plan);
  log_ = std::move(r.log);
  lap("pipeline", t);
  mem_ = plan_memory(plan_);
  if (opts_.checked) check_memory_plan(plan_, mem_);
  lap("plan", t);
  std::string source = target_.program_source(plan_);
  lap("source", t);
  before_native(t);
  std::shared_ptr<const CompiledCode> code = cached_code(compiler(), {target_.name, std::move(source), opts_.use_cache, opts_.fault.get()});
  lap("native", t);
  if (dev_) {
    code_ = code;
    try {
      load();
    } catch (...) {
      code_.reset();  // not compiled for these types until a load succeeds
      try {
        release();
      } catch (...) {  // the load's error is the one to report
      }
      throw;
    }
  }
  code_ = code;
  spec_ = s;
}

// Code, memory, kernel arguments and constants for the compiled plan.
void CompiledProgram::load() {
  Clock::time_point t = Clock::now();
  dev_->load(code_->bytes, plan_);
  lap("load", t);
  layout_ = layout_device_memory(plan_, mem_, opts_.checked);
  constant_block_ = dev_->allocate(static_cast<size_t>(layout_.constant_total));
  block_bytes_ = std::max(layout_.total, reserved_bytes());
  block_ = dev_->allocate(static_cast<size_t>(block_bytes_));
  bind_addresses();
  lap("memory", t);
  upload_constants();
  if (opts_.verify_constants) verify_constants();
  lap("constants", t);
}

// Adds the time since `t` to this compile's `phase` and starts the next phase's clock.
void CompiledProgram::lap(const char* phase, std::chrono::steady_clock::time_point& t) {
  Clock::time_point now = Clock::now();
  stats_.phases_ms.emplace_back(phase, std::chrono::duration<double, std::milli>(now - t).count());
  t = now;
}

// Bytes of the length-dependent block at the symbol values of --reserve (the others as bound
// now); 0 for a program that is not symbolic or reserves nothing.
int64_t CompiledProgram::reserved_bytes() const {
  if (opts_.reserve.empty() || !sym_ || code_ != sym_code_) return 0;
  const std::vector<std::string>& names = sym_->plan.symbols;
  std::vector<int64_t> values = sym_values_;
  for (const auto& [name, n] : opts_.reserve) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      std::string all;
      for (const std::string& s : names) all += (all.empty() ? "" : ", ") + s;
      throw Error("--reserve " + name + ": the symbolic program has no symbol '" + name + "' (symbols: " + all + ")");
    }
    values[static_cast<size_t>(it - names.begin())] = std::max<int64_t>(n, 1);
  }
  kir::Plan at = instantiate(*sym_, values);
  return layout_device_memory(at, plan_memory(at), opts_.checked).total;
}

// A symbolic program at a new length: the same code and constants, the rest laid out again
// (its allocation grows when the length needs more).
void CompiledProgram::rebind() {
  dev_->synchronize();  // nothing queued still uses the old layout
  layout_ = layout_device_memory(plan_, mem_, opts_.checked);
  if (layout_.total > block_bytes_) {
    DevicePtr old = block_;
    block_ = 0;
    block_bytes_ = 0;
    block_ = dev_->reallocate(old, static_cast<size_t>(layout_.total));
    block_bytes_ = layout_.total;
    ++stats_.grows;
  }
  captured_ = false;  // the launches change with the length
  bind_addresses();
}

// Kernel arguments at the current layout (and the planted fault's spare buffer).
void CompiledProgram::bind_addresses() {
  if (kept_) {
    DevicePtr old = kept_;
    kept_ = 0;
    dev_->free(old);
  }
  if ((uninit_kernel_ = opts_.fault ? opts_.fault->unwritten_kernel(plan_) : -1) >= 0)
    kept_ = dev_->allocate(plan_.buffers[plan_.kernels[uninit_kernel_].out].bytes());
  std::vector<DevicePtr> at(plan_.buffers.size());
  for (size_t b = 0; b < at.size(); ++b) at[b] = address(static_cast<int>(b));
  dev_->bind(at);
  if (opts_.checked) guard_regions();
}

void CompiledProgram::need_device() {
  await_device();
  if (!dev_) throw Error("target '" + target_.name + "' cannot run here: " + why_no_device_);
}

std::vector<Tensor> CompiledProgram::run(const TensorMap& inputs) {
  start(inputs);
  if (opts_.replay && (opts_.checked || has_launches())) replay();  // an empty plan is not worth capturing
  else enqueue_plan(false, nullptr);
  return read_outputs();
}

std::vector<Program::GroupValue> CompiledProgram::run_capture(const TensorMap& inputs) {
  captured_values_.clear();  // nothing left over from a capture that threw
  start(inputs);
  enqueue_plan(true, nullptr);
  std::vector<GroupValue> values = std::move(captured_values_);
  captured_values_.clear();
  read_outputs();
  return values;
}

// Plain launches with a mark before the first kernel and after each: the device's own clock
// where it has one.
std::vector<Program::KernelTime> CompiledProgram::profile(const TensorMap& inputs) {
  start(inputs);
  std::unique_ptr<Timer> timer = dev_->timer();
  if (!timer) timer = std::make_unique<HostTimer>(*dev_);
  enqueue_plan(false, timer.get());
  read_outputs();
  std::vector<double> ms = timer->intervals_ms();
  std::vector<KernelTime> times;
  for (size_t k = 0; k < plan_.kernels.size() && k < ms.size(); ++k) {
    const kir::Kernel& kern = plan_.kernels[k];
    const kir::Expr* red = kir::find_reduce(kern.body);
    KernelTime t{kern.name, kern.nodes, ms[k], red ? "reduction" : "elementwise"};
    double terms = red ? static_cast<double>(shape_numel(red->shape)) : 0;
    t.flops = static_cast<double>(plan_.buffers[kern.out].numel()) * terms * (red && red->fn == kir::Fn::Dot ? 2 : 1);
    t.bytes = static_cast<double>(plan_.buffers[kern.out].bytes());
    for (int b : kir::kernel_inputs(kern)) t.bytes += static_cast<double>(plan_.buffers[b].bytes());
    times.push_back(std::move(t));
  }
  return times;
}

std::vector<Program::ConstantCheck> CompiledProgram::check_constants() {
  need_device();
  if (!block_) throw Error(target_.name + ": nothing compiled yet: run or prepare the program first");
  std::vector<ConstantCheck> checks;
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const kir::Buffer& buf = plan_.buffers[b];
    if (buf.kind != kir::Buffer::Constant) continue;
    std::vector<unsigned char> resident = read_back(address(static_cast<int>(b)), buf.bytes());
    checks.push_back({buf.name, sha256_hex(buf.data->bytes.data(), buf.data->bytes.size()),
                      sha256_hex(resident.data(), resident.size())});
  }
  return checks;
}

std::string CompiledProgram::identity() const {
  if (!code_) return "";
  std::string what = target_.name + "\n" + (dev_ ? dev_->key() : "no device") + "\n" + code_->key;
  return sha256_hex(what.data(), what.size());
}

std::vector<std::string> CompiledProgram::pass_log() const {
  std::vector<std::string> lines;
  for (const PassRecord& r : log_) lines.push_back(format_record(r));
  return lines;
}

std::vector<std::pair<std::string, std::string>> CompiledProgram::sources() const {
  return target_.source_files(sym_ && code_ == sym_code_ ? sym_->plan : plan_);
}

// Compiles if needed and uploads the inputs.
void CompiledProgram::start(const TensorMap& inputs) {
  if (!opening_.valid()) need_device();  // before compiling; a device still opening is awaited in the compile
  running_ = true;
  try {
    prepare(inputs);
  } catch (...) {
    running_ = false;
    throw;
  }
  running_ = false;
  need_device();
  UploadBatch batch(staging(), *dev_, skip_staging_wait());
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const kir::Buffer& buf = plan_.buffers[b];
    if (buf.kind == kir::Buffer::Symbols) batch.upload(address(static_cast<int>(b)), sym_words_.data(), buf.bytes());
    if (buf.kind != kir::Buffer::Input) continue;
    const Tensor& t = inputs.at(graph_.values[graph_.inputs[buf.io_index]].name);
    batch.upload(address(static_cast<int>(b)), t.bytes.data(), buf.bytes());
  }
}

// Every kernel in order (checked: poison first, and dead temporaries after their last
// reader). With `capture`, each group's output is read back after its kernel.
void CompiledProgram::enqueue_plan(bool capture, Timer* timer) {
  if (opts_.checked) {
    fill(block_ + layout_.arena_at, kPoisonByte, static_cast<size_t>(layout_.arena_bytes));
    for (int b : plan_.outputs) fill(address(b), kPoisonByte, plan_.buffers[b].bytes());
  }
  if (timer) timer->mark();
  for (int k = 0; k < static_cast<int>(plan_.kernels.size()); ++k) {
    unwritten_half(k, true);
    dev_->launch(k);
    unwritten_half(k, false);
    if (timer) timer->mark();
    if (capture) capture_group(k);
    if (opts_.checked) poison_dead(k);
  }
}

// The whole plan recorded once per compiled shape, then replayed, where the device can.
void CompiledProgram::replay() {
  if (!captured_) {
    if (!dev_->begin_capture()) return enqueue_plan(false, nullptr);
    try {
      enqueue_plan(false, nullptr);
    } catch (...) {
      try {
        dev_->end_capture();
      } catch (...) {  // the capture is broken anyway; the first error is the one to report
      }
      throw;
    }
    dev_->end_capture();
    captured_ = true;
  }
  dev_->replay();
}

// The planted uninit:NODE fault: the second half of the kernel's output is saved before the
// launch and put back after it, so it keeps whatever bytes were there (poison when checked).
void CompiledProgram::unwritten_half(int k, bool before) {
  if (k != uninit_kernel_) return;
  const kir::Buffer& buf = plan_.buffers[plan_.kernels[k].out];
  size_t half = buf.bytes() / 2, rest = buf.bytes() - half;
  DevicePtr out = address(plan_.kernels[k].out) + half;
  if (!rest) return;
  if (before) dev_->copy(kept_, out, rest);
  else dev_->copy(out, kept_, rest);
}

void CompiledProgram::capture_group(int k) {
  const kir::Kernel& kern = plan_.kernels[k];
  const kir::Buffer& buf = plan_.buffers[kern.out];
  Tensor t(buf.dtype, buf.shape);
  if (buf.bytes()) dev_->download(t.bytes.data(), address(kern.out), buf.bytes());
  dev_->synchronize();
  captured_values_.push_back({kern.name, kern.nodes, buf.name, std::move(t)});
}

void CompiledProgram::guard_regions() {
  for (const DeviceLayout::Region& r : layout_.regions) {
    fill(base(r.constant) + r.at - layout_.guard, kSentinelByte, static_cast<size_t>(layout_.guard));
    fill(base(r.constant) + r.at + r.bytes, kSentinelByte, static_cast<size_t>(layout_.guard));
  }
}

// Fills temporaries whose last reader just ran with NaN, so a stale read shows.
void CompiledProgram::poison_dead(int k) {
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (plan_.buffers[b].kind == kir::Buffer::Temp && mem_.offset[b] >= 0 && mem_.last[b] == k)
      fill(address(static_cast<int>(b)), kPoisonByte, plan_.buffers[b].bytes());
}

void CompiledProgram::upload_constants() {
  UploadBatch batch(staging(), *dev_, skip_staging_wait(), true);
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (plan_.buffers[b].kind == kir::Buffer::Constant)
      batch.upload(address(static_cast<int>(b)), plan_.buffers[b].data->bytes.data(), plan_.buffers[b].bytes());
}

void CompiledProgram::verify_constants() {
  for (const ConstantCheck& c : check_constants())
    if (c.host_sha256 != c.resident_sha256)
      throw Error(target_.name + ": constant '" + c.value + "' on the device differs from the host bytes (sha256 " +
                  c.resident_sha256.substr(0, 16) + " on the device, " + c.host_sha256.substr(0, 16) +
                  " on the host): its upload was corrupted");
}

std::vector<Tensor> CompiledProgram::read_outputs() {
  std::vector<Tensor> outs;
  outs.reserve(plan_.outputs.size());  // downloads complete later, into these very tensors
  for (int b : plan_.outputs) {
    const kir::Buffer& buf = plan_.buffers[b];
    outs.emplace_back(buf.dtype, buf.shape);
    if (buf.bytes()) dev_->download(outs.back().bytes.data(), address(b), buf.bytes());
  }
  std::vector<int64_t> counts(plan_.checks.size());  // read with the outputs, one wait for all
  for (size_t k = 0; k < counts.size(); ++k) dev_->download(&counts[k], address(plan_.checks[k].buf), sizeof counts[k]);
  dev_->synchronize();  // before the host reads
  if (opts_.checked) check_guards();
  kir::require_checks_pass(plan_, counts);
  return outs;
}

void CompiledProgram::check_guards() {
  for (const DeviceLayout::Region& r : layout_.regions)
    for (int64_t at : {r.at - layout_.guard, r.at + r.bytes})
      for (unsigned char c : read_back(base(r.constant) + at, static_cast<size_t>(layout_.guard)))
        if (c != kSentinelByte) throw Error(target_.name + ": a kernel wrote out of bounds of the " + r.what);
}

std::vector<unsigned char> CompiledProgram::read_back(DevicePtr from, size_t bytes) {
  std::vector<unsigned char> host(bytes);
  if (bytes) dev_->download(host.data(), from, bytes);
  dev_->synchronize();
  return host;
}

void CompiledProgram::fill(DevicePtr at, unsigned char byte, size_t bytes) {
  if (bytes) dev_->fill(at, byte, bytes);
}

// Frees the program's memory even when the device reports an error while draining its queue;
// that error is rethrown afterwards.
void CompiledProgram::release() {
  if (!dev_) return;  // none, or still opening: nothing of this program is on it yet
  std::exception_ptr failed;
  try {
    dev_->synchronize();
  } catch (...) {
    failed = std::current_exception();
  }
  DevicePtr blocks[] = {block_, constant_block_, kept_};
  block_ = constant_block_ = kept_ = 0;
  block_bytes_ = 0;
  captured_ = false;
  for (DevicePtr b : blocks)
    if (b) dev_->free(b);
  if (failed) std::rethrow_exception(failed);
}

bool CompiledProgram::has_launches() const {
  for (const kir::Kernel& k : plan_.kernels)
    if (plan_.buffers[k.out].numel() > 0) return true;
  return false;
}

bool CompiledProgram::skip_staging_wait() const { return opts_.fault && opts_.fault->skip_staging_wait(); }

StagingPool& CompiledProgram::staging() {
  return staging_pool(dev_->key(), opts_.staging_slots, opts_.staging_slot_bytes);
}

}  // namespace lockstep
