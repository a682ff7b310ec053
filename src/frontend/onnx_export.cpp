#include "frontend/onnx_export.h"

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "core/files.h"
#include "frontend/npy.h"
#include "ops/infer.h"

namespace lockstep {

namespace fs = std::filesystem;

static void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  if (!dtype_is_supported(t.dtype))
    throw Error("export: tensor '" + name + "' has element type " + dtype_name(t.dtype) +
                ", which lockstep cannot write");
  p->set_name(name);
  p->set_data_type(static_cast<int>(t.dtype));
  for (int64_t d : t.shape) p->add_dims(d);
  p->set_raw_data(t.bytes.data(), t.bytes.size());  // little-endian host, as ONNX requires
}

static void type_to_proto(const Value& v, const TypeInfo& type, onnx::ValueInfoProto* p) {
  p->set_name(v.name);
  auto* tt = p->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(type.dtype));
  if (!type.rank_known && v.declared.empty()) return;
  auto* shape = tt->mutable_shape();
  // Declared dims keep their symbols ("T"); otherwise inferred dims, unknown ones left blank.
  if (!v.declared.empty()) {
    for (const Dim& d : v.declared) {
      auto* pd = shape->add_dim();
      if (d.known()) pd->set_dim_value(d.value);
      else if (!d.symbol.empty()) pd->set_dim_param(d.symbol);
    }
    return;
  }
  for (int64_t d : type.dims) {
    auto* pd = shape->add_dim();
    if (d >= 0) pd->set_dim_value(d);
  }
}

static void attr_to_proto(const Graph& g, int n, const std::string& key, const Attr& a,
                          onnx::AttributeProto* p) {
  using AP = onnx::AttributeProto;
  p->set_name(key);
  switch (a.kind) {
    case Attr::Int: p->set_type(AP::INT); p->set_i(a.i); break;
    case Attr::Float: p->set_type(AP::FLOAT); p->set_f(static_cast<float>(a.f)); break;
    case Attr::String: p->set_type(AP::STRING); p->set_s(a.s); break;
    case Attr::Ints:
      p->set_type(AP::INTS);
      for (int64_t v : a.ints) p->add_ints(v);
      break;
    case Attr::Floats:
      p->set_type(AP::FLOATS);
      for (double v : a.floats) p->add_floats(static_cast<float>(v));
      break;
    case Attr::Strings:
      p->set_type(AP::STRINGS);
      for (const auto& s : a.strings) p->add_strings(s);
      break;
    case Attr::TensorK:
      if (!a.t) throw Error("export: " + g.label(n) + ": attribute '" + key + "' holds no tensor");
      p->set_type(AP::TENSOR);
      tensor_to_proto(*a.t, "", p->mutable_t());
      break;
    default:
      throw Error("export: " + g.label(n) + ": attribute '" + key + "' has a kind ONNX export does not write");
  }
}

static std::string value_name(const Graph& g, int v) {
  if (v < 0) return "";
  if (g.values[v].name.empty()) throw Error("export: value #" + std::to_string(v) + " has no name");
  return g.values[v].name;
}

static void node_to_proto(const Graph& g, int n, onnx::NodeProto* p) {
  const Node& node = g.nodes[n];
  // The id, not the (maybe empty or repeated) name: a reduced model, whose positions differ,
  // re-imports with the ids its nodes had here, so its reports and faults name the same nodes.
  // A uniquely named node's id is its name (hand-built nodes may have no id yet).
  p->set_name(node.id.empty() ? node.name : node.id);
  p->set_op_type(node.op_type);
  if (!node.domain.empty()) p->set_domain(node.domain);
  for (int v : node.inputs) p->add_input(value_name(g, v));
  for (int v : node.outputs) p->add_output(value_name(g, v));
  for (const auto& [key, a] : node.attrs) attr_to_proto(g, n, key, a, p->add_attribute());
}

// Inference runs only when needed: graph outputs without a dtype, or value_info requested.
static bool needs_inference(const Graph& g, const ExportOptions& opts) {
  if (opts.value_info) return true;
  for (int v : g.outputs)
    if (g.values[v].type.dtype == DType::undefined) return true;
  return false;
}

static void write_opsets(const Graph& g, int opset, onnx::ModelProto& m) {
  auto* def = m.add_opset_import();
  def->set_domain("");
  def->set_version(opset);
  std::set<std::string> domains;
  for (const Node& n : g.nodes)
    if (!n.domain.empty() && n.domain != "ai.onnx") domains.insert(n.domain);
  for (const auto& d : domains) {
    auto* o = m.add_opset_import();
    o->set_domain(d);
    o->set_version(1);
  }
}

onnx::ModelProto export_model(const Graph& g, const ExportOptions& opts) {
  onnx::ModelProto m;
  m.set_ir_version(opts.ir_version.value_or(g.ir_version > 0 ? g.ir_version : 8));
  m.set_producer_name(opts.producer_name);
  write_opsets(g, opts.opset.value_or(g.opset > 0 ? g.opset : 17), m);
  std::vector<TypeInfo> types(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) types[v] = g.values[v].type;
  if (needs_inference(g, opts)) {
    GraphTypes gt = infer_graph(g);
    for (size_t v = 0; v < g.values.size(); ++v)
      if (g.values[v].producer >= 0) types[v] = gt.type[v];
  }
  auto* gp = m.mutable_graph();
  gp->set_name("main_graph");
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].initializer) tensor_to_proto(*g.values[v].initializer, value_name(g, v), gp->add_initializer());
  for (int v : g.inputs) type_to_proto(g.values[v], types[v], gp->add_input());
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) node_to_proto(g, n, gp->add_node());
  std::set<int> outputs(g.outputs.begin(), g.outputs.end());
  for (int v : g.outputs) {
    if (types[v].dtype == DType::undefined)
      throw Error("export: graph output '" + g.values[v].name + "' has no known element type");
    type_to_proto(g.values[v], types[v], gp->add_output());
  }
  if (opts.value_info)
    for (size_t v = 0; v < g.values.size(); ++v)
      if (g.values[v].producer >= 0 && !outputs.count(static_cast<int>(v)) && types[v].dtype != DType::undefined)
        type_to_proto(g.values[v], types[v], gp->add_value_info());
  return m;
}

void save_onnx(const Graph& g, const std::string& path, const ExportOptions& opts) {
  std::string bytes;
  if (!export_model(g, opts).SerializeToString(&bytes))
    throw Error("export: cannot serialise the model for '" + path + "' (larger than 2 GiB?)");
  write_file_atomic(path, bytes);  // a fresh temporary beside it, checked, then renamed
}

}  // namespace lockstep
