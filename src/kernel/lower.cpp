#include "kernel/lower_ctx.h"

namespace lockstep::kir {

int Lowering::add_buffer(Buffer::Kind kind, DType t, const Shape& s, const std::string& name) {
  Buffer b;
  b.kind = kind;
  b.dtype = t;
  b.shape = s;
  b.name = name;
  plan.buffers.push_back(std::move(b));
  return static_cast<int>(plan.buffers.size()) - 1;
}

ExprP Lowering::read(int v, std::vector<ExprP> idx) const {
  return load(buf[v], shape(v), type(v).dtype, std::move(idx));
}

ExprP Lowering::read_bcast(int v, size_t rank) const {
  const Shape& s = shape(v);
  std::vector<ExprP> idx;
  for (size_t k = 0; k < s.size(); ++k) {
    size_t out_dim = rank - s.size() + k;
    idx.push_back(s[k] == 1 ? icst(0) : var(static_cast<int>(out_dim)));
  }
  return read(v, std::move(idx));
}

void Lowering::emit(int n, int v, ExprP body) {
  buf[v] = add_buffer(Buffer::Temp, type(v).dtype, shape(v), g.values[v].name);
  Kernel k;
  k.name = "k" + std::to_string(plan.kernels.size());
  k.nodes = {node_id(g, n)};
  k.out = buf[v];
  k.body = cast(std::move(body), type(v).dtype);
  plan.kernels.push_back(std::move(k));
}

int Lowering::emit_temp(int n, DType t, const Shape& s, ExprP body) {
  int b = add_buffer(Buffer::Temp, t, s, node_id(g, n) + ":tmp");
  Kernel k;
  k.name = "k" + std::to_string(plan.kernels.size());
  k.nodes = {node_id(g, n)};
  k.out = b;
  k.body = cast(std::move(body), t);
  plan.kernels.push_back(std::move(k));
  return b;
}

void Lowering::count_check(int n, ExprP flags, const Shape& extents, std::string what) {
  int count = emit_temp(n, DType::i64, {}, extents.empty() ? flags : reduce(Fn::Add, std::move(flags), 0, extents));
  plan.checks.push_back({count, node_id(g, n), std::move(what)});
}

static bool all_outputs_known(const Lowering& L, const Node& node) {
  for (int v : node.outputs)
    if (v >= 0 && !L.types.value[v]) return false;
  return true;
}

// Graph outputs live in Output buffers; an output that is an input, a constant, or listed
// twice gets a copy kernel.
static void bind_outputs(Lowering& L) {
  for (size_t k = 0; k < L.g.outputs.size(); ++k) {
    int v = L.g.outputs[k];
    int b = L.buf[v];
    Buffer& buf = L.plan.buffers[b];
    if (buf.kind == Buffer::Temp) {
      buf.kind = Buffer::Output;
      buf.io_index = static_cast<int>(k);
      L.plan.outputs.push_back(b);
      continue;
    }
    int o = L.add_buffer(Buffer::Output, buf.dtype, buf.shape, L.g.values[v].name);
    L.plan.buffers[o].io_index = static_cast<int>(k);
    Kernel copy;
    copy.name = "k" + std::to_string(L.plan.kernels.size());
    copy.nodes = {"output:" + L.g.values[v].name};
    copy.out = o;
    copy.body = load(b, L.plan.buffers[b].shape, L.plan.buffers[b].dtype, out_vars(L.plan.buffers[b].shape.size()));
    L.plan.kernels.push_back(std::move(copy));
    L.plan.outputs.push_back(o);
  }
}

ExprP widened(ExprP e) {
  bool narrow = e->type == DType::f16 || e->type == DType::bf16;
  return narrow ? cast(std::move(e), DType::f32) : e;
}

ExprP narrowed(ExprP e, DType t) { return e->type == t ? e : cast(std::move(e), t); }

// The op families in the order they are asked; each returns false for ops not its own.
using Family = bool (*)(Lowering&, int);
constexpr Family kFamilies[] = {lower_elementwise, lower_movement,      lower_anchor,  lower_reduce,
                                lower_activation,  lower_normalization, lower_pool,    lower_losses,
                                lower_resizes,     lower_attention,     lower_rotary,  lower_scatters,
                                lower_topks,       lower_causal_convs,  lower_einsums, lower_grid_samples};

Plan lower_graph(const Graph& g, const GraphTypes& types) {
  Lowering L{g, types, {}, std::vector<int>(g.values.size(), -1)};
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    int v = g.inputs[k];
    L.buf[v] = L.add_buffer(Buffer::Input, L.type(v).dtype, L.shape(v), g.values[v].name);
    L.plan.buffers[L.buf[v]].io_index = static_cast<int>(k);
    L.plan.inputs.push_back(L.buf[v]);
  }
  auto add_constant = [&](int v, std::shared_ptr<const Tensor> t) {
    L.buf[v] = L.add_buffer(Buffer::Constant, t->dtype, t->shape, g.values[v].name);
    L.plan.buffers[L.buf[v]].data = std::move(t);
  };
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].initializer) add_constant(static_cast<int>(v), g.values[v].initializer);
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
    const Node& node = g.nodes[n];
    for (int v : node.outputs)
      if (v >= 0 && !L.type(v).fully_known())
        throw Unsupported(g.label(n) + ": output '" + g.values[v].name + "' has shape " + L.type(v).str() +
                          ", which is not known when compiling (it depends on a run-time value)");
    if (all_outputs_known(L, node)) {  // shape arithmetic and folded scalars
      for (int v : node.outputs)
        if (v >= 0) add_constant(v, std::make_shared<Tensor>(from_ref(*types.value[v])));
      continue;
    }
    bool lowered = false;
    for (Family family : kFamilies)
      if ((lowered = family(L, n))) break;
    if (!lowered) throw Unsupported(g.label(n) + ": no compiled lowering for this op yet");
  }
  bind_outputs(L);
  return std::move(L.plan);
}

}  // namespace lockstep::kir
