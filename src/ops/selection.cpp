// Ops that select by values: NonZero and Compress, whose output length is counted from their
// input's values, and ReverseSequence. For the first two the shape rule knows the length only
// when the values are known before running (a constant, a folded shape computation); otherwise
// the length is unknown, the reference runs the op and a compiled target refuses it as
// unsupported, naming the value.
#include "ops/elementwise.h"
#include "ops/infer.h"
#include "ops/movement_common.h"

namespace lockstep {

using namespace ew;

namespace {

int64_t count_nonzero(const RefTensor& x) {
  int64_t n = 0;
  for (int64_t k = 0; k < x.numel(); ++k) n += x.get(k) != 0;
  return n;
}

// NonZero: the indices of the nonzero elements, one column per element in row-major order,
// one row per axis ([rank, count]; a scalar gives [0, count], as numpy's nonzero of a 0-d array
// is taken for a 1-element one).
void infer_non_zero(InferCtx& c) {
  require_types(c, 0, {{9, (kNumeric & ~kBf16) | kBool}, {13, kNumeric | kBool}});
  const TypeInfo& x = c.input(0);
  int64_t rank = x.rank_known ? static_cast<int64_t>(x.dims.size()) : -1;
  c.set_output(0, DType::i64, {rank, c.value(0) ? count_nonzero(*c.value(0)) : -1});
}

void ref_non_zero(RefCtx& c) {
  const RefTensor& x = c.input(0);
  int64_t rank = static_cast<int64_t>(x.shape.size()), n = count_nonzero(x);
  RefTensor out(DType::i64, {rank, n});
  std::vector<int64_t> strides = shape_strides(x.shape);
  for (int64_t k = 0, col = 0; k < x.numel(); ++k) {
    if (x.get(k) == 0) continue;
    for (int64_t a = 0; a < rank; ++a) out.i[a * n + col] = k / strides[a] % x.shape[a];
    ++col;
  }
  c.out[0] = std::move(out);
}

// Compress: the slices along `axis` (of the flattened input without one) where the condition
// is true; a condition shorter than the axis leaves the rest out, a longer one is an error.
std::optional<int64_t> compress_axis(const OpCtx& c, int64_t rank) {
  if (!c.has_attr("axis")) return std::nullopt;
  int64_t axis = c.attr_int("axis", 0);
  if (axis < 0 && c.opset < 11) c.fail("a negative axis needs opset 11, the model imports " + std::to_string(c.opset));
  return normalize_axis_or_fail(c, axis, rank, "axis");
}

void require_condition_fits(const OpCtx& c, int64_t cond, int64_t extent) {
  if (cond >= 0 && extent >= 0 && cond > extent)
    c.fail("the condition has " + std::to_string(cond) + " elements, more than the " + std::to_string(extent) +
           " it selects from");
}

void infer_compress(InferCtx& c) {
  require_types(c, 0, {{9, (kNumeric & ~kBf16) | kBool}, {13, kNumeric | kBool}});
  require_types(c, 1, {{9, kBool}});
  c.require_rank(1, 1);
  const TypeInfo &x = c.input(0), &cond = c.input(1);
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  int64_t rank = static_cast<int64_t>(x.dims.size()), cond_len = cond.rank_known ? cond.dims[0] : -1;
  std::optional<int64_t> axis = compress_axis(c, rank);
  int64_t count = c.value(1) ? count_nonzero(*c.value(1)) : -1;
  if (!axis) {
    require_condition_fits(c, cond_len, x.fully_known() ? shape_numel(x.dims) : -1);
    return c.set_output(0, x.dtype, {count});
  }
  require_condition_fits(c, cond_len, x.dims[*axis]);
  Shape out = x.dims;
  out[*axis] = count;
  c.set_output(0, x.dtype, out);
}

void ref_compress(RefCtx& c) {
  const RefTensor &x = c.input(0), &cond = c.input(1);
  std::optional<int64_t> axis = compress_axis(c, static_cast<int64_t>(x.shape.size()));
  Shape in = axis ? x.shape : Shape{x.numel()};
  int64_t a = axis.value_or(0), extent = in[a];
  require_condition_fits(c, cond.numel(), extent);
  int64_t inner = 1, outer = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    if (d < a) outer *= in[d];
    if (d > a) inner *= in[d];
  }
  Shape shape = in;
  shape[a] = count_nonzero(cond);
  RefTensor out(x.dtype, shape);
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < cond.numel(); ++j)
      if (cond.get(j) != 0) {
        out.copy_run(at, x, (o * extent + j) * inner, inner);
        at += inner;
      }
  c.out[0] = std::move(out);
}

// ReverseSequence: along time_axis, the first sequence_lens[b] elements of batch b reversed,
// the rest as they are. A length outside [0, time] is an error naming the node.
std::pair<int64_t, int64_t> sequence_axes(const OpCtx& c) {
  int64_t t = c.attr_int("time_axis", 0), b = c.attr_int("batch_axis", 1);
  if ((t != 0 && t != 1) || (b != 0 && b != 1) || t == b)
    c.fail("time_axis and batch_axis must be 0 and 1 in either order, got " + std::to_string(t) + " and " +
           std::to_string(b));
  return {t, b};
}

void infer_reverse_sequence(InferCtx& c) {
  require_types(c, 0, {{10, (kNumeric & ~kBf16) | kBool}, {22, kNumeric | kBool}});
  require_types(c, 1, {{10, types({DType::i64})}});
  c.require_rank(1, 1);
  auto [t, b] = sequence_axes(c);
  const TypeInfo &x = c.input(0), &lens = c.input(1);
  if (x.rank_known && x.dims.size() < 2) c.fail("input must have rank 2 or more");
  if (x.rank_known && lens.rank_known) require_same_dim(c, x.dims[b], lens.dims[0], "batch size and sequence_lens");
  c.out[0] = x;
}

void ref_reverse_sequence(RefCtx& c) {
  const RefTensor &x = c.input(0), &lens = c.input(1);
  auto [ta, ba] = sequence_axes(c);
  if (x.shape.size() < 2 || lens.numel() != x.shape[ba])
    c.fail("sequence_lens has " + std::to_string(lens.numel()) + " lengths for a batch of " +
           std::to_string(x.shape.size() < 2 ? 0 : x.shape[ba]));
  std::vector<int64_t> strides = shape_strides(x.shape);
  RefTensor out(x.dtype, x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) {
    int64_t b = k / strides[ba] % x.shape[ba], t = k / strides[ta] % x.shape[ta], len = lens.i[b];
    if (len < 0 || len > x.shape[ta])
      c.fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) + " is outside [0, " +
             std::to_string(x.shape[ta]) + "]");
    out.copy_elem(k, x, t < len ? k + (len - 1 - 2 * t) * strides[ta] : k);
  }
  c.out[0] = std::move(out);
}

const OpDef kOps[] = {
    {"ReverseSequence", 2, 2, 1, 1, {"batch_axis", "time_axis"}, infer_reverse_sequence, ref_reverse_sequence},
    {"NonZero", 1, 1, 1, 1, {}, infer_non_zero, ref_non_zero},
    {"Compress", 2, 2, 1, 1, {"axis"}, infer_compress, ref_compress},
};

}  // namespace

std::span<const OpDef> selection_ops() { return kOps; }

}  // namespace lockstep
