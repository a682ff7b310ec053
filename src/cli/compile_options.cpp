#include "cli/compile_options.h"

#include <iostream>

#include "cli/inputs.h"
#include "core/error.h"
#include "runtime/target.h"
#include "verify/faults.h"
#include "verify/planted_fault.h"

namespace lockstep::cli {

void add_compile_flags(CLI::App& app, CompileFlags& f) {
  CompileOptions& o = f.options;
  app.add_option("--threads", o.threads, "Threads for the cpu target (0: all cores)")
      ->check(CLI::Range(0, kMaxThreads))->capture_default_str();
  app.add_option("--device", o.device, "Which device of the target runs the program (lockstep info --targets lists them)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--pass-limit", o.pass_limit,
                 "Apply only pass applications 1..N and skip the rest (the program stays correct at every N)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--print-pass-log", f.print_pass_log, "Print every numbered pass application: #N pass: what (nodes)");
  app.add_flag("--verify-each", o.verify_each, "Run the IR verifiers after every pass application");
  app.add_option("--dump-ir", o.dump_ir_dir, "Write the IR after each pass application into this folder (new or empty)");
  app.add_flag("--no-cache{false}", o.use_cache, "Neither read nor write the on-disk kernel cache");
  app.add_flag("--checked", o.checked,
               "Sentinels around buffers, NaN-poisoned dead memory and a proof that live buffers never overlap");
  app.add_flag("--symbolic,!--specialise", o.symbolic,
               "One compile for every value of the model's named symbolic dims (T) where the plan allows, "
               "or --specialise: one compile per input shape (default: symbolic)");
  app.add_flag("--replay,!--no-replay", o.replay,
               "Capture the plan once and replay it where the device can (CUDA graphs; default on)");
  app.add_flag("--verify-constants", o.verify_constants,
               "Read every constant back after upload and compare its SHA-256 with the host bytes");
  app.add_option_function<std::vector<std::string>>(
         "--reserve",
         [&o](const std::vector<std::string>& list) {
           for (const std::string& a : list) {
             auto [sym, n] = split_assignment(a, "--reserve");
             o.reserve[sym] = parse_size(n, "--reserve " + sym);
           }
         },
         "SYMBOL=N: a symbolic program sizes its device memory for lengths up to N when first bound, so "
         "no later length up to N allocates (repeatable)");
  app.add_option("--staging-slots", o.staging_slots, "Host staging buffers uploads go through (pinned on GPUs)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--staging-slot-bytes", o.staging_slot_bytes, "Bytes per staging buffer")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option_function<std::string>(
         "--inject-fault", [&o](const std::string& spec) { o.fault = plant_fault(spec); },
         std::string("KIND[:WHERE] ") + kFaultHelp)
      ->check([](const std::string& spec) {
        try {
          parse_fault(spec);
          return std::string();
        } catch (const Error& e) {
          std::string m = e.what();  // CLI11 names the option itself
          return m.rfind("--inject-fault", 0) == 0 ? m.substr(m.find(' ') + 1) : m;
        }
      });
}

std::string targets_help(const std::string& what) { return what + " (" + target_names() + ")"; }

void print_pass_log(const Program& p) {
  for (const std::string& line : p.pass_log()) std::cout << line << "\n";
}

}  // namespace lockstep::cli
