// CausalConvWithState (opset 27): a depthwise 1-D convolution over the state (the previous
// k - 1 steps, zeros when not given) followed by the input, an optional SiLU, and the last
// k - 1 steps as the next state.
#include <cmath>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

bool silu(const OpCtx& c) {
  std::string a = c.attr_string("activation", "none");
  if (a != "none" && a != "silu" && a != "swish") c.fail("activation '" + a + "' is not one of none, silu, swish");
  return a != "none";
}

// input [B, C, L], weight [C, 1, k], bias [C], past_state [B, C, k - 1]; returns k (-1 unknown).
int64_t causal_taps(const OpCtx& c, const Shape& x, const Shape& w, const Shape* bias, const Shape* past) {
  if (x.size() != 3) c.fail("input must be [batch, channels, length], got " + shape_str(x));
  if (w.size() != 3 || (w[1] >= 0 && w[1] != 1)) c.fail("weight must be [channels, 1, k], got " + shape_str(w));
  require_same_dim(c, w[0], x[1], "the weight's channels and the input's");
  if (w[2] == 0) c.fail("the kernel has no taps");
  if (bias && (bias->size() != 1 || (bias->at(0) >= 0 && x[1] >= 0 && bias->at(0) != x[1])))
    c.fail("bias must be one value per channel, got " + shape_str(*bias));
  if (past) {
    if (past->size() != 3) c.fail("past_state must be [batch, channels, k - 1], got " + shape_str(*past));
    require_same_dim(c, past->at(0), x[0], "the batches of past_state and the input");
    require_same_dim(c, past->at(1), x[1], "the channels of past_state and the input");
    require_same_dim(c, past->at(2), w[2] < 0 ? -1 : w[2] - 1, "past_state's length and k - 1");
  }
  return w[2];
}

void infer_causal_conv(InferCtx& c) {
  const TypeHistory kT = {{27, kFloat | kBf16}};
  require_types(c, 0, kT);
  c.require_same_dtype(0, 1);
  for (size_t k : {2, 3})
    if (c.has_input(k)) c.require_same_dtype(0, k);
  silu(c);
  const TypeInfo &x = c.input(0), &w = c.input(1);
  if (!x.rank_known || !w.rank_known) {
    c.set_output_unknown_rank(0, x.dtype);
    if (c.num_outputs() > 1) c.set_output_unknown_rank(1, x.dtype);
    return;
  }
  auto dims = [&](size_t k) { return c.has_input(k) && c.input(k).rank_known ? &c.input(k).dims : nullptr; };
  int64_t k = causal_taps(c, x.dims, w.dims, dims(2), dims(3));
  c.out[0] = x;
  if (c.num_outputs() > 1) c.set_output(1, x.dtype, {x.dims[0], x.dims[1], k < 0 ? -1 : k - 1});
}

void ref_causal_conv(RefCtx& c) {
  const RefTensor &x = c.input(0), &w = c.input(1);
  auto opt = [&](size_t k) { return k < c.in.size() ? c.in[k] : nullptr; };
  const RefTensor *bias = opt(2), *past = opt(3);
  int64_t k = causal_taps(c, x.shape, w.shape, bias ? &bias->shape : nullptr, past ? &past->shape : nullptr);
  int64_t batch = x.shape[0], ch = x.shape[1], len = x.shape[2];
  bool act = silu(c);
  auto padded = [&](int64_t b, int64_t ci, int64_t p) {  // the state, then the input
    if (p < k - 1) return past ? past->f[(b * ch + ci) * (k - 1) + p] : 0.0;
    return x.f[(b * ch + ci) * len + p - (k - 1)];
  };
  RefTensor y(x.dtype, x.shape), state(x.dtype, {batch, ch, k - 1});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ci = 0; ci < ch; ++ci) {
      for (int64_t t = 0; t < len; ++t) {
        double acc = bias ? bias->f[ci] : 0.0;
        for (int64_t j = 0; j < k; ++j) acc += w.f[ci * k + j] * padded(b, ci, t + j);
        y.f[(b * ch + ci) * len + t] = act ? acc / (1 + std::exp(-acc)) : acc;
      }
      for (int64_t s = 0; s < k - 1; ++s) state.f[(b * ch + ci) * (k - 1) + s] = padded(b, ci, len + s);
    }
  c.out[0] = std::move(y);
  if (c.out.size() > 1) c.out[1] = std::move(state);
}

const OpDef kOps[] = {
    {"CausalConvWithState", 2, 4, 1, 2, {"activation"}, infer_causal_conv, ref_causal_conv},
};

}  // namespace

std::span<const OpDef> causal_conv_ops() { return kOps; }

int64_t causal_conv_taps(const OpCtx& c, const Shape& x, const Shape& w) {
  return causal_taps(c, x, w, nullptr, nullptr);
}

}  // namespace lockstep
