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

int Graph::find_node(const std::string& id) const {
  for (size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].id == id) return static_cast<int>(n);
  return -1;
}

std::string Graph::label(int node) const {
  return "node '" + node_id(*this, node) + "' (" + nodes[node].op_type + ")";
}

const std::string& node_id(const Graph& g, int node) { return g.nodes[node].id; }

namespace {

// `want`, or the first of want~2, want~3, ... that is not taken; records it as taken.
std::string claim(std::set<std::string>& taken, const std::string& want) {
  std::string id = want;
  for (int k = 2; taken.count(id); ++k) id = want + "~" + std::to_string(k);
  taken.insert(id);
  return id;
}

std::set<std::string> taken_ids(const Graph& g) {
  std::set<std::string> taken;
  for (const Node& n : g.nodes)
    if (!n.id.empty()) taken.insert(n.id);
  return taken;
}

}  // namespace

void assign_node_ids(Graph& g) {
  std::set<std::string> taken = taken_ids(g);
  // Names first, so an unnamed node's generated id never takes a name the file gave.
  for (Node& n : g.nodes)
    if (n.id.empty() && !n.name.empty()) n.id = claim(taken, n.name);
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (g.nodes[k].id.empty()) g.nodes[k].id = claim(taken, g.nodes[k].op_type + "#" + std::to_string(k));
}

std::string derived_node_id(const Graph& g, int from, const std::string& op_type) {
  std::set<std::string> taken = taken_ids(g);
  return claim(taken, node_id(g, from) + "/" + op_type);
}

// Ids name nodes in faults and reports, so each must name exactly one node.
static void verify_node_ids(const Graph& g) {
  std::set<std::string> seen;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (g.nodes[n].id.empty())
      throw Error("node #" + std::to_string(n) + " (" + g.nodes[n].op_type + ") has no id");
    if (!seen.insert(g.nodes[n].id).second) throw Error(g.label(n) + ": another node has the same id");
  }
}

void verify_graph(const Graph& g) {
  verify_node_ids(g);  // first: the messages below name nodes by id
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
