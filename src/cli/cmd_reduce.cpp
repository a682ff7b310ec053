// `lockstep reduce`: delta debugging to a minimal ONNX model that still diverges, written as
// a backend-test bundle with the command that reproduces it; with --dims, at the first length of
// a sweep that diverges.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "backend/registry.h"
#include "cli/cli.h"
#include "cli/compile_options.h"
#include "core/error.h"
#include "core/files.h"
#include "runtime/target.h"
#include "verify/faults.h"
#include "verify/reduce.h"

namespace lockstep::cli {

namespace fs = std::filesystem;

namespace {

struct ReduceFlags : VerifyFlags {
  std::string target = default_target(), out;
  std::vector<std::string> sweep;  // --dims
  int max_compiles = 64;
};

std::string quote(const std::string& s) {
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("/._-=:,+").find(c) == std::string::npos) {
      std::string q = "'";
      for (char d : s) q += d == '\'' ? std::string("'\\''") : std::string(1, d);
      return q + "'";
    }
  return s;
}

// A double that reads back as itself (std::to_string keeps 6 decimals: rel_l2=1e-7 became 0).
std::string exact(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// The command that reruns the bundle: `check` on the folder, with the same target, oracle,
// compile flags (the planted fault included) and tolerances.
std::string repro_command(const ReduceFlags& f, const Tolerances& tol) {
  std::string c = quote(self_binary()) + " check " + quote(fs::absolute(f.out).lexically_normal().string()) +
                  " --targets " + quote(f.target) + " --ref " + quote(f.ref);
  for (const std::string& a : compile_args(f.compile.options)) c += " " + quote(a);
  Tolerance d;
  if (tol.all.min_cosine != d.min_cosine || tol.all.max_rel_l2 != d.max_rel_l2)
    c += " --tol cosine=" + exact(tol.all.min_cosine) + ",rel_l2=" + exact(tol.all.max_rel_l2);
  return c;
}

// The reduction of `f`'s model at its inputs, printed; the exit status. `label`: the length of
// a sweep's step, printed as a heading once its model and inputs load. `diverges`: whether the
// target disagreed there (when it agrees, nothing is written).
int reduce(const ReduceFlags& f, const std::string& label = "", bool* diverges = nullptr) {
  OutputDir out(f.out, "reduce -o folder", true);  // new or empty, and checked before the search
  VerifyRun v = start_verify(f);
  if (!label.empty()) std::cout << "== " << label << "\n" << std::flush;
  VerifySubject& s = v.subject;
  ReduceOptions o;
  o.target = split_targets(f.target).front();
  o.ref = f.ref;
  o.compile = f.compile.options;
  o.tol = v.tol;
  o.max_compiles = f.max_compiles;
  Reduction red = reduce_model(s.graph, s.inputs, o);
  red.report.command = s.command;
  red.report.model = f.model;
  if (red.diverges) {
    std::string cmd = repro_command(f, o.tol);
    write_bundle(red, out.path(), cmd, f.model);
    out.keep();
    red.report.notes.push_back("bundle: " + f.out + " (model.onnx, test_data_set_0/, README.md)");
    red.report.notes.push_back("reproduce: " + cmd);
  }
  print_report(std::cout, red.report);
  if (diverges) *diverges = red.diverges;
  return red.diverges ? kExitMismatch : kExitOk;
}

// --dims: reduce needs one failing input set. The disagreement test (reduce's own first step:
// compile, run, compare with the reference) at each length in turn; the first length that
// fails is reduced, and the lengths after it are not tried.
int reduce_sweep(const ReduceFlags& f) {
  std::vector<InputSpec> steps = sweep_specs(f.inputs, f.sweep);
  std::string target = split_targets(f.target).front(), agreed;
  for (size_t k = 0; k < steps.size(); ++k) {
    ReduceFlags one = f;
    one.sweep.clear();
    one.inputs = steps[k];
    std::string label = sweep_label(steps[k], f.sweep);
    bool diverges = false;
    int rc = reduce(one, label, &diverges);
    if (!diverges) {
      agreed += (agreed.empty() ? "" : ", ") + label;
      continue;
    }
    std::cout << "sweep verdict: " << target << " disagrees with " << f.ref << " at " << label
              << (k == 0 ? ", the first length of the sweep"
                         : ", the first length that does (" + agreed + (k == 1 ? " agrees)" : " agree)"))
              << "; reduced there";
    if (k + 1 < steps.size())
      std::cout << ", " << steps.size() - k - 1 << " later length" << (k + 2 < steps.size() ? "s" : "") << " not tried";
    std::cout << "\n";
    return rc;
  }
  std::cout << "sweep verdict: agree: no length in the sweep fails (" << agreed << "); nothing to reduce\n";
  return kExitOk;
}

}  // namespace

Action add_reduce(CLI::App& app) {
  auto f = std::make_shared<ReduceFlags>();
  add_verify_flags(app, *f, false);
  app.add_option("--target", f->target, targets_help("The target that diverges"))->capture_default_str();
  app.add_option("-o,--out", f->out, "Folder to write the reduced bundle into")->required();
  add_int_option(app, "--max-compiles", f->max_compiles, 1, 1000000, "Stop the search after this many compiles");
  add_sweep_flag(app, f->sweep);
  add_compile_flags(app, f->compile);
  app.footer(std::string(kMetricsHelp) +
             "\n\nStarts from the first fusion group of the compiled program that diverges (or the whole\n"
             "graph where the target cannot capture) and runs delta debugging (ddmin) over its nodes:\n"
             "each candidate is the kept nodes alone, every value they read from removed nodes fed as\n"
             "an input holding the reference's value. A candidate fails when any output disagrees.\n"
             "Writes OUT/model.onnx, OUT/test_data_set_0/input_K.pb and output_K.pb (ONNX backend-test\n"
             "layout, reference outputs) and OUT/README.md with the exact `lockstep check` command that\n"
             "reproduces the divergence.\n"
             "--dims T=1,7,64: the test at each length in turn (a heading '== T=N', then its report); the\n"
             "first length that diverges is reduced (its inputs go into the bundle) and the last line,\n"
             "'sweep verdict:', names it; when none does, it says so and nothing is written (exit 0).\n\n"
             "Exit status: 0 the model agrees (nothing written), 1 a diverging model was reduced and\n"
             "written, 2 bad model, input, option or file, 3 internal error (a lockstep bug).");
  return [f] { return f->sweep.empty() ? reduce(*f) : reduce_sweep(*f); };
}

}  // namespace lockstep::cli
