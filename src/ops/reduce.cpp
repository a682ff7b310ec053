// ReduceSum, ReduceMean and Softmax. Sums run in double (int64 for integer dtypes).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/reduce.h"

namespace lockstep {

namespace {

// Which axes a Reduce node reduces, as far as inference can tell.
struct ReducePlan {
  bool known = true;         // false: axes come from an input whose value is not known yet
  bool noop = false;         // empty axes with noop_with_empty_axes: the output is the input
  std::vector<bool> reduce;  // per input axis
};

// Opset where `axes` moved from an attribute to the second input.
int axes_input_opset(const OpCtx& c) { return c.node.op_type == "ReduceSum" ? 13 : 18; }

ReducePlan plan_from_axes(const OpCtx& c, const std::vector<int64_t>& axes, int64_t rank, bool noop) {
  ReducePlan p;
  if (axes.empty()) {
    p.noop = noop;
    p.reduce.assign(rank, !noop);
    return p;
  }
  p.reduce.assign(rank, false);
  for (int64_t ax : axes) {
    int64_t a = normalize_axis(ax, rank);
    if (a < 0)
      c.fail("axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(rank));
    if (p.reduce[a]) c.fail("axis " + std::to_string(ax) + " is listed twice");
    p.reduce[a] = true;
  }
  return p;
}

// Reads axes from the attribute or input 1; `axes_value` is null when the input's value is
// not known (inference before run time).
// Attribute and input forms must match the opset; returns true when axes are an input.
bool axes_are_input(const OpCtx& c) {
  bool as_input = c.opset >= axes_input_opset(c);
  if (as_input && c.has_attr("axes"))
    c.fail("axes is an input, not an attribute, from opset " + std::to_string(axes_input_opset(c)));
  if (!as_input && c.has_attr("noop_with_empty_axes"))
    c.fail("noop_with_empty_axes exists only from opset " + std::to_string(axes_input_opset(c)));
  if (!as_input && c.num_inputs() > 1)
    c.fail("axes is an attribute, not an input, before opset " + std::to_string(axes_input_opset(c)));
  return as_input;
}

ReducePlan reduce_plan(const OpCtx& c, int64_t rank, const RefTensor* axes_value, bool axes_given) {
  bool as_input = axes_are_input(c);
  bool noop = c.attr_int("noop_with_empty_axes", 0) != 0;
  if (!as_input) return plan_from_axes(c, c.attr_ints("axes"), rank, false);
  if (!axes_given) return plan_from_axes(c, {}, rank, noop);
  if (!axes_value) return ReducePlan{false, false, {}};
  std::vector<int64_t> axes;
  for (int64_t k = 0; k < axes_value->numel(); ++k) axes.push_back(axes_value->get_int(k));
  return plan_from_axes(c, axes, rank, noop);
}

Shape reduced_shape(const Shape& in, const ReducePlan& p, bool keepdims) {
  Shape out;
  for (size_t a = 0; a < in.size(); ++a) {
    if (!p.reduce[a]) out.push_back(in[a]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

void infer_reduce(InferCtx& c) {
  DType t = c.input(0).dtype;
  if (!dtype_is_float(t) && !dtype_is_signed_int(t) && !(dtype_is_unsigned_int(t) && t != DType::boolean))
    c.fail(std::string("input must be a number type, got ") + dtype_name(t));
  bool axes_given = c.has_input(1);
  if (axes_given) {
    if (c.input(1).dtype != DType::i64)
      c.fail(std::string("axes must be int64, got ") + dtype_name(c.input(1).dtype));
    c.require_rank(1, 1);
  }
  bool keepdims = c.attr_int("keepdims", 1) != 0;
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) {
    axes_are_input(c);
    return c.set_output_unknown_rank(0, t);
  }
  int64_t rank = x.dims.size();
  ReducePlan p = reduce_plan(c, rank, c.value(1), axes_given);
  if (p.known) return c.set_output(0, t, p.noop ? x.dims : reduced_shape(x.dims, p, keepdims));
  // Axes not known before run time: with keepdims the rank survives, each dim is d or 1.
  if (!keepdims) return c.set_output_unknown_rank(0, t);
  Shape out = x.dims;
  for (int64_t& d : out)
    if (d != 1) d = -1;
  c.set_output(0, t, out);
}

// Output element index of every input element (reduced axes collapse to index 0).
std::vector<int64_t> output_index_of(const Shape& in, const ReducePlan& p) {
  Shape kept = in;
  for (size_t a = 0; a < in.size(); ++a)
    if (p.reduce[a]) kept[a] = 1;
  Shape out_strides = shape_strides(kept);
  std::vector<int64_t> map(shape_numel(in));
  Shape idx(in.size(), 0);
  for (int64_t e = 0; e < static_cast<int64_t>(map.size()); ++e) {
    int64_t o = 0;
    for (size_t a = 0; a < in.size(); ++a)
      if (!p.reduce[a]) o += idx[a] * out_strides[a];
    map[e] = o;
    for (size_t a = in.size(); a-- > 0;)
      if (++idx[a] < in[a]) break; else idx[a] = 0;
  }
  return map;
}

void ref_reduce(RefCtx& c, bool mean) {
  const RefTensor& X = c.input(0);
  bool keepdims = c.attr_int("keepdims", 1) != 0;
  const RefTensor* axes = c.has_input(1) ? c.in[1] : nullptr;
  ReducePlan p = reduce_plan(c, X.shape.size(), axes, axes != nullptr);
  if (p.noop) {
    c.out[0] = X;
    return;
  }
  RefTensor Y(X.dtype, reduced_shape(X.shape, p, keepdims));
  int64_t count = 1;
  for (size_t a = 0; a < X.shape.size(); ++a)
    if (p.reduce[a]) count *= X.shape[a];
  std::vector<int64_t> to_out = output_index_of(X.shape, p);
  if (X.is_float()) {
    for (int64_t e = 0; e < X.numel(); ++e) Y.f[to_out[e]] += X.f[e];
    if (mean)  // an empty mean is 0/0 = NaN, as numpy gives
      for (double& v : Y.f) v /= static_cast<double>(count);
  } else {
    // The sum wraps in the type (exact modulo 2^64, then narrowed), as numpy and ONNX's own
    // reference do; the mean then truncates toward zero like C integer division; of nothing, 0.
    std::vector<uint64_t> sum(Y.numel(), 0);
    for (int64_t e = 0; e < X.numel(); ++e) sum[to_out[e]] += static_cast<uint64_t>(X.i[e]);
    for (int64_t o = 0; o < Y.numel(); ++o) {
      int64_t s = wrap_to_dtype(static_cast<int64_t>(sum[o]), X.dtype);
      bool u64 = X.dtype == DType::u64;
      if (mean && count > 0)
        s = u64 ? static_cast<int64_t>(static_cast<uint64_t>(s) / count) : s / count;
      Y.set_int(o, s);
    }
  }
  c.out[0] = std::move(Y);
}

void ref_reduce_sum(RefCtx& c) { ref_reduce(c, false); }
void ref_reduce_mean(RefCtx& c) { ref_reduce(c, true); }

// Softmax as (outer, n, inner): normalised along the middle. Before opset 13 the input is
// coerced to 2-D at `axis`, i.e. the whole trailing block [axis, rank) is one row.
struct SoftmaxLayout {
  int64_t outer = 1, n = 1, inner = 1;
};

SoftmaxLayout softmax_layout(const OpCtx& c, const Shape& dims) {
  int64_t rank = dims.size();
  bool coerce = c.opset < 13;
  int64_t axis_attr = c.attr_int("axis", coerce ? 1 : -1);
  int64_t axis = normalize_axis(axis_attr, rank);
  if (axis < 0)
    c.fail("axis " + std::to_string(axis_attr) + " is out of range for rank " + std::to_string(rank));
  SoftmaxLayout l;
  for (int64_t a = 0; a < rank; ++a) {
    if (a < axis) l.outer *= dims[a];
    else if (a == axis || coerce) l.n *= dims[a];
    else l.inner *= dims[a];
  }
  return l;
}

void infer_softmax(InferCtx& c) {
  c.require_float(0);
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  softmax_layout(c, x.dims);  // checks the axis
  c.set_output(0, x.dtype, x.dims);
}

void ref_softmax(RefCtx& c) {
  const RefTensor& X = c.input(0);
  SoftmaxLayout l = softmax_layout(c, X.shape);
  RefTensor Y(X.dtype, X.shape);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      int64_t base = o * l.n * l.inner + i;
      // Subtracting the max keeps exp() finite; the result is mathematically unchanged.
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < l.n; ++j) mx = std::max(mx, X.f[base + j * l.inner]);
      double sum = 0;
      for (int64_t j = 0; j < l.n; ++j) {
        double e = std::exp(X.f[base + j * l.inner] - mx);
        Y.f[base + j * l.inner] = e;
        sum += e;
      }
      for (int64_t j = 0; j < l.n; ++j) Y.f[base + j * l.inner] /= sum;
    }
  c.out[0] = std::move(Y);
}

const OpDef kOps[] = {
    {"ReduceSum", 1, 2, 1, 1, {"axes", "keepdims", "noop_with_empty_axes"}, infer_reduce, ref_reduce_sum},
    {"ReduceMean", 1, 2, 1, 1, {"axes", "keepdims", "noop_with_empty_axes"}, infer_reduce, ref_reduce_mean},
    {"Softmax", 1, 1, 1, 1, {"axis"}, infer_softmax, ref_softmax},
};

}  // namespace

std::vector<int64_t> reduce_axes(const OpCtx& c, int64_t rank, const RefTensor* axes_value) {
  ReducePlan p = reduce_plan(c, rank, axes_value, c.has_input(1));
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a)
    if (p.reduce[a]) axes.push_back(a);
  return axes;
}

std::span<const OpDef> reduce_ops() { return kOps; }

}  // namespace lockstep
