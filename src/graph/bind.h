// Binding user inputs to a graph's declared inputs: names, dtypes, ranks, fixed dims, symbols.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace lockstep {

using TensorMap = std::map<std::string, Tensor>;

// Returns the concrete type of each graph input, in g.inputs order. Throws Error for an
// unknown or missing input, a dtype or rank mismatch, a fixed dim that differs, or one
// symbol ("T") bound to two sizes.
std::vector<TypeInfo> bind_inputs(const Graph& g, const TensorMap& inputs);

}  // namespace lockstep
