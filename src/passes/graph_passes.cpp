#include <algorithm>

#include "core/memory.h"
#include "ops/op.h"
#include "ops/random.h"
#include "passes/passes.h"

namespace lockstep {

namespace {

// Drops nodes marked dead and renumbers producer links.
void remove_nodes(Graph& g, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (!dead[n]) kept.push_back(std::move(g.nodes[n]));
  g.nodes = std::move(kept);
  for (Value& v : g.values) v.producer = -1;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (int v : g.nodes[n].outputs)
      if (v >= 0) g.values[v].producer = static_cast<int>(n);
}

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (int v : n.inputs)
      if (v >= 0) ++uses[v];
  for (int v : g.outputs) ++uses[v];
  return uses;
}

}  // namespace

void fold_constants(Graph& g, PassManager& pm) {
  std::vector<bool> dead(g.nodes.size(), false);
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
    const Node& node = g.nodes[n];
    bool constant = !is_random_op(node.op_type);
    for (int v : node.inputs) constant &= v < 0 || g.values[v].initializer != nullptr;
    if (!constant || !pm.request("fold-constants", "computed " + node.op_type + " at compile time", {node_id(g, n)}))
      continue;
    RefCtx c(g, n);
    std::vector<RefTensor> ins;
    ins.reserve(node.inputs.size());
    for (int v : node.inputs) {
      if (v >= 0) ins.push_back(to_ref(*g.values[v].initializer));
      c.in.push_back(v >= 0 ? &ins.back() : nullptr);
    }
    c.out.resize(node.outputs.size());
    try {
      find_op(node.domain, node.op_type)->ref(c);
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        int v = node.outputs[k];
        if (v >= 0) g.values[v].initializer = std::make_shared<Tensor>(from_ref(c.out[k]));
      }
    } catch (const MemoryRefused& e) {  // a constant bomb: refused, not allocated
      c.fail(std::string("computed at compile time, ") + e.what());
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      int v = node.outputs[k];
      if (v < 0) continue;
      g.values[v].type = TypeInfo{c.out[k].dtype, true, c.out[k].shape};
    }
    dead[n] = true;
    pm.finished();
  }
  remove_nodes(g, dead);
}

void eliminate_dead_nodes(Graph& g, PassManager& pm) {
  std::vector<int> uses = use_counts(g);
  std::vector<bool> dead(g.nodes.size(), false);
  for (int n = static_cast<int>(g.nodes.size()) - 1; n >= 0; --n) {
    const Node& node = g.nodes[n];
    bool used = false;
    for (int v : node.outputs) used |= v >= 0 && uses[v] > 0;
    if (used || !pm.request("dce", "removed unused " + node.op_type, {node_id(g, n)})) continue;
    dead[n] = true;
    for (int v : node.inputs)
      if (v >= 0) --uses[v];
    pm.finished();
  }
  remove_nodes(g, dead);
}

void canonicalize(Graph& g, PassManager& pm) {
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<char> is_output(g.values.size(), 0);
  for (int v : g.outputs) is_output[v] = 1;
  // A bypassed Identity's readers all come after it (nodes are in topological order), so its
  // output is forwarded as each later node is reached. Only when someone watches the graph
  // between applications (--verify-each, --dump-ir) is every reader rewritten at once.
  bool watched = static_cast<bool>(pm.after_each);
  std::vector<int> forward(g.values.size(), -1);
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) {
    Node& node = g.nodes[n];
    for (int& v : node.inputs)
      if (v >= 0 && forward[v] >= 0) v = forward[v];
    if (node.op_type != "Identity" || node.inputs[0] < 0) continue;
    int from = node.outputs[0], to = node.inputs[0];
    if (from >= 0 && is_output[from]) continue;
    if (!pm.request("canonicalize", "bypassed Identity", {node_id(g, n)})) continue;
    if (watched || from < 0) {
      for (Node& m : g.nodes)
        std::replace(m.inputs.begin(), m.inputs.end(), from, to);
    } else {
      forward[from] = to;
    }
    dead[n] = true;
    pm.finished();
  }
  remove_nodes(g, dead);
}

}  // namespace lockstep
