// Options every compiling subcommand shares (run, compile, and later check/bisect).
#pragma once
#include <CLI/CLI.hpp>

#include "runtime/program.h"
#include "verify/compile_flags.h"

namespace lockstep::cli {

struct CompileFlags {
  CompileOptions options;
  bool print_pass_log = false;
};

void add_compile_flags(CLI::App& app, CompileFlags& f);

// An integer option checked to lie in [lo, hi]: anything else (a sign where none may be, a
// number that wraps, trailing text) is an error naming the option, never a silently wrapped
// value.
template <class T>
CLI::Option* add_int_option(CLI::App& app, const std::string& name, T& into, int64_t lo, int64_t hi,
                            const std::string& help) {
  std::string flag = name.substr(name.rfind(',') == std::string::npos ? 0 : name.rfind(',') + 1);
  return app
      .add_option_function<std::string>(
          name, [&into, flag, lo, hi](const std::string& v) { into = static_cast<T>(parse_int_arg(v, flag, lo, hi)); },
          help)
      ->type_name("N")
      ->default_str(std::to_string(into));
}

// `what` and the registered targets, for the help of --target and --targets.
std::string targets_help(const std::string& what);

// Prints "#N pass: what (nodes)" for each pass application of the program's last compile.
void print_pass_log(const Program& p);

}  // namespace lockstep::cli
