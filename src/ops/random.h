// What the random generators share with passes and lowering (docs/random.md).
#pragma once
#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace lockstep {

// RandomNormal, RandomUniform, their Like forms and Bernoulli: never folded at compile time, so
// every target computes them with its own kernels, as it computes the ops that read them.
bool is_random_op(const std::string& op_type);

// The 63-bit Philox key of a random node: from its `seed` attribute where it has one (the same
// seed, the same stream), else from the graph's run seed (`--seed`) and the node's id.
uint64_t random_key(const Graph& g, int node);

}  // namespace lockstep
