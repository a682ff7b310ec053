// The one pipeline every target runs: graph passes, shape specialisation, lowering, kernel
// passes. Targets differ only after this point (printing and running the plan).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/bind.h"
#include "graph/graph.h"
#include "kernel/kernel.h"
#include "kernel/target_desc.h"
#include "passes/pass_manager.h"

namespace lockstep {

struct PipelineOptions {
  int pass_limit = -1;        // apply only pass applications 1..N; -1: all
  bool verify_each = false;   // run the IR verifiers after every application
  std::string dump_ir_dir;    // write the IR after each pass here when set
  const FaultHooks* fault = nullptr;  // test aid: a planted bug (kernel:NODE, pass:N act here)
  // The target printed for: legalize after lowering, schedule_for_target last. Null: neither
  // (the plan is left unscheduled, for the reference and tests of the passes).
  const kir::TargetDesc* target = nullptr;
  // A probe of generalise: neither index folding by its extents (which the symbols change)
  // nor the schedule; both are done on the symbolic plan made from the probes.
  bool probe = false;
};

// The end of every pipeline, concrete or symbolic: the plan as target `t` prints it (schedules
// chosen, constants stored in the order tiles read them, windows absorbed, a symbolic plan's
// run-time divisors collected), then verified.
void schedule_for_target(kir::Plan& p, const kir::TargetDesc& t, PassManager& pm);

struct PipelineResult {
  kir::Plan plan;
  std::vector<PassRecord> log;
};

// `inputs` are the concrete types of the graph inputs (in g.inputs order).
// `values` optionally holds input values to specialise on (small integer inputs that decide
// shapes, such as axes or pads given as graph inputs); null entries are not specialised.
PipelineResult run_pipeline(const Graph& g, const std::vector<TypeInfo>& inputs, const PipelineOptions& opts,
                            const std::vector<const RefTensor*>& values = {});

// What one compile is for: the input types, and the input values that shapes depend on.
struct Specialisation {
  std::vector<TypeInfo> types;
  std::vector<std::optional<RefTensor>> values;  // per graph input; empty where not specialised
  bool operator==(const Specialisation& o) const;
};

// The specialisation these inputs ask for (input binding, then specialisation_values).
Specialisation specialisation_for(const Graph& g, const TensorMap& inputs);

// What specialisation_for depends on, as bytes: each graph input's dtype and shape, and the
// values of the small integer inputs that may decide shapes (and of a Resize's float scales
// and roi). Inputs with the signature of the last compile need no new binding (a run skips
// shape inference); "" if one is missing.
std::string input_signature(const Graph& g, const TensorMap& inputs);

// run_pipeline for one specialisation.
PipelineResult run_pipeline(const Graph& g, const Specialisation& s, const PipelineOptions& opts);

// Input values a compile must be specialised on: small integer graph inputs, and only when
// some shape in the graph is unknown without their values (axes or pads given as inputs).
std::vector<std::optional<RefTensor>> specialisation_values(const Graph& g, const std::vector<TypeInfo>& types,
                                                           const std::vector<const Tensor*>& inputs);

// Kernel-IR checks: buffer ids, shapes of loads, reduction vars, kernels after their inputs.
void verify_plan(const kir::Plan& p);

}  // namespace lockstep
