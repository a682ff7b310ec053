// Which axes a ReduceSum/ReduceMean node reduces, shared with the compiler's lowering.
#pragma once
#include "ops/op.h"

namespace lockstep {

// Sorted axes to reduce; empty when the node is a no-op (noop_with_empty_axes). `axes_value`
// is input 1's value when the node has that input.
std::vector<int64_t> reduce_axes(const OpCtx& c, int64_t rank, const RefTensor* axes_value);

}  // namespace lockstep
