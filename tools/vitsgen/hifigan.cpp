// HiFi-GAN generator (VITS models.Generator) with ResBlock1, and the mask's upsampling.
#include <cmath>

#include "parts.h"

namespace lockstep::vits {

constexpr double kLreluSlope = 0.1;  // modules.LRELU_SLOPE

// Weights N(0, 1/fan_in), biases N(0, 0.05^2): ~40 stacked convolutions keep signals O(1)
// (plain N(0, 0.1) would grow ~6x per layer); fan_in counts the terms summed into one output.
// The same scheme as tools/torch/vits_reference.py.
static ConvSpec dec_conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                         int64_t pad, double fan_in) {
  ConvSpec s{in, out, kernel, stride, dilation, pad};
  s.weight_std = 1.0 / std::sqrt(fan_in);
  s.bias_std = 0.05;
  return s;
}

static int64_t same_padding(int64_t kernel, int64_t dilation) { return (kernel * dilation - dilation) / 2; }

// ResBlock1: for each dilation, x = conv2(lrelu(conv1_dilated(lrelu(x)))) + x. `first_act` is
// lrelu(x) of the stage input, made once for all of a stage's resblocks: both exporters merge
// the identical leaky_relu calls (CSE), as the real graphs show.
static int resblock1(Emitter& e, const Path& p, int x, int first_act, int64_t ch, int64_t k, const DecSizes& s) {
  for (size_t m = 0; m < s.resblock_dilations.size(); ++m) {
    int64_t d = s.resblock_dilations[m];
    int xt = m == 0 ? first_act : leaky_relu(e, p, x, kLreluSlope);
    xt = conv1d(e, indexed(p, "convs1", m), xt, dec_conv(ch, ch, k, 1, d, same_padding(k, d), ch * k));
    xt = leaky_relu(e, p, xt, kLreluSlope);
    xt = conv1d(e, indexed(p, "convs2", m), xt, dec_conv(ch, ch, k, 1, 1, same_padding(k, 1), ch * k));
    x = e.op(p, "Add", {xt, x});
  }
  return x;
}

int generator(Emitter& e, int x, int64_t in_channels, const DecSizes& s) {
  Path dec{{"dec"}};
  int64_t ch = s.upsample_initial;
  x = conv1d(e, dec / "conv_pre", x, dec_conv(in_channels, ch, 7, 1, 1, 3, in_channels * 7));
  int64_t nk = static_cast<int64_t>(s.resblock_kernels.size());
  for (size_t i = 0; i < s.rates.size(); ++i) {
    int64_t u = s.rates[i], k = s.kernels[i];
    x = leaky_relu(e, dec, x, kLreluSlope);
    // Each output of a stride-u transposed conv sums in * k / u terms.
    double fan_in = static_cast<double>(ch * k) / static_cast<double>(u);
    x = conv_transpose1d(e, indexed(dec, "ups", i), x, dec_conv(ch, ch / 2, k, u, 1, (k - u) / 2, fan_in));
    ch /= 2;
    int64_t first = static_cast<int64_t>(i) * nk;
    int act = leaky_relu(e, indexed(dec, "resblocks", first), x, kLreluSlope);
    int xs = -1;
    for (int64_t j = 0; j < nk; ++j) {
      int r = resblock1(e, indexed(dec, "resblocks", first + j), x, act, ch, s.resblock_kernels[j], s);
      xs = xs < 0 ? r : e.op(dec, "Add", {xs, r});
    }
    x = e.op(dec, "Div", {xs, e.scalar(dec, static_cast<float>(nk))});
  }
  x = leaky_relu(e, dec, x, 0.01);  // F.leaky_relu's default slope
  ConvSpec post = dec_conv(ch, 1, 7, 1, 1, 3, ch * 7);
  post.bias = false;
  x = conv1d(e, dec / "conv_post", x, post);
  return e.op(dec, "Tanh", {x});
}

int repeat_interleave_time(Emitter& e, const Path& p, int mask, int64_t hop) {
  int u = e.op(p, "Unsqueeze", {mask, e.ints(p, {3})});
  Attrs keep_zeros{{"allowzero", attr_int(0)}};
  if (e.dynamo()) {  // expand the new axis to hop (broadcast), then a constant reshape
    int t = e.op(p, "Expand", {u, e.ints(p, {1, 1, 1, hop})});
    return e.op(p, "Reshape", {t, e.ints(p, {1, 1, -1})}, keep_zeros);
  }
  // Tile by the one-hot repeats, then flatten(2, 3): Shape -> Slice [0:2] -> Concat -1 -> Reshape.
  int t = e.op(p, "Tile", {u, e.ints(p, {1, 1, 1, hop})});
  int head = slice(e, p, e.op(p, "Shape", {t}), 0, 2, 0, {});
  int shape = e.op(p, "Concat", {head, e.ints(p, {-1})}, {{"axis", attr_int(0)}});
  return e.op(p, "Reshape", {t, shape}, keep_zeros);
}

}  // namespace lockstep::vits
