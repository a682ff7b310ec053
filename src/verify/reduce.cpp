#include "verify/reduce.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/error.h"
#include "core/files.h"
#include "frontend/npy.h"
#include "frontend/onnx_export.h"

namespace lockstep {

namespace fs = std::filesystem;

namespace {

// Values the kept nodes produce that none of them reads, and graph outputs among them.
std::vector<int> sinks(const Graph& g, const std::vector<int>& nodes) {
  std::set<int> read, keep(nodes.begin(), nodes.end());
  for (int n : nodes)
    for (int v : g.nodes[n].inputs) read.insert(v);
  std::vector<int> out;
  for (int n : nodes)
    for (int v : g.nodes[n].outputs) {
      bool graph_output = std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
      if (v >= 0 && (!read.count(v) || graph_output)) out.push_back(v);
    }
  return out;
}

class Reducer {
 public:
  Reducer(const Graph& g, const TensorMap& in, const ReduceOptions& o, Reduction& red)
      : g_(g), in_(in), o_(o), red_(red), s_(o.target, o.compile, o.ref) {}

  // The first diverging group's nodes (or all nodes); empty when nothing diverges.
  std::vector<int> seed() {
    s_.progress("compiling " + std::to_string(g_.nodes.size()) + " nodes");
    std::unique_ptr<Program> p = s_.compile(g_, in_);
    std::vector<Tensor> outs = p->run(in_);
    std::unique_ptr<GroupTracer> tr;
    try {
      tr = std::make_unique<GroupTracer>(g_, s_.target(), p->run_capture(in_), o_.tol.all, true);
    } catch (const Unsupported&) {
    }
    known_ = in_;
    s_.progress("running the reference (" + o_.ref + ")");
    std::vector<RefTensor> ref = reference_run(g_, in_, o_.ref, o_.compile, [&](const std::string& n, const RefTensor& v) {
      if (tr) tr->on_value(n, v);
      else known_[n] = from_ref(v);  // no capture: any node set may be tried, keep everything
    });
    bool diverges = false;
    for (size_t k = 0; k < outs.size(); ++k)
      diverges |= !agrees(compare(to_ref(outs[k]), ref[k]), o_.tol.of(g_.values[g_.outputs[k]].name));
    if (!diverges) return {};
    std::vector<int> all(g_.nodes.size());
    for (size_t n = 0; n < all.size(); ++n) all[n] = static_cast<int>(n);
    if (!tr || tr->first_bad() < 0) return all;
    for (const auto& [n, t] : tr->reference()) known_[n] = t;
    std::map<std::string, int> pos = node_positions(g_);
    std::vector<int> group;
    for (const std::string& id : tr->caps()[tr->first_bad()].nodes)
      if (auto it = pos.find(id); it != pos.end()) group.push_back(it->second);
    std::sort(group.begin(), group.end());
    group.erase(std::unique(group.begin(), group.end()), group.end());
    red_.report.notes.push_back("seed: fusion group " + tr->caps()[tr->first_bad()].kernel + " (" +
                                std::to_string(group.size()) + " nodes), the first to diverge in the compiled program");
    if (fails(group)) return group;
    red_.report.notes.push_back("the group agrees on its own; reducing the whole graph instead");
    return all;
  }

  // Whether `nodes` alone, fed the reference's values, still diverge on the target.
  bool fails(std::vector<int> nodes) {
    std::sort(nodes.begin(), nodes.end());
    if (auto it = tried_.find(nodes); it != tried_.end()) return it->second;
    if (nodes.size() == g_.nodes.size()) return tried_[nodes] = true;  // the model itself
    if (s_.compiles() >= o_.max_compiles) return false;
    add_missing_values(g_, nodes, in_, o_.ref, o_.compile, known_);
    Isolated iso = isolate(g_, nodes, known_, sinks(g_, nodes));
    ProbeRow row;
    row.mode = "ddmin";
    row.setting = std::to_string(nodes.size()) + " nodes: " + node_id(g_, nodes.front()) +
                  (nodes.size() > 1 ? " .. " + node_id(g_, nodes.back()) : "");
    bool bad = false;
    try {
      std::vector<RefTensor> ref = reference_run(iso.graph, iso.inputs, o_.ref, o_.compile);
      std::vector<Tensor> outs = s_.compile(iso.graph, iso.inputs)->run(iso.inputs);
      row.cosine = 2;
      for (size_t k = 0; k < outs.size(); ++k) {
        Agreement a = compare(to_ref(outs[k]), ref[k]);
        bad |= !agrees(a, o_.tol.all);
        if (a.cosine < row.cosine) row.cosine = a.cosine, row.rel_l2 = a.rel_l2;
      }
    } catch (const Error& e) {
      row.note = std::string("failed: ") + e.what();  // a different failure is not the divergence sought
    }
    row.compile = s_.compiles();
    row.diverges = bad;
    red_.report.probes.push_back(row);
    s_.progress("ddmin " + row.setting + ": " + (bad ? "still diverges" : "agrees"));
    return tried_[nodes] = bad;
  }

  // Zeller's ddmin: the smallest subset (1-minimal as far as the compile budget allows).
  std::vector<int> ddmin(std::vector<int> c) {
    size_t n = 2;
    while (c.size() >= 2) {
      std::vector<std::vector<int>> parts(n);
      for (size_t k = 0; k < c.size(); ++k) parts[k * n / c.size()].push_back(c[k]);
      bool reduced = false;
      for (const auto& part : parts)
        if (!part.empty() && fails(part)) {
          c = part, n = 2, reduced = true;
          break;
        }
      for (size_t k = 0; !reduced && n > 2 && k < parts.size(); ++k) {
        std::vector<int> rest;
        for (size_t j = 0; j < parts.size(); ++j)
          if (j != k) rest.insert(rest.end(), parts[j].begin(), parts[j].end());
        if (fails(rest)) c = rest, n = std::max<size_t>(n - 1, 2), reduced = true;
      }
      if (reduced) continue;
      if (n >= c.size()) break;
      n = std::min(2 * n, c.size());
    }
    return c;
  }

  void finish(const std::vector<int>& kept) {
    red_.model = isolate(g_, kept, known_, sinks(g_, kept));
    red_.reference = reference_run(red_.model.graph, red_.model.inputs, o_.ref, o_.compile);
    for (int n : kept) red_.nodes.push_back(node_id(g_, n));
  }

  int compiles() const { return s_.compiles(); }

 private:
  const Graph& g_;
  const TensorMap& in_;
  const ReduceOptions& o_;
  Reduction& red_;
  Session s_;
  TensorMap known_;
  std::map<std::vector<int>, bool> tried_;
};

std::string tensor_pb(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(static_cast<int>(t.dtype));
  for (int64_t d : t.shape) p.add_dims(d);
  p.set_raw_data(t.bytes.data(), t.bytes.size());  // little-endian, as ONNX requires
  std::string bytes;
  if (!p.SerializeToString(&bytes)) throw Error("cannot encode tensor '" + name + "'");
  return bytes;
}

}  // namespace

Reduction reduce_model(const Graph& g, const TensorMap& inputs, const ReduceOptions& o) {
  Reduction red;
  Report& r = red.report;
  r.subcommand = "reduce";
  r.targets = {o.target};
  r.ref = o.ref;
  r.graph_nodes = static_cast<int>(g.nodes.size());
  Reducer reducer(g, inputs, o, red);
  std::vector<int> seed = reducer.seed();
  r.compiles = reducer.compiles();
  if (seed.empty()) {
    r.verdict = "agree: the target agrees with the reference; nothing to reduce";
    return red;
  }
  std::vector<int> kept = reducer.ddmin(seed);
  reducer.finish(kept);
  red.diverges = true;
  r.agree = false;
  r.compiles = reducer.compiles();
  r.verdict = "reduced " + std::to_string(g.nodes.size()) + " nodes to " + std::to_string(kept.size()) + ":";
  for (const std::string& n : red.nodes) r.verdict += " " + n;
  return red;
}

void write_bundle(const Reduction& r, const std::string& dir, const std::string& command, const std::string& original) {
  fs::path set = fs::path(dir) / "test_data_set_0";
  std::error_code ec;
  fs::create_directories(set, ec);
  if (ec) throw Error("cannot create '" + set.string() + "': " + ec.message());
  const Graph& g = r.model.graph;
  StagedFiles files;  // all or nothing
  std::string model;
  if (!export_model(g).SerializeToString(&model)) throw Error("cannot encode the reduced model");
  files.add((fs::path(dir) / "model.onnx").string(), model);
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const std::string& name = g.values[g.inputs[k]].name;
    files.add((set / ("input_" + std::to_string(k) + ".pb")).string(), tensor_pb(name, r.model.inputs.at(name)));
  }
  for (size_t k = 0; k < g.outputs.size(); ++k)
    files.add((set / ("output_" + std::to_string(k) + ".pb")).string(),
              tensor_pb(g.values[g.outputs[k]].name, from_ref(r.reference[k])));
  std::string nodes;
  for (size_t n = 0; n < g.nodes.size(); ++n) nodes += "- `" + node_id(g, static_cast<int>(n)) + "` (" + g.nodes[n].op_type + ")\n";
  std::string readme =
      "# lockstep reduced repro\n\n"
      "Reduced from `" + original + "`: " + std::to_string(r.report.graph_nodes) + " nodes to " +
      std::to_string(g.nodes.size()) + ", which still diverge from the reference on this target.\n\n" + nodes +
      "\nLayout: ONNX backend-test (`model.onnx`, `test_data_set_0/input_K.pb` for the K-th graph input,\n"
      "`output_K.pb` the reference's outputs in the model's dtypes). Values the kept nodes read from\n"
      "removed nodes are graph inputs holding the reference's values (as constants, the compiler\n"
      "would fold the nodes away at compile time and the kernel under suspicion would not run).\n\n"
      "Reproduce (exit status 1 and a FAIL row mean it still diverges):\n\n```sh\n" + command + "\n```\n";
  files.add((fs::path(dir) / "README.md").string(), readme);
  files.commit();
}

}  // namespace lockstep
