#include "verify/conformance.h"
#include "backend/registry.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <utility>

#include "core/error.h"
#include "frontend/onnx_import.h"
#include "ops/random.h"
#include "runtime/program.h"
#include "verify/compare.h"

namespace lockstep {

namespace fs = std::filesystem;

namespace {

struct CaseSpec {
  std::vector<std::string> ops;
  double rtol = 1e-3, atol = 1e-7;  // ONNX's backend-test defaults
};

std::map<std::string, CaseSpec> read_index(const fs::path& dir) {
  std::map<std::string, CaseSpec> index;
  std::ifstream in(dir / "index.json");
  if (!in) return index;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw Error("'" + (dir / "index.json").string() + "' is not valid JSON: " + e.what());
  }
  for (const auto& c : j) {
    CaseSpec s;
    s.ops = c.value("ops", std::vector<std::string>{});
    s.rtol = c.value("rtol", s.rtol);
    s.atol = c.value("atol", s.atol);
    index[c.at("name").get<std::string>()] = s;
  }
  return index;
}

std::vector<Tensor> load_numbered(const fs::path& set, const std::string& prefix) {
  std::vector<Tensor> ts;
  for (int k = 0;; ++k) {
    fs::path p = set / (prefix + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    ts.push_back(load_tensor_pb(p.string()));
  }
  return ts;
}

std::vector<std::string> graph_ops(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes)
    if (std::find(ops.begin(), ops.end(), n.op_type) == ops.end()) ops.push_back(n.op_type);
  return ops;
}

// A case's data sets (test_data_set_*), in name order.
std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// "" when `got` matches a data set's expected outputs, else the first mismatch.
std::string compare_set(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const fs::path& set,
                        const CaseSpec& spec) {
  if (got.size() != want.size())
    return set.filename().string() + ": " + std::to_string(got.size()) + " outputs, expected " +
           std::to_string(want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    std::string why = allclose_mismatch(to_ref(got[k]), to_ref(want[k]), spec.rtol, spec.atol);
    if (!why.empty()) return set.filename().string() + " output " + std::to_string(k) + ": " + why;
  }
  return "";
}

// Runs every data set of one case; returns "" when all outputs match.
std::string run_case(const Graph& g, Program& prog, const fs::path& dir, const CaseSpec& spec) {
  std::vector<fs::path> sets = data_sets(dir);
  if (sets.empty()) return "no test_data_set_* folder";
  for (const fs::path& set : sets) {
    std::vector<Tensor> ins = load_numbered(set, "input_"), want = load_numbered(set, "output_");
    if (ins.size() != g.inputs.size())
      return set.filename().string() + ": " + std::to_string(ins.size()) + " inputs for " +
             std::to_string(g.inputs.size()) + " model inputs";
    TensorMap feed;
    for (size_t k = 0; k < ins.size(); ++k) feed[g.values[g.inputs[k]].name] = ins[k];
    std::string why = compare_set(prog.run(feed), want, set, spec);
    if (!why.empty()) return why;
  }
  return "";
}

// A case picked to run: its graph, tolerances and where its result goes; for a batch, its one
// data set and that set's inputs, read once.
struct Pending {
  fs::path dir;
  Graph g;
  CaseSpec spec;
  CaseResult* result;
  fs::path set = {};
  std::vector<Tensor> inputs = {};
};

// A case that threw: unsupported when the throw says so, else failed, with the message.
void record_error(CaseResult& r, const std::exception& e) {
  r.status = dynamic_cast<const Unsupported*>(&e) ? CaseResult::Unsupported : CaseResult::Failed;
  r.detail = e.what();
}

void run_alone(const Pending& p, const std::string& target) {
  CaseResult& r = *p.result;
  try {
    auto prog = compile(p.g, target);
    r.detail = run_case(p.g, *prog, p.dir, p.spec);
    r.status = r.detail.empty() ? CaseResult::Passed : CaseResult::Failed;
  } catch (const std::exception& e) {
    record_error(r, e);
  }
}

// Whether a case may share a compile: one data set whose inputs match the model's, and no named
// dimension (two cases' "N" would have to agree). Keeps the set and its inputs in `p`.
bool batchable(Pending& p) {
  for (const Value& v : p.g.values)
    for (const Dim& d : v.declared)
      if (!d.symbol.empty()) return false;
  std::vector<fs::path> sets = data_sets(p.dir);
  if (sets.size() != 1 || p.g.outputs.empty()) return false;
  p.set = sets[0];
  p.inputs = load_numbered(p.set, "input_");
  return p.inputs.size() == p.g.inputs.size();
}

std::string prefix_of(size_t k) { return "c" + std::to_string(k) + "/"; }

// The batch's graphs side by side in one graph, each case's values and node ids under
// prefix_of(its place).
Graph join(const std::vector<const Pending*>& batch) {
  Graph j;
  j.opset = batch[0]->g.opset, j.ir_version = batch[0]->g.ir_version, j.source = "conformance batch";
  for (size_t k = 0; k < batch.size(); ++k) {
    const Graph& g = batch[k]->g;
    int values = static_cast<int>(j.values.size()), nodes = static_cast<int>(j.nodes.size());
    for (Value v : g.values) {
      v.name = prefix_of(k) + v.name;
      if (v.producer >= 0) v.producer += nodes;
      j.values.push_back(std::move(v));
    }
    for (Node n : g.nodes) {
      if (!n.name.empty()) n.name = prefix_of(k) + n.name;
      n.id = prefix_of(k) + n.id;
      for (int& v : n.inputs) v = v < 0 ? v : v + values;
      for (int& v : n.outputs) v = v < 0 ? v : v + values;
      j.nodes.push_back(std::move(n));
    }
    for (int v : g.inputs) j.inputs.push_back(v + values);
    for (int v : g.outputs) j.outputs.push_back(v + values);
  }
  return j;
}

// Compiles the batch as one program (one native compile, not one a case) and compares each
// case's outputs. A case the target refuses, named in the error, leaves the batch to run alone;
// a case that fails runs alone too, so every result reported is the case's own; a batch that
// fails otherwise runs each case alone.
void run_batch(std::vector<const Pending*> batch, const std::string& target) {
  while (batch.size() > 1) {
    try {
      Graph j = join(batch);
      TensorMap feed;
      for (size_t k = 0; k < batch.size(); ++k)
        for (size_t i = 0; i < batch[k]->inputs.size(); ++i)
          feed[prefix_of(k) + batch[k]->g.values[batch[k]->g.inputs[i]].name] = batch[k]->inputs[i];
      std::vector<Tensor> got = compile(j, target)->run(feed);
      size_t at = 0;
      for (const Pending* p : batch) {
        std::vector<Tensor> mine(got.begin() + at, got.begin() + at + p->g.outputs.size());
        at += p->g.outputs.size();
        if (compare_set(mine, load_numbered(p->set, "output_"), p->set, p->spec).empty())
          p->result->status = CaseResult::Passed;
        else run_alone(*p, target);
      }
      return;
    } catch (const Unsupported& e) {
      std::string what = e.what();
      size_t before = batch.size();
      std::vector<const Pending*> rest;
      for (size_t k = 0; k < batch.size(); ++k) {
        if (what.find("'" + prefix_of(k)) == std::string::npos) rest.push_back(batch[k]);
        else run_alone(*batch[k], target);
      }
      batch = rest;
      if (batch.size() == before) break;
    } catch (const std::exception&) {
      break;
    }
  }
  for (const Pending* p : batch) run_alone(*p, target);
}

// A case's expected draws come from its generator (numpy's); no other stream reproduces them.
void refuse_random_draws(const Graph& g) {
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (is_random_op(g.nodes[n].op_type))
      throw Unsupported(g.label(static_cast<int>(n)) +
                        " draws random values: the expected ones are another generator's draws, not comparable "
                        "with lockstep's stream (docs/random.md)");
}

}  // namespace

std::vector<CaseResult> run_conformance(const std::string& dir_str, const std::string& target,
                                        const std::string& filter, size_t sample, size_t slice) {
  fs::path dir(dir_str);
  if (!fs::is_directory(dir)) throw Error("conformance folder '" + dir_str + "' does not exist");
  auto index = read_index(dir);
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx") &&
        e.path().filename().string().find(filter) != std::string::npos)
      cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  std::vector<CaseResult> results;
  results.reserve(cases.size());  // Pending points into it
  std::vector<Pending> pending;
  std::set<std::string> covered;  // ops of the cases run so far
  for (size_t at = 0; at < cases.size(); ++at) {
    const fs::path& c = cases[at];
    CaseResult r;
    r.name = c.filename().string();
    CaseSpec spec = index.count(r.name) ? index[r.name] : CaseSpec{};
    r.ops = spec.ops;
    try {
      Graph g = load_onnx((c / "model.onnx").string());
      refuse_random_draws(g);
      if (r.ops.empty()) r.ops = graph_ops(g);
      bool new_op = std::any_of(r.ops.begin(), r.ops.end(), [&](const std::string& op) { return !covered.count(op); });
      if (sample > 1 && !new_op && at % sample != slice % sample) continue;
      covered.insert(r.ops.begin(), r.ops.end());
      results.push_back(std::move(r));
      pending.push_back(Pending{c, std::move(g), spec, &results.back()});
      continue;
    } catch (const std::exception& e) {
      record_error(r, e);
    }
    results.push_back(std::move(r));
  }
  // The reference interprets each graph as it is: nothing to share. A compiled target builds
  // cases of one opset in batches.
  constexpr size_t kBatch = 32;
  std::map<std::pair<int, int64_t>, std::vector<const Pending*>> open;
  for (Pending& p : pending) {
    if (target == "ref" || !batchable(p)) {
      run_alone(p, target);
      continue;
    }
    std::vector<const Pending*>& b = open[{p.g.opset, p.g.ir_version}];
    b.push_back(&p);
    if (b.size() == kBatch) run_batch(std::exchange(b, {}), target);
  }
  for (auto& [key, b] : open)
    if (!b.empty()) run_batch(b, target);
  return results;
}

void print_scoreboard(std::ostream& os, const std::vector<CaseResult>& results) {
  std::map<std::string, std::array<int, 3>> by_op;
  int total[3] = {0, 0, 0};
  for (const CaseResult& r : results) {
    ++total[r.status];
    for (const std::string& op : r.ops) ++by_op[op][r.status];
  }
  os << std::left << std::setw(18) << "op" << std::right << std::setw(8) << "passed" << std::setw(8)
     << "failed" << std::setw(13) << "unsupported" << "\n";
  for (const auto& [op, n] : by_op)
    os << std::left << std::setw(18) << op << std::right << std::setw(8) << n[0] << std::setw(8)
       << n[1] << std::setw(13) << n[2] << "\n";
  for (const CaseResult& r : results)
    if (r.status != CaseResult::Passed)
      os << (r.status == CaseResult::Failed ? "FAILED      " : "unsupported ") << r.name << ": "
         << r.detail << "\n";
  os << "cases: " << total[0] << " passed, " << total[1] << " failed, " << total[2]
     << " unsupported\n";
}

}  // namespace lockstep
