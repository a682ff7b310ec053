// The reference interpreter: runs the unoptimised graph in float64 (integers exact).
// It is the oracle every backend is measured against; clarity over speed.
#pragma once
#include <functional>
#include <vector>

#include "graph/bind.h"
#include "graph/graph.h"

namespace lockstep {

struct RefOptions {
  // Called with every value the run computes (value id, its float64 contents), in order.
  std::function<void(int, const RefTensor&)> on_value;
};

// Outputs in g.outputs order, as float64/int64 values carrying the model's dtypes.
std::vector<RefTensor> run_reference(const Graph& g, const TensorMap& inputs,
                                     const RefOptions& opts = {});

}  // namespace lockstep
