// The bisection core: the program under test, the reference, probe compiles, isolated
// subgraphs, and the one-line verdict of `bisect`.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "graph/cut.h"
#include "verify/bisect_steps.h"
#include "verify/faults.h"
#include "verify/planted_fault.h"

namespace lockstep {

// ---------------------------------------------------------------- isolated subgraphs

Isolated isolate(const Graph& g, std::vector<int> nodes, const TensorMap& values, std::vector<int> outputs) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::vector<bool> produced(g.values.size(), false);
  for (int n : nodes)
    for (int v : g.nodes[n].outputs)
      if (v >= 0) produced[v] = true;
  Isolated iso;
  Graph& out = iso.graph;
  out.opset = g.opset;
  out.ir_version = g.ir_version;
  out.random_seed = g.random_seed;
  out.producer = g.producer;
  out.source = g.source;
  std::vector<int> remap(g.values.size(), -1);
  auto use = [&](int v) {
    if (v < 0 || remap[v] >= 0) return;
    remap[v] = static_cast<int>(out.values.size());
    Value val = g.values[v];
    val.producer = -1;
    if (!produced[v] && !val.initializer) {  // read from outside: an input fed with its value
      auto it = values.find(val.name);
      if (it == values.end()) throw Error("isolate: no value for '" + val.name + "'");
      const Tensor& t = it->second;
      val.type = TypeInfo{t.dtype, true, t.shape};
      std::vector<Dim> was = std::move(val.declared);
      val.declared.clear();
      // A named length stays named, so the nodes alone compile as the program did (one compile
      // for every length, unless the options specialise) and its bugs show there too.
      for (size_t k = 0; k < t.shape.size(); ++k)
        val.declared.push_back(k < was.size() && !was[k].symbol.empty() ? Dim{-1, was[k].symbol} : Dim{t.shape[k], ""});
      out.inputs.push_back(remap[v]);
      iso.inputs[val.name] = t;
    }
    out.values.push_back(std::move(val));
  };
  for (int n : nodes) {
    Node node = g.nodes[n];
    for (int& v : node.inputs) use(v), v = v >= 0 ? remap[v] : -1;
    for (int& v : node.outputs) use(v), v = v >= 0 ? remap[v] : -1;
    for (int v : node.outputs)
      if (v >= 0) out.values[v].producer = static_cast<int>(out.nodes.size());
    out.nodes.push_back(std::move(node));
  }
  if (outputs.empty())
    for (int n : nodes)
      for (int v : g.nodes[n].outputs)
        if (v >= 0) outputs.push_back(v);
  for (int v : outputs) {
    use(v);
    if (std::find(out.outputs.begin(), out.outputs.end(), remap[v]) == out.outputs.end()) out.outputs.push_back(remap[v]);
  }
  verify_graph(out);
  return iso;
}

void add_missing_values(const Graph& g, const std::vector<int>& nodes, const TensorMap& inputs, const std::string& ref,
                        const CompileOptions& o, TensorMap& values) {
  std::vector<bool> produced(g.values.size(), false);
  for (int n : nodes)
    for (int v : g.nodes[n].outputs)
      if (v >= 0) produced[v] = true;
  std::vector<std::string> missing;
  for (int n : nodes)
    for (int v : g.nodes[n].inputs)
      if (v >= 0 && !produced[v] && !g.values[v].initializer && !values.count(g.values[v].name) &&
          std::find(missing.begin(), missing.end(), g.values[v].name) == missing.end())
        missing.push_back(g.values[v].name);
  if (missing.empty()) return;
  Graph cut = cut_at(g, missing);  // outputs in the order of `missing`
  TensorMap in;
  for (int v : cut.inputs) in[cut.values[v].name] = inputs.at(cut.values[v].name);
  std::vector<RefTensor> outs = reference_run(cut, in, ref, o);
  for (size_t k = 0; k < missing.size(); ++k) values[missing[k]] = from_ref(outs[k]);
}

PassApplication parse_pass_record(const std::string& line) {
  PassApplication a;
  size_t sp = line.find(' '), colon = line.find(':');
  if (line.empty() || line[0] != '#' || sp == std::string::npos || colon == std::string::npos) return a;
  a.number = std::atoi(line.c_str() + 1);
  a.pass = line.substr(sp + 1, colon - sp - 1);
  size_t open = line.rfind(" ("), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return a;
  std::string list = line.substr(open + 2, close - open - 2);
  for (size_t at = 0; at <= list.size();) {
    size_t comma = list.find(", ", at);
    a.nodes.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  return a;
}

// ---------------------------------------------------------------- the program under test

Bisector::Bisector(const Graph& g, const TensorMap& in, const BisectOptions& o, Report& r)
    : g_(g), in_(in), o_(o), r_(r), s_(o.target, o.compile, o.ref) {}

Program& Bisector::main() {
  if (!main_) {
    s_.progress("compiling " + std::to_string(g_.nodes.size()) + " nodes");
    main_ = s_.compile(g_, in_);
    check_pass_fault(fault_spec(o_.compile.fault), main_->pass_log());
  }
  return *main_;
}

const std::vector<Tensor>& Bisector::main_outputs() {
  if (!ran_) {
    outs_ = main().run(in_);
    ran_ = true;
  }
  return outs_;
}

int Bisector::pass_applications() { return static_cast<int>(main().pass_log().size()); }

GroupTracer* Bisector::tracer() {
  ref_outputs();
  return tracer_.get();
}

const std::vector<RefTensor>& Bisector::ref_outputs() {
  if (ref_done_) return ref_outs_;
  main_outputs();
  try {
    tracer_ = std::make_unique<GroupTracer>(g_, s_.target(), main().run_capture(in_), o_.tol.all, true);
  } catch (const Unsupported& e) {
    s_.progress(std::string("no capture: ") + e.what());
  }
  s_.progress("running the reference (" + o_.ref + ")");
  ref_outs_ = reference_run(g_, in_, o_.ref, o_.compile, [&](const std::string& name, const RefTensor& v) {
    if (tracer_) tracer_->on_value(name, v);
  });
  if (tracer_)
    for (TracePoint& p : tracer_->points()) r_.trace.push_back(std::move(p));
  ref_done_ = true;
  return ref_outs_;
}

bool Bisector::outputs_diverge() {
  const std::vector<RefTensor>& ref = ref_outputs();
  for (size_t k = 0; k < outs_.size() && k < ref.size(); ++k)
    if (!agrees(compare(to_ref(outs_[k]), ref[k]), o_.tol.of(g_.values[g_.outputs[k]].name))) return true;
  return false;
}

const TensorMap& Bisector::values_for(const std::vector<int>& nodes) {
  if (!known_ready_) {
    known_ = in_;
    if (tracer())
      for (const auto& [name, t] : tracer_->reference()) known_[name] = t;
    known_ready_ = true;
  }
  add_missing_values(g_, nodes, in_, o_.ref, o_.compile, known_);
  return known_;
}

namespace {

// Elements whose bytes are all 0xFF: checked mode's poison, never written by the program.
int64_t poisoned(const Tensor& t) {
  size_t w = dtype_size(t.dtype);
  if (!dtype_is_float(t.dtype) || w == 0) return 0;
  int64_t n = 0;
  for (size_t k = 0; k + w <= t.bytes.size(); k += w) {
    bool all = true;
    for (size_t b = 0; b < w && all; ++b) all = t.bytes[k + b] == 0xFF;
    n += all;
  }
  return n;
}

}  // namespace

ProbeOutcome Bisector::probe(const std::string& mode, const std::string& setting, const Graph& g, const TensorMap& in,
                             const CompileOptions& o, const std::vector<RefTensor>* ref) {
  ProbeOutcome out;
  std::vector<RefTensor> own;
  bool worst_bad = false;
  try {
    if (!ref) ref = &(own = reference_run(g, in, o_.ref, o));
    std::vector<Tensor> outs = s_.compile(g, in, o)->run(in);
    for (size_t k = 0; k < outs.size() && k < ref->size(); ++k) {
      Agreement a = compare(to_ref(outs[k]), (*ref)[k]);
      bool bad = !agrees(a, o_.tol.of(g.values[g.outputs[k]].name));
      out.poisoned += poisoned(outs[k]);
      if ((bad && !worst_bad) || (bad == worst_bad && a.cosine < out.worst.cosine)) out.worst = a, worst_bad = bad;
      out.diverges |= bad;
    }
  } catch (const Error& e) {
    out.diverges = true;
    out.error = e.what();
  }
  std::string note = out.error.empty() ? "" : "failed: " + out.error.substr(0, 200);
  if (out.poisoned) note += std::to_string(out.poisoned) + " elements never written (checked-mode poison)";
  r_.probes.push_back({s_.compiles(), mode, setting, out.worst.cosine, out.worst.rel_l2, out.diverges, note});
  s_.progress(mode + " " + setting + ": " + (out.diverges ? "DIVERGES" : "agrees") + " (cosine " +
              fmt_cosine(out.worst.cosine) + ")");
  return out;
}

void Bisector::add_stage(const StageRow& row) {
  s_.progress("stage " + row.stage + ": " + status_name(row.status) + " (" + row.detail + ")");
  r_.stages.push_back(row);
}

// ---------------------------------------------------------------- verdict

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

int budget(int n) { return static_cast<int>(std::ceil(std::log2(std::max(2, n)))) + 3; }

}  // namespace

Report run_bisect(const Graph& g, const TensorMap& inputs, const BisectOptions& o) {
  Report r;
  r.subcommand = "bisect";
  r.targets = {o.target};
  r.ref = o.ref;
  r.graph_nodes = static_cast<int>(g.nodes.size());
  Bisector b(g, inputs, o, r);
  bool all = o.by == BisectOptions::All;
  StageFinding st;
  NodeFinding nf;
  PassFinding pf;
  if (all || o.by == BisectOptions::Stage) st = b.stages();
  if (all && st.runtime) {
    r.notes.push_back("node and pass bisection skipped: the program's kernels agree on the first compile; the "
                      "difference lies in runtime stage '" + st.stage + "'");
  } else {
    if (all || o.by == BisectOptions::Node) nf = o.cuts ? b.cuts() : b.groups();
    if (all || o.by == BisectOptions::Pass) pf = b.passes(nf.found && nf.alone_diverges);
  }
  std::vector<std::string> parts;
  if (st.differs) parts.push_back("stage " + st.stage + ": " + st.detail);
  if (nf.found)
    parts.push_back(std::string(nf.culprits.size() == 1 ? "node " : "nodes ") + brief_list(nf.culprits, 6) +
                    (nf.unwritten ? " leaves part of its output unwritten" : "") + " (" + nf.detail + ")");
  if (pf.kind == PassFinding::Found)
    parts.push_back("pass #" + std::to_string(pf.app.number) + " " + pf.app.pass + " (" + join(pf.app.nodes) + ")");
  if (pf.kind == PassFinding::NotAPass) parts.push_back("no pass: it diverges with --pass-limit 0 (lowering or code generation)");
  bool differs = !parts.empty() || b.outputs_diverge();
  r.agree = !differs;
  if (parts.empty())
    parts.push_back(differs ? "the outputs diverge but no step could localise it" : "agree: no stage, node or pass diverges");
  for (const std::string& p : parts) r.verdict += (r.verdict.empty() ? "" : "; ") + p;
  r.compiles = b.compiles();
  r.compile_budget = budget(pf.kind == PassFinding::Found ? b.pass_applications() : r.graph_nodes);
  return r;
}

}  // namespace lockstep
