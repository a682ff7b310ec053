// `lockstep check`: tolerances, report rendering, agreement on the VITS graphs, and each
// planted fault class detected by the row that should catch it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "backend/registry.h"
#include "ref/interpreter.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/check.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using namespace verify_test;
using testing::error_of;

TEST(VerifyCheck, ToleranceTextSetsOneOutputOrAll) {
  Tolerances t;
  parse_tolerance("cosine=0.999", {"audio", "z"}, t);
  parse_tolerance("audio:rel_l2=1e-3", {"audio", "z"}, t);
  EXPECT_EQ(t.all.min_cosine, 0.999);
  EXPECT_EQ(t.all.max_rel_l2, 1e-4);  // the default docs/why.md gives stays
  EXPECT_EQ(t.of("audio").min_cosine, 0.999);
  EXPECT_EQ(t.of("audio").max_rel_l2, 1e-3);
  EXPECT_EQ(t.of("z").max_rel_l2, 1e-4);
  EXPECT_NE(error_of([&] { parse_tolerance("mel:cosine=0.9", {"audio"}, t); }).find("no output named 'mel'"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_tolerance("cos=0.9", {"audio"}, t); }).find("unknown key 'cos'"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_tolerance("cosine=high", {"audio"}, t); }).find("KEY=NUMBER"), std::string::npos);
}

Report sample_report() {
  Report r;
  r.subcommand = "bisect";
  r.model = "m.onnx";
  r.ref = "ref";
  r.targets = {"cpu"};
  r.graph_nodes = 10;
  r.agree = false;
  r.verdict = "stage kernels: k3 <diverges> & more";
  MetricRow m;
  m.target = "cpu";
  m.output = "audio";
  m.a.cosine = 0.5;
  m.a.rel_l2 = INFINITY;
  r.outputs.push_back(m);
  for (int k = 0; k < 3; ++k) {
    TracePoint p;
    p.target = "cpu";
    p.position = 3 * k;
    p.kernel = "k" + std::to_string(k);
    p.nodes = {"/n" + std::to_string(k)};
    p.a.rel_l2 = k == 2 ? 0.5 : 1e-7;
    p.ok = k != 2;
    r.trace.push_back(p);
  }
  r.stages.push_back({"cpu", "constants", StageRow::Differ, "'w' changed", {}});
  r.compiles = 4;
  r.compile_budget = 7;
  return r;
}

TEST(VerifyCheck, JsonCarriesEveryRowAndTheVerdict) {
  nlohmann::json j = nlohmann::json::parse(report_json(sample_report()));
  EXPECT_EQ(j["verdict"], "stage kernels: k3 <diverges> & more");
  EXPECT_EQ(j["agree"], false);
  EXPECT_EQ(j["compiles"], 4);
  EXPECT_EQ(j["outputs"][0]["metrics"]["cosine"], 0.5);
  EXPECT_EQ(j["outputs"][0]["metrics"]["rel_l2"], "inf");  // JSON has no infinity
  EXPECT_EQ(j["trace"].size(), 3u);
  EXPECT_EQ(j["trace"][2]["ok"], false);
  EXPECT_EQ(j["stages"][0]["status"], "DIFFER");
}

TEST(VerifyCheck, HtmlIsSelfContainedWithOnePointPerGroup) {
  std::string h = report_html(sample_report());
  EXPECT_NE(h.find("<svg"), std::string::npos);
  size_t circles = 0;
  for (size_t at = h.find("<circle"); at != std::string::npos; at = h.find("<circle", at + 1)) ++circles;
  EXPECT_EQ(circles, 3u);
  EXPECT_NE(h.find("#c62828\"><title>cpu k2"), std::string::npos) << "the bad group is drawn red";
  EXPECT_NE(h.find("k3 &lt;diverges&gt; &amp; more"), std::string::npos) << "the verdict, escaped";
  for (const char* remote : {"<script", "<link", "src=", "href=", "@import", "url("})
    EXPECT_EQ(h.find(remote), std::string::npos) << remote;
  size_t http = h.find("http");
  EXPECT_EQ(h.find("http", h.find("www.w3.org/2000/svg") + 1), std::string::npos) << "only the SVG namespace";
  EXPECT_NE(http, std::string::npos);
}

// The cosine of two tensors, computed here independently of verify/compare.
double cosine(const Tensor& a, const RefTensor& r) {
  double dot = 0, na = 0, nr = 0;
  for (int64_t k = 0; k < r.numel(); ++k) {
    double x = a.data<float>()[k], y = r.f[k];
    dot += x * y, na += x * x, nr += y * y;
  }
  return dot / std::sqrt(na * nr);
}

TEST(VerifyCheck, Graph174AgreesOnEveryRowAndExitsZero) {
  fs::path json = scratch_dir() / "check174.json";
  CliResult r = lockstep({"check", model_file("g174"), "--targets", "cpu", "--seed-inputs", "vits", "--fresh", "1",
                          "--json", json.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.line("verdict: ").find("agree"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(slurp(json));
  std::vector<std::string> stages;
  for (const auto& s : j["stages"]) {
    stages.push_back(s["stage"]);
    EXPECT_EQ(s["status"], "agree") << s["stage"] << ": " << s["detail"];
  }
  EXPECT_EQ(stages, (std::vector<std::string>{"run-to-run", "constants", "in-process compiles", "cache on/off",
                                               "fresh processes", "A-B-A"}));
  // The reported cosine is the one computed here from a cpu run and the float64 reference.
  Graph g = graph174();
  TensorMap in = vits::seed_inputs(g, 1024);
  double want = cosine(compile(g, "cpu")->run(in)[0], run_reference(g, in)[0]);
  EXPECT_NEAR(j["outputs"][0]["metrics"]["cosine"].get<double>(), want, 1e-12);
  EXPECT_GE(want, 0.99999);
}

TEST(VerifyCheck, FullDecoderAgreesAndExitsZero) {
  CliResult r = lockstep({"check", model_file("decoder128"), "--targets", "cpu", "--seed-inputs", "vits", "--fresh", "1"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.line("verdict: ").find("agree"), std::string::npos) << r.out;
  // Not a terminal: one progress line per step, the last one "7/7" (6 stages + the reference).
  EXPECT_NE(r.err.find("[1/7 "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[7/7 "), std::string::npos) << r.err;
}

// Each fault class, and the row of `check` that must catch it, on the first coupling layer's
// 15-node cut (the bisect tests localise each on the full decoder), on each target.
LOCKSTEP_ON_EACH_TARGET(CheckFaults);

TEST_P(CheckFaults, EachFaultClassIsDetectedByItsRow) {
  struct Case {
    std::string fault;
    std::vector<std::string> failing;  // "output" or stage names
    bool only = true;                  // no other row may fail
  };
  // staging-reuse corrupts an upload on every target, where depending on the staging ring's
  // position (which other compiles move); uninit leaves what the last run left in memory a
  // program keeps between runs: more rows may differ, but these must.
  std::vector<Case> cases = {
      {"kernel:/flow/flows.6/enc/in_layers.0/Conv", {"output"}},
      {"uninit:/flow/flows.6/enc/in_layers.0/Conv", {"output"}, false},
      {"pass:6", {"output"}},  // #6 fuse-epilogue of /flow/flows.6/pre/Conv
      {"staging-reuse", {"output", "constants"}, false},
      {"cache-by-name", {"A-B-A"}},
  };
  for (const Case& c : cases) {
    fs::path json = scratch_dir() / "check_fault.json";
    std::vector<std::string> args = {"check", model_file("g15"), "--targets", GetParam(), "--seed-inputs", "vits",
                                     "--fresh", "1", "--inject-fault", c.fault, "--json", json.string()};
    // The 15-node cut's constants fit the default ring of 64 slots, so no slot would be reused
    // within the upload; a ring of 4 wraps, as the decoder's 300-odd uploads wrap the default.
    if (c.fault == "staging-reuse") args.insert(args.end(), {"--staging-slots", "4"});
    CliResult r = lockstep(args);
    EXPECT_EQ(r.status, 1) << c.fault << "\n" << r.out << r.err;
    nlohmann::json j = nlohmann::json::parse(slurp(json));
    std::vector<std::string> failing;
    for (const auto& o : j["outputs"])
      if (!o["ok"].get<bool>()) failing.push_back("output");
    for (const auto& s : j["stages"])
      if (s["status"] == "DIFFER") failing.push_back(s["stage"]);
    if (c.only) {
      EXPECT_EQ(failing, c.failing) << c.fault << "\n" << r.out;
      continue;
    }
    for (const std::string& row : c.failing)
      EXPECT_NE(std::find(failing.begin(), failing.end(), row), failing.end()) << c.fault << ": " << row << "\n" << r.out;
  }
}

TEST(VerifyCheck, BadInputIsExitTwo) {
  CliResult r = lockstep({"check", model_file("g174"), "--inject-fault", "kernel:/no/such/node"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no node named '/no/such/node'"), std::string::npos) << r.err;
  r = lockstep({"check", model_file("g174"), "--targets", "cpu,tpu"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown target 'tpu'"), std::string::npos) << r.err;
  r = lockstep({"check", model_file("g174"), "--tol", "nope:cosine=0.9"});
  EXPECT_EQ(r.status, 2);
  r = lockstep({"check", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* want : {"cosine", "rel_l2", "max|d|", "rms(d)/rms(ref)", "nan/inf", "Exit status: 0", "A-B-A"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want;
}

}  // namespace
}  // namespace lockstep
