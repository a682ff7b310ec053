// The lockstep command line. Each subcommand lives in its own cmd_*.cpp and registers here.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cli/compile_options.h"
#include "cli/inputs.h"
#include "graph/graph.h"
#include "verify/check.h"

namespace lockstep::cli {

// Exit statuses shared by every subcommand.
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;   // ran, but results disagree / cases failed
constexpr int kExitUserError = 2;  // bad model, input, option or file
constexpr int kExitInternal = 3;   // a lockstep bug: a broken invariant, generated code rejected

// A subcommand adds its options to `app` and returns the action to run when it is chosen.
using Action = std::function<int()>;
Action add_info(CLI::App& app);
Action add_run(CLI::App& app);
Action add_conformance(CLI::App& app);
Action add_compile(CLI::App& app);
Action add_check(CLI::App& app);
Action add_bisect(CLI::App& app);
Action add_reduce(CLI::App& app);
Action add_bench(CLI::App& app);
Action add_ulp(CLI::App& app);

// --- Shared by check, bisect and reduce (cmd_check.cpp). ---
// A model file, or a folder in ONNX's backend-test layout (model.onnx, test_data_set_0/
// input_K.pb for the K-th graph input), with its inputs and the arguments that recreate them.
struct VerifySubject {
  Graph graph;
  TensorMap inputs;
  std::vector<std::string> model_args;  // model and input flags, for fresh processes
  std::string command;                  // this process's command line
};
VerifySubject load_subject(const std::string& model, const InputSpec& spec);
std::vector<std::string> split_targets(const std::string& list);
Tolerances parse_tolerances(const std::vector<std::string>& texts, const Graph& g);
std::string self_binary();  // this executable, for fresh processes
extern const char* const kMetricsHelp;

// The flags check, bisect and reduce share, and what they load from them.
struct VerifyFlags {
  std::string model, ref = "ref", aba, json, html;
  InputSpec inputs;
  CompileFlags compile;
  std::vector<std::string> tol;
};
// The model, --ref and the input flags; then --tol; with `reports`, --aba, --json and --html.
void add_verify_flags(CLI::App& app, VerifyFlags& f, bool reports);
struct VerifyRun {
  VerifySubject subject, b;  // b: B of A-B-A, when --aba was given
  Tolerances tol;
  FreshProcess process;      // this binary and the subject's arguments, for fresh processes
  // The options check and bisect share, for these flags (pointing into this run).
  VerifyOptions options(const VerifyFlags& f) const;
};
// Loads the model (and --aba's), checks that a planted fault names one of its nodes.
VerifyRun start_verify(const VerifyFlags& f);
// Prints `r` with this run's command and model, writes --json/--html; the exit status.
int finish_verify(Report& r, const VerifyRun& v, const VerifyFlags& f);

int main(int argc, char** argv);

}  // namespace lockstep::cli
