// Options every compiling subcommand shares (run, compile, and later check/bisect).
#pragma once
#include <CLI/CLI.hpp>

#include "runtime/program.h"

namespace lockstep::cli {

struct CompileFlags {
  CompileOptions options;
  bool print_pass_log = false;
};

void add_compile_flags(CLI::App& app, CompileFlags& f);

// `what` and the registered targets, for the help of --target and --targets.
std::string targets_help(const std::string& what);

// Prints "#N pass: what (nodes)" for each pass application of the program's last compile.
void print_pass_log(const Program& p);

}  // namespace lockstep::cli
