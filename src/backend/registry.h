// The target registry: the built-in targets (registered first, whoever asks first) and any a
// test adds; every list of targets reads it, and compile() finds its target here.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/program.h"
#include "runtime/target.h"

namespace lockstep {

// Adds a target (a test may add its own). Throws Error when the name is taken.
void register_target(TargetInfo info);
// Null when no target has this name.
const TargetInfo* find_target(const std::string& name);
// Every registered target, in registration order (built-in ones first).
std::vector<const TargetInfo*> targets();
// Every registered name, comma-separated: for messages.
std::string target_names();
// The first compiled target registered (the host's): the default of commands that compile.
std::string default_target();

// A Program of `g` for `target`. Throws Error for a target that is not registered, a device it
// does not have, or one that cannot compile here, saying why.
std::unique_ptr<Program> compile(const Graph& g, const std::string& target, const CompileOptions& opts = {});

}  // namespace lockstep
