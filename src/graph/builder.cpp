#include "graph/builder.h"

#include "core/error.h"

namespace lockstep {

Attr attr_int(int64_t v) { Attr a; a.kind = Attr::Int; a.i = v; return a; }
// ONNX stores float attributes as float32; rounding here makes the graph in memory compute
// exactly what its exported file says.
Attr attr_float(double v) { Attr a; a.kind = Attr::Float; a.f = static_cast<float>(v); return a; }
Attr attr_string(std::string v) { Attr a; a.kind = Attr::String; a.s = std::move(v); return a; }
Attr attr_ints(std::vector<int64_t> v) { Attr a; a.kind = Attr::Ints; a.ints = std::move(v); return a; }
Attr attr_floats(std::vector<double> v) {
  Attr a;
  a.kind = Attr::Floats;
  for (double x : v) a.floats.push_back(static_cast<float>(x));
  return a;
}
Attr attr_strings(std::vector<std::string> v) {
  Attr a;
  a.kind = Attr::Strings;
  a.strings = std::move(v);
  return a;
}
Attr attr_tensor(Tensor t) {
  Attr a;
  a.kind = Attr::TensorK;
  a.t = std::make_shared<const Tensor>(std::move(t));
  return a;
}

Dim dim(int64_t size) { return Dim{size, {}}; }
Dim dim(std::string symbol) { return Dim{-1, std::move(symbol)}; }

GraphBuilder::GraphBuilder(int opset, int64_t ir_version) {
  g_.opset = opset;
  g_.ir_version = ir_version;
  g_.producer = "lockstep";
}

int GraphBuilder::new_value(const std::string& name) {
  if (name.empty()) throw Error("graph builder: a value needs a name");
  if (ids_.count(name)) throw Error("graph builder: value '" + name + "' is defined twice");
  int v = g_.add_value(name);
  ids_[name] = v;
  return v;
}

static TypeInfo type_of(DType dtype, const std::vector<Dim>& dims) {
  TypeInfo t{dtype, true, {}};
  for (const Dim& d : dims) t.dims.push_back(d.value);
  return t;
}

int GraphBuilder::input(const std::string& name, DType dtype, const std::vector<Dim>& dims) {
  int v = new_value(name);
  g_.values[v].type = type_of(dtype, dims);
  g_.values[v].declared = dims;
  g_.inputs.push_back(v);
  return v;
}

int GraphBuilder::initializer(const std::string& name, Tensor t) {
  int v = new_value(name);
  g_.values[v].type = TypeInfo{t.dtype, true, t.shape};
  g_.values[v].initializer = std::make_shared<const Tensor>(std::move(t));
  return v;
}

std::vector<int> GraphBuilder::node(const std::string& op, const std::string& name,
                                    const std::vector<int>& inputs, Attrs attrs, int num_outputs) {
  int index = static_cast<int>(g_.nodes.size());
  for (int v : inputs)
    if (v < -1 || v >= static_cast<int>(g_.values.size()))
      throw Error("graph builder: node '" + name + "' (" + op + ") reads a value that does not exist");
  Node n{name, op, "", inputs, {}, std::move(attrs)};
  std::string base = name.empty() ? op + "_" + std::to_string(index) : name;
  for (int k = 0; k < num_outputs; ++k) {
    int v = new_value(base + "_output_" + std::to_string(k));
    g_.values[v].producer = index;
    n.outputs.push_back(v);
  }
  g_.nodes.push_back(std::move(n));
  return g_.nodes.back().outputs;
}

int GraphBuilder::op(const std::string& op, const std::string& name, const std::vector<int>& inputs,
                     Attrs attrs) {
  return node(op, name, inputs, std::move(attrs), 1)[0];
}

void GraphBuilder::output(int value) {
  if (value < 0 || value >= static_cast<int>(g_.values.size()))
    throw Error("graph builder: output refers to no value");
  g_.outputs.push_back(value);
}

void GraphBuilder::output(int value, DType dtype, const std::vector<Dim>& dims) {
  output(value);
  Value& v = g_.values[value];
  if (v.type.dtype == DType::undefined) v.type = type_of(dtype, dims);
  v.declared = dims;
}

void GraphBuilder::rename(int value, const std::string& name) {
  if (ids_.count(name)) throw Error("graph builder: value '" + name + "' is defined twice");
  ids_.erase(g_.values.at(value).name);
  g_.values[value].name = name;
  ids_[name] = value;
}

int GraphBuilder::find(const std::string& value_name) const {
  auto it = ids_.find(value_name);
  return it == ids_.end() ? -1 : it->second;
}

Graph GraphBuilder::finish() {
  assign_node_ids(g_);  // once, in the order nodes were added, as import does
  verify_graph(g_);
  Graph out = std::move(g_);
  g_ = Graph{};
  ids_.clear();
  return out;
}

}  // namespace lockstep
