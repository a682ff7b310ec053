#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/cli.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/text.h"

namespace lockstep::cli {

int main(int argc, char** argv) {
  PrintableStream out(std::cout);  // names from a model reach the terminal escaped
  CLI::App app{"lockstep: an ONNX compiler whose CPU and GPU backends give the same answer"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lockstep 0.1.0");
  std::map<CLI::App*, Action> actions;
  app.add_option_function<std::string>(
         "--max-memory",
         [](const std::string& v) {
           parse_memory_size(v, "--max-memory");
           setenv("LOCKSTEP_MAX_MEMORY", v.c_str(), 1);  // fresh processes of check inherit it
         },
         "SIZE (K, M, G, T): the most memory this process may use; a model that needs more is an "
         "error before it is allocated (also LOCKSTEP_MAX_MEMORY; the cgroup, ulimit -v and the "
         "available memory always count)")
      ->type_name("SIZE");
  auto add = [&](const char* name, const char* help, Action (*make)(CLI::App&)) {
    CLI::App* sub = app.add_subcommand(name, help);
    sub->fallthrough();  // --max-memory after the subcommand too
    actions[sub] = make(*sub);
  };
  add("info", "Print a model's inputs, outputs, op counts and parameters", add_info);
  add("run", "Run a model on a target and write its outputs as .npy", add_run);
  add("compile", "Compile a model for a target; optionally write the generated source", add_compile);
  add("conformance", "Run a folder of ONNX backend-test cases and print a scoreboard by op",
      add_conformance);
  add("check", "Check targets against the reference and for determinism (exit 0 only if all agree)",
      add_check);
  add("bisect", "Find where a target diverges: runtime stage, ONNX node, pass application", add_bisect);
  add("reduce", "Shrink a diverging model to a minimal repro bundle (delta debugging over nodes)", add_reduce);
  add("bench", "Time a compiled model on a target, end to end and per kernel", add_bench);
  add("ulp", "Measure each target's float32 exp, log, tanh, erf, pow, sigmoid in ulp against the reference", add_ulp);
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      int rc = app.exit(e);
      return rc == 0 ? kExitOk : kExitUserError;
    }
    for (auto& [sub, action] : actions)
      if (sub->parsed()) return action();
  } catch (const InternalError& e) {
    std::cerr << "lockstep: internal error: " << printable(e.what(), true) << "\n"
              << "This is a bug in lockstep, not in your model or options. Please report it with the\n"
              << "model, the command line and this message (`lockstep reduce` can shrink the model).\n";
    return kExitInternal;
  } catch (const Error& e) {
    std::cerr << "lockstep: error: " << printable(e.what()) << "\n";
    return kExitUserError;
  } catch (const std::bad_alloc&) {
    std::cerr << "lockstep: error: out of memory\n";
    return kExitUserError;
  } catch (const std::filesystem::filesystem_error& e) {
    // A file or folder the command could not use (a missing permission, a file where a folder
    // was expected, a full disk): the environment's error, reported like a bad file, never abort.
    std::cerr << "lockstep: error: " << printable(e.what()) << "\n";
    return kExitUserError;
  } catch (const std::exception& e) {
    std::cerr << "lockstep: error: " << printable(e.what()) << "\n";
    return kExitUserError;
  } catch (...) {
    std::cerr << "lockstep: internal error: an exception of unknown type\n";
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace lockstep::cli
