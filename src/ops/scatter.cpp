// Scatter (opsets 9 and 10), ScatterElements and ScatterND: the output is the data with the
// updates written at the indices, in the updates' order, or combined with what is there (add,
// mul, max, min). A later update to the same element wins where there is no reduction.
#include "ops/scatter.h"

#include <cmath>

#include "ops/elementwise.h"
#include "ops/movement_common.h"

namespace lockstep {

using namespace ew;

ScatterReduction scatter_reduction(const OpCtx& c) {
  std::string r = c.attr_string("reduction", "none");
  if (c.has_attr("reduction") && c.opset < 16) c.fail("reduction is an attribute from opset 16");
  if (r == "none") return ScatterReduction::None;
  if (r == "add") return ScatterReduction::Add;
  if (r == "mul") return ScatterReduction::Mul;
  if ((r == "max" || r == "min") && c.opset < 18) c.fail("reduction '" + r + "' is from opset 18");
  if (r == "max") return ScatterReduction::Max;
  if (r == "min") return ScatterReduction::Min;
  c.fail("reduction '" + r + "' is not one of none, add, mul, max, min");
}

static bool fits(int64_t a, int64_t b) { return a < 0 || b < 0 || a <= b; }
static bool same(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

int64_t scatter_elements_axis(const OpCtx& c, const Shape& data, const Shape& idx, const Shape& upd) {
  int64_t rank = static_cast<int64_t>(data.size());
  if (rank == 0) c.fail("cannot scatter into a scalar");
  int64_t axis = normalize_axis_or_fail(c, c.attr_int("axis", 0), rank, "axis");
  if (idx.size() != data.size() || upd.size() != data.size())
    c.fail("indices " + shape_str(idx) + " and updates " + shape_str(upd) + " must have the data's rank " +
           std::to_string(rank));
  for (int64_t k = 0; k < rank; ++k) {
    if (!same(idx[k], upd[k])) c.fail("indices " + shape_str(idx) + " and updates " + shape_str(upd) + " differ");
    if (k != axis && !fits(idx[k], data[k]))
      c.fail("indices " + shape_str(idx) + " exceed the data " + shape_str(data) + " off the axis");
  }
  return axis;
}

int64_t scatter_nd_depth(const OpCtx& c, const Shape& data, const Shape& idx, const Shape& upd) {
  if (idx.empty()) c.fail("indices must have rank 1 or more");
  int64_t k = idx.back();
  if (k < 0) return -1;
  if (k > static_cast<int64_t>(data.size()))
    c.fail("index tuples of length " + std::to_string(k) + " for data of rank " + std::to_string(data.size()));
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.begin() + k, data.end());
  bool ok = want.size() == upd.size();
  for (size_t j = 0; ok && j < want.size(); ++j) ok = same(want[j], upd[j]);
  if (!ok) c.fail("updates " + shape_str(upd) + " must be " + shape_str(want) + " (indices[:-1] + data[k:])");
  return k;
}

namespace {

bool nd(const OpCtx& c) { return c.node.op_type == "ScatterND"; }

void infer_scatter(InferCtx& c) {
  if (c.node.op_type == "Scatter" && (c.opset < 9 || c.opset >= 11))
    c.fail("Scatter is an op of opsets 9 and 10 (ScatterElements from 11)");
  if (c.node.op_type != "Scatter") require_op_exists(c, {{11, 0}});
  const TypeInfo &x = c.input(0), &idx = c.input(1), &upd = c.input(2);
  if (nd(c) && idx.dtype != DType::i64) c.fail(std::string("indices must be int64, got ") + dtype_name(idx.dtype));
  if (!nd(c)) require_index_type(c, 1);
  c.require_same_dtype(0, 2);
  ScatterReduction r = scatter_reduction(c);
  if (r != ScatterReduction::None && x.dtype == DType::boolean) c.fail("a reduction of bool data is not supported");
  if (x.rank_known && idx.rank_known && upd.rank_known) {
    if (nd(c)) scatter_nd_depth(c, x.dims, idx.dims, upd.dims);
    else scatter_elements_axis(c, x.dims, idx.dims, upd.dims);
  }
  c.out[0] = x;
}

// a combined with b as the reduction says, in float64 or wrapping at 64 bits (the store wraps
// to the type); max and min of floats keep NaN, of uint64 compare unsigned.
void combine(RefTensor& out, int64_t at, const RefTensor& upd, int64_t from, ScatterReduction r) {
  if (r == ScatterReduction::None) return out.copy_elem(at, upd, from);
  bool is_max = r == ScatterReduction::Max;
  if (out.is_float()) {
    double a = out.f[at], b = upd.f[from];
    if (r == ScatterReduction::Add) out.f[at] = a + b;
    else if (r == ScatterReduction::Mul) out.f[at] = a * b;
    else out.f[at] = std::isnan(a) || std::isnan(b) ? NAN : is_max ? std::max(a, b) : std::min(a, b);
    return;
  }
  uint64_t a = static_cast<uint64_t>(out.i[at]), b = static_cast<uint64_t>(upd.i[from]);
  bool less = out.dtype == DType::u64 ? a < b : out.i[at] < upd.i[from];
  uint64_t v = r == ScatterReduction::Add ? a + b : r == ScatterReduction::Mul ? a * b : (less == is_max ? b : a);
  out.i[at] = static_cast<int64_t>(v);
}

void ref_scatter_elements(RefCtx& c, RefTensor& out) {
  const RefTensor &idx = c.input(1), &upd = c.input(2);
  int64_t axis = scatter_elements_axis(c, out.shape, idx.shape, upd.shape);
  ScatterReduction r = scatter_reduction(c);
  Shape strides = shape_strides(out.shape), pos(out.shape.size(), 0);
  for (int64_t e = 0; e < upd.numel(); ++e) {
    int64_t at = 0;
    for (size_t k = 0; k < pos.size(); ++k)
      at += (static_cast<int64_t>(k) == axis ? gather_index(c, idx.i, e, out.shape[axis]) : pos[k]) * strides[k];
    combine(out, at, upd, e, r);
    for (size_t k = pos.size(); k-- > 0;)
      if (++pos[k] < upd.shape[k]) break;
      else pos[k] = 0;
  }
}

void ref_scatter_nd(RefCtx& c, RefTensor& out) {
  const RefTensor &idx = c.input(1), &upd = c.input(2);
  int64_t k = scatter_nd_depth(c, out.shape, idx.shape, upd.shape);
  ScatterReduction r = scatter_reduction(c);
  Shape strides = shape_strides(out.shape);
  int64_t tuples = idx.numel() / std::max<int64_t>(k, 1), slice = 1;
  for (size_t d = k; d < out.shape.size(); ++d) slice *= out.shape[d];
  if (k == 0) tuples = shape_numel(Shape(idx.shape.begin(), idx.shape.end() - 1));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t d = 0; d < k; ++d) at += gather_index(c, idx.i, t * k + d, out.shape[d]) * strides[d];
    for (int64_t s = 0; s < slice; ++s) combine(out, at + s, upd, t * slice + s, r);
  }
}

void ref_scatter(RefCtx& c) {
  RefTensor out = c.input(0);
  if (nd(c)) ref_scatter_nd(c, out);
  else ref_scatter_elements(c, out);
  c.out[0] = std::move(out);
}

const OpDef kOps[] = {
    {"Scatter", 3, 3, 1, 1, {"axis"}, infer_scatter, ref_scatter},
    {"ScatterElements", 3, 3, 1, 1, {"axis", "reduction"}, infer_scatter, ref_scatter},
    {"ScatterND", 3, 3, 1, 1, {"reduction"}, infer_scatter, ref_scatter},
};

}  // namespace

std::span<const OpDef> scatter_ops() { return kOps; }

}  // namespace lockstep
