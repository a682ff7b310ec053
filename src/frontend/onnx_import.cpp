#include "frontend/onnx_import.h"

#include <onnx/checker.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <functional>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/file_reader.h"
#include "core/text.h"
#include "ops/infer.h"
#include "ops/op.h"

namespace lockstep {

namespace fs = std::filesystem;

onnx::ModelProto read_model_proto(const std::string& path) {
  // Protobuf refuses messages of 2 GiB or more. Parsed straight from the file, so a device or
  // pipe stops at its first invalid byte or at that limit, with no copy of it in memory.
  constexpr int64_t kMaxModelBytes = (int64_t{2} << 30) - 1;
  FileReader f(path, "model file '" + path + "'");
  if (f.regular() && f.size() == 0) throw Error("model file '" + path + "' is empty");
  if (f.regular() && f.size() > kMaxModelBytes)
    throw Error("model file '" + path + "' is larger than protobuf's 2 GiB limit");
  google::protobuf::io::FileInputStream raw(f.fd());
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(static_cast<int>(kMaxModelBytes));
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    throw Error("model file '" + path + "' is not a valid ONNX model (protobuf parse failed; truncated or corrupt?)");
  if (!model.has_graph()) throw Error("model file '" + path + "' has no graph");
  return model;
}

static TypeInfo type_from_proto(const onnx::ValueInfoProto& vi, std::vector<Dim>* declared,
                                const std::string& what) {
  if (!vi.has_type() || !vi.type().has_tensor_type())
    throw Unsupported(what + " '" + vi.name() + "' is not a tensor (sequences, maps and optionals are not supported)");
  const auto& tt = vi.type().tensor_type();
  TypeInfo t;
  t.dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype_is_supported(t.dtype))
    throw Unsupported(what + " '" + vi.name() + "' has element type " + std::to_string(tt.elem_type()) +
                " (" + dtype_name(t.dtype) + "), which lockstep does not support");
  if (!tt.has_shape()) return t;
  t.rank_known = true;
  for (const auto& d : tt.shape().dim()) {
    Dim dim;
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) throw Error(what + " '" + vi.name() + "' has a negative dimension");
      dim.value = d.dim_value();
    } else if (d.has_dim_param()) {
      dim.symbol = d.dim_param();
    }
    t.dims.push_back(dim.value);
    if (declared) declared->push_back(dim);
  }
  return t;
}

static Attr attr_from_proto(const onnx::AttributeProto& a, const std::string& base_dir,
                            const std::string& what) {
  Attr r;
  if (!a.ref_attr_name().empty()) return r;  // function attribute references: Unsupported
  switch (a.type()) {
    case onnx::AttributeProto::INT: r.kind = Attr::Int; r.i = a.i(); break;
    case onnx::AttributeProto::FLOAT: r.kind = Attr::Float; r.f = a.f(); break;
    case onnx::AttributeProto::STRING: r.kind = Attr::String; r.s = a.s(); break;
    case onnx::AttributeProto::INTS: r.kind = Attr::Ints; r.ints.assign(a.ints().begin(), a.ints().end()); break;
    case onnx::AttributeProto::FLOATS: r.kind = Attr::Floats; r.floats.assign(a.floats().begin(), a.floats().end()); break;
    case onnx::AttributeProto::STRINGS: r.kind = Attr::Strings; r.strings.assign(a.strings().begin(), a.strings().end()); break;
    case onnx::AttributeProto::TENSOR:
      r.kind = Attr::TensorK;
      r.t = std::make_shared<Tensor>(tensor_from_proto(a.t(), base_dir, what + " attribute '" + a.name() + "'"));
      break;
    default: break;  // graphs, sparse tensors, type protos: Unsupported
  }
  return r;
}

// The newest IR version of ONNX 1.23, whose conformance models lockstep passes.
constexpr int64_t kMaxIrVersion = 14;

static int default_opset(const onnx::ModelProto& m, const std::string& source) {
  int opset = -1;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  if (opset < 0) {  // valid ONNX of another domain (ai.onnx.ml, training): not lockstep's, not broken
    std::string domains;
    for (const auto& o : m.opset_import()) domains += (domains.empty() ? "" : ", ") + o.domain();
    throw Unsupported("model file '" + source + "' imports no opset of the default ONNX domain (only " +
                      (domains.empty() ? std::string("none") : domains) + "), which is all lockstep reads");
  }
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Unsupported("model file '" + source + "' uses opset " + std::to_string(opset) +
                "; lockstep reads opsets " + std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
  return opset;
}

// Nodes in an order where each input is defined first (the ONNX spec requires it; some
// tools do not honour it). A cycle or a dangling input is an error.
static std::vector<int> topo_order(const onnx::GraphProto& gp, const std::map<std::string, int>& defined_outside,
                                   const std::string& source) {
  std::map<std::string, int> producer;
  for (int n = 0; n < gp.node_size(); ++n)
    for (const auto& o : gp.node(n).output())
      if (!o.empty()) producer[o] = n;
  std::vector<int> order, state(gp.node_size(), 0);  // 0 new, 1 visiting, 2 done
  std::function<void(int)> visit = [&](int n) {
    if (state[n] == 2) return;
    if (state[n] == 1) throw Error("model file '" + source + "': the graph has a cycle through node '" + gp.node(n).name() + "'");
    state[n] = 1;
    for (const auto& i : gp.node(n).input()) {
      if (i.empty() || defined_outside.count(i)) continue;
      auto it = producer.find(i);
      if (it == producer.end())
        throw Error("model file '" + source + "': node '" + gp.node(n).name() + "' (" + gp.node(n).op_type() +
                    ") reads '" + i + "', which no node, initializer or graph input defines");
      visit(it->second);
    }
    state[n] = 2;
    order.push_back(n);
  };
  for (int n = 0; n < gp.node_size(); ++n) visit(n);
  return order;
}

static void import_nodes(const onnx::GraphProto& gp, const std::string& base_dir, Graph& g,
                         std::map<std::string, int>& ids) {
  std::vector<int> order = topo_order(gp, ids, g.source);
  for (int n : order) {
    const auto& np = gp.node(n);
    g.nodes.push_back(Node{np.name(), np.op_type(), np.domain() == "ai.onnx" ? "" : np.domain(), {}, {}, {}, {}});
  }
  assign_node_ids(g);  // once, in import order; every later copy of the graph keeps them
  for (size_t idx = 0; idx < order.size(); ++idx) {
    const auto& np = gp.node(order[idx]);
    Node& node = g.nodes[idx];
    std::string what = g.label(static_cast<int>(idx));
    for (const auto& i : np.input()) node.inputs.push_back(i.empty() ? -1 : ids.at(i));
    for (const auto& o : np.output()) {
      if (o.empty()) { node.outputs.push_back(-1); continue; }
      if (ids.count(o)) throw Error(what + ": output '" + o + "' is defined more than once");
      int v = g.add_value(o);
      g.values[v].producer = static_cast<int>(idx);
      ids[o] = v;
      node.outputs.push_back(v);
    }
    for (const auto& a : np.attribute()) {
      if (node.attrs.count(a.name())) throw Error(what + ": attribute '" + a.name() + "' is given twice");
      node.attrs[a.name()] = attr_from_proto(a, base_dir, what);
    }
  }
}

// libonnx 1.12 knows IR <= 8 and opset <= 17; for those models its findings become warnings.
static void libonnx_warnings(const onnx::ModelProto& m, const Graph& g) {
  if (m.ir_version() > 8 || g.opset > 17) return;
  try {
    onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    std::cerr << "warning: " << printable(g.source) << ": onnx checker: " << printable(msg) << "\n";
  }
}

Graph import_model(const onnx::ModelProto& m, const std::string& source, const std::string& base_dir) {
  Graph g;
  g.source = source;
  g.ir_version = m.ir_version();
  // A newer IR may change what fields mean; reading it as an older one could be silently wrong.
  if (m.ir_version() < 0 || m.ir_version() > kMaxIrVersion)
    throw Unsupported("model file '" + source + "' has IR version " + std::to_string(m.ir_version()) +
                      "; lockstep reads IR versions up to " + std::to_string(kMaxIrVersion));
  g.producer = m.producer_name();
  g.opset = default_opset(m, source);
  const auto& gp = m.graph();
  std::map<std::string, int> ids;
  for (const auto& init : gp.initializer()) {
    if (ids.count(init.name())) throw Error("model file '" + source + "': initializer '" + init.name() + "' is defined twice");
    int v = g.add_value(init.name());
    auto t = std::make_shared<Tensor>(tensor_from_proto(init, base_dir, "initializer '" + init.name() + "'"));
    g.values[v].type = TypeInfo{t->dtype, true, t->shape};
    g.values[v].initializer = std::move(t);
    ids[init.name()] = v;
  }
  if (gp.sparse_initializer_size() > 0) throw Error("model file '" + source + "': sparse initializers are not supported");
  for (const auto& in : gp.input()) {
    if (ids.count(in.name())) continue;  // IR < 4 lists initializers as inputs too
    std::vector<Dim> declared;
    int v = g.add_value(in.name(), type_from_proto(in, &declared, "graph input"));
    g.values[v].declared = std::move(declared);
    g.inputs.push_back(v);
    ids[in.name()] = v;
  }
  import_nodes(gp, base_dir, g, ids);
  for (const auto& out : gp.output()) {
    auto it = ids.find(out.name());
    if (it == ids.end()) throw Error("model file '" + source + "': graph output '" + out.name() + "' is never produced");
    std::vector<Dim> declared;
    TypeInfo declared_type = type_from_proto(out, &declared, "graph output");
    Value& v = g.values[it->second];
    if (v.declared.empty()) v.declared = std::move(declared);
    if (v.type.dtype == DType::undefined) v.type.dtype = declared_type.dtype;
    g.outputs.push_back(it->second);
  }
  if (g.outputs.empty()) throw Error("model file '" + source + "' declares no graph outputs");
  verify_graph(g);
  // Fill static types; this also rejects unsupported ops/attributes and inconsistent shapes.
  GraphTypes types = infer_graph(g);
  libonnx_warnings(m, g);  // only for models lockstep accepts: an error stays one line
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].producer >= 0) g.values[v].type = types.type[v];
  for (int v : g.outputs) {
    const Value& val = g.values[v];
    if (val.producer < 0) continue;
    // The declared output dtype must match what the graph computes.
    DType want = DType::undefined;
    for (const auto& out : gp.output())
      if (out.name() == val.name) want = dtype_from_onnx(out.type().tensor_type().elem_type());
    if (want != DType::undefined && want != val.type.dtype)
      throw Error("model file '" + source + "': graph output '" + val.name + "' is declared " + dtype_name(want) +
                  " but computes " + dtype_name(val.type.dtype));
  }
  return g;
}

Graph load_onnx(const std::string& path) {
  onnx::ModelProto m = read_model_proto(path);
  return import_model(m, path, fs::path(path).parent_path().string());
}

}  // namespace lockstep
