// One table describes each field of CompileOptions on the command line: its flag, its help,
// how an argument is parsed and how the field is spelled back. The CLI adds its options from
// it, and check's fresh processes and reduce's reproduce command rebuild their arguments from
// it, so a field cannot be given to one process and silently dropped for the next.
#pragma once
#include <string>
#include <vector>

#include "runtime/program.h"

namespace lockstep {

struct CompileFlag {
  enum Kind { Value, Switch, List };
  const char* field;  // the CompileOptions member
  const char* name;   // "--device"; a Switch's flag that parse() takes as "1"
  const char* off;    // a Switch's opposite flag (parse() takes "0"), or nullptr
  Kind kind;
  const char* arg;  // what a Value or List takes, for the help ("N", "DIR"); nullptr for a Switch
  const char* help;
  // The field as the flag's arguments: one for a Value, "1"/"0" for a Switch, one per
  // repetition for a List.
  std::vector<std::string> (*show)(const CompileOptions&);
  // One argument into the field; throws Error naming the flag for a value out of range.
  void (*parse)(CompileOptions&, const std::string&);
  // Sets the field to a value other than its default (the round-trip test's).
  void (*sample)(CompileOptions&);
  // Non-null: the field stays in this process, for this reason.
  const char* not_passed_on;
};

const std::vector<CompileFlag>& compile_flags();

// The field names of CompileOptions in declaration order (a structured binding over the struct
// makes this fail to compile when a field is added without being named here).
std::vector<std::string> compile_option_fields();

// The arguments that give a fresh `lockstep` process the same options (defaults left out).
std::vector<std::string> compile_args(const CompileOptions& o);

// Every field equal (a planted fault by its spec).
bool same_options(const CompileOptions& a, const CompileOptions& b);

// An integer argument of `flag` in [lo, hi]; throws Error naming the flag otherwise.
int64_t parse_int_arg(const std::string& text, const std::string& flag, int64_t lo, int64_t hi);

}  // namespace lockstep
