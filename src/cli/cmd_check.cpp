// `lockstep check`: does a target agree with the reference, and with itself across runs,
// compiles and processes? Also the model loading that bisect and reduce share.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "backend/registry.h"
#include "cli/cli.h"
#include "cli/compile_options.h"
#include "core/error.h"
#include "core/files.h"
#include "frontend/onnx_import.h"
#include "runtime/target.h"
#include "verify/check.h"
#include "verify/faults.h"
#include "verify/parity.h"
#include "verify/planted_fault.h"

namespace lockstep::cli {

namespace fs = std::filesystem;

const char* const kMetricsHelp =
    "Metrics, per output, against the reference (float64 interpreter `ref` by default), in\n"
    "float64 over finite positions:\n"
    "  cosine           a.r / (|a| |r|)                       agree: >= 0.99999\n"
    "  rel_l2           |a - r| / |r|                          agree: <= 1e-4\n"
    "  max|d| at        largest |a - r| and its flat index\n"
    "  rms(d)/rms(ref)  RMS of the difference over RMS of the reference\n"
    "  nan/inf          positions where NaN/Inf differ from the reference (agree: 0)\n"
    "--tol [OUTPUT:]cosine=X,rel_l2=Y overrides the bounds for one output or all.";

namespace {

// Reads /proc/self/cmdline: the command exactly as run, for reports and READMEs.
std::string own_command() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), s;
  for (char c : all) s += c ? c : ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::vector<std::string> input_args(const InputSpec& spec) {
  std::vector<std::string> a;
  for (const std::string& f : spec.files) a.push_back("--input=" + f);
  for (const std::string& d : spec.dims) a.push_back("--dim=" + d);
  if (spec.seed != 0) a.push_back("--seed=" + std::to_string(spec.seed));
  if (!spec.seed_inputs.empty()) a.push_back("--seed-inputs=" + spec.seed_inputs);
  return a;
}

bool given(const InputSpec& spec, const std::string& name) {
  for (const std::string& f : spec.files)
    if (f.rfind(name + "=", 0) == 0) return true;
  return false;
}

}  // namespace

std::string self_binary() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

VerifySubject load_subject(const std::string& model, const InputSpec& spec) {
  VerifySubject s;
  bool bundle = fs::is_directory(model);
  std::string file = bundle ? (fs::path(model) / "model.onnx").string() : model;
  if (bundle && !fs::exists(file)) throw Error("'" + model + "' is a folder without model.onnx");
  s.graph = load_model(file, spec);
  s.inputs = make_inputs(s.graph, spec);
  if (bundle) {  // ONNX backend-test layout: input_K.pb is the K-th graph input
    fs::path set = fs::path(model) / "test_data_set_0";
    for (size_t k = 0; k < s.graph.inputs.size(); ++k) {
      fs::path pb = set / ("input_" + std::to_string(k) + ".pb");
      const std::string& name = s.graph.values[s.graph.inputs[k]].name;
      if (fs::exists(pb) && !given(spec, name)) s.inputs[name] = load_tensor_pb(pb.string());
    }
  }
  s.model_args = {model};
  for (const std::string& a : input_args(spec)) s.model_args.push_back(a);
  s.command = own_command();
  return s;
}

std::vector<std::string> split_targets(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string t;
  while (std::getline(ss, t, ',')) {
    if (!find_target(t)) throw Error("unknown target '" + t + "' (known: " + target_names() + ")");
    out.push_back(t);
  }
  if (out.empty()) throw Error("--targets: give at least one target");
  return out;
}

Tolerances parse_tolerances(const std::vector<std::string>& texts, const Graph& g) {
  std::vector<std::string> outputs;
  for (int v : g.outputs) outputs.push_back(g.values[v].name);
  Tolerances t;
  for (const std::string& text : texts) parse_tolerance(text, outputs, t);
  return t;
}

void add_verify_flags(CLI::App& app, VerifyFlags& f, bool reports) {
  app.add_option("model", f.model, "ONNX model file, or a folder in ONNX's backend-test layout")->required();
  app.add_option("--ref", f.ref, "The oracle: `ref` (float64 interpreter) or another target")->capture_default_str();
  add_input_flags(app, f.inputs);
  app.add_option("--tol", f.tol, "[OUTPUT:]cosine=X,rel_l2=Y: tolerance for one output or all (repeatable)");
  if (!reports) return;
  app.add_option("--aba", f.aba, "B of the A-B-A compile sequence (default: the model cut at its middle node)");
  app.add_option("--json", f.json, "Write the report as JSON to this file");
  app.add_option("--html", f.html, "Write a self-contained HTML report (inline SVG) to this file");
}

VerifyRun start_verify(const VerifyFlags& f) {
  std::vector<std::string> inputs = input_paths(f.model, f.inputs);
  if (!f.aba.empty()) inputs.push_back(f.aba);
  refuse_input_as_output(f.json, inputs, "--json");
  refuse_input_as_output(f.html, inputs, "--html");
  VerifyRun v;
  v.subject = load_subject(f.model, f.inputs);
  check_fault_applies(fault_spec(f.compile.options.fault), v.subject.graph);
  v.tol = parse_tolerances(f.tol, v.subject.graph);
  v.process = {self_binary(), v.subject.model_args};
  if (!f.aba.empty()) v.b = load_subject(f.aba, f.inputs);
  return v;
}

VerifyOptions VerifyRun::options(const VerifyFlags& f) const {
  VerifyOptions o;
  o.ref = f.ref;
  o.compile = f.compile.options;
  o.tol = tol;
  o.process = process;
  o.aba = b.graph.nodes.empty() ? nullptr : &b.graph;
  o.aba_inputs = b.inputs;
  return o;
}

int finish_verify(Report& r, const VerifyRun& v, const VerifyFlags& f) {
  r.command = v.subject.command;
  r.model = f.model;
  print_report(std::cout, r);
  write_reports(r, f.json, f.html);
  return r.agree ? kExitOk : kExitMismatch;
}

namespace {

struct CheckFlags : VerifyFlags {
  std::string targets = default_target();
  std::vector<std::string> sweep;  // --dims
  int fresh = 2, repeat = 2;
  bool sha_only = false;
};

// --sha-only: what a fresh process reports back to the check that started it.
int sha_only(const CheckFlags& f) {
  VerifySubject s = load_subject(f.model, f.inputs);  // a fault's node may lie outside B of A-B-A
  auto p = compile(s.graph, split_targets(f.targets).front(), f.compile.options);
  std::cout << fresh_report(p->run(s.inputs), *p, f.compile.options);
  return kExitOk;
}

std::string outputs_sha(const std::vector<Tensor>& outs) {
  std::string s;
  for (const Tensor& t : outs) s += (s.empty() ? "" : ",") + tensor_sha256(t).substr(0, 12);
  return s;
}

int check(const CheckFlags& f);

// --dims: the full check at each length, then each target's one program taken through every
// length in order, whose bytes at each must be those of a program compiled for that length
// alone (--specialise): one compile serving every length changes no result.
int check_sweep(const CheckFlags& f) {
  if (!f.json.empty() || !f.html.empty()) throw Error("--json and --html report one length: leave them out with --dims");
  std::vector<InputSpec> steps = sweep_specs(f.inputs, f.sweep);
  struct Row {
    std::string label;
    int check = 0;
    std::vector<std::string> same;  // per target
  };
  std::vector<Row> rows;
  for (const InputSpec& step : steps) {
    CheckFlags one = f;
    one.sweep.clear();
    one.inputs = step;
    std::cout << "== " << sweep_label(step, f.sweep) << "\n";
    rows.push_back({sweep_label(step, f.sweep), check(one), {}});
  }
  std::vector<std::string> targets = split_targets(f.targets);
  CompileOptions spec = f.compile.options;
  spec.symbolic = false;
  std::vector<int> compiles;
  for (const std::string& t : targets) {
    std::unique_ptr<Program> swept;
    for (size_t k = 0; k < steps.size(); ++k) {
      VerifySubject s = load_subject(f.model, steps[k]);
      if (!swept) swept = compile(s.graph, t, f.compile.options);
      std::string a = outputs_sha(swept->run(s.inputs)), b = outputs_sha(compile(s.graph, t, spec)->run(s.inputs));
      rows[k].same.push_back(a == b ? "same (" + a + ")" : "DIFFER (" + a + " vs " + b + ")");
    }
    compiles.push_back(swept->stats().compiles);
  }
  std::cout << "== length sweep\n  length      check     ";
  for (size_t t = 0; t < targets.size(); ++t)
    std::cout << targets[t] << ": one program (" << compiles[t] << " compile" << (compiles[t] == 1 ? "" : "s")
              << ") vs compiled for the length    ";
  std::cout << "\n";
  bool ok = true;
  for (const Row& r : rows) {
    std::cout << "  " << r.label << std::string(r.label.size() < 10 ? 10 - r.label.size() : 0, ' ') << "  "
              << (r.check == kExitOk ? "agree   " : "DISAGREE");
    ok &= r.check == kExitOk;
    for (const std::string& s : r.same) {
      std::cout << "  " << s;
      ok &= s.rfind("same", 0) == 0;
    }
    std::cout << "\n";
  }
  std::cout << "sweep verdict: " << (ok ? "agree at every length" : "DISAGREE") << "\n";
  return ok ? kExitOk : kExitMismatch;
}

int check(const CheckFlags& f) {
  if (f.sha_only) return sha_only(f);
  if (!f.sweep.empty()) return check_sweep(f);
  VerifyRun v = start_verify(f);
  CheckOptions o;
  static_cast<VerifyOptions&>(o) = v.options(f);
  o.targets = split_targets(f.targets);
  o.fresh = f.fresh;
  o.repeat = f.repeat;
  Report r = run_check(v.subject.graph, v.subject.inputs, o);
  return finish_verify(r, v, f);
}

}  // namespace

Action add_check(CLI::App& app) {
  auto f = std::make_shared<CheckFlags>();
  add_verify_flags(app, *f, true);
  app.add_option("--targets", f->targets, targets_help("Comma-separated targets to check"))->capture_default_str();
  add_int_option(app, "--fresh", f->fresh, 0, 1000, "Fresh processes whose output SHA-256 must match (0: none)");
  add_int_option(app, "--repeat", f->repeat, 1, 1000,
                 "In-process compiles whose output SHA-256 must match (1: none again)");
  app.add_flag("--sha-only", f->sha_only, "Only print each output's SHA-256 (what fresh processes report)");
  add_sweep_flag(app, f->sweep);
  add_compile_flags(app, f->compile);
  app.footer(std::string(kMetricsHelp) +
             "\n\nDeterminism, per target, by SHA-256 of the output bytes: a second run of the same\n"
             "program; --repeat compiles in this process; a compile with the cache toggled; --fresh\n"
             "processes (this binary, `check --sha-only`); A-B-A: compile B, then A again (A must not\n"
             "change) with B's result equal to B compiled in a fresh process; constants as resident on\n"
             "the target against the host bytes. Progress goes to stderr: a bar redrawn in place on a\n"
             "terminal, one line per step otherwise.\n"
             "--dims T=1,7,64: the whole check at each length, then each target's one program taken\n"
             "through the lengths in order, its bytes at each compared with a program compiled for that\n"
             "length alone (--specialise).\n\n"
             "Exit status: 0 every output agrees and every determinism check holds, 1 something\n"
             "disagrees (or a target failed), 2 bad model, input, option or file, 3 internal error\n"
             "(a lockstep bug).");
  return [f] { return check(*f); };
}

}  // namespace lockstep::cli
