// Ops that keep or zero elements by position or by chance: Trilu (a triangle of each matrix)
// and Dropout at inference (the input itself; its mask all true).
#include <optional>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

// Trilu's diagonal offset k: input 1 when given (an int64 scalar), else 0. Null when the
// value is not known yet.
std::optional<int64_t> trilu_offset(const OpCtx& c, const RefTensor* k) {
  if (!c.has_input(1)) return 0;
  if (!k) return std::nullopt;
  if (k->numel() != 1) c.fail("k must hold one value, got " + std::to_string(k->numel()));
  return k->get_int(0);
}

void infer_trilu(InferCtx& c) {
  require_op_exists(c, {{14, 0}});
  require_types(c, 0, {{14, kNumeric | kBool}});
  if (c.has_input(1)) {
    require_types(c, 1, {{14, types({DType::i64})}});
    if (c.input(1).rank_known && !c.input(1).dims.empty() && !(c.input(1).dims.size() == 1 && c.input(1).dims[0] == 1))
      c.fail("k must be a scalar");
    trilu_offset(c, c.value(1));
  }
  const TypeInfo& x = c.input(0);
  if (x.rank_known && x.dims.size() < 2) c.fail("input must have rank 2 or more, got " + std::to_string(x.dims.size()));
  c.out[0] = x;
}

// Keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower); zero elsewhere.
void ref_trilu(RefCtx& c) {
  const RefTensor& X = c.input(0);
  int64_t k = *trilu_offset(c, c.has_input(1) ? c.in[1] : nullptr);
  bool upper = c.attr_int("upper", 1) != 0;
  int64_t rows = X.shape[X.shape.size() - 2], cols = X.shape.back();
  RefTensor Y(X.dtype, X.shape);
  for (int64_t e = 0; e < X.numel(); ++e) {
    int64_t i = e / cols % rows, j = e % cols;
    if (upper ? j - i >= k : j - i <= k) Y.copy_elem(e, X, e);
  }
  c.out[0] = std::move(Y);
}

// Dropout changes nothing at inference; in training mode it is random unless the ratio is 0.
void infer_dropout(InferCtx& c) {
  DType t = c.input(0).dtype;
  if (!dtype_is_float(t)) c.fail(std::string("input must be a float type, got ") + dtype_name(t));
  if (c.opset < 12 && c.num_inputs() > 1) c.fail("ratio is an attribute, not an input, before opset 12");
  if (c.opset >= 12 && c.has_attr("ratio")) c.fail("ratio is an input, not an attribute, from opset 12");
  std::optional<double> ratio;  // at inference only checked
  if (!c.has_input(1)) ratio = c.attr_float("ratio", 0.5);
  else if (c.value(1)) ratio = c.value(1)->get(0);
  if (ratio && !(*ratio >= 0 && *ratio < 1)) c.fail("ratio must lie in [0, 1), got " + std::to_string(*ratio));
  if (c.has_input(2)) {
    const RefTensor* mode = c.value(2);
    auto refuse = [&](const char* why) { throw Unsupported(c.graph.label(c.node_index) + ": " + why); };
    if (!mode) refuse("a training_mode known only at run time is not supported");
    if (mode->get_int(0) != 0 && ratio != 0.0) refuse("training-mode dropout is random; lockstep runs inference only");
  }
  c.out[0] = c.input(0);
  if (c.has_output(1)) {
    c.out[1] = c.input(0);
    c.out[1].dtype = c.opset < 10 ? t : DType::boolean;
  }
}

void ref_dropout(RefCtx& c) {
  c.out[0] = c.input(0);
  if (!c.has_output(1)) return;
  RefTensor mask(c.opset < 10 ? c.input(0).dtype : DType::boolean, c.input(0).shape);
  for (int64_t e = 0; e < mask.numel(); ++e) mask.set(e, 1.0);
  c.out[1] = std::move(mask);
}

const OpDef kOps[] = {
    {"Trilu", 1, 2, 1, 1, {"upper"}, infer_trilu, ref_trilu},
    {"Dropout", 1, 3, 1, 2, {"ratio", "seed"}, infer_dropout, ref_dropout},
};

}  // namespace

std::span<const OpDef> masking_ops() { return kOps; }

}  // namespace lockstep
