// `lockstep ulp`: how far each target's float32 exp, log, tanh, erf, pow and sigmoid are from
// the float64 reference, in ulp, over a dense sweep of inputs (verify/math_ulp.h), against the
// bounds docs/math.md documents.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "backend/registry.h"
#include "cli/cli.h"
#include "core/error.h"
#include "runtime/target.h"
#include "verify/math_ulp.h"

namespace lockstep::cli {

namespace {

struct UlpCmd {
  std::string targets = default_target(), functions;
  int64_t points = kUlpDefaultPoints;
  CompileFlags compile;
};

std::vector<MathFn> parse_functions(const std::string& list) {
  if (list.empty()) return {std::begin(codegen::kMathFns), std::end(codegen::kMathFns)};
  std::vector<MathFn> fns;
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    bool found = false;
    for (MathFn fn : codegen::kMathFns)
      if (name == codegen::math_fn_info(fn).name) fns.push_back(fn), found = true;
    if (!found) throw Error("--functions: unknown function '" + name + "' (exp, log, tanh, erf, pow, sigmoid)");
  }
  return fns;
}

std::string ulp_text(double u) {
  if (std::isinf(u)) return "wrong special";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", u);
  return b;
}

int run_ulp(const UlpCmd& o) {
  std::vector<MathFn> fns = parse_functions(o.functions);
  std::vector<std::string> targets = split_targets(o.targets);
  for (const std::string& t : targets) {
    const TargetInfo* info = find_target(t);  // split_targets named the unknown ones
    if (info->make_program) throw Error("target '" + t + "' is the reference itself: give a compiled target");
    std::string why = unavailable_reason(*info);
    if (!why.empty()) throw Error("target '" + t + "' cannot run here: " + why);
  }
  std::printf("%-8s %-10s %9s %10s %9s %12s  %s\n", "function", "target", "points", "worst ulp", "bound", "results",
              "at input (got, exact)");
  bool within = true;
  for (MathFn fn : fns) {
    const codegen::MathFnInfo& info = codegen::math_fn_info(fn);
    for (const std::string& t : targets) {
      UlpResult r = measure_ulp(t, fn, o.points, o.compile.options);
      bool ok = r.worst_ulp <= info.bound_ulp;
      within = within && ok;
      std::string at = fn == MathFn::Pow ? "x=" + float_text(r.x) + " y=" + float_text(r.y) : "x=" + float_text(r.x);
      char exact[48];
      std::snprintf(exact, sizeof exact, "%.9g", r.exact);
      std::printf("%-8s %-10s %9lld %10s %9.2f %12s  %s (got %s, exact %s)%s\n", info.name, t.c_str(),
                  static_cast<long long>(r.points), ulp_text(r.worst_ulp).c_str(), info.bound_ulp,
                  r.sha256.substr(0, 12).c_str(), at.c_str(), float_text(r.got).c_str(), exact,
                  ok ? "" : "  ABOVE THE BOUND");
      std::fflush(stdout);
    }
  }
  return within ? kExitOk : kExitMismatch;
}

}  // namespace

Action add_ulp(CLI::App& app) {
  auto o = std::make_shared<UlpCmd>();
  app.add_option("--targets", o->targets, targets_help("Comma-separated compiled targets to measure"))->capture_default_str();
  app.add_option("--points", o->points, "Inputs per function (pow: pairs)")->check(CLI::Range(int64_t{16}, int64_t{1} << 28))
      ->capture_default_str();
  app.add_option("--functions", o->functions, "Comma-separated functions (default: exp,log,tanh,erf,pow,sigmoid)");
  add_compile_flags(app, o->compile);
  app.footer(
      "Runs each function as a one-node graph (Exp, Log, Tanh, Erf, Pow, Sigmoid) over float32 inputs on\n"
      "each target and on ref: half the points are bit patterns at an even stride over all 2^32\n"
      "(every sign and binade, subnormals, NaN), half evenly spaced over the function's interesting\n"
      "range, then the special values and the edges where results overflow or turn subnormal; pow\n"
      "takes pairs of special values, a grid of bit patterns and pairs with a finite result. Error:\n"
      "|got - exact| in ulp of float32 in the binade of the exact float64 value (2^-149 below\n"
      "2^-126); 'wrong special' when NaN, an infinity or the sign of a zero differs. The bound is the\n"
      "one docs/math.md documents for every target. 'results': the SHA-256 of the target's outputs,\n"
      "equal on targets that agree bit for bit.\n"
      "Exit status: 0 every worst case within its bound, 1 one above it, 2 bad option or a target\n"
      "that cannot run here, 3 internal error.");
  return [o] { return run_ulp(*o); };
}

}  // namespace lockstep::cli
