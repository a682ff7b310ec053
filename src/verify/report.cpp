// Terminal tables and JSON of a Report; the HTML page is in report_html.cpp.
#include "verify/report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/files.h"
#include "core/text.h"
#include "frontend/npy.h"

namespace lockstep {

std::string fmt_cosine(double c) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9f", c);
  return b;
}

std::string fmt_sci(double v) {
  if (std::isinf(v)) return "inf";
  if (std::isnan(v)) return "nan";
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::string fmt_bound(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

std::string status_name(StageRow::Status s) {
  return s == StageRow::Agree ? "agree" : s == StageRow::Differ ? "DIFFER" : "skipped";
}

namespace {

// Left-aligned columns, two spaces apart.
void table(std::ostream& os, std::vector<std::vector<std::string>> rows) {
  for (auto& r : rows)
    for (std::string& c : r) c = printable(c);  // names and messages: one cell, one line
  std::vector<size_t> w;
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (w.size() <= c) w.push_back(0);
      w[c] = std::max(w[c], r[c].size());
    }
  for (const auto& r : rows) {
    std::string line = "  ";
    for (size_t c = 0; c < r.size(); ++c) line += r[c] + (c + 1 < r.size() ? std::string(w[c] - r[c].size() + 2, ' ') : "");
    os << line << "\n";
  }
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string nodes_brief(const std::vector<std::string>& nodes) {
  if (nodes.size() <= 3) return join(nodes);
  return nodes.front() + ", ... (" + std::to_string(nodes.size()) + " nodes), " + nodes.back();
}

void print_outputs(std::ostream& os, const Report& r) {
  if (r.outputs.empty()) return;
  os << "outputs against " << r.ref << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"target", "output", "cosine", "rel_l2", "max|d|", "at", "rms(d)/rms(ref)", "nan/inf mismatches", "result"}};
  for (const MetricRow& m : r.outputs) {
    if (!m.error.empty()) {
      rows.push_back({m.target, m.output, "-", "-", "-", "-", "-", "-", "ERROR: " + m.error.substr(0, 160)});
      continue;
    }
    rows.push_back({m.target, m.output, fmt_cosine(m.a.cosine), fmt_sci(m.a.rel_l2), fmt_sci(m.a.max_abs),
                    std::to_string(m.a.max_abs_index), fmt_sci(m.a.rms_ratio), std::to_string(m.a.nonfinite_mismatches),
                    std::string(m.ok ? "ok" : "FAIL") + " (cosine >= " + fmt_bound(m.tol.min_cosine) + ", rel_l2 <= " +
                        fmt_bound(m.tol.max_rel_l2) + ")"});
  }
  table(os, rows);
}

void print_stages(std::ostream& os, const Report& r) {
  if (r.stages.empty()) return;
  os << (r.subcommand == "check" ? "determinism\n" : "stages\n");
  std::vector<std::vector<std::string>> rows = {{"target", "stage", "result", "detail"}};
  for (const StageRow& s : r.stages) rows.push_back({s.target, s.stage, status_name(s.status), s.detail});
  table(os, rows);
}

void print_trace(std::ostream& os, const Report& r) {
  if (r.trace.empty()) return;
  int bad = 0, first = -1;
  for (size_t k = 0; k < r.trace.size(); ++k)
    if (!r.trace[k].ok && bad++ == 0) first = static_cast<int>(k);
  os << "fusion groups against " << r.ref << ": " << r.trace.size() << " compared, " << bad << " disagree\n";
  if (first < 0) return;
  std::vector<std::vector<std::string>> rows = {{"target", "kernel", "node#", "cosine", "rel_l2", "value", "nodes"}};
  for (int k = std::max(0, first - 2); k < std::min<int>(r.trace.size(), first + 4); ++k) {
    const TracePoint& p = r.trace[k];
    rows.push_back({p.target, p.kernel, std::to_string(p.position), fmt_cosine(p.a.cosine), fmt_sci(p.a.rel_l2),
                    p.value, (p.ok ? "" : "<- ") + nodes_brief(p.nodes)});
  }
  table(os, rows);
}

void print_probes(std::ostream& os, const Report& r) {
  if (r.probes.empty()) return;
  os << "probes (one compile each)\n";
  std::vector<std::vector<std::string>> rows = {{"compile", "mode", "setting", "cosine", "rel_l2", "result", "note"}};
  for (const ProbeRow& p : r.probes)
    rows.push_back({std::to_string(p.compile), p.mode, p.setting, fmt_cosine(p.cosine), fmt_sci(p.rel_l2),
                    p.diverges ? "DIVERGES" : "agrees", p.note});
  table(os, rows);
}

}  // namespace

void print_report(std::ostream& os, const Report& r) {
  print_outputs(os, r);
  print_stages(os, r);
  print_trace(os, r);
  print_probes(os, r);
  for (const std::string& n : r.notes) os << printable(n) << "\n";
  if (r.compiles >= 0) {
    os << "compiles: " << r.compiles;
    if (r.compile_budget >= 0) os << " (budget ceil(log2 n) + 3 = " << r.compile_budget << ")";
    os << "\n";
  }
  os << "verdict: " << printable(r.verdict) << "\n";
}

namespace {

nlohmann::json agreement_json(const Agreement& a) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(fmt_sci(v)); };
  return {{"cosine", num(a.cosine)}, {"rel_l2", num(a.rel_l2)}, {"max_abs", num(a.max_abs)},
          {"max_abs_index", a.max_abs_index}, {"rms_ratio", num(a.rms_ratio)},
          {"nonfinite_mismatches", a.nonfinite_mismatches}, {"shape_match", a.shape_match}};
}

}  // namespace

std::string report_json(const Report& r) {
  nlohmann::json j;
  j["subcommand"] = r.subcommand;
  j["command"] = r.command;
  j["model"] = r.model;
  j["ref"] = r.ref;
  j["targets"] = r.targets;
  j["graph_nodes"] = r.graph_nodes;
  j["agree"] = r.agree;
  j["verdict"] = r.verdict;
  if (r.compiles >= 0) j["compiles"] = r.compiles;
  if (r.compile_budget >= 0) j["compile_budget"] = r.compile_budget;
  j["outputs"] = nlohmann::json::array();
  for (const MetricRow& m : r.outputs) {
    nlohmann::json o = {{"target", m.target}, {"output", m.output}, {"ok", m.ok},
                        {"tolerance", {{"min_cosine", m.tol.min_cosine}, {"max_rel_l2", m.tol.max_rel_l2}}}};
    if (m.error.empty()) o["metrics"] = agreement_json(m.a);
    else o["error"] = m.error;
    j["outputs"].push_back(o);
  }
  j["stages"] = nlohmann::json::array();
  for (const StageRow& s : r.stages)
    j["stages"].push_back({{"target", s.target}, {"stage", s.stage}, {"status", status_name(s.status)},
                           {"detail", s.detail}, {"sha256", s.sha256}});
  j["trace"] = nlohmann::json::array();
  for (const TracePoint& p : r.trace)
    j["trace"].push_back({{"target", p.target}, {"position", p.position}, {"kernel", p.kernel}, {"value", p.value},
                          {"nodes", p.nodes}, {"ok", p.ok}, {"metrics", agreement_json(p.a)}});
  j["probes"] = nlohmann::json::array();
  for (const ProbeRow& p : r.probes)
    j["probes"].push_back({{"compile", p.compile}, {"mode", p.mode}, {"setting", p.setting}, {"cosine", p.cosine},
                           {"rel_l2", p.rel_l2}, {"diverges", p.diverges}, {"note", p.note}});
  j["notes"] = r.notes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // invalid UTF-8: U+FFFD
}

void write_reports(const Report& r, const std::string& json_path, const std::string& html_path) {
  if (!json_path.empty()) write_file_atomic(json_path, report_json(r));
  if (!html_path.empty()) write_file_atomic(html_path, report_html(r));
}

}  // namespace lockstep
