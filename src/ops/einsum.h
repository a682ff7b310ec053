// Einsum's equation, parsed once for the shape rule, the reference and the lowering.
#pragma once
#include "ops/op.h"

namespace lockstep {

// Every label gets an id: the output's first (in output order), then the summed ones. An
// ellipsis stands for as many unnamed labels as the inputs' broadcast dims it covers.
struct EinsumPlan {
  std::vector<std::vector<int>> inputs;  // each input dim's label
  std::vector<int> output;               // labels 0..output.size()-1, in order
  std::vector<int64_t> size;             // per label (1 only where every input has 1 there)
  size_t summed() const { return size.size() - output.size(); }
};

// Parses the equation against the inputs' shapes; fails naming the problem.
EinsumPlan einsum_plan(const OpCtx& c, const std::vector<Shape>& shapes);

}  // namespace lockstep
