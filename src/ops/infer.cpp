#include "ops/infer.h"

#include <algorithm>

#include "ops/op.h"
#include "ops/random.h"

namespace lockstep {

const OpDef* check_node_schema(const Graph& g, int n) {
  const Node& node = g.nodes[n];
  const OpDef* def = find_op(node.domain, node.op_type);
  if (!def) {
    std::string dom = node.domain.empty() ? "" : " in domain '" + node.domain + "'";
    throw Unsupported(g.label(n) + ": operator '" + node.op_type + "'" + dom +
                " is not supported by lockstep");
  }
  int ni = static_cast<int>(node.inputs.size()), no = static_cast<int>(node.outputs.size());
  if (ni < def->min_inputs || ni > def->max_inputs)
    throw Error(g.label(n) + ": has " + std::to_string(ni) + " inputs, expected " +
                std::to_string(def->min_inputs) + ".." + std::to_string(def->max_inputs));
  // ONNX puts optional inputs after the required ones: the first min_inputs must be given.
  for (int k = 0; k < def->min_inputs; ++k)
    if (node.inputs[k] < 0)
      throw Error(g.label(n) + ": required input " + std::to_string(k) + " is omitted (an empty name)");
  if (no < def->min_outputs || no > def->max_outputs)
    throw Error(g.label(n) + ": has " + std::to_string(no) + " outputs, expected " +
                std::to_string(def->min_outputs) + ".." + std::to_string(def->max_outputs));
  for (const auto& [key, attr] : node.attrs) {
    if (std::find(def->attrs.begin(), def->attrs.end(), key) == def->attrs.end())
      throw Unsupported(g.label(n) + ": attribute '" + key + "' is not supported");
    if (attr.kind == Attr::Unsupported)
      throw Unsupported(g.label(n) + ": attribute '" + key + "' has a kind lockstep does not read");
  }
  return def;
}

// Rejects shapes no run could allocate (and whose element count would overflow int64).
static void check_size(const InferCtx& c, const TypeInfo& t) {
  if (!t.rank_known) return;
  __int128 n = 1;
  for (int64_t d : t.dims) {
    if (d < -1) c.fail("internal: shape rule produced a negative dimension in " + t.str());
    if (d < 0) continue;
    n *= d;
    if (n > kMaxElements) c.fail("output shape " + t.str() + " is too large");
  }
}

static bool foldable(const std::vector<const RefTensor*>& vals, const InferCtx& c) {
  if (is_random_op(c.node.op_type)) return false;  // drawn by each target's kernels, as ref draws them
  int64_t total = 0;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    if (!c.has_input(k)) continue;
    if (!vals[k]) return false;
    total += vals[k]->numel();
  }
  for (const TypeInfo& t : c.out)
    if (!t.fully_known() || shape_numel(t.dims) > kFoldLimit) return false;
  return total <= kFoldLimit;
}

static void infer_node(const Graph& g, int n, const OpDef* def, GraphTypes& gt) {
  const Node& node = g.nodes[n];
  InferCtx c(g, n);
  c.in.reserve(node.inputs.size());
  c.in_value.reserve(node.inputs.size());
  for (int v : node.inputs) {
    static const TypeInfo omitted;
    c.in.push_back(v >= 0 ? &gt.type[v] : &omitted);
    c.in_value.push_back(v >= 0 && gt.value[v] ? &*gt.value[v] : nullptr);
  }
  c.out.resize(node.outputs.size());
  c.out_value.resize(node.outputs.size());
  def->infer(c);
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (!c.has_output(k)) continue;
    if (c.out[k].dtype == DType::undefined)
      c.fail("internal: shape rule left output " + std::to_string(k) + " untyped");
    check_size(c, c.out[k]);
  }
  if (foldable(c.in_value, c)) {
    RefCtx r(g, n);
    r.in = c.in_value;
    r.out.resize(node.outputs.size());
    def->ref(r);
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (!c.out_value[k]) c.out_value[k] = std::move(r.out[k]);
  }
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    int v = node.outputs[k];
    if (v < 0) continue;
    gt.type[v] = std::move(c.out[k]);
    gt.value[v] = std::move(c.out_value[k]);  // none: a value folded at other input types is gone
  }
}

// The schema checks run once per graph (they do not depend on types); gt.defs keeps their result.
static void infer_nodes(const Graph& g, GraphTypes& gt) {
  bool checked = gt.defs.size() == g.nodes.size();
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
    if (!checked) gt.defs.push_back(check_node_schema(g, n));
    infer_node(g, n, gt.defs[n], gt);
  }
}

GraphTypes infer_graph(const Graph& g, const std::vector<TypeInfo>* inputs,
                       const std::vector<const RefTensor*>* input_values, int64_t fold_initializers) {
  GraphTypes gt;
  gt.type.resize(g.values.size());
  gt.value.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (!val.initializer) continue;
    gt.type[v] = TypeInfo{val.initializer->dtype, true, val.initializer->shape};
    if (val.initializer->numel() <= std::min(kFoldLimit, fold_initializers)) gt.value[v] = to_ref(*val.initializer);
  }
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    gt.type[g.inputs[k]] = inputs ? (*inputs)[k] : g.values[g.inputs[k]].type;
    if (input_values && (*input_values)[k]) gt.value[g.inputs[k]] = *(*input_values)[k];
  }
  infer_nodes(g, gt);
  return gt;
}

void reinfer_graph(const Graph& g, GraphTypes& gt, const std::vector<TypeInfo>& inputs) {
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    gt.type[g.inputs[k]] = inputs[k];
    gt.value[g.inputs[k]].reset();
  }
  infer_nodes(g, gt);
}

}  // namespace lockstep
