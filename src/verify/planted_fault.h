// A fault spec (--inject-fault KIND[:WHERE]) turned into the hooks the compiler and devices
// call: the one place the fault catalogue meets them.
#pragma once
#include <memory>
#include <string>

#include "kernel/fault_hooks.h"

namespace lockstep {

// Null for "" (no fault). Throws Error for an unknown kind or a malformed WHERE.
std::shared_ptr<const FaultHooks> plant_fault(const std::string& spec);

// The spec of a planted fault, "" for none.
inline std::string fault_spec(const std::shared_ptr<const FaultHooks>& f) { return f ? f->spec() : ""; }

}  // namespace lockstep
