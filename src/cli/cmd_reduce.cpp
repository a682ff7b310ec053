// `lockstep reduce`: delta debugging to a minimal ONNX model that still diverges, written as
// a backend-test bundle with the command that reproduces it.
#include <filesystem>
#include <iostream>

#include "cli/cli.h"
#include "cli/compile_options.h"
#include "core/error.h"
#include "verify/faults.h"
#include "verify/reduce.h"
#include "runtime/target.h"

namespace lockstep::cli {

namespace fs = std::filesystem;

namespace {

struct ReduceFlags : VerifyFlags {
  std::string target = default_target(), out;
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

// The command that reruns the bundle: `check` on the folder, with the same target, oracle,
// compile flags (the planted fault included) and tolerances.
std::string repro_command(const ReduceFlags& f, const Tolerances& tol) {
  std::string c = quote(self_binary()) + " check " + quote(fs::absolute(f.out).lexically_normal().string()) +
                  " --targets " + quote(f.target) + " --ref " + quote(f.ref);
  for (const std::string& a : compile_args(f.compile.options)) c += " " + quote(a);
  Tolerance d;
  if (tol.all.min_cosine != d.min_cosine || tol.all.max_rel_l2 != d.max_rel_l2)
    c += " --tol cosine=" + std::to_string(tol.all.min_cosine) + ",rel_l2=" + std::to_string(tol.all.max_rel_l2);
  return c;
}

int reduce(const ReduceFlags& f) {
  VerifyRun v = start_verify(f);
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
    write_bundle(red, f.out, cmd, f.model);
    red.report.notes.push_back("bundle: " + f.out + " (model.onnx, test_data_set_0/, README.md)");
    red.report.notes.push_back("reproduce: " + cmd);
  }
  print_report(std::cout, red.report);
  return red.diverges ? kExitMismatch : kExitOk;
}

}  // namespace

Action add_reduce(CLI::App& app) {
  auto f = std::make_shared<ReduceFlags>();
  add_verify_flags(app, *f, false);
  app.add_option("--target", f->target, targets_help("The target that diverges"))->capture_default_str();
  app.add_option("-o,--out", f->out, "Folder to write the reduced bundle into")->required();
  app.add_option("--max-compiles", f->max_compiles, "Stop the search after this many compiles")->capture_default_str();
  add_compile_flags(app, f->compile);
  app.footer(std::string(kMetricsHelp) +
             "\n\nStarts from the first fusion group of the compiled program that diverges (or the whole\n"
             "graph where the target cannot capture) and runs delta debugging (ddmin) over its nodes:\n"
             "each candidate is the kept nodes alone, every value they read from removed nodes fed as\n"
             "an input holding the reference's value. A candidate fails when any output disagrees.\n"
             "Writes OUT/model.onnx, OUT/test_data_set_0/input_K.pb and output_K.pb (ONNX backend-test\n"
             "layout, reference outputs) and OUT/README.md with the exact `lockstep check` command that\n"
             "reproduces the divergence.\n\n"
             "Exit status: 0 the model agrees (nothing written), 1 a diverging model was reduced and\n"
             "written, 2 bad model, input, option or file, 3 internal error (a lockstep bug).");
  return [f] { return reduce(*f); };
}

}  // namespace lockstep::cli
