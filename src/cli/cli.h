// The lockstep command line. Each subcommand lives in its own cmd_*.cpp and registers here.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cli/inputs.h"
#include "graph/graph.h"
#include "verify/check.h"

namespace lockstep::cli {

// Exit statuses shared by every subcommand.
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;   // ran, but results disagree / cases failed
constexpr int kExitUserError = 2;  // bad model, input, option or file

// A subcommand adds its options to `app` and returns the action to run when it is chosen.
using Action = std::function<int()>;
Action add_info(CLI::App& app);
Action add_run(CLI::App& app);
Action add_conformance(CLI::App& app);
Action add_compile(CLI::App& app);
Action add_check(CLI::App& app);
Action add_bisect(CLI::App& app);
Action add_reduce(CLI::App& app);

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

int main(int argc, char** argv);

}  // namespace lockstep::cli
