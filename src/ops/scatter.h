// The scatters (Scatter, ScatterElements, ScatterND): what the shape rule, the reference and
// the lowering share.
#pragma once
#include "ops/op.h"

namespace lockstep {

enum class ScatterReduction { None, Add, Mul, Max, Min };

// The reduction attribute at the node's opset (add and mul from 16, max and min from 18).
ScatterReduction scatter_reduction(const OpCtx& c);

// ScatterElements' (and Scatter's) axis, after checking that indices and updates have the
// data's rank, the same shape, and fit the data off the axis.
int64_t scatter_elements_axis(const OpCtx& c, const Shape& data, const Shape& idx, const Shape& upd);

// ScatterND's tuple length k, after checking updates = indices[:-1] + data[k:].
int64_t scatter_nd_depth(const OpCtx& c, const Shape& data, const Shape& idx, const Shape& upd);

}  // namespace lockstep
