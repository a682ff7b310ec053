#include "graph/graph.h"

#include <set>

#include "core/error.h"

namespace lockstep {

bool TypeInfo::fully_known() const {
  if (!rank_known) return false;
  for (int64_t d : dims) if (d < 0) return false;
  return true;
}

std::string TypeInfo::str() const {
  return std::string(dtype_name(dtype)) + (rank_known ? shape_str(dims) : "[unknown rank]");
}

const Attr* Node::attr(const std::string& key) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

int Graph::find_value(const std::string& name) const {
  for (size_t k = 0; k < values.size(); ++k)
    if (values[k].name == name) return static_cast<int>(k);
  return -1;
}

int Graph::add_value(const std::string& name, TypeInfo type) {
  values.push_back(Value{name, std::move(type), {}, -1, nullptr});
  return static_cast<int>(values.size()) - 1;
}

std::string Graph::label(int node) const {
  const Node& n = nodes[node];
  std::string id = n.name.empty() ? n.op_type + "#" + std::to_string(node) : n.name;
  return "node '" + id + "' (" + n.op_type + ")";
}

void verify_graph(const Graph& g) {
  std::vector<bool> defined(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].initializer) defined[v] = true;
  for (int v : g.inputs) defined[v] = true;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    for (int v : node.inputs) {
      if (v < -1 || v >= static_cast<int>(g.values.size()))
        throw Error(g.label(n) + ": input refers to no value");
      if (v >= 0 && !defined[v])
        throw Error(g.label(n) + ": input '" + g.values[v].name +
                    "' is not produced by any earlier node, initializer or graph input");
    }
    for (int v : node.outputs) {
      if (v < 0) continue;
      if (defined[v])
        throw Error(g.label(n) + ": output '" + g.values[v].name + "' is defined more than once");
      if (g.values[v].producer != static_cast<int>(n))
        throw Error(g.label(n) + ": output '" + g.values[v].name + "' has a wrong producer link");
      defined[v] = true;
    }
  }
  for (int v : g.outputs)
    if (!defined[v]) throw Error("graph output '" + g.values[v].name + "' is never produced");
}

}  // namespace lockstep
