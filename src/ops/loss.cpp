// The losses: NegativeLogLikelihoodLoss picks each sample's class score, weighted, and reduces;
// SoftmaxCrossEntropyLoss is the same over the log-softmax of its scores along the class axis.
// The references follow the ops' definitions, not ONNX's function bodies.
#include <cmath>
#include <limits>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

const TypeSet kIndex = types({DType::i32, DType::i64});

enum class Reduction { None, Sum, Mean };

Reduction reduction_of(const OpCtx& c) {
  std::string r = c.attr_string("reduction", "mean");
  if (r == "none") return Reduction::None;
  if (r == "sum") return Reduction::Sum;
  if (r == "mean") return Reduction::Mean;
  c.fail("reduction '" + r + "' is not one of none, sum, mean");
}

bool sce(const OpCtx& c) { return c.node.op_type == "SoftmaxCrossEntropyLoss"; }

// Scores [N, C, d...] against targets [N, d...] and weights [C]; unknown dims pass.
void check_loss_shapes(const InferCtx& c) {
  const TypeInfo &x = c.input(0), &t = c.input(1);
  if (!x.rank_known) return;
  if (x.dims.size() < 2) c.fail("input must have rank 2 or more (N, C, d...), got " + x.str());
  auto same = [](int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; };
  if (t.rank_known) {
    bool ok = t.dims.size() + 1 == x.dims.size();
    for (size_t k = 0; ok && k < t.dims.size(); ++k) ok = same(t.dims[k], x.dims[k == 0 ? 0 : k + 1]);
    if (!ok) c.fail("target " + t.str() + " is not the input " + x.str() + " without its class axis");
  }
  if (c.has_input(2) && c.input(2).rank_known) {
    const TypeInfo& w = c.input(2);
    if (w.dims.size() != 1 || !same(w.dims[0], x.dims[1]))
      c.fail("weight " + w.str() + " is not one value per class (" + std::to_string(x.dims[1]) + ")");
  }
}

void infer_loss(InferCtx& c) {
  // bfloat16 scores from opset 13 (SoftmaxCrossEntropyLoss) or 22 (NegativeLogLikelihoodLoss).
  for (size_t k : {0, 2}) {
    if (k == 2 && !c.has_input(2)) continue;
    if (sce(c)) require_types(c, k, {{12, kFloat}, {13, kFloat | kBf16}});
    else require_types(c, k, {{12, kFloat}, {22, kFloat | kBf16}});
  }
  require_types(c, 1, {{12, kIndex}});
  if (c.has_input(2)) c.require_same_dtype(0, 2);
  check_loss_shapes(c);
  const TypeInfo &x = c.input(0), &t = c.input(1);
  DType dt = x.dtype;
  if (reduction_of(c) != Reduction::None) c.set_output(0, dt, {});
  else if (t.rank_known) c.out[0] = TypeInfo{dt, true, t.dims};
  else c.set_output_unknown_rank(0, dt);
  if (c.has_output(1)) c.out[1] = x;
}

// Log-softmax along axis 1 (per axis: the class axis alone), in float64.
RefTensor log_softmax_classes(const RefTensor& x) {
  int64_t n = x.shape[1], inner = x.numel() / std::max<int64_t>(x.shape[0] * n, 1);
  RefTensor y(x.dtype, x.shape);
  for (int64_t o = 0; o < x.shape[0]; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * n + j) * inner + i; };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x.f[at(j)]);
      for (int64_t j = 0; j < n; ++j) sum += std::exp(x.f[at(j)] - mx);
      for (int64_t j = 0; j < n; ++j) y.f[at(j)] = x.f[at(j)] - mx - std::log(sum);
    }
  return y;
}

void ref_loss(RefCtx& c) {
  const RefTensor &scores = c.input(0), &target = c.input(1);
  const RefTensor* weight = c.in.size() > 2 ? c.in[2] : nullptr;
  if (scores.shape.size() < 2) c.fail("input must have rank 2 or more (N, C, d...)");
  RefTensor logp = sce(c) ? log_softmax_classes(scores) : RefTensor();
  const RefTensor& x = sce(c) ? logp : scores;
  int64_t classes = x.shape[1], inner = target.numel() / std::max<int64_t>(x.shape[0], 1);
  bool has_ignore = c.has_attr("ignore_index");
  int64_t ignore = c.attr_int("ignore_index", 0);
  RefTensor loss(x.dtype, target.shape);
  double total = 0, weights = 0;
  for (int64_t k = 0; k < target.numel(); ++k) {
    int64_t cls = target.i[k];
    if (has_ignore && cls == ignore) continue;  // loss 0, weight 0
    if (cls < 0 || cls >= classes)
      c.fail("target value " + std::to_string(cls) + " is not a class in [0, " + std::to_string(classes) + ")");
    double w = weight ? weight->f[cls] : 1.0;
    int64_t n = k / std::max<int64_t>(inner, 1), i = k % std::max<int64_t>(inner, 1);
    loss.f[k] = -x.f[(n * classes + cls) * inner + i] * w;
    total += loss.f[k];
    weights += w;
  }
  Reduction r = reduction_of(c);
  if (r == Reduction::None) c.out[0] = std::move(loss);
  else {
    c.out[0] = RefTensor(x.dtype, {});
    c.out[0].f[0] = r == Reduction::Sum ? total : total / weights;
  }
  if (c.out.size() > 1) c.out[1] = std::move(logp);
}

const OpDef kOps[] = {
    {"NegativeLogLikelihoodLoss", 2, 3, 1, 1, {"ignore_index", "reduction"}, infer_loss, ref_loss},
    {"SoftmaxCrossEntropyLoss", 2, 3, 1, 2, {"ignore_index", "reduction"}, infer_loss, ref_loss},
};

}  // namespace

std::span<const OpDef> loss_ops() { return kOps; }

}  // namespace lockstep
