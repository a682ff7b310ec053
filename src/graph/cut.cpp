#include "graph/cut.h"

#include <algorithm>

#include "core/error.h"

namespace lockstep {

int resolve_cut_name(const Graph& g, const std::string& name) {
  if (name.empty()) return -1;
  int v = g.find_value(name);
  if (v >= 0) return v;
  int n = g.find_node(name);  // a named node's id is its name
  return n < 0 || g.nodes[n].outputs.empty() ? -1 : g.nodes[n].outputs[0];
}

static std::vector<int> resolve_all(const Graph& g, const std::vector<std::string>& names) {
  if (names.empty()) throw Error("cut: no value or node names given");
  std::vector<int> targets;
  std::string unknown;
  for (const auto& name : names) {
    int v = resolve_cut_name(g, name);
    if (v < 0) {
      unknown += (unknown.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    if (std::find(targets.begin(), targets.end(), v) == targets.end()) targets.push_back(v);
  }
  if (!unknown.empty())
    throw Error("cut: no value or node named " + unknown + (g.source.empty() ? "" : " in '" + g.source + "'"));
  return targets;
}

// Walks producers backwards from the targets; nodes are topologically ordered, so one
// reverse sweep marks every node a target depends on.
static std::vector<bool> needed_nodes(const Graph& g, const std::vector<int>& targets) {
  std::vector<bool> value_needed(g.values.size(), false), node_needed(g.nodes.size(), false);
  for (int v : targets) value_needed[v] = true;
  for (int n = static_cast<int>(g.nodes.size()) - 1; n >= 0; --n) {
    const Node& node = g.nodes[n];
    bool any = std::any_of(node.outputs.begin(), node.outputs.end(),
                           [&](int v) { return v >= 0 && value_needed[v]; });
    if (!any) continue;
    node_needed[n] = true;
    for (int v : node.inputs)
      if (v >= 0) value_needed[v] = true;
  }
  return node_needed;
}

Graph cut_at(const Graph& g, const std::vector<std::string>& names) {
  std::vector<int> targets = resolve_all(g, names);
  std::vector<bool> keep_node = needed_nodes(g, targets);
  std::vector<bool> used(g.values.size(), false);
  for (int v : targets) used[v] = true;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!keep_node[n]) continue;
    for (int v : g.nodes[n].inputs) if (v >= 0) used[v] = true;
    for (int v : g.nodes[n].outputs) if (v >= 0) used[v] = true;
  }
  Graph out;
  out.opset = g.opset;
  out.ir_version = g.ir_version;
  out.random_seed = g.random_seed;
  out.producer = g.producer;
  out.source = g.source;
  std::vector<int> remap(g.values.size(), -1);
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (!used[v]) continue;
    remap[v] = static_cast<int>(out.values.size());
    out.values.push_back(g.values[v]);
    out.values.back().producer = -1;
  }
  for (int v : g.inputs)
    if (remap[v] >= 0) out.inputs.push_back(remap[v]);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!keep_node[n]) continue;
    Node node = g.nodes[n];
    for (int& v : node.inputs) if (v >= 0) v = remap[v];
    // An output nobody needs stays an output of the node (ONNX ops keep their arity).
    for (int& v : node.outputs) if (v >= 0) v = remap[v];
    for (int v : node.outputs) if (v >= 0) out.values[v].producer = static_cast<int>(out.nodes.size());
    out.nodes.push_back(std::move(node));
  }
  for (int v : targets) out.outputs.push_back(remap[v]);
  verify_graph(out);
  return out;
}

}  // namespace lockstep

