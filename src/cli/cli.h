// The lockstep command line. Each subcommand lives in its own cmd_*.cpp and registers here.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

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

int main(int argc, char** argv);

}  // namespace lockstep::cli
