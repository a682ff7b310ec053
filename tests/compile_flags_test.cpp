// The compile-option table: every field of CompileOptions has one flag, survives being spelled
// for a fresh process and parsed there, and a fresh process compiles the identical plan.
#include <gtest/gtest.h>

#include <set>

#include "backend/registry.h"
#include "cli/compile_options.h"
#include "cli/inputs.h"
#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "verify/check.h"
#include "verify/compile_flags.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using verify_test::scratch_dir;

// `args` parsed by the CLI's own compile flags.
CompileOptions parse(const std::vector<std::string>& args) {
  CLI::App app;
  cli::CompileFlags f;
  cli::add_compile_flags(app, f);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes argv in reverse
  app.parse(reversed);
  return f.options;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += " " + x;
  return s;
}

TEST(CompileFlags, EveryFieldHasExactlyOneEntry) {
  std::vector<std::string> fields = compile_option_fields();
  std::multiset<std::string> named;
  for (const CompileFlag& f : compile_flags()) named.insert(f.field);
  for (const std::string& field : fields) EXPECT_EQ(named.count(field), 1u) << "CompileOptions::" << field;
  EXPECT_EQ(named.size(), fields.size());
}

TEST(CompileFlags, EachFieldSurvivesTheTrip) {
  for (const CompileFlag& f : compile_flags()) {
    CompileOptions o;
    f.sample(o);
    ASSERT_FALSE(same_options(o, CompileOptions{})) << f.field << "'s sample is its default";
    std::vector<std::string> args = compile_args(o);
    if (f.not_passed_on) {
      EXPECT_TRUE(args.empty()) << f.field << " is kept in this process but spelled:" << joined(args);
      continue;
    }
    ASSERT_FALSE(args.empty()) << f.field << " is not spelled";
    EXPECT_TRUE(same_options(parse(args), o)) << f.field << " does not survive" << joined(args);
  }
}

TEST(CompileFlags, EveryFieldAtOnceSurvivesTheTrip) {
  CompileOptions o;
  for (const CompileFlag& f : compile_flags())
    if (!f.not_passed_on) f.sample(o);
  std::vector<std::string> args = compile_args(o);
  EXPECT_TRUE(same_options(parse(args), o)) << joined(args);
  EXPECT_TRUE(compile_args(CompileOptions{}).empty())
      << "defaults are spelled:" << joined(compile_args(CompileOptions{}));
}

TEST(CompileFlags, ValuesOutOfRangeNameTheFlag) {
  using testing::error_of;
  EXPECT_NE(error_of([] { parse({"--threads=-1"}); }).find("--threads"), std::string::npos);
  EXPECT_NE(error_of([] { parse({"--threads=1025"}); }).find("--threads"), std::string::npos);
  EXPECT_NE(error_of([] { parse({"--device=-1"}); }).find("--device"), std::string::npos);
  EXPECT_NE(error_of([] { parse({"--staging-slots=0"}); }).find("--staging-slots"), std::string::npos);
  EXPECT_NE(error_of([] { parse({"--staging-slot-bytes=18446744073709551616"}); }).find("--staging-slot-bytes"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse({"--pass-limit=2x"}); }).find("--pass-limit"), std::string::npos);
  EXPECT_NE(error_of([] { parse({"--reserve=T"}); }).find("--reserve"), std::string::npos);
}

TEST(CompileFlags, ADeviceTheTargetLacksIsRefused) {
  Graph g = verify_test::graph15();
  CompileOptions o;
  o.device = 1;
  std::string e = testing::error_of([&] { compile(g, "cpu", o); });
  EXPECT_NE(e.find("--device 1"), std::string::npos) << e;
  EXPECT_NE(e.find("there is no cpu device 1 here (it has 1"), std::string::npos) << e;
}

// A symbolic flow, so that --specialise changes the plan.
std::string symbolic_model() {
  vits::Config c;
  c.T = -1;
  std::filesystem::path p = scratch_dir() / "flow_symbolic.onnx";
  save_onnx(vits::build_cut(c, {"/flow/flows.6/enc/in_layers.1/Conv"}), p.string());
  return p.string();
}

FreshProcess fresh(const std::string& model) { return {testing::lockstep_binary(), {model, "--dim=T=24"}}; }

// Each option a fresh process used to lose (--specialise, --reserve, --verify-each) given to one:
// it reports the options it parsed and the plan it compiled, and both are this process's.
TEST(CompileFlags, AFreshProcessCompilesTheSamePlan) {
  std::string model = symbolic_model();
  Graph g = load_onnx(model);
  cli::InputSpec spec;
  spec.dims = {"T=24"};
  TensorMap in = cli::make_inputs(g, spec);
  for (bool symbolic : {true, false}) {
    CompileOptions o;
    o.symbolic = symbolic;
    o.verify_each = true;
    o.reserve["T"] = 64;
    o.pass_limit = 40;
    std::unique_ptr<Program> p = compile(g, "cpu", o);
    p->run(in);
    FreshResult r = fresh_process_run(fresh(model), "cpu", o);
    EXPECT_EQ(r.options, options_line(o));
    EXPECT_EQ(r.plan, p->identity()) << (symbolic ? "symbolic" : "specialised");
    EXPECT_FALSE(r.plan.empty());
    EXPECT_EQ(r.sha256.size(), g.outputs.size());
  }
}

// The identity tells a specialised program from a symbolic one of the same model: what the
// fresh processes compared before (outputs alone) could not.
TEST(CompileFlags, ThePlanIdentityTellsSpecialisedFromSymbolic) {
  std::string model = symbolic_model();
  CompileOptions spec;
  spec.symbolic = false;
  FreshResult a = fresh_process_run(fresh(model), "cpu", CompileOptions{});
  FreshResult b = fresh_process_run(fresh(model), "cpu", spec);
  EXPECT_NE(a.plan, b.plan);
  EXPECT_EQ(a.sha256, b.sha256);  // the same bytes: only the plan shows the difference
}

}  // namespace
}  // namespace lockstep
