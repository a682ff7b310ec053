// `lockstep bisect`: where a target stops agreeing with the reference, by runtime stage, node
// and pass application, in as few compiles as a binary search allows; with --dims, at each
// length of a sweep in turn until one disagrees.
#include <iostream>

#include "backend/registry.h"
#include "cli/cli.h"
#include "cli/compile_options.h"
#include "core/error.h"
#include "runtime/target.h"
#include "verify/bisect.h"
#include "verify/faults.h"

namespace lockstep::cli {

namespace {

struct BisectFlags : VerifyFlags {
  std::string target = default_target(), by = "all";
  std::vector<std::string> sweep;  // --dims
  bool cuts = false;
};

BisectOptions::By parse_by(const std::string& by) {
  if (by == "node") return BisectOptions::Node;
  if (by == "pass") return BisectOptions::Pass;
  if (by == "stage") return BisectOptions::Stage;
  if (by == "all") return BisectOptions::All;
  throw Error("--by must be node, pass, stage or all, not '" + by + "'");
}

// `label`: the length of a sweep's step, printed as a heading once its model and inputs load.
int bisect(const BisectFlags& f, const std::string& label = "") {
  VerifyRun v = start_verify(f);
  if (!label.empty()) std::cout << "== " << label << "\n" << std::flush;
  BisectOptions o;
  static_cast<VerifyOptions&>(o) = v.options(f);
  o.target = split_targets(f.target).front();
  o.by = parse_by(f.by);
  o.cuts = f.cuts;
  Report r = run_bisect(v.subject.graph, v.subject.inputs, o);
  return finish_verify(r, v, f);
}

// --dims: the whole bisect at each length in turn; the first length where the target disagrees
// ends the sweep with that length's localisation (the lengths after it are not bisected).
int bisect_sweep(const BisectFlags& f) {
  if (!f.json.empty() || !f.html.empty()) throw Error("--json and --html report one length: leave them out with --dims");
  std::vector<InputSpec> steps = sweep_specs(f.inputs, f.sweep);
  std::string target = split_targets(f.target).front(), agreed;
  for (size_t k = 0; k < steps.size(); ++k) {
    BisectFlags one = f;
    one.sweep.clear();
    one.inputs = steps[k];
    std::string label = sweep_label(steps[k], f.sweep);
    if (bisect(one, label) == kExitOk) {
      agreed += (agreed.empty() ? "" : ", ") + label;
      continue;
    }
    std::cout << "sweep verdict: " << target << " disagrees with " << f.ref << " at " << label
              << (k == 0 ? ", the first length of the sweep"
                         : ", the first length that does (" + agreed + (k == 1 ? " agrees)" : " agree)"));
    if (k + 1 < steps.size())
      std::cout << "; " << steps.size() - k - 1 << " later length" << (k + 2 < steps.size() ? "s" : "") << " not bisected";
    std::cout << "\n";
    return kExitMismatch;
  }
  std::cout << "sweep verdict: " << target << " agrees with " << f.ref << " at every length (" << agreed << ")\n";
  return kExitOk;
}

int bisect_any(const BisectFlags& f) { return f.sweep.empty() ? bisect(f) : bisect_sweep(f); }

}  // namespace

Action add_bisect(CLI::App& app) {
  auto f = std::make_shared<BisectFlags>();
  add_verify_flags(app, *f, true);
  app.add_option("--target", f->target, targets_help("The target to bisect"))->capture_default_str();
  app.add_option("--by", f->by, "node | pass | stage | all")->capture_default_str();
  app.add_flag("--cuts", f->cuts, "Node mode by prefix cuts at node outputs instead of capturing the compiled program");
  add_sweep_flag(app, f->sweep);
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
             "  node(s) and, for a pass, #N pass-name. Every compile is counted and printed.\n"
             "--dims T=1,7,64: the bisect at each length in turn (a heading '== T=N', then its report);\n"
             "  the first length where the target disagrees ends the sweep with its localisation, and a\n"
             "  last line 'sweep verdict:' names that length, or says every length agrees.\n\n"
             "Exit status: 0 nothing diverges, 1 a divergence was found (the verdict says where),\n"
             "2 bad model, input, option or file, 3 internal error (a lockstep bug).");
  return [f] { return bisect_any(*f); };
}

}  // namespace lockstep::cli
