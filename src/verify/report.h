// What `check` and `bisect` found, in one structure that prints as a terminal table, JSON,
// or a self-contained HTML page (inline SVG of the error along the graph, no network).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "verify/compare.h"

namespace lockstep {

// One output of one target against the reference.
struct MetricRow {
  std::string target, output;
  Agreement a;
  Tolerance tol;
  bool ok = false;
  std::string error;  // the target failed instead of giving a value
};

// A determinism check of `check`, or a runtime stage of `bisect --by stage`.
struct StageRow {
  enum Status { Agree, Differ, Skipped };
  std::string target, stage;
  Status status = Agree;
  std::string detail;
  std::vector<std::string> sha256;  // the hashes compared, where there are any
  // A later compile that differs: its constants whose resident bytes differ from the host.
  std::vector<std::string> corrupted;
};

// One fusion group of the program as compiled, placed at its last ONNX node's position in
// the graph's topological order.
struct TracePoint {
  std::string target;
  int position = 0;
  std::string kernel, value;
  std::vector<std::string> nodes;
  Agreement a;
  bool ok = true;
};

// One compile of a bisection: what it asked and what it answered.
struct ProbeRow {
  int compile = 0;           // running count of compiles when it ran
  std::string mode;          // "group", "node", "cut", "pass-limit", "stage"
  std::string setting;       // "cut at /dec/ups.0/ConvTranspose", "--pass-limit 134"
  double cosine = 1, rel_l2 = 0;
  bool diverges = false;
  std::string note;
};

struct Report {
  std::string subcommand;    // "check", "bisect", "reduce"
  std::string command;       // the command line, as run
  std::string model, ref;
  std::vector<std::string> targets;
  int graph_nodes = 0;
  std::vector<MetricRow> outputs;
  std::vector<StageRow> stages;
  std::vector<TracePoint> trace;
  std::vector<ProbeRow> probes;
  std::vector<std::string> notes;  // localisation steps in words
  int compiles = -1, compile_budget = -1;
  bool agree = true;
  std::string verdict;
};

// Terminal tables: outputs, stages, trace (failing groups and neighbours), probes, verdict.
void print_report(std::ostream& os, const Report& r);
std::string report_json(const Report& r);
std::string report_html(const Report& r);
// Writes the JSON / HTML report when the path is non-empty (atomically).
void write_reports(const Report& r, const std::string& json_path, const std::string& html_path);

// "0.999999871" / "3.1e-07": the spellings every report uses.
std::string fmt_cosine(double c);
std::string fmt_sci(double v);
std::string fmt_bound(double v);  // a tolerance as given: "0.99999", "0.0001"
std::string status_name(StageRow::Status s);

}  // namespace lockstep
