#include "cli/compile_options.h"
#include "backend/registry.h"

#include <iostream>

#include "core/error.h"
#include "runtime/target.h"
#include "verify/compile_flags.h"
#include "verify/faults.h"

namespace lockstep::cli {

void add_compile_flags(CLI::App& app, CompileFlags& f) {
  CompileOptions& o = f.options;
  static const CompileOptions defaults;
  for (const CompileFlag& c : compile_flags()) {
    std::string help = c.help ? c.help : kFaultHelp;
    auto parse = [&o, &c](const std::string& v) { c.parse(o, v); };
    if (c.kind == CompileFlag::Switch) {
      std::string names = std::string(c.name) + (c.off ? std::string(",!") + c.off : "");
      app.add_flag_function(
          names, [parse](int64_t n) { parse(n > 0 ? "1" : "0"); }, help);
    } else if (c.kind == CompileFlag::List) {
      app.add_option_function<std::vector<std::string>>(
             c.name,
             [parse](const std::vector<std::string>& all) {
               for (const std::string& v : all) parse(v);
             },
             help)
          ->type_name(c.arg);
    } else {
      CLI::Option* opt = app.add_option_function<std::string>(c.name, parse, help)->type_name(c.arg);
      std::vector<std::string> d = c.show(defaults);
      if (c.kind == CompileFlag::Value && !d[0].empty() && d[0] != "-1") opt->default_str(d[0]);
    }
  }
  app.add_flag("--print-pass-log", f.print_pass_log, "Print every numbered pass application: #N pass: what (nodes)");
}

std::string targets_help(const std::string& what) { return what + " (" + target_names() + ")"; }

void print_pass_log(const Program& p) {
  for (const std::string& line : p.pass_log()) std::cout << line << "\n";
}

}  // namespace lockstep::cli
