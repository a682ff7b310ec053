// Lowering: a shape-specialised Graph -> Plan, one kernel per node output (views included).
// Lowering is required for correctness; the numbered passes only merge what it produced.
#pragma once
#include "graph/graph.h"
#include "kernel/kernel.h"
#include "ops/infer.h"

namespace lockstep::kir {

// `types` must come from infer_graph with concrete input types: every shape known.
// Throws Error naming the node when an op cannot be lowered (e.g. a runtime-valued shape).
Plan lower_graph(const Graph& g, const GraphTypes& types);

// Whether lowering `node` needs the value of its input k when compiling (CumSum's axis): the
// pipeline specialises on small integer inputs while such a value is not known.
bool lowering_needs_value(const Node& node, size_t k);

}  // namespace lockstep::kir
