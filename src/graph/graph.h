// The graph IR: SSA values, nodes that keep their ONNX names, attributes, initializers.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace lockstep {

// A declared dimension: a fixed size, a symbol ("T") bound at run time, or unknown.
struct Dim {
  int64_t value = -1;
  std::string symbol;
  bool known() const { return value >= 0; }
};

// Static type of a value: dtype and, when known, rank and dims (-1 = not known yet).
struct TypeInfo {
  DType dtype = DType::undefined;
  bool rank_known = false;
  Shape dims;
  bool fully_known() const;
  std::string str() const;  // "float32[1,?,1024]"
};

struct Attr {
  enum Kind { Int, Float, String, Ints, Floats, Strings, TensorK, Unsupported };
  Kind kind = Unsupported;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::shared_ptr<const Tensor> t;
};

struct Value {
  std::string name;
  TypeInfo type;
  std::vector<Dim> declared;               // graph inputs/outputs: dims as the model states them
  int producer = -1;                        // node index, or -1 for inputs and initializers
  std::shared_ptr<const Tensor> initializer;  // set for initializers
};

struct Node {
  std::string name;     // as in the ONNX file; may be empty there (see `id`)
  std::string op_type;
  std::string domain;   // "" for the default ONNX domain
  std::vector<int> inputs;   // value ids; -1 for an omitted optional input
  std::vector<int> outputs;  // value ids; -1 for an omitted optional output
  std::map<std::string, Attr> attrs;
  // Stable identity, given once when the graph is made (assign_node_ids) and copied with the
  // node by every pass, cut and subgraph, so removing a node never renames another.
  std::string id = {};

  const Attr* attr(const std::string& key) const;
  bool has(const std::string& key) const { return attrs.count(key) != 0; }
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order (import sorts and checks this)
  std::vector<int> inputs;  // graph inputs that are not initializers
  std::vector<int> outputs;
  int opset = 0;            // default-domain opset import
  int64_t ir_version = 0;
  std::string producer;
  std::string source;       // file the graph came from, for messages
  uint64_t random_seed = 0;  // keys the streams of random nodes without a seed (--seed)

  int find_value(const std::string& name) const;  // -1 when absent
  int add_value(const std::string& name, TypeInfo type = {});
  int find_node(const std::string& id) const;  // the node with this id; -1 when absent
  // "node 'x' (Conv)", by the node's id.
  std::string label(int node) const;
};

// The one spelling of a node in reports, kernel comments, pass logs, faults, bisect and reduce.
const std::string& node_id(const Graph& g, int node);

// Gives each node without an id one: its ONNX name, else "OpType#k" (k: its index in g.nodes,
// which is import order when a graph is made). Names claim first, then generated ids, each in
// node order; an id already taken gets "~2", "~3", ... (the first free), so ids are unique.
void assign_node_ids(Graph& g);

// A unique id for a node a transformation creates from node `from`: "<from's id>/<op_type>".
std::string derived_node_id(const Graph& g, int from, const std::string& op_type);

// Checks SSA form, topological order, value references, output coverage and that node ids are
// present and unique; throws Error.
void verify_graph(const Graph& g);

}  // namespace lockstep
