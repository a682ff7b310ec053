// The HTML report: one self-contained page (inline CSS and SVG, no scripts, no network) with
// the verdict, the tables of the terminal report, and the error of every fusion group plotted
// along the graph's topological order.
#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "verify/report.h"

namespace lockstep {

namespace {

std::string esc(const std::string& raw) {
  std::string o, s = printable(raw);  // valid UTF-8, no control characters
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string tr(const std::vector<std::string>& cells, const std::string& cls = "", bool head = false) {
  std::string s = cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">";
  for (const std::string& c : cells) s += (head ? "<th>" : "<td>") + esc(c) + (head ? "</th>" : "</td>");
  return s + "</tr>\n";
}

// rel_l2 on a log axis from 1e-10 to 1e2 (clamped), x the node position.
std::string svg_plot(const Report& r) {
  const double W = 960, H = 300, L = 60, R = 20, T = 20, B = 40;
  const double lo = -10, hi = 2;
  int n = std::max(1, r.graph_nodes);
  for (const TracePoint& p : r.trace) n = std::max(n, p.position + 1);
  auto x = [&](double pos) { return L + (W - L - R) * pos / std::max(1, n - 1); };
  auto y = [&](double err) {
    double e = std::log10(std::max(err, 1e-300));
    e = std::clamp(e, lo, hi);
    return T + (H - T - B) * (hi - e) / (hi - lo);
  };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
                  "\" viewBox=\"0 0 " + num(W) + " " + num(H) + "\" role=\"img\">\n";
  s += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) + "\" height=\"" + num(H - T - B) +
       "\" fill=\"#fafafa\" stroke=\"#999\"/>\n";
  for (int e = static_cast<int>(lo); e <= hi; e += 2) {
    s += "<line x1=\"" + num(L) + "\" x2=\"" + num(W - R) + "\" y1=\"" + num(y(std::pow(10, e))) + "\" y2=\"" +
         num(y(std::pow(10, e))) + "\" stroke=\"#e4e4e4\"/>\n";
    s += "<text x=\"" + num(L - 6) + "\" y=\"" + num(y(std::pow(10, e)) + 4) +
         "\" font-size=\"11\" text-anchor=\"end\">1e" + std::to_string(e) + "</text>\n";
  }
  double tol = r.outputs.empty() ? 1e-4 : r.outputs.front().tol.max_rel_l2;
  s += "<line x1=\"" + num(L) + "\" x2=\"" + num(W - R) + "\" y1=\"" + num(y(tol)) + "\" y2=\"" + num(y(tol)) +
       "\" stroke=\"#d08000\" stroke-dasharray=\"6 4\"/>\n";
  s += "<text x=\"" + num(W - R - 4) + "\" y=\"" + num(y(tol) - 4) +
       "\" font-size=\"11\" text-anchor=\"end\" fill=\"#d08000\">tolerance rel_l2 " + fmt_sci(tol) + "</text>\n";
  for (const TracePoint& p : r.trace) {
    std::string tip = p.target + " " + p.kernel + " (" + join(p.nodes) + ") value " + p.value + ": cosine " +
                      fmt_cosine(p.a.cosine) + ", rel_l2 " + fmt_sci(p.a.rel_l2);
    s += "<circle cx=\"" + num(x(p.position)) + "\" cy=\"" + num(y(p.a.rel_l2)) + "\" r=\"3.5\" fill=\"" +
         (p.ok ? "#2a7d2a" : "#c62828") + "\"><title>" + esc(tip) + "</title></circle>\n";
  }
  s += "<text x=\"" + num((L + W - R) / 2) + "\" y=\"" + num(H - 8) +
       "\" font-size=\"12\" text-anchor=\"middle\">node position in topological order (0.." + std::to_string(n - 1) +
       ")</text>\n";
  s += "<text x=\"14\" y=\"" + num((T + H - B) / 2) + "\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
       num((T + H - B) / 2) + ")\">rel_l2 vs reference</text>\n";
  return s + "</svg>\n";
}

std::string outputs_table(const Report& r) {
  if (r.outputs.empty()) return "";
  std::string s = "<h2>Outputs against " + esc(r.ref) + "</h2>\n<table>\n";
  s += tr({"target", "output", "cosine", "rel_l2", "max |d|", "at", "rms(d)/rms(ref)", "NaN/Inf mismatches", "result"}, "", true);
  for (const MetricRow& m : r.outputs)
    s += m.error.empty()
             ? tr({m.target, m.output, fmt_cosine(m.a.cosine), fmt_sci(m.a.rel_l2), fmt_sci(m.a.max_abs),
                   std::to_string(m.a.max_abs_index), fmt_sci(m.a.rms_ratio), std::to_string(m.a.nonfinite_mismatches),
                   m.ok ? "ok" : "FAIL"},
                  m.ok ? "ok" : "bad")
             : tr({m.target, m.output, "-", "-", "-", "-", "-", "-", "ERROR: " + m.error}, "bad");
  return s + "</table>\n";
}

std::string stages_table(const Report& r) {
  if (r.stages.empty()) return "";
  std::string s = std::string("<h2>") + (r.subcommand == "check" ? "Determinism" : "Stages") + "</h2>\n<table>\n";
  s += tr({"target", "stage", "result", "detail"}, "", true);
  for (const StageRow& st : r.stages)
    s += tr({st.target, st.stage, status_name(st.status), st.detail},
            st.status == StageRow::Differ ? "bad" : st.status == StageRow::Agree ? "ok" : "");
  return s + "</table>\n";
}

std::string probes_table(const Report& r) {
  if (r.probes.empty()) return "";
  std::string s = "<h2>Probes (one compile each)</h2>\n<table>\n";
  s += tr({"compile", "mode", "setting", "cosine", "rel_l2", "result", "note"}, "", true);
  for (const ProbeRow& p : r.probes)
    s += tr({std::to_string(p.compile), p.mode, p.setting, fmt_cosine(p.cosine), fmt_sci(p.rel_l2),
             p.diverges ? "DIVERGES" : "agrees", p.note},
            p.diverges ? "bad" : "ok");
  return s + "</table>\n";
}

std::string trace_table(const Report& r) {
  std::string s;
  int shown = 0;
  for (const TracePoint& p : r.trace)
    if (!p.ok && shown++ < 20)
      s += tr({p.target, p.kernel, std::to_string(p.position), fmt_cosine(p.a.cosine), fmt_sci(p.a.rel_l2), p.value,
               join(p.nodes)},
              "bad");
  if (s.empty()) return "";
  return "<h3>Disagreeing fusion groups (first 20)</h3>\n<table>\n" +
         tr({"target", "kernel", "node#", "cosine", "rel_l2", "value", "nodes"}, "", true) + s + "</table>\n";
}

}  // namespace

std::string report_html(const Report& r) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>lockstep " +
                  esc(r.subcommand) + ": " + esc(r.model) + "</title>\n<style>\n"
                  "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
                  "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left;font-family:monospace}"
                  "tr.bad td{background:#fde8e8}tr.ok td{background:#eef7ee}"
                  ".verdict{padding:.8em;border-radius:4px;font-size:15px;font-family:monospace}"
                  ".agree{background:#e3f3e3;border:1px solid #2a7d2a}.disagree{background:#fde8e8;border:1px solid #c62828}"
                  "\n</style></head><body>\n";
  s += "<h1>lockstep " + esc(r.subcommand) + "</h1>\n<p>model <code>" + esc(r.model) + "</code>, targets <code>" +
       esc(join(r.targets)) + "</code>, reference <code>" + esc(r.ref) + "</code>, " + std::to_string(r.graph_nodes) +
       " nodes</p>\n";
  if (!r.command.empty()) s += "<p>command: <code>" + esc(r.command) + "</code></p>\n";
  s += "<div class=\"verdict " + std::string(r.agree ? "agree" : "disagree") + "\">verdict: " + esc(r.verdict) + "</div>\n";
  if (r.compiles >= 0)
    s += "<p>compiles: " + std::to_string(r.compiles) +
         (r.compile_budget >= 0 ? " (budget ceil(log2 n) + 3 = " + std::to_string(r.compile_budget) + ")" : "") + "</p>\n";
  s += outputs_table(r) + stages_table(r);
  if (!r.trace.empty()) {
    s += "<h2>Error along the graph</h2>\n<p>Each point is one fusion group of the program as compiled, at the "
         "position of its last ONNX node; red points disagree with the reference.</p>\n" +
         svg_plot(r) + trace_table(r);
  }
  s += probes_table(r);
  if (!r.notes.empty()) {
    s += "<h2>Notes</h2>\n<ul>\n";
    for (const std::string& n : r.notes) s += "<li><code>" + esc(n) + "</code></li>\n";
    s += "</ul>\n";
  }
  return s + "</body></html>\n";
}

}  // namespace lockstep
