// A target's outputs measured against the float64 reference on the same inputs.
#pragma once
#include <string>
#include <vector>

#include "graph/bind.h"
#include "runtime/program.h"
#include "verify/compare.h"

namespace lockstep {

// Runs the reference interpreter on `inputs` and compares each of `outs` with it.
std::vector<Agreement> agreement_with_ref(const Graph& g, const TensorMap& inputs, const std::vector<Tensor>& outs);

// SHA-256 of an output's bytes: the identity used by every determinism check.
std::string tensor_sha256(const Tensor& t);

// One line: "cosine 0.9999999 rel_l2 3.1e-07 max|d| 2.4e-06 @123 nonfinite 0".
std::string describe(const Agreement& a);

}  // namespace lockstep
