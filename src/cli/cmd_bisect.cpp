// `lockstep bisect`: where a target stops agreeing with the reference, by runtime stage, node
// and pass application, in as few compiles as a binary search allows.
#include <iostream>

#include "cli/cli.h"
#include "cli/compile_options.h"
#include "core/error.h"
#include "verify/bisect.h"
#include "verify/faults.h"

namespace lockstep::cli {

namespace {

struct BisectFlags {
  std::string model, target = "cpu", ref = "ref", by = "all", aba, json, html;
  bool cuts = false;
  InputSpec inputs;
  CompileFlags compile;
  std::vector<std::string> tol;
};

BisectOptions::By parse_by(const std::string& by) {
  if (by == "node") return BisectOptions::Node;
  if (by == "pass") return BisectOptions::Pass;
  if (by == "stage") return BisectOptions::Stage;
  if (by == "all") return BisectOptions::All;
  throw Error("--by must be node, pass, stage or all, not '" + by + "'");
}

int bisect(const BisectFlags& f) {
  VerifySubject s = load_subject(f.model, f.inputs);
  check_fault_applies(f.compile.options.fault, s.graph);
  BisectOptions o;
  o.target = split_targets(f.target).front();
  o.ref = f.ref;
  o.by = parse_by(f.by);
  o.cuts = f.cuts;
  o.compile = f.compile.options;
  o.tol = parse_tolerances(f.tol, s.graph);
  o.process = {self_binary(), s.model_args};
  VerifySubject b;
  if (!f.aba.empty()) {
    b = load_subject(f.aba, f.inputs);
    o.aba = &b.graph;
    o.aba_inputs = b.inputs;
  }
  Report r = run_bisect(s.graph, s.inputs, o);
  r.command = s.command;
  r.model = f.model;
  print_report(std::cout, r);
  write_reports(r, f.json, f.html);
  return r.agree ? kExitOk : kExitMismatch;
}

}  // namespace

Action add_bisect(CLI::App& app) {
  auto f = std::make_shared<BisectFlags>();
  app.add_option("model", f->model, "ONNX model file, or a folder in ONNX's backend-test layout")->required();
  app.add_option("--target", f->target, "The target to bisect")->capture_default_str();
  app.add_option("--ref", f->ref, "The oracle: `ref` (float64 interpreter) or another target")->capture_default_str();
  app.add_option("--by", f->by, "node | pass | stage | all")->capture_default_str();
  app.add_flag("--cuts", f->cuts, "Node mode by prefix cuts at node outputs instead of capturing the compiled program");
  add_input_flags(app, f->inputs);
  app.add_option("--aba", f->aba, "B of the A-B-A stage (default: the model cut at its middle node)");
  app.add_option("--tol", f->tol, "[OUTPUT:]cosine=X,rel_l2=Y: tolerance for one output or all (repeatable)");
  app.add_option("--json", f->json, "Write the report as JSON to this file");
  app.add_option("--html", f->html, "Write a self-contained HTML report (inline SVG) to this file");
  add_compile_flags(app, f->compile);
  app.footer(std::string(kMetricsHelp) +
             "\n\n--by stage: the first runtime stage that differs, in order: constants as resident on\n"
             "  the target (after upload, after a run) against the host bytes; each fusion group of\n"
             "  the program as compiled against the reference, and the first diverging one alone on\n"
             "  the reference's inputs; readback; cache on vs off; a second run and compile; A-B-A.\n"
             "--by node: capture every fusion group's value of the program as compiled (no\n"
             "  recompilation), take the first that diverges, map it to its ONNX nodes, then compile\n"
             "  prefixes of the group alone on the reference's inputs (checked mode) to name the node.\n"
             "  With --cuts: binary search over prefix cuts at node outputs instead, printed as a\n"
             "  table of anchor node -> cosine.\n"
             "--by pass: binary search over --pass-limit for the first application after which the\n"
             "  target diverges; prints #N pass-name and the nodes it touched.\n"
             "--by all: stage, then node, then pass; one verdict line naming the stage, the ONNX\n"
             "  node(s) and, for a pass, #N pass-name. Every compile is counted and printed.\n\n"
             "Exit status: 0 nothing diverges, 1 a divergence was found (the verdict says where),\n"
             "2 bad model, input, option or file.");
  return [f] { return bisect(*f); };
}

}  // namespace lockstep::cli
