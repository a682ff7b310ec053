// `lockstep info`: what a model file holds, read from the file itself so that it works even
// when lockstep cannot run the model; then the model is imported, and any problem reported.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <optional>

#include "cli/cli.h"
#include "cli/inputs.h"
#include "core/error.h"
#include "frontend/onnx_import.h"
#include "ops/op.h"
#include "runtime/target.h"

namespace lockstep::cli {

namespace {

// "float32[1,T,?]" from a ValueInfoProto, symbols by name.
std::string type_str(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type()) return "(not a tensor)";
  const auto& tt = vi.type().tensor_type();
  std::string s = dtype_name(dtype_from_onnx(tt.elem_type()));
  if (!tt.has_shape()) return s + "[unknown rank]";
  s += "[";
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& d = tt.shape().dim(k);
    s += k ? "," : "";
    s += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
  }
  return s + "]";
}

void print_values(const char* title, const std::vector<const onnx::ValueInfoProto*>& vs) {
  std::cout << title << " (" << vs.size() << ")\n";
  size_t w = 0;
  for (auto* v : vs) w = std::max(w, v->name().size());
  for (auto* v : vs)
    std::cout << "  " << v->name() << std::string(w - v->name().size() + 2, ' ') << type_str(*v) << "\n";
}

// Op counts, most frequent first; ops lockstep does not implement are marked.
void print_ops(const onnx::GraphProto& gp) {
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  for (const auto& n : gp.node()) ++counts[{n.domain() == "ai.onnx" ? "" : n.domain(), n.op_type()}];
  std::vector<std::pair<std::string, int64_t>> rows;
  for (const auto& [key, c] : counts) rows.push_back({key.first.empty() ? key.second : key.first + "." + key.second, c});
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second > b.second; });
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  std::cout << "nodes " << gp.node_size() << "\nops (" << rows.size() << ")\n";
  for (const auto& [name, c] : rows) {
    auto dot = name.rfind('.');
    std::string domain = dot == std::string::npos ? "" : name.substr(0, dot);
    std::string op = dot == std::string::npos ? name : name.substr(dot + 1);
    std::cout << "  " << name << std::string(w - name.size() + 2, ' ') << c
              << (find_op(domain, op) ? "" : "  (not supported)") << "\n";
  }
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b < 1024) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else if (b < (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  return buf;
}

void print_parameters(const onnx::GraphProto& gp) {
  uint64_t count = 0, bytes = 0;
  for (const auto& t : gp.initializer()) {
    uint64_t n = 1;
    for (int64_t d : t.dims()) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    count += n;
    bytes += n * dtype_size(dtype_from_onnx(t.data_type()));
  }
  std::cout << "parameters " << count << " in " << gp.initializer_size() << " initializers, "
            << bytes << " bytes (" << human_bytes(bytes) << ")\n";
}

// Every file the model makes lockstep read: the model itself and its external data, each
// resolved and checked as import will (a refused location says why).
void print_files(const std::string& path, const onnx::GraphProto& gp) {
  std::set<std::string> locations;
  for (const auto& t : gp.initializer())
    for (const std::string& l : external_data_locations(t)) locations.insert(l);
  for (const auto& n : gp.node())
    for (const auto& a : n.attribute())
      for (const std::string& l : external_data_locations(a.t())) locations.insert(l);
  std::cout << "files read (" << locations.size() + 1 << ")\n  " << path << "\n";
  std::string base = std::filesystem::path(path).parent_path().string();
  for (const std::string& l : locations) {
    try {
      std::cout << "  " << resolve_external_location(base, l, "external data").string() << "\n";
    } catch (const Error& e) {
      std::cout << "  refused: " << e.what() << "\n";
    }
  }
}

void print_summary(const std::string& path, const onnx::ModelProto& m) {
  const auto& gp = m.graph();
  std::cout << "model " << path << "\n";
  std::cout << "ir_version " << m.ir_version() << "\n";
  for (const auto& o : m.opset_import())
    std::cout << "opset " << (o.domain().empty() ? "ai.onnx" : o.domain()) << " " << o.version() << "\n";
  std::string producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  std::cout << "producer " << (producer.empty() ? "(none)" : producer) << "\n";
  std::map<std::string, bool> init;
  for (const auto& t : gp.initializer()) init[t.name()] = true;
  std::vector<const onnx::ValueInfoProto*> ins, outs;
  for (const auto& v : gp.input())
    if (!init.count(v.name())) ins.push_back(&v);  // IR < 4 lists initializers as inputs
  for (const auto& v : gp.output()) outs.push_back(&v);
  print_values("inputs", ins);
  print_values("outputs", outs);
  print_ops(gp);
  print_parameters(gp);
  print_files(path, gp);
}

// Every registered target: what it is, and whether it runs here (and why not).
void print_targets() {
  for (const TargetInfo* t : targets()) {
    std::string why = unavailable_reason(*t);
    std::cout << t->name << ": " << t->summary << "\n  " << (why.empty() ? "runs here" : "cannot run here: " + why) << "\n";
    if (t->desc.gpu)
      std::cout << "  limits: " << t->desc.max_group_threads << " threads per group, " << t->desc.shared_bytes
                << " bytes of shared memory, " << t->desc.max_buffer_args << " buffer arguments per kernel\n";
    std::vector<std::string> devices = t->devices ? t->devices() : std::vector<std::string>{};
    for (size_t k = 0; k < devices.size(); ++k) std::cout << "  --device " << k << ": " << devices[k] << "\n";
    for (const auto& [suite, reason] : t->skips) std::cout << "  skips " << suite << ": " << reason << "\n";
  }
}

}  // namespace

Action add_info(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  app.add_option("model", *path, "ONNX model file");
  app.add_flag("--targets", *list, "List every target, and why it cannot run here when it cannot");
  app.footer(
      "Prints the model's IR version, opset imports, producer, inputs and outputs with their\n"
      "dtypes and shapes (symbolic dims by name, ? when unknown), node count, op counts (most\n"
      "frequent first; ops lockstep does not implement are marked), and the number and size\n"
      "of the initializers, and every file the model makes lockstep read (its external data,\n"
      "resolved; a location outside the model's folder is refused). The model is then imported\n"
      "and validated; a problem is reported\n"
      "on stderr with exit status 2.");
  return [path, list] {
    if (*list) print_targets();
    if (path->empty()) {
      if (*list) return kExitOk;
      throw Error("info: give a model file, or --targets");
    }
    onnx::ModelProto m = read_model_proto(*path);
    print_summary(*path, m);
    std::cout.flush();
    std::string base = std::filesystem::path(*path).parent_path().string();
    load_quietly([&] { return import_model(m, *path, base); });
    return kExitOk;
  };
}

}  // namespace lockstep::cli
