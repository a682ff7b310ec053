// CumSum and CumProd: running sums or products along one axis, forward or reversed, inclusive
// or exclusive. Floats fold in double; integers wrap in their type, as repeated addition or
// multiplication does.
#include <algorithm>
#include <optional>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

const TypeSet kCumTypes = kFloat | types({DType::i32, DType::i64, DType::u32, DType::u64});

// The axis from input 1 (a one-element int32/int64 tensor), normalised; nullopt when its value
// is not known yet.
std::optional<int64_t> cum_axis(const OpCtx& c, const RefTensor* v, int64_t rank) {
  if (!v) return std::nullopt;
  if (v->numel() != 1) c.fail("axis must hold one value, got " + std::to_string(v->numel()));
  int64_t a = v->get_int(0), k = normalize_axis(a, rank);
  if (k < 0) c.fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return k;
}

void infer_cumulative(InferCtx& c) {
  if (c.node.op_type == "CumProd") require_types(c, 0, {{26, kCumTypes | kBf16}});
  else require_types(c, 0, {{11, kCumTypes}, {14, kCumTypes | kBf16}});
  require_types(c, 1, {{11, types({DType::i32, DType::i64})}});
  const TypeInfo& x = c.input(0);
  if (c.input(1).rank_known && c.input(1).dims.size() > 1) c.fail("axis must be a scalar or one element");
  if (x.rank_known) {
    if (x.dims.empty()) c.fail("input must have rank 1 or more");
    cum_axis(c, c.value(1), static_cast<int64_t>(x.dims.size()));
  }
  c.out[0] = x;
}

void ref_cumulative(RefCtx& c) {
  bool prod = c.node.op_type == "CumProd";
  const RefTensor& x = c.input(0);
  if (x.shape.empty()) c.fail("input must have rank 1 or more");
  int64_t axis = *cum_axis(c, &c.input(1), static_cast<int64_t>(x.shape.size()));
  bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  int64_t n = x.shape[axis], inner = shape_strides(x.shape)[axis], outer = x.numel() / std::max<int64_t>(n * inner, 1);
  RefTensor y(x.dtype, x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double fsum = prod ? 1 : 0;
      uint64_t isum = prod ? 1 : 0;
      auto store = [&](int64_t at) {
        if (x.is_float()) y.f[at] = fsum;
        else y.set_int(at, static_cast<int64_t>(isum));
      };
      for (int64_t s = 0; s < n; ++s) {
        int64_t at = (o * n + (reverse ? n - 1 - s : s)) * inner + i;
        if (exclusive) store(at);
        if (x.is_float()) fsum = prod ? fsum * x.f[at] : fsum + x.f[at];
        else isum = prod ? isum * static_cast<uint64_t>(x.i[at]) : isum + static_cast<uint64_t>(x.i[at]);
        if (!exclusive) store(at);
      }
    }
  c.out[0] = std::move(y);
}

const OpDef kOps[] = {
    {"CumSum", 2, 2, 1, 1, {"exclusive", "reverse"}, infer_cumulative, ref_cumulative},
    {"CumProd", 2, 2, 1, 1, {"exclusive", "reverse"}, infer_cumulative, ref_cumulative},
};

}  // namespace

std::span<const OpDef> cumulative_ops() { return kOps; }

}  // namespace lockstep
