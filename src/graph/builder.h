// GraphBuilder: writes Graph IR in code (tests, model generators). Nodes are appended in the
// order they are added, so the result is topologically ordered by construction.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace lockstep {

// Attribute constructors, one per Attr kind. Floats are rounded to float32, as ONNX holds them.
Attr attr_int(int64_t v);
Attr attr_float(double v);
Attr attr_string(std::string v);
Attr attr_ints(std::vector<int64_t> v);
Attr attr_floats(std::vector<double> v);
Attr attr_strings(std::vector<std::string> v);
Attr attr_tensor(Tensor t);

// A dimension as a model declares it: a size or a symbol.
Dim dim(int64_t size);
Dim dim(std::string symbol);

using Attrs = std::map<std::string, Attr>;

class GraphBuilder {
 public:
  explicit GraphBuilder(int opset = 17, int64_t ir_version = 8);

  // Graph input; symbolic dims are unknown (-1) in its TypeInfo and keep their symbol.
  int input(const std::string& name, DType dtype, const std::vector<Dim>& dims);
  int initializer(const std::string& name, Tensor t);
  // A node whose outputs are named "<name>_output_<k>" (PyTorch's spelling). Input -1 is an
  // omitted optional input. Returns the output value ids.
  std::vector<int> node(const std::string& op, const std::string& name, const std::vector<int>& inputs,
                        Attrs attrs = {}, int num_outputs = 1);
  // The same for the common one-output case.
  int op(const std::string& op, const std::string& name, const std::vector<int>& inputs, Attrs attrs = {});
  // Marks a value as a graph output, optionally with the dtype and dims the model declares.
  void output(int value);
  void output(int value, DType dtype, const std::vector<Dim>& dims);
  // Renames a value (graph outputs get user-facing names such as "audio").
  void rename(int value, const std::string& name);

  const Graph& graph() const { return g_; }
  int find(const std::string& value_name) const;  // -1 when absent
  // Gives nodes their ids (assign_node_ids), verifies the graph and hands it over.
  Graph finish();

 private:
  int new_value(const std::string& name);
  Graph g_;
  std::map<std::string, int> ids_;
};

}  // namespace lockstep
