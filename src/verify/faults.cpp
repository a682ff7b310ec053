#include "verify/faults.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"

namespace lockstep {

using namespace kir;

const char* const kFaultHelp =
    "Test aid: plant a deliberate bug so check/bisect can be shown to catch it.\n"
    "  staging-reuse  a staging buffer is rewritten before the upload that reads it has\n"
    "                 completed: the pool hands each buffer out once per process for weights,\n"
    "                 then reuses buffer 0 without waiting (every target uploads through it)\n"
    "  kernel:NODE    the kernel computing ONNX node NODE reads one input off by one\n"
    "  pass:N         pass application #N inlines at an index off by one\n"
    "                 (N counts the applications of each compile, see --print-pass-log)\n"
    "  cache-by-name  the in-process kernel cache is keyed by a fixed name, not content, so a\n"
    "                 later compile of a different program reuses a stale module\n"
    "  uninit:NODE    NODE's kernel writes only the first half of its output buffer";

namespace {

const char* kinds_list = "staging-reuse, kernel:NODE, pass:N, cache-by-name, uninit:NODE";

// What someone who typed a misspelt or position-based id may have meant: how ids are made,
// and the ids of the nodes of the op type it names ("Relu#1" -> the Relu nodes).
std::string id_hint(const Graph& g, const std::string& id) {
  std::string hint = "a node's id is its ONNX name, else OpType#k with k its index in import order";
  std::string op = id.substr(0, id.find('#')), same;
  int count = 0;
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n)
    if (g.nodes[n].op_type == op && ++count <= 6) same += (same.empty() ? "" : ", ") + node_id(g, n);
  if (count == 0) return hint;
  return hint + "; the " + op + " nodes: " + same + (count > 6 ? ", ..." : "");
}

int64_t load_numel(const Expr& e) { return shape_numel(e.shape); }

// The largest load in `e` that off_by_one can move (first in tree order among equals).
const Expr* largest_movable_load(const ExprP& e) {
  std::vector<const Expr*> loads;
  collect_loads(e, loads);
  const Expr* best = nullptr;
  for (const Expr* ld : loads)
    if (off_by_one(*ld) && (!best || load_numel(*ld) > load_numel(*best))) best = ld;
  return best;
}

}  // namespace

Fault parse_fault(const std::string& spec) {
  Fault f;
  if (spec.empty()) return f;
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon), where = colon == std::string::npos ? "" : spec.substr(colon + 1);
  bool has_where = colon != std::string::npos;
  auto need = [&](bool want) {
    if (want && where.empty()) throw Error("--inject-fault " + spec + ": '" + kind + "' needs a WHERE (" + kind + ":...)");
    if (!want && has_where) throw Error("--inject-fault " + spec + ": '" + kind + "' takes no ':WHERE'");
  };
  if (kind == "staging-reuse") { need(false); f.kind = Fault::StagingReuse; return f; }
  if (kind == "cache-by-name") { need(false); f.kind = Fault::CacheByName; return f; }
  if (kind == "kernel" || kind == "uninit") {
    need(true);
    f.kind = kind == "kernel" ? Fault::Kernel : Fault::Uninit;
    f.node = where;
    return f;
  }
  if (kind == "pass") {
    need(true);
    auto [end, ec] = std::from_chars(where.data(), where.data() + where.size(), f.pass);
    if (ec != std::errc() || end != where.data() + where.size() || f.pass < 1)
      throw Error("--inject-fault " + spec + ": N must be a pass application number >= 1");
    f.kind = Fault::Pass;
    return f;
  }
  throw Error("--inject-fault: unknown fault kind '" + kind + "' (known: " + kinds_list + ")");
}

void check_fault_applies(const std::string& spec, const Graph& g) {
  Fault f = parse_fault(spec);
  if (f.kind != Fault::Kernel && f.kind != Fault::Uninit) return;
  if (g.find_node(f.node) >= 0) return;
  throw Error("--inject-fault " + spec + ": the model has no node named '" + f.node + "'" +
              (g.source.empty() ? "" : " ('" + g.source + "')") + " (" + id_hint(g, f.node) + ")");
}

void check_pass_fault(const std::string& spec, const std::vector<std::string>& pass_log) {
  Fault f = parse_fault(spec);
  if (f.kind != Fault::Pass) return;
  if (f.pass > static_cast<int>(pass_log.size()))
    throw Error("--inject-fault " + spec + ": this compile has only " + std::to_string(pass_log.size()) +
                " pass applications (see --print-pass-log)");
  const std::string& line = pass_log[f.pass - 1];
  for (const char* p : {" inline-view:", " fuse-elementwise:", " fuse-epilogue:", " absorb-window:"})
    if (line.find(p) != std::string::npos) return;
  throw Error("--inject-fault " + spec + ": application '" + line +
              "' is not a fusion; pass faults offset the loads a kernel-pass application moves "
              "(inline-view, fuse-elementwise, fuse-epilogue, absorb-window)");
}

int kernel_of_node(const Plan& p, const std::string& node) {
  int first = -1;
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const auto& ns = p.kernels[k].nodes;
    if (std::find(ns.begin(), ns.end(), node) == ns.end()) continue;
    const std::string& out = p.buffers[p.kernels[k].out].name;
    bool helper = out.size() > 4 && out.compare(out.size() - 4, 4, ":tmp") == 0;  // e.g. a conv's padded input
    if (!helper) return static_cast<int>(k);
    if (first < 0) first = static_cast<int>(k);
  }
  return first;
}

ExprP off_by_one(const Expr& ld) {
  if (ld.op != Op::Load) return nullptr;
  std::vector<ExprP> args = ld.args;
  if (ld.flat) {
    int64_t n = shape_numel(ld.shape);
    if (n < 2) return nullptr;
    return load_flat(ld.buf, ld.shape, ld.type, binary(Fn::Min, add(args[0], icst(1)), icst(n - 1)));
  }
  for (size_t k = args.size(); k-- > 0;) {
    if (ld.shape[k] < 2 || args[k]->op == Op::Const) continue;
    args[k] = binary(Fn::Min, add(args[k], icst(1)), icst(ld.shape[k] - 1));
    return load(ld.buf, ld.shape, ld.type, std::move(args));
  }
  return nullptr;
}

void plant_kernel_fault(Plan& p, const Fault& f) {
  if (f.kind != Fault::Kernel) return;
  int k = kernel_of_node(p, f.node);
  if (k < 0) return;  // not in this graph, or folded away at compile time
  Kernel& kern = p.kernels[k];
  const Expr* victim = largest_movable_load(kern.body);
  if (!victim) return;
  int buf = victim->buf;
  kern.body = replace_loads(kern.body, buf, [](const Expr& ld) {
    ExprP moved = off_by_one(ld);
    return moved ? moved : std::make_shared<const Expr>(ld);
  });
}

int uninit_kernel(const Plan& p, const Fault& f) {
  return f.kind == Fault::Uninit ? kernel_of_node(p, f.node) : -1;
}

}  // namespace lockstep
