#include "passes/pipeline.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/files.h"
#include "kernel/lower.h"
#include "kernel/symbols.h"
#include "ops/infer.h"
#include "passes/passes.h"
#include "passes/schedule.h"
#include "passes/window.h"

namespace lockstep {

using namespace kir;

namespace {

void check_expr(const Plan& p, const Kernel& k, const ExprP& e, int vars) {
  if (e->op == Op::Var && e->i >= vars) throw InternalError("internal: " + k.name + " uses unbound v" + std::to_string(e->i));
  if (e->op == Op::Load) {
    // The symbols' loads keep the shape of the symbols alone: the divisors' multipliers follow.
    auto symbols_only = [&] { return e->buf == p.symbol_buf && e->shape == Shape{static_cast<int64_t>(p.symbols.size())}; };
    if (e->buf < 0 || e->buf >= static_cast<int>(p.buffers.size()) || (p.buffers[e->buf].shape != e->shape && !symbols_only()))
      throw InternalError("internal: " + k.name + " loads buffer b" + std::to_string(e->buf) + " with a wrong shape");
    if (!e->flat && e->args.size() != e->shape.size())
      throw InternalError("internal: " + k.name + " indexes b" + std::to_string(e->buf) + " with the wrong rank");
  }
  int inner = e->op == Op::Reduce ? static_cast<int>(e->i + e->shape.size()) : vars;
  if (e->op == Op::Reduce && e->i != vars) throw InternalError("internal: " + k.name + " reduction vars do not follow the output vars");
  for (const ExprP& a : e->args) check_expr(p, k, a, inner);
}

// --dump-ir: a new or empty folder (claimed once per process, which may then rewrite its own
// files there); each file written whole and checked, a failed write an Error naming it.
void dump(const std::string& dir, const std::string& name, const std::string& text) {
  if (dir.empty()) return;
  claim_output_dir(dir, "--dump-ir folder");
  StagedFiles f;
  f.add((std::filesystem::path(dir) / name).string(), text);
  f.commit();
}

std::string graph_text(const Graph& g) {
  std::string s;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    s += g.label(static_cast<int>(n)) + ":";
    for (int v : node.inputs) s += " " + (v >= 0 ? g.values[v].name : std::string("-"));
    s += " ->";
    for (int v : node.outputs) s += " " + (v >= 0 ? g.values[v].name : std::string("-"));
    s += "\n";
  }
  return s;
}

}  // namespace

namespace {

constexpr int64_t kMaxSpecialised = 64;  // shape parameters are short lists

// A float input decides shapes only as a Resize's or Upsample's scales or roi: those values,
// flagged in one walk (a graph of thousands of inputs would otherwise walk its nodes per input).
std::vector<char> resize_parameters(const Graph& g) {
  std::vector<char> flag(g.values.size(), 0);
  for (const Node& n : g.nodes)
    if (n.op_type == "Resize" || n.op_type == "Upsample")
      for (size_t k = 1; k < n.inputs.size(); ++k)
        if (n.inputs[k] >= 0) flag[n.inputs[k]] = 1;
  return flag;
}

bool may_decide_shapes(const std::vector<char>& resize_parameter, int v, const Tensor& t) {
  return t.numel() <= kMaxSpecialised && (!dtype_is_float(t.dtype) || resize_parameter[v]);
}

// An input value the lowering needs when compiling that is not known yet: the small integer
// inputs are then specialised on, as when they decide shapes.
bool lowering_needs_values(const Graph& g, const GraphTypes& types) {
  for (const Node& n : g.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k] >= 0 && kir::lowering_needs_value(n, k) && !types.value[n.inputs[k]]) return true;
  return false;
}

}  // namespace

std::vector<std::optional<RefTensor>> specialisation_values(const Graph& g, const std::vector<TypeInfo>& types,
                                                           const std::vector<const Tensor*>& inputs) {
  std::vector<std::optional<RefTensor>> values(g.inputs.size());
  GraphTypes plain = infer_graph(g, &types);
  bool all_known = true;
  for (const TypeInfo& t : plain.type) all_known &= t.dtype == DType::undefined || t.fully_known();
  if (all_known && !lowering_needs_values(g, plain)) return values;
  std::vector<char> resize = resize_parameters(g);
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (may_decide_shapes(resize, g.inputs[k], *inputs[k])) values[k] = to_ref(*inputs[k]);
  return values;
}

std::string input_signature(const Graph& g, const TensorMap& inputs) {
  std::string sig;
  std::vector<char> resize = resize_parameters(g);
  for (int v : g.inputs) {
    auto it = inputs.find(g.values[v].name);
    if (it == inputs.end()) return "";
    const Tensor& t = it->second;
    sig += std::to_string(static_cast<int>(t.dtype)) + ":";
    for (int64_t d : t.shape) sig += std::to_string(d) + ",";
    if (may_decide_shapes(resize, v, t)) sig.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    sig += ";";
  }
  return sig;
}

bool Specialisation::operator==(const Specialisation& o) const {
  if (types.size() != o.types.size() || values.size() != o.values.size()) return false;
  for (size_t k = 0; k < types.size(); ++k)
    if (types[k].dtype != o.types[k].dtype || types[k].dims != o.types[k].dims) return false;
  for (size_t k = 0; k < values.size(); ++k) {
    if (values[k].has_value() != o.values[k].has_value()) return false;
    if (values[k] &&
        (values[k]->shape != o.values[k]->shape || values[k]->i != o.values[k]->i || values[k]->f != o.values[k]->f))
      return false;
  }
  return true;
}

Specialisation specialisation_for(const Graph& g, const TensorMap& inputs) {
  Specialisation s;
  s.types = bind_inputs(g, inputs);
  std::vector<const Tensor*> given;
  for (int v : g.inputs) given.push_back(&inputs.at(g.values[v].name));
  s.values = specialisation_values(g, s.types, given);
  return s;
}

PipelineResult run_pipeline(const Graph& g, const Specialisation& s, const PipelineOptions& opts) {
  std::vector<const RefTensor*> values;
  for (const auto& v : s.values) values.push_back(v ? &*v : nullptr);
  return run_pipeline(g, s.types, opts, values);
}

void verify_plan(const Plan& p) {
  std::vector<bool> written(p.buffers.size(), false), absorbed(p.buffers.size(), false);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    written[b] = p.buffers[b].kind == Buffer::Input || p.buffers[b].kind == Buffer::Constant ||
                 p.buffers[b].kind == Buffer::Symbols;
  for (const Kernel& k : p.kernels) {
    check_expr(p, k, k.body, static_cast<int>(p.buffers[k.out].shape.size()));
    if (k.window.value) {  // a producer computed in k's tiles: its buffer is read through a window, never written
      int b = k.window.buf;
      if (b < 0 || b >= static_cast<int>(p.buffers.size()) || written[b] || !window_shape(p, k, b))
        throw InternalError("internal: " + k.name + " computes b" + std::to_string(b) + " in its tiles, which it cannot read as a window");
      check_expr(p, k, k.window.value, static_cast<int>(p.buffers[b].shape.size()));
      absorbed[b] = true;
    }
    for (int b : kernel_inputs(k))
      if (!written[b] || absorbed[b])
        throw InternalError("internal: " + k.name + " reads b" + std::to_string(b) + (absorbed[b] ? ", which no kernel writes" : " before it is written"));
    if (written[k.out] || absorbed[k.out]) throw InternalError("internal: " + k.name + " writes b" + std::to_string(k.out) + " a second time");
    written[k.out] = true;
  }
  for (int b : p.outputs)
    if (!written[b]) throw InternalError("internal: output buffer b" + std::to_string(b) + " is never written");
}

void schedule_for_target(Plan& p, const TargetDesc& t, PassManager& pm) {
  choose_schedules(p, t, pm);  // a symbolic plan's Symbols buffer is one more kernel argument
  block_constant_rows(p, pm);
  transpose_constant_columns(p, pm);
  absorb_windows(p, t, &pm);
  collect_divisors(p);
  verify_plan(p);
}

PipelineResult run_pipeline(const Graph& input, const std::vector<TypeInfo>& inputs, const PipelineOptions& opts,
                            const std::vector<const RefTensor*>& values) {
  PassManager pm(opts.pass_limit);
  pm.fault = opts.fault;
  Graph g = input;
  Plan* plan = nullptr;
  // The observer runs only when it has something to do: the kernel passes keep their
  // bookkeeping (and erased kernels) to themselves between applications unless it is set.
  if (opts.verify_each || !opts.dump_ir_dir.empty()) pm.after_each = [&](const PassRecord& r) {
    std::string name = "pass" + std::to_string(r.number) + "-" + r.pass + ".txt";
    if (plan) {
      if (opts.verify_each) verify_plan(*plan);
      dump(opts.dump_ir_dir, name, describe(*plan));
    } else {
      if (opts.verify_each) verify_graph(g);
      dump(opts.dump_ir_dir, name, graph_text(g));
    }
  };
  fold_constants(g, pm);
  canonicalize(g, pm);
  eliminate_dead_nodes(g, pm);
  verify_graph(g);
  GraphTypes types = infer_graph(g, &inputs, values.empty() ? nullptr : &values);  // shape specialisation
  PipelineResult result;
  result.plan = lower_graph(g, types);
  plan = &result.plan;
  if (opts.target) legalize(result.plan, *opts.target);
  split_wide_kernels(result.plan, pm);
  dump(opts.dump_ir_dir, "lowered.txt", describe(result.plan));
  verify_plan(result.plan);
  inline_views(result.plan, pm);
  fuse_epilogues(result.plan, pm);  // before elementwise fusion can reshape an anchor's readers
  fuse_elementwise(result.plan, pm);
  squeeze_reduction_rows(result.plan, pm);
  remove_dead_kernels(result.plan);
  if (!opts.probe) simplify_indices(result.plan);
  verify_plan(result.plan);
  if (opts.fault) opts.fault->plan_ready(result.plan);  // after the passes, so every target prints it
  if (opts.target && !opts.probe) schedule_for_target(result.plan, *opts.target, pm);
  dump(opts.dump_ir_dir, "final.txt", describe(result.plan));
  result.log = pm.log();
  return result;
}

}  // namespace lockstep
