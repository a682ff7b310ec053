// The Reduce family's kinds and axes, shared with the compiler's lowering.
#pragma once
#include <optional>

#include "ops/op.h"

namespace lockstep {

enum class ReduceKind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

// The kind of a Reduce* op, or nullopt for other ops.
std::optional<ReduceKind> reduce_kind(const std::string& op_type);

// Sorted axes to reduce; empty when the node is a no-op (noop_with_empty_axes). `axes_value`
// is input 1's value when the node has that input.
std::vector<int64_t> reduce_axes(const OpCtx& c, int64_t rank, const RefTensor* axes_value);

}  // namespace lockstep
