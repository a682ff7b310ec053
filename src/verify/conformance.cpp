#include "verify/conformance.h"
#include "backend/registry.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/error.h"
#include "frontend/onnx_import.h"
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

// Runs every data set of one case; returns "" when all outputs match.
std::string run_case(const Graph& g, Program& prog, const fs::path& dir, const CaseSpec& spec) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set_* folder";
  for (const fs::path& set : sets) {
    std::vector<Tensor> ins = load_numbered(set, "input_"), want = load_numbered(set, "output_");
    if (ins.size() != g.inputs.size())
      return set.filename().string() + ": " + std::to_string(ins.size()) + " inputs for " +
             std::to_string(g.inputs.size()) + " model inputs";
    TensorMap feed;
    for (size_t k = 0; k < ins.size(); ++k) feed[g.values[g.inputs[k]].name] = ins[k];
    std::vector<Tensor> got = prog.run(feed);
    if (got.size() != want.size())
      return set.filename().string() + ": " + std::to_string(got.size()) + " outputs, expected " +
             std::to_string(want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      std::string why = allclose_mismatch(to_ref(got[k]), to_ref(want[k]), spec.rtol, spec.atol);
      if (!why.empty()) return set.filename().string() + " output " + std::to_string(k) + ": " + why;
    }
  }
  return "";
}

}  // namespace

std::vector<CaseResult> run_conformance(const std::string& dir_str, const std::string& target,
                                        const std::string& filter, size_t sample) {
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
  std::set<std::string> covered;  // ops of the cases run so far
  for (size_t at = 0; at < cases.size(); ++at) {
    const fs::path& c = cases[at];
    CaseResult r;
    r.name = c.filename().string();
    CaseSpec spec = index.count(r.name) ? index[r.name] : CaseSpec{};
    r.ops = spec.ops;
    try {
      Graph g = load_onnx((c / "model.onnx").string());
      if (r.ops.empty()) r.ops = graph_ops(g);
      bool new_op = std::any_of(r.ops.begin(), r.ops.end(), [&](const std::string& op) { return !covered.count(op); });
      if (sample > 1 && !new_op && at % sample) continue;
      covered.insert(r.ops.begin(), r.ops.end());
      auto prog = compile(g, target);
      r.detail = run_case(g, *prog, c, spec);
      r.status = r.detail.empty() ? CaseResult::Passed : CaseResult::Failed;
    } catch (const Unsupported& e) {
      r.status = CaseResult::Unsupported;
      r.detail = e.what();
    } catch (const std::exception& e) {
      r.status = CaseResult::Failed;
      r.detail = e.what();
    }
    results.push_back(std::move(r));
  }
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
