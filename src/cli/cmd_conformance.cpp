#include <iostream>

#include "cli/cli.h"
#include "verify/conformance.h"

namespace lockstep::cli {

Action add_conformance(CLI::App& app) {
  struct Opts {
    std::string dir, target = "ref", filter;
    size_t sample = 1, slice = 0;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("dir", o->dir, "Folder of cases in ONNX's backend-test layout")->required();
  app.add_option("--target", o->target, targets_help("Target to run the cases on"))->capture_default_str();
  app.add_option("--filter", o->filter, "Only cases whose name contains this text");
  add_int_option(app, "--sample", o->sample, 1, 1000000,
                 "N > 1: in name order, each case with an op no earlier case had, and every Nth of the rest");
  add_int_option(app, "--slice", o->slice, 0, 999999,
                 "With --sample N: which Nth of the rest, 0..N-1 (N runs with every slice run every case)");
  app.footer(
      "Each case passes when every output satisfies |got - expected| <= atol + rtol*|expected|\n"
      "(NaN where expected has NaN), with rtol/atol from the folder's index.json (default\n"
      "1e-3/1e-7). Cases using ops, attributes or dtypes lockstep does not support are counted\n"
      "as unsupported. Exit status: 0 all supported cases pass, 1 some failed, 2 bad usage, 3 internal error.");
  return [o] {
    auto results = run_conformance(o->dir, o->target, o->filter, o->sample, o->slice);
    print_scoreboard(std::cout, results);
    for (const auto& r : results)
      if (r.status == CaseResult::Failed) return kExitMismatch;
    return kExitOk;
  };
}

}  // namespace lockstep::cli
