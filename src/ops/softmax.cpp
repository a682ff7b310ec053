// Ops along one axis: Softmax, LogSoftmax and Hardmax (a row is normalised or marked), and
// ArgMax / ArgMin (a row becomes the index of its extreme).
#include <cmath>
#include <limits>

#include "ops/elementwise.h"

namespace lockstep {

namespace {

// A row-wise op as (outer, n, inner): rows run along the middle. Before opset 13 the input is
// coerced to 2-D at `axis`, i.e. the whole trailing block [axis, rank) is one row.
struct RowLayout {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t at(int64_t o, int64_t i, int64_t j) const { return (o * n + j) * inner + i; }
};

RowLayout softmax_layout(const OpCtx& c, const Shape& dims) {
  int64_t rank = dims.size();
  bool coerce = c.opset < 13;
  int64_t axis_attr = c.attr_int("axis", coerce ? 1 : -1);
  int64_t axis = normalize_axis(axis_attr, rank);
  if (axis < 0) c.fail("axis " + std::to_string(axis_attr) + " is out of range for rank " + std::to_string(rank));
  RowLayout l;
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

// Index of the first maximum (or minimum) of a row, or of its last with `last`. NaN is the
// extreme, as numpy's argmax says; an empty row has none (the caller refuses it).
int64_t row_extreme(const RefTensor& X, const RowLayout& l, int64_t o, int64_t i, bool smallest, bool last) {
  auto nan_at = [&](int64_t j) { return X.is_float() && std::isnan(X.f[l.at(o, i, j)]); };
  int64_t best = 0;
  for (int64_t j = 1; j < l.n; ++j) {
    if (nan_at(best) || nan_at(j)) {
      if (!nan_at(best) || (last && nan_at(j))) best = j;
      continue;
    }
    int64_t k = l.at(o, i, j), b = l.at(o, i, best);
    bool better, tie;
    if (X.is_float()) {
      better = smallest ? X.f[k] < X.f[b] : X.f[k] > X.f[b];
      tie = X.f[k] == X.f[b];
    } else {
      better = smallest ? ew::int_less(X.i[k], X.i[b], X.dtype) : ew::int_less(X.i[b], X.i[k], X.dtype);
      tie = X.i[k] == X.i[b];
    }
    if (better || (last && tie)) best = j;
  }
  return best;
}

void ref_softmax(RefCtx& c) {
  const RefTensor& X = c.input(0);
  RowLayout l = softmax_layout(c, X.shape);
  bool log = c.node.op_type == "LogSoftmax";
  RefTensor Y(X.dtype, X.shape);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      // Subtracting the max keeps exp() finite; the result is mathematically unchanged.
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < l.n; ++j) mx = std::max(mx, X.f[l.at(o, i, j)]);
      double sum = 0;
      for (int64_t j = 0; j < l.n; ++j) sum += std::exp(X.f[l.at(o, i, j)] - mx);
      for (int64_t j = 0; j < l.n; ++j) {
        double s = X.f[l.at(o, i, j)] - mx;
        Y.f[l.at(o, i, j)] = log ? s - std::log(sum) : std::exp(s) / sum;
      }
    }
  c.out[0] = std::move(Y);
}

void ref_hardmax(RefCtx& c) {
  const RefTensor& X = c.input(0);
  RowLayout l = softmax_layout(c, X.shape);
  RefTensor Y(X.dtype, X.shape);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner && l.n > 0; ++i) Y.f[l.at(o, i, row_extreme(X, l, o, i, false, false))] = 1;
  c.out[0] = std::move(Y);
}

// ArgMax / ArgMin's output: the input's shape with the axis kept as 1 or dropped.
Shape arg_shape(const OpCtx& c, Shape dims, int64_t axis) {
  if (c.attr_int("keepdims", 1)) dims[axis] = 1;
  else dims.erase(dims.begin() + axis);
  return dims;
}

// ArgMax / ArgMin's rows: one axis (no coercion).
RowLayout arg_layout(const OpCtx& c, const Shape& dims, int64_t* axis_out) {
  int64_t rank = dims.size();
  int64_t axis_attr = c.attr_int("axis", 0);
  int64_t axis = normalize_axis(axis_attr, rank);
  if (axis < 0) c.fail("axis " + std::to_string(axis_attr) + " is out of range for rank " + std::to_string(rank));
  if (c.opset < 12 && c.has_attr("select_last_index")) c.fail("select_last_index exists only from opset 12");
  RowLayout l;
  for (int64_t a = 0; a < rank; ++a) (a < axis ? l.outer : a == axis ? l.n : l.inner) *= dims[a];
  if (axis_out) *axis_out = axis;
  return l;
}

void infer_arg(InferCtx& c) {
  DType t = c.input(0).dtype;
  if (!(ew::kNumeric & ew::types({t}))) c.fail(std::string("input must be a number type, got ") + dtype_name(t));
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) return c.set_output_unknown_rank(0, DType::i64);
  int64_t axis = 0;
  arg_layout(c, x.dims, &axis);
  if (x.dims[axis] == 0) c.fail("axis " + std::to_string(axis) + " is empty: there is no extreme to index");
  c.set_output(0, DType::i64, arg_shape(c, x.dims, axis));
}

void ref_arg(RefCtx& c) {
  const RefTensor& X = c.input(0);
  int64_t axis = 0;
  RowLayout l = arg_layout(c, X.shape, &axis);
  if (l.n == 0) c.fail("axis " + std::to_string(axis) + " is empty: there is no extreme to index");
  RefTensor Y(DType::i64, arg_shape(c, X.shape, axis));
  bool smallest = c.node.op_type == "ArgMin", last = c.attr_int("select_last_index", 0) != 0;
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) Y.i[o * l.inner + i] = row_extreme(X, l, o, i, smallest, last);
  c.out[0] = std::move(Y);
}

const OpDef kOps[] = {
    {"Softmax", 1, 1, 1, 1, {"axis"}, infer_softmax, ref_softmax},
    {"LogSoftmax", 1, 1, 1, 1, {"axis"}, infer_softmax, ref_softmax},
    {"Hardmax", 1, 1, 1, 1, {"axis"}, infer_softmax, ref_hardmax},
    {"ArgMax", 1, 1, 1, 1, {"axis", "keepdims", "select_last_index"}, infer_arg, ref_arg},
    {"ArgMin", 1, 1, 1, 1, {"axis", "keepdims", "select_last_index"}, infer_arg, ref_arg},
};

}  // namespace

std::span<const OpDef> softmax_ops() { return kOps; }

}  // namespace lockstep
