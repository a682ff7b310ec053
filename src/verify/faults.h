// Deliberate faults, a test aid for `check` and `bisect`: each kind plants one class of bug
// the verification tools must detect and localise (the staging-pool bug of docs/why.md among
// them). CompileOptions::fault carries the spec; an empty spec is no fault.
#pragma once
#include <string>

#include "graph/graph.h"
#include "kernel/kernel.h"

namespace lockstep {

struct Fault {
  enum Kind { None, StagingReuse, Kernel, Pass, CacheByName, Uninit };
  Kind kind = None;
  std::string node;  // Kernel, Uninit: the node's id (graph.h's node_id)
  int pass = 0;      // Pass: the 1-based pass application number
  explicit operator bool() const { return kind != None; }
};

// "" -> no fault. Throws Error for an unknown kind or a malformed WHERE.
Fault parse_fault(const std::string& spec);

// Throws Error when a NODE fault names a node id `g` does not have. Compiles of other graphs
// (cuts, single groups) simply do not see a NODE fault whose node they lack.
void check_fault_applies(const std::string& spec, const Graph& g);

// Throws Error when pass:N names no kernel-pass application of a compile whose numbered log
// ("#N pass: ...") is `pass_log`.
void check_pass_fault(const std::string& spec, const std::vector<std::string>& pass_log);

// The --help text of --inject-fault.
extern const char* const kFaultHelp;

// --- Planting, shared by every target. ---

// The first kernel (in execution order) that computes `node` and writes a graph value, else
// the first that computes it at all (a helper such as a padded copy), or -1.
int kernel_of_node(const kir::Plan& p, const std::string& node);

// The load with its index along the last axis of extent > 1 moved by +1 (clamped, so it
// stays in bounds); null when no axis can move.
kir::ExprP off_by_one(const kir::Expr& load);

// kernel:NODE: the largest load of NODE's kernel reads off by one. Run on the final plan.
void plant_kernel_fault(kir::Plan& p, const Fault& f);

// uninit:NODE: the kernel that leaves the second half of its output unwritten, or -1.
int uninit_kernel(const kir::Plan& p, const Fault& f);

}  // namespace lockstep
