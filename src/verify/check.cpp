#include "verify/check.h"
#include "backend/registry.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "core/dirs.h"
#include "core/error.h"
#include "core/process.h"
#include "core/text.h"
#include "frontend/npy.h"
#include "frontend/onnx_export.h"
#include "graph/cut.h"
#include "ref/interpreter.h"
#include "verify/faults.h"
#include "verify/parity.h"
#include "verify/planted_fault.h"

namespace lockstep {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- tolerances

const Tolerance& Tolerances::of(const std::string& output) const {
  auto it = per_output.find(output);
  return it == per_output.end() ? all : it->second;
}

void parse_tolerance(const std::string& text, const std::vector<std::string>& outputs, Tolerances& t) {
  std::string output, pairs = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    output = text.substr(0, colon);
    pairs = text.substr(colon + 1);
  }
  if (!output.empty() && std::find(outputs.begin(), outputs.end(), output) == outputs.end())
    throw Error("--tol " + text + ": the model has no output named '" + output + "'");
  Tolerance tol = output.empty() ? t.all : t.of(output);
  std::stringstream ss(pairs);
  std::string kv;
  bool any = false;
  while (std::getline(ss, kv, ',')) {
    auto eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    double v = 0;
    try {
      size_t used = 0;
      v = std::stod(eq == std::string::npos ? "" : kv.substr(eq + 1), &used);
      if (used != kv.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw Error("--tol " + text + ": '" + kv + "' is not KEY=NUMBER (keys: cosine, rel_l2)");
    }
    if (key == "cosine") {
      if (!(v > 0 && v <= 1)) throw Error("--tol " + text + ": cosine must be greater than 0 and at most 1");
      tol.min_cosine = v;
    } else if (key == "rel_l2") {
      if (!(v >= 0 && std::isfinite(v))) throw Error("--tol " + text + ": rel_l2 must be a finite number >= 0");
      tol.max_rel_l2 = v;
    } else {
      throw Error("--tol " + text + ": unknown key '" + key + "' (keys: cosine, rel_l2)");
    }
    any = true;
  }
  if (!any) throw Error("--tol " + text + ": give cosine=X and/or rel_l2=Y");
  (output.empty() ? t.all : t.per_output[output]) = tol;
}

// ---------------------------------------------------------------- fresh processes

std::string options_line(const CompileOptions& o) {
  std::string line;
  for (const std::string& a : compile_args(o)) line += (line.empty() ? "" : " ") + a;
  return line;
}

std::string fresh_report(const std::vector<Tensor>& outs, const Program& p, const CompileOptions& o) {
  std::string r;
  for (const Tensor& t : outs) r += "sha256=" + tensor_sha256(t) + "\n";
  return r + "plan=" + p.identity() + "\noptions=" + options_line(o) + "\n";
}

FreshResult parse_fresh_report(const std::string& text) {
  FreshResult r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("sha256=", 0) == 0) r.sha256.push_back(line.substr(7));
    else if (line.rfind("plan=", 0) == 0) r.plan = line.substr(5);
    else if (line.rfind("options=", 0) == 0) r.options = line.substr(8);
  }
  return r;
}

FreshResult fresh_process_run(const FreshProcess& p, const std::string& target, const CompileOptions& o) {
  std::vector<std::string> argv = {p.binary, "check"};
  argv.insert(argv.end(), p.model_args.begin(), p.model_args.end());
  for (const std::string& a : {std::string("--targets"), target, std::string("--sha-only")}) argv.push_back(a);
  for (const std::string& a : compile_args(o)) argv.push_back(a);
  ProcessResult r = run_process(argv);  // an argument vector: no shell parses a path or name
  if (r.exit_code != 0) throw Error("fresh process failed: " + r.output.substr(0, 2000));
  return parse_fresh_report(r.output);
}

// ---------------------------------------------------------------- session

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Session::Session(std::string target, CompileOptions opts, std::string ref)
    : target_(std::move(target)), ref_(std::move(ref)), opts_(std::move(opts)), start_(now_s()) {}

std::unique_ptr<Program> Session::compile(const Graph& g, const TensorMap& inputs, const CompileOptions& o) {
  ++compiles_;
  std::unique_ptr<Program> p = lockstep::compile(g, target_, o);
  p->prepare(inputs);
  return p;
}

void Session::progress(const std::string& what) const {
  if (bar_) return bar_->note(target_ + ": " + what);
  char t[32];
  std::snprintf(t, sizeof t, "%.1fs", now_s() - start_);
  std::cerr << "[" << target_ << " " << t << "] " << printable(what) << std::endl;
}

// ---------------------------------------------------------------- reference

std::vector<RefTensor> reference_run(const Graph& g, const TensorMap& inputs, const std::string& ref,
                                     const CompileOptions& o,
                                     const std::function<void(const std::string&, const RefTensor&)>& on_value) {
  if (ref == "ref") {
    RefOptions ro;
    if (on_value) ro.on_value = [&](int v, const RefTensor& t) { on_value(g.values[v].name, t); };
    return run_reference(g, inputs, ro);
  }
  CompileOptions clean = o;
  clean.fault.reset();  // the oracle runs without the planted bug
  std::unique_ptr<Program> p = compile(g, ref, clean);
  std::vector<RefTensor> outs;
  if (on_value) {
    for (const Program::GroupValue& gv : p->run_capture(inputs)) on_value(gv.value, to_ref(gv.data));
  }
  for (const Tensor& t : p->run(inputs)) outs.push_back(to_ref(t));
  return outs;
}

std::map<std::string, int> node_positions(const Graph& g) {
  std::map<std::string, int> pos;
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) pos.emplace(node_id(g, n), n);
  return pos;
}

// ---------------------------------------------------------------- group tracer

GroupTracer::GroupTracer(const Graph& g, std::string target, std::vector<Program::GroupValue> caps, Tolerance tol,
                         bool keep_reference)
    : target_(std::move(target)), caps_(std::move(caps)), tol_(tol), keep_(keep_reference) {
  std::map<std::string, int> pos = node_positions(g);
  points_.resize(caps_.size());
  compared_.assign(caps_.size(), false);
  for (size_t k = 0; k < caps_.size(); ++k) {
    TracePoint& p = points_[k];
    p.target = target_;
    p.kernel = caps_[k].kernel;
    p.value = caps_[k].value;
    p.nodes = caps_[k].nodes;
    for (const std::string& n : p.nodes)
      if (auto it = pos.find(n); it != pos.end()) p.position = std::max(p.position, it->second);
    by_value_[caps_[k].value].push_back(static_cast<int>(k));
  }
}

void GroupTracer::on_value(const std::string& name, const RefTensor& ref) {
  constexpr int64_t kSmall = 1 << 16;  // values a target folds into constants (shapes, scalars)
  auto it = by_value_.find(name);
  if (keep_ && (it != by_value_.end() || ref.numel() <= kSmall)) kept_[name] = from_ref(ref);
  if (it == by_value_.end()) return;
  for (int k : it->second) {
    // A group computed over another shape of as many elements (a conv summed over flattened
    // positions, with its epilogue) holds the value in the same row-major order.
    RefTensor got = to_ref(caps_[k].data);
    if (got.shape != ref.shape && got.numel() == ref.numel()) got.shape = ref.shape;
    points_[k].a = compare(got, ref);
    points_[k].ok = agrees(points_[k].a, tol_);
    compared_[k] = true;
  }
}

std::vector<TracePoint> GroupTracer::points() const {
  std::vector<TracePoint> out;
  for (size_t k = 0; k < points_.size(); ++k)
    if (compared_[k]) out.push_back(points_[k]);
  return out;
}

int GroupTracer::first_bad() const {
  for (size_t k = 0; k < points_.size(); ++k)
    if (compared_[k] && !points_[k].ok) return static_cast<int>(k);
  return -1;
}

// ---------------------------------------------------------------- check

Graph default_aba_model(const Graph& g) {
  if (g.nodes.size() < 2) throw Error("A-B-A needs a second model: give --aba (the model has fewer than 2 nodes)");
  int mid = static_cast<int>(g.nodes.size()) / 2;
  const Node& n = g.nodes[mid];
  return cut_at(g, {n.name.empty() ? g.values[n.outputs[0]].name : n.name});
}

std::vector<std::string> output_sha256(const std::vector<Tensor>& outs) {
  std::vector<std::string> s;
  for (const Tensor& t : outs) s.push_back(tensor_sha256(t));
  return s;
}

namespace {

std::string short_sha(const std::vector<std::string>& s) {
  std::string r;
  for (const std::string& x : s) r += (r.empty() ? "" : ",") + x.substr(0, 12);
  return r;
}

StageRow row(const std::string& target, const std::string& stage, bool ok, std::string detail,
             std::vector<std::string> sha = {}, std::vector<std::string> corrupted = {}) {
  return StageRow{target, stage, ok ? StageRow::Agree : StageRow::Differ, std::move(detail), std::move(sha),
                  std::move(corrupted)};
}

// The constants of `p` whose resident bytes differ from the host's; `count`: how many were
// compared. Throws Unsupported where the target cannot read them back.
std::vector<std::string> mismatched_constants(Program& p, int* count = nullptr) {
  std::vector<std::string> names;
  std::vector<Program::ConstantCheck> checks = p.check_constants();
  for (const auto& c : checks)
    if (c.host_sha256 != c.resident_sha256) names.push_back(c.value);
  if (count) *count = static_cast<int>(checks.size());
  return names;
}

// A fresh compile of `g` with `o`, run once; empty with the error in `why` when it fails.
// With `want`: where the result differs from it, the compile's corrupted constants go to
// `corrupted` (none where the target cannot read them back), so a later stage that differs
// is localised further.
std::vector<std::string> compile_and_hash(Session& s, const Graph& g, const TensorMap& in, const CompileOptions& o,
                                          std::string& why, const std::vector<std::string>* want = nullptr,
                                          std::vector<std::string>* corrupted = nullptr) {
  try {
    std::unique_ptr<Program> p = s.compile(g, in, o);
    std::vector<std::string> sha = output_sha256(p->run(in));
    if (want && corrupted && sha != *want) {
      try {
        *corrupted = mismatched_constants(*p);
      } catch (const Error&) {  // not readable back: the row still says the outputs differ
      }
    }
    return sha;
  } catch (const Error& e) {
    why = e.what();
    return {};
  }
}

// "; its constants differ from the host: 'a', 'b'" where some did.
std::string corrupted_note(const std::string& whose, const std::vector<std::string>& names) {
  return names.empty() ? "" : "; " + whose + " constants differ from the host: " + brief_list(names, 4, "'");
}

// Writes B and its inputs where a fresh process can read them.
FreshProcess stage_model(const Graph& b, const TensorMap& inputs, const std::string& binary, const fs::path& dir) {
  FreshProcess p{binary, {(dir / "model.onnx").string()}};
  save_onnx(b, p.model_args[0]);
  int k = 0;
  for (const auto& [name, t] : inputs) {
    if (b.find_value(name) < 0) continue;
    std::string file = (dir / ("input_" + std::to_string(k++) + ".npy")).string();
    write_npy(file, t);
    p.model_args.push_back("--input=" + name + "=" + file);
  }
  return p;
}

TensorMap inputs_of(const Graph& b, const TensorMap& inputs) {
  TensorMap m;
  for (int v : b.inputs)
    if (auto it = inputs.find(b.values[v].name); it != inputs.end()) m.insert(*it);
  return m;
}

// B's result in a fresh process, or compiled here with the cache off when none can run.
std::vector<std::string> b_alone(Session& s, const Graph& b, const TensorMap& bin, const FreshProcess& proc) {
  std::string why;
  if (proc.binary.empty()) {
    CompileOptions o = s.options();
    o.use_cache = false;
    std::vector<std::string> r = compile_and_hash(s, b, bin, o, why);
    return why.empty() ? r : std::vector<std::string>{"failed: " + why};
  }
  std::vector<std::string> r;
  try {
    PrivateTempDir dir("lockstep-aba-" + s.target());  // fresh and private: nothing planted in it
    FreshProcess p = stage_model(b, bin, proc.binary, dir.path());
    s.count_compile();
    r = fresh_process_run(p, s.target(), s.options()).sha256;
  } catch (const Error& e) {
    r = {std::string("fresh process failed: ") + e.what()};
  }
  return r;
}

}  // namespace

std::string brief_list(const std::vector<std::string>& items, size_t most, const std::string& quote) {
  std::string s;
  for (size_t k = 0; k < items.size() && k < most; ++k) s += (k ? ", " : "") + quote + items[k] + quote;
  if (items.size() > most) s += ", ... (" + std::to_string(items.size()) + " in all)";
  return s;
}

StageRow stage_constants(const std::string& target, Program& p, const std::string& when, std::vector<std::string>* changed) {
  try {
    int n = 0;
    std::vector<std::string> names = mismatched_constants(p, &n);
    if (changed) *changed = names;
    return row(target, "constants", names.empty(),
               names.empty() ? std::to_string(n) + " constants match the host bytes " + when
                             : "resident bytes differ from the host " + when + ": " + brief_list(names, 4, "'"));
  } catch (const Unsupported& e) {
    return {target, "constants", StageRow::Skipped, e.what(), {}};
  }
}

StageRow stage_repeat(Session& s, const Graph& g, const TensorMap& in, const std::vector<std::string>& sha, int compiles) {
  if (compiles <= 1) return {s.target(), "in-process compiles", StageRow::Skipped, "one compile asked for", {}};
  for (int k = 1; k < compiles; ++k) {
    s.progress("in-process compile " + std::to_string(k + 1) + "/" + std::to_string(compiles));
    std::string why;
    std::vector<std::string> bad;
    std::vector<std::string> r = compile_and_hash(s, g, in, s.options(), why, &sha, &bad);
    if (r != sha)
      return row(s.target(), "in-process compiles", false,
                 "compile " + std::to_string(k + 1) + " gives " + (why.empty() ? short_sha(r) : why) +
                     corrupted_note("its", bad),
                 r, bad);
  }
  return row(s.target(), "in-process compiles", true, std::to_string(compiles) + " compiles, one result", sha);
}

StageRow stage_cache(Session& s, const Graph& g, const TensorMap& in, const std::vector<std::string>& sha) {
  CompileOptions o = s.options();
  o.use_cache = !o.use_cache;
  std::string why, what = o.use_cache ? "cache on" : "cache off";
  s.progress("compiling with the " + what);
  std::vector<std::string> bad;
  std::vector<std::string> r = compile_and_hash(s, g, in, o, why, &sha, &bad);
  return row(s.target(), "cache on/off", r == sha,
             what + ": " + (why.empty() ? short_sha(r) : why) + corrupted_note("its", bad), r, bad);
}

StageRow stage_fresh(Session& s, const FreshProcess& p, int processes, const std::vector<std::string>& sha,
                     const std::string& plan) {
  if (p.binary.empty() || processes <= 0) return {s.target(), "fresh processes", StageRow::Skipped, "none asked for", {}};
  const std::string options = options_line(s.options());
  for (int k = 0; k < processes; ++k) {
    s.progress("fresh process " + std::to_string(k + 1) + "/" + std::to_string(processes));
    FreshResult r;
    std::string why;
    try {
      s.count_compile();
      r = fresh_process_run(p, s.target(), s.options());
    } catch (const Error& e) {
      why = e.what();
    }
    std::string process = "process " + std::to_string(k + 1);
    if (why.empty() && r.options != options)
      why = "compiled with other options ('" + r.options + "', this process: '" + options + "')";
    else if (why.empty() && r.plan != plan)
      why = "compiled another program (plan " + r.plan.substr(0, 12) + ", this process: " + plan.substr(0, 12) + ")";
    if (!why.empty() || r.sha256 != sha)
      return row(s.target(), "fresh processes", false,
                 process + " " + (why.empty() ? "gives " + short_sha(r.sha256) : why), r.sha256);
  }
  return row(s.target(), "fresh processes", true,
             std::to_string(processes) + " processes, one result, the same plan" +
                 (plan.empty() ? "" : " (" + plan.substr(0, 12) + ")") + (options.empty() ? "" : " with " + options),
             sha);
}

StageRow stage_aba(Session& s, const Graph& g, const TensorMap& in, const std::vector<std::string>& sha,
                   const Graph* b, const TensorMap& b_inputs, const FreshProcess& p) {
  Graph own;
  std::string which = "--aba model";
  if (!b) {
    try {
      own = default_aba_model(g);
    } catch (const Error& e) {
      return {s.target(), "A-B-A", StageRow::Skipped, e.what(), {}};
    }
    b = &own;
    which = "A cut at node " + std::to_string(g.nodes.size() / 2);
  }
  TensorMap bin = b == &own ? inputs_of(own, in) : b_inputs;
  s.progress("A-B-A: compiling B (" + which + "), then A again");
  std::string why_b, why_a;
  std::vector<std::string> sb = compile_and_hash(s, *b, bin, s.options(), why_b);
  std::vector<std::string> bad;
  std::vector<std::string> sa = compile_and_hash(s, g, in, s.options(), why_a, &sha, &bad);
  std::vector<std::string> alone = b_alone(s, *b, bin, p);
  bool ok = why_b.empty() && why_a.empty() && sa == sha && sb == alone;
  std::string detail = "B = " + which + "; B after A: " + (why_b.empty() ? short_sha(sb) : "failed: " + why_b) +
                       "; B alone: " + short_sha(alone) + "; A again: " + (why_a.empty() ? short_sha(sa) : "failed: " + why_a) +
                       corrupted_note("A again's", bad);
  return row(s.target(), "A-B-A", ok, detail, sa, bad);
}

namespace {

class TargetCheck {
 public:
  TargetCheck(const Graph& g, const TensorMap& in, const CheckOptions& o, const std::string& target, Report& r,
              ProgressBar& bar)
      : g_(g), in_(in), o_(o), s_(target, o.compile, o.ref), r_(r), bar_(bar) {
    s_.set_bar(&bar);
  }

  // Steps of the progress bar per target: one per stage row (run-to-run, constants, in-process
  // compiles, cache on/off, fresh processes, A-B-A).
  static constexpr int kSteps = 6;

  // Compile, run, capture, constants, run to run. False when the target failed outright.
  bool first_run() {
    try {
      s_.progress("compiling " + std::to_string(g_.nodes.size()) + " nodes");
      prog_ = s_.compile(g_, in_);
      outs_ = prog_->run(in_);
      sha_ = output_sha256(outs_);
    } catch (const Error& e) {
      for (int v : g_.outputs)
        r_.outputs.push_back({s_.target(), g_.values[v].name, {}, o_.tol.of(g_.values[v].name), false, e.what()});
      r_.agree = false;
      return false;
    }
    check_pass_fault(fault_spec(o_.compile.fault), prog_->pass_log());  // pass:N beyond this compile is a user error
    std::vector<std::string> again;
    if (o_.trace) {
      try {
        caps_ = prog_->run_capture(in_);
        again = output_shas_from(caps_);
      } catch (const Unsupported&) {
      }
    }
    if (again.size() != sha_.size()) again = output_sha256(prog_->run(in_));
    add(row(s_.target(), "run-to-run", again == sha_, "second run of the same program: " + short_sha(again), again));
    add(stage_constants(s_.target(), *prog_, "after 2 runs"));
    return true;
  }

  std::vector<Program::GroupValue> take_captures() { return std::move(caps_); }

  void outputs(const std::vector<RefTensor>& ref) {
    for (size_t k = 0; k < outs_.size() && k < ref.size(); ++k) {
      const std::string& name = g_.values[g_.outputs[k]].name;
      MetricRow m{s_.target(), name, compare(to_ref(outs_[k]), ref[k]), o_.tol.of(name), false, ""};
      m.ok = agrees(m.a, m.tol);
      r_.agree &= m.ok;
      r_.outputs.push_back(m);
    }
  }

  void determinism() {
    if (!prog_) return;
    add(stage_repeat(s_, g_, in_, sha_, o_.repeat));
    add(stage_cache(s_, g_, in_, sha_));
    add(stage_fresh(s_, o_.process, o_.fresh, sha_, prog_->identity()));
    add(stage_aba(s_, g_, in_, sha_, o_.aba, o_.aba_inputs, o_.process));
    r_.compiles = std::max(r_.compiles, 0) + s_.compiles();
  }

 private:
  std::vector<std::string> output_shas_from(const std::vector<Program::GroupValue>& caps) {
    std::vector<std::string> s;
    for (int v : g_.outputs)
      for (const auto& gv : caps)
        if (gv.value == g_.values[v].name) {
          s.push_back(tensor_sha256(gv.data));
          break;
        }
    return s;
  }

  void add(StageRow row) {
    r_.agree &= row.status != StageRow::Differ;
    bar_.advance(s_.target() + ": " + row.stage + ": " + status_name(row.status) + " (" + row.detail + ")");
    r_.stages.push_back(std::move(row));
  }

  const Graph& g_;
  const TensorMap& in_;
  const CheckOptions& o_;
  Session s_;
  Report& r_;
  ProgressBar& bar_;
  std::unique_ptr<Program> prog_;
  std::vector<Tensor> outs_;
  std::vector<std::string> sha_;
  std::vector<Program::GroupValue> caps_;
};

}  // namespace

Report run_check(const Graph& g, const TensorMap& inputs, const CheckOptions& o) {
  Report r;
  r.subcommand = "check";
  r.targets = o.targets;
  r.ref = o.ref;
  r.graph_nodes = static_cast<int>(g.nodes.size());
  std::vector<std::unique_ptr<TargetCheck>> checks;
  std::vector<GroupTracer> tracers;
  ProgressBar bar(static_cast<int>(o.targets.size()) * TargetCheck::kSteps + 1);  // + the reference
  for (const std::string& t : o.targets) {
    checks.push_back(std::make_unique<TargetCheck>(g, inputs, o, t, r, bar));
    if (checks.back()->first_run())
      tracers.emplace_back(g, t, checks.back()->take_captures(), o.tol.all);
  }
  bar.note(o.ref + ": running the reference");
  std::vector<RefTensor> ref = reference_run(g, inputs, o.ref, o.compile, [&](const std::string& name, const RefTensor& v) {
    for (GroupTracer& t : tracers) t.on_value(name, v);
  });
  bar.advance(o.ref + ": reference done");
  for (auto& c : checks) c->outputs(ref);
  for (const GroupTracer& t : tracers)
    for (TracePoint& p : t.points()) r.trace.push_back(std::move(p));
  for (auto& c : checks) c->determinism();
  r.verdict = r.agree ? "agree: every output within tolerance and bit-identical across runs, compiles and processes"
                      : "disagree:";
  for (const MetricRow& m : r.outputs)
    if (!m.ok) r.verdict += " " + m.target + " output '" + m.output + "' " + (m.error.empty() ? "cosine " + fmt_cosine(m.a.cosine) + " rel_l2 " + fmt_sci(m.a.rel_l2) : "failed") + ";";
  for (const StageRow& s : r.stages)
    if (s.status == StageRow::Differ) r.verdict += " " + s.target + " " + s.stage + " differs;";
  if (!r.agree) r.verdict.pop_back();
  return r;
}

}  // namespace lockstep
