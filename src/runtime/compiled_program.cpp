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
    t.make_compiler(o, nullptr);  // throws now if this target cannot compile here; compiler() makes the one used
    opening_ = std::async(std::launch::async, open);
    stats_.device_alongside = true;
    return;
  }
  Opened d = open();
  dev_ = std::move(d.dev);
  why_no_device_ = std::move(d.why);
  stats_.device_ms = d.ms;
  if (dev_) dev_->narrow(desc_);
  compiler_ = t.make_compiler(o, dev_.get());
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
    compiler_ = target_.make_compiler(opts_, dev_.get());
  }
  return *compiler_;
}

CompiledProgram::~CompiledProgram() {
  try {
    release();
  } catch (...) {  // a device that fails while tearing down has nothing left to report to
  }
  exec_.reset();  // before the device it runs on
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
  codegen::ProgramSource source = target_.program_source(sp->plan);
  lap("source", t);
  try {
    before_native(t);
  } catch (...) {  // no device to run on: the symbolic program is still worth making later
    sym_tried_ = false;
    throw;
  }
  sym_code_ = cached_code(compiler(), {target_.name, std::move(source.text), opts_.use_cache, opts_.fault.get()});
  sym_entries_ = std::move(source.entries);
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
      entries_ = sym_entries_;
      if (fresh) load();
      else if (exec_->rebind()) ++stats_.grows;
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
  codegen::ProgramSource source = target_.program_source(plan_);
  lap("source", t);
  before_native(t);
  // Before the native compile's seconds, once a device opened alongside is here: a program
  // too large to run is refused now (NVRTC spent 100 s on a 16 GiB Concat bomb first).
  if (dev_)
    require_program_room(*dev_, target_.name, plan_,
                         program_bytes(layout_device_memory(plan_, mem_, opts_.checked, desc_.buffer_align), 0));
  std::shared_ptr<const CompiledCode> code =
      cached_code(compiler(), {target_.name, std::move(source.text), opts_.use_cache, opts_.fault.get()});
  lap("native", t);
  entries_ = std::move(source.entries);
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
  dev_->load(code_->bytes, plan_, entries_);
  lap("load", t);
  if (!exec_) exec_ = std::make_unique<Executor>(*dev_, opts_, desc_.buffer_align, target_.name);
  exec_->place(plan_, mem_, reserved_bytes());
  lap("memory", t);
  exec_->upload_constants();
  if (opts_.verify_constants) exec_->verify_constants();
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
  return layout_device_memory(at, plan_memory(at), opts_.checked, desc_.buffer_align).total;
}

void CompiledProgram::need_device() {
  await_device();
  if (!dev_) throw Error("target '" + target_.name + "' cannot run here: " + why_no_device_);
}

std::vector<Tensor> CompiledProgram::run(const TensorMap& inputs) {
  start(inputs);
  exec_->run();
  return exec_->read_outputs();
}

std::vector<Program::GroupValue> CompiledProgram::run_capture(const TensorMap& inputs) {
  start(inputs);
  return exec_->run_capture();
}

std::vector<Program::KernelTime> CompiledProgram::profile(const TensorMap& inputs) {
  start(inputs);
  return exec_->profile();
}

std::vector<Program::ConstantCheck> CompiledProgram::check_constants() {
  need_device();
  if (!exec_ || !exec_->placed())
    throw Error(target_.name + ": nothing compiled yet: run or prepare the program first");
  return exec_->check_constants();
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
  exec_->upload_inputs(graph_, inputs, sym_words_);
}

// Frees the program's memory on the device (its code stays loaded).
void CompiledProgram::release() {
  if (exec_) exec_->release();  // none yet, or a device still opening: nothing of this program is on it
}

}  // namespace lockstep
