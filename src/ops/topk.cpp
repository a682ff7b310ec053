// TopK: the k largest (or smallest) elements along an axis and their indices, in order; equal
// values by index, NaN above every number (numpy's sort order, which ONNX's cases follow).
#include <cmath>

#include "ops/elementwise.h"
#include "ops/movement_common.h"

namespace lockstep {

using namespace ew;

namespace {

int64_t topk_axis(const OpCtx& c, int64_t rank) {
  if (rank == 0) c.fail("input must have rank 1 or more");
  return normalize_axis_or_fail(c, c.attr_int("axis", -1), rank, "axis");
}

// k from the attribute (before opset 10) or input 1 (a one-element int64 tensor).
std::optional<int64_t> topk_k(const OpCtx& c, const RefTensor* v) {
  if (c.opset < 10) return c.attr_int("k", 0);
  if (!v) return std::nullopt;
  if (v->numel() != 1 || v->shape.size() > 1) c.fail("k must be a one-element tensor, got " + shape_str(v->shape));
  return v->i[0];
}

void check_k(const OpCtx& c, int64_t k, int64_t len) {
  if (k < 0 || (len >= 0 && k > len))
    c.fail("k = " + std::to_string(k) + " is not in [0, " + (len < 0 ? "?" : std::to_string(len)) + "]");
}

void infer_topk(InferCtx& c) {
  require_op_exists(c, {{1, 0}});
  const TypeInfo& x = c.input(0);
  if (x.dtype == DType::boolean) c.fail("input must be numeric, got bool");
  if (c.opset >= 10 && !c.has_input(1)) c.fail("from opset 10 k is the second input, and it is not given");
  if (c.opset >= 10 && c.input(1).dtype != DType::i64)
    c.fail(std::string("k must be int64, got ") + dtype_name(c.input(1).dtype));
  if (c.opset < 11 && (c.has_attr("largest") || c.has_attr("sorted"))) c.fail("largest and sorted are from opset 11");
  if (!x.rank_known) {
    c.set_output_unknown_rank(0, x.dtype);
    c.set_output_unknown_rank(1, DType::i64);
    return;
  }
  int64_t axis = topk_axis(c, static_cast<int64_t>(x.dims.size()));
  std::optional<int64_t> k = topk_k(c, c.opset >= 10 ? c.value(1) : nullptr);
  if (k) check_k(c, *k, x.dims[axis]);
  Shape dims = x.dims;
  dims[axis] = k ? *k : -1;
  c.set_output(0, x.dtype, dims);
  if (c.num_outputs() > 1) c.set_output(1, DType::i64, dims);
}

// Whether a comes before b in the order (a at an earlier index when they tie).
bool ahead(const RefTensor& x, int64_t a, int64_t b, bool largest) {
  if (x.is_float()) {
    double u = x.f[a], v = x.f[b];
    bool un = std::isnan(u), vn = std::isnan(v);
    if (un || vn) return un && !vn ? largest : (!un && vn ? !largest : false);
    return largest ? u > v : u < v;
  }
  if (x.dtype == DType::u64) {
    uint64_t u = static_cast<uint64_t>(x.i[a]), v = static_cast<uint64_t>(x.i[b]);
    return largest ? u > v : u < v;
  }
  return largest ? x.i[a] > x.i[b] : x.i[a] < x.i[b];
}

void ref_topk(RefCtx& c) {
  const RefTensor& x = c.input(0);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = topk_axis(c, rank), len = x.shape[axis];
  int64_t k = *topk_k(c, c.opset >= 10 ? &c.input(1) : nullptr);
  check_k(c, k, len);
  bool largest = c.attr_int("largest", 1) != 0;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[d];
  int64_t outer = len == 0 ? 0 : x.numel() / (len * inner);
  Shape dims = x.shape;
  dims[axis] = k;
  RefTensor values(x.dtype, dims), indices(DType::i64, dims);
  std::vector<int64_t> order(len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
      for (int64_t j = 0; j < len; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return ahead(x, at(a), at(b), largest); });
      for (int64_t j = 0; j < k; ++j) {
        int64_t to = (o * k + j) * inner + i;
        values.copy_elem(to, x, at(order[j]));
        indices.i[to] = order[j];
      }
    }
  c.out[0] = std::move(values);
  if (c.out.size() > 1) c.out[1] = std::move(indices);
}

const OpDef kOps[] = {
    {"TopK", 1, 2, 2, 2, {"axis", "k", "largest", "sorted"}, infer_topk, ref_topk},
};

}  // namespace

std::span<const OpDef> topk_ops() { return kOps; }

}  // namespace lockstep
