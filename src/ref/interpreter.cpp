#include "ref/interpreter.h"

#include "core/memory.h"
#include "ops/infer.h"
#include "ops/op.h"

namespace lockstep {

// Index of each value's last reader, so intermediates are freed as soon as possible.
static std::vector<int> last_use(const Graph& g) {
  std::vector<int> last(g.values.size(), -1);
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n)
    for (int v : g.nodes[n].inputs)
      if (v >= 0) last[v] = n;
  for (int v : g.outputs) last[v] = static_cast<int>(g.nodes.size());
  return last;
}

// A data-dependent shape may be partly unknown to the shape rule; known parts must agree.
static bool matches(const TypeInfo& t, const Shape& s) {
  if (!t.rank_known) return true;
  if (t.dims.size() != s.size()) return false;
  for (size_t k = 0; k < s.size(); ++k)
    if (t.dims[k] >= 0 && t.dims[k] != s[k]) return false;
  return true;
}

std::vector<RefTensor> run_reference(const Graph& g, const TensorMap& inputs,
                                     const RefOptions& opts) {
  std::vector<TypeInfo> in_types = bind_inputs(g, inputs);
  GraphTypes types = infer_graph(g, &in_types);  // all shapes checked before any work
  std::vector<std::optional<RefTensor>> vals(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].initializer) vals[v] = to_ref(*g.values[v].initializer);
  for (int v : g.inputs) vals[v] = to_ref(inputs.at(g.values[v].name));
  std::vector<int> last = last_use(g);
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
    const Node& node = g.nodes[n];
    RefCtx c(g, n);
    int64_t bytes = 0;  // the node's outputs in float64/int64, checked before any is made
    for (int v : node.outputs) {
      if (v < 0 || !types.type[v].fully_known()) continue;
      int64_t b = checked_bytes(checked_numel(types.type[v].dims), 8);
      if (b < 0 || bytes < 0 || __builtin_add_overflow(bytes, b, &bytes)) bytes = -1;
    }
    try {
      require_memory(bytes, "computing its outputs in float64 (the reference)");
    } catch (const MemoryRefused& e) {
      c.fail(e.what());
    }
    for (int v : node.inputs) c.in.push_back(v >= 0 ? &*vals[v] : nullptr);
    c.out.resize(node.outputs.size());
    try {
      find_op(node.domain, node.op_type)->ref(c);
    } catch (const MemoryRefused& e) {  // a size only the data decides (Tile's repeats)
      c.fail(e.what());
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      int v = node.outputs[k];
      if (v < 0) continue;
      const TypeInfo& t = types.type[v];
      if (c.out[k].dtype != t.dtype || !matches(t, c.out[k].shape))
        c.fail("internal: reference produced " + TypeInfo{c.out[k].dtype, true, c.out[k].shape}.str() +
               " for output " + std::to_string(k) + ", shape rule said " + t.str());
      // Full precision, but not past the output type's range (an f16 sum of 60000 + 60000 is
      // +Inf, as every target computes it, not 120000 for the next node to bring back).
      if (c.out[k].is_float()) clamp_to_range(c.out[k].f, c.out[k].dtype);
      if (opts.on_value) opts.on_value(v, c.out[k]);
      if (last[v] >= 0) vals[v] = std::move(c.out[k]);  // unread outputs are dropped
    }
    for (int v : node.inputs)
      if (v >= 0 && last[v] == n && !g.values[v].initializer) vals[v].reset();
  }
  std::vector<RefTensor> outs;
  for (int v : g.outputs) outs.push_back(*vals[v]);
  return outs;
}

}  // namespace lockstep
