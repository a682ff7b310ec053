// Conv and ConvTranspose, N-D. Both share one geometry: attribute parsing, padding rules and
// the list of (kernel tap, line) runs the reference loops walk with a contiguous inner loop.
#include <algorithm>
#include <cmath>

#include "ops/conv.h"
#include "ops/infer.h"

namespace lockstep {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

// Attributes of one Conv/ConvTranspose node, checked and defaulted for `nd` spatial axes.
struct ConvAttrs {
  int64_t nd = 0, group = 1;
  AutoPad auto_pad = AutoPad::NotSet;
  Shape kernel, strides, dilations, pads;  // pads: nd begins then nd ends
  Shape output_padding, output_shape;      // ConvTranspose only; output_shape may be empty
  bool ceil_mode = false;                  // pools only: a last partial window counts
};

AutoPad parse_auto_pad(const OpCtx& c) {
  std::string s = c.attr_string("auto_pad", "NOTSET");
  if (s == "NOTSET") return AutoPad::NotSet;
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  c.fail("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" + s + "'");
}

// Values in [min, max]: bounded so that no size computed from them overflows int64.
Shape ints_of_length(const OpCtx& c, const char* key, size_t n, int64_t def, int64_t min, int64_t max = kMaxElements) {
  Shape v = c.attr_ints(key, Shape(n, def));
  if (v.size() != n)
    c.fail(std::string("attribute '") + key + "' has " + std::to_string(v.size()) +
           " values, expected " + std::to_string(n) + " for this input rank");
  for (int64_t x : v)
    if (x < min || x > max)
      c.fail(std::string("attribute '") + key + "' values must be from " + std::to_string(min) + " to " +
             std::to_string(max) + ", got " + shape_str(v));
  return v;
}

constexpr int64_t kMaxStep = int64_t{1} << 31;  // strides, dilations, kernel sizes

// `w_spatial` are W's spatial dims (-1 when unknown); kernel_shape must agree with them.
ConvAttrs parse_attrs(const OpCtx& c, int64_t nd, const Shape& w_spatial, bool transpose) {
  ConvAttrs a;
  a.nd = nd;
  a.group = c.attr_int("group", 1);
  if (a.group < 1) c.fail("group must be >= 1, got " + std::to_string(a.group));
  a.auto_pad = parse_auto_pad(c);
  a.kernel = c.has_attr("kernel_shape") ? ints_of_length(c, "kernel_shape", nd, 1, 1, kMaxStep) : w_spatial;
  for (int64_t i = 0; i < nd; ++i) {
    if (w_spatial[i] == 0) c.fail("weight W has an empty spatial axis " + shape_str(w_spatial));
    if (w_spatial[i] >= 0 && a.kernel[i] != w_spatial[i])
      c.fail("kernel_shape " + shape_str(a.kernel) + " does not match the weight's spatial dims " +
             shape_str(w_spatial));
  }
  a.strides = ints_of_length(c, "strides", nd, 1, 1, kMaxStep);
  a.dilations = ints_of_length(c, "dilations", nd, 1, 1, kMaxStep);
  a.pads = ints_of_length(c, "pads", 2 * nd, 0, 0);
  if (a.auto_pad != AutoPad::NotSet && std::any_of(a.pads.begin(), a.pads.end(), [](int64_t p) { return p != 0; }))
    c.fail("pads cannot be used together with auto_pad " + c.attr_string("auto_pad", ""));
  if (!transpose) return a;
  a.output_padding = ints_of_length(c, "output_padding", nd, 0, 0);
  for (int64_t i = 0; i < nd; ++i)
    if (a.output_padding[i] >= std::max(a.strides[i], a.dilations[i]))
      c.fail("output_padding " + shape_str(a.output_padding) +
             " must be less than the stride or dilation on each axis");
  if (c.has_attr("output_shape")) a.output_shape = ints_of_length(c, "output_shape", nd, 0, 1);
  return a;
}

int64_t dilated(const ConvAttrs& a, int64_t i) { return (a.kernel[i] - 1) * a.dilations[i] + 1; }

// Output spatial dims of Conv and the pools; fills a.pads for SAME_*/VALID. Unknown dims stay -1.
Shape conv_out_dims(const OpCtx& c, ConvAttrs& a, const Shape& in) {
  Shape out(a.nd, -1);
  for (int64_t i = 0; i < a.nd; ++i) {
    if (in[i] < 0 || a.kernel[i] < 0) continue;
    int64_t k = dilated(a, i), s = a.strides[i];
    if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) {
      out[i] = ceil_div(in[i], s);
      int64_t total = std::max<int64_t>(0, (out[i] - 1) * s + k - in[i]);
      int64_t small = total / 2;  // odd totals put the extra cell at the end for SAME_UPPER
      a.pads[i] = a.auto_pad == AutoPad::SameUpper ? small : total - small;
      a.pads[i + a.nd] = total - a.pads[i];
    } else {
      int64_t span = in[i] + a.pads[i] + a.pads[i + a.nd] - k;
      out[i] = (a.ceil_mode ? ceil_div(span, s) : floor_div(span, s)) + 1;
      if (a.ceil_mode && out[i] > 1 && (out[i] - 1) * s >= in[i] + a.pads[i]) --out[i];  // starts in the end pad
    }
    if (out[i] < 1)
      c.fail("spatial axis " + std::to_string(i) + ": input size " + std::to_string(in[i]) +
             " with pads " + shape_str(a.pads) + " is smaller than the dilated kernel (" +
             std::to_string(k) + ")");
  }
  return out;
}

// Output spatial dims of ConvTranspose; fills a.pads when output_shape or SAME_* decide them.
Shape conv_transpose_out_dims(const OpCtx& c, ConvAttrs& a, const Shape& in) {
  bool same = a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower;
  Shape out(a.nd, -1);
  for (int64_t i = 0; i < a.nd; ++i) {
    if (!a.output_shape.empty()) out[i] = a.output_shape[i];
    if (in[i] < 0 || a.kernel[i] < 0) continue;
    // In 128 bits: strides and sizes from a model may overflow int64 (a message printed
    // "output size -4611686018427387901").
    __int128 wide = static_cast<__int128>(a.strides[i]) * (in[i] - 1) + a.output_padding[i] + dilated(a, i);
    if (wide > kMaxElements)
      c.fail("spatial axis " + std::to_string(i) + ": the output would be longer than 2^40 (input " +
             std::to_string(in[i]) + ", stride " + std::to_string(a.strides[i]) + ")");
    int64_t full = static_cast<int64_t>(wide);
    if (a.output_shape.empty() && same) out[i] = in[i] * a.strides[i];
    if (!a.output_shape.empty() || same) {
      // ONNX: SAME_UPPER puts the odd cell at the end, otherwise at the start (floor division,
      // so a negative total, an output larger than the full one, grows the end).
      int64_t total = full - out[i];
      int64_t half = floor_div(total, 2);
      a.pads[i] = a.auto_pad == AutoPad::SameUpper ? half : total - half;
      a.pads[i + a.nd] = total - a.pads[i];
    } else {
      out[i] = full - a.pads[i] - a.pads[i + a.nd];
    }
    if (out[i] < 1)
      c.fail("spatial axis " + std::to_string(i) + ": output size " + std::to_string(out[i]) +
             " is not positive (input " + std::to_string(in[i]) + ", pads " + shape_str(a.pads) + ")");
  }
  return out;
}

Shape spatial(const Shape& dims) { return Shape(dims.begin() + 2, dims.end()); }

// Common checks of X, W and B; returns the number of spatial axes (X and W have rank nd + 2).
int64_t check_operands(InferCtx& c) {
  c.require_float(0);
  c.require_same_dtype(0, 1);
  if (c.has_input(2)) c.require_same_dtype(0, 2);
  const TypeInfo &x = c.input(0), &w = c.input(1);
  if (!x.rank_known && !w.rank_known) c.fail("the rank of X or W must be known");
  int64_t rank = x.rank_known ? x.dims.size() : w.dims.size();
  if (rank < 3) c.fail("input X must have rank >= 3 (N, C, spatial...), got " + x.str());
  c.require_rank(0, rank);
  c.require_rank(1, rank);
  if (c.has_input(2)) c.require_rank(2, 1);
  return rank - 2;
}

Shape dims_or_unknown(const TypeInfo& t, int64_t rank) {
  return t.rank_known ? t.dims : Shape(rank, -1);
}

std::string dim_str(int64_t d) { return d < 0 ? "?" : std::to_string(d); }

void check_bias(InferCtx& c, int64_t channels) {
  if (!c.has_input(2) || !c.input(2).rank_known) return;
  int64_t b = c.input(2).dims[0];
  if (b >= 0 && channels >= 0 && b != channels)
    c.fail("bias B has " + std::to_string(b) + " values but the output has " +
           std::to_string(channels) + " channels");
}

void infer_conv(InferCtx& c) {
  int64_t nd = check_operands(c);
  Shape x = dims_or_unknown(c.input(0), nd + 2), w = dims_or_unknown(c.input(1), nd + 2);
  ConvAttrs a = parse_attrs(c, nd, spatial(w), false);
  int64_t cin = x[1], m = w[0], cg = w[1];
  if (cin >= 0 && cg >= 0 && cin != cg * a.group)
    c.fail("input X has " + dim_str(cin) + " channels but weight W " + shape_str(w) + " with group " +
           std::to_string(a.group) + " expects " + std::to_string(cg * a.group));
  if (m >= 0 && m % a.group != 0)
    c.fail("weight W has " + std::to_string(m) + " output channels, not divisible by group " +
           std::to_string(a.group));
  check_bias(c, m);
  Shape out = {x[0], m};
  for (int64_t d : conv_out_dims(c, a, spatial(x))) out.push_back(d);
  c.set_output(0, c.input(0).dtype, out);
}

void infer_conv_transpose(InferCtx& c) {
  int64_t nd = check_operands(c);
  Shape x = dims_or_unknown(c.input(0), nd + 2), w = dims_or_unknown(c.input(1), nd + 2);
  ConvAttrs a = parse_attrs(c, nd, spatial(w), true);
  int64_t cin = x[1], wc = w[0];
  if (cin >= 0 && wc >= 0 && cin != wc)
    c.fail("input X has " + std::to_string(cin) + " channels but weight W " + shape_str(w) +
           " expects " + std::to_string(wc));
  if (cin >= 0 && cin % a.group != 0)
    c.fail("input X has " + std::to_string(cin) + " channels, not divisible by group " +
           std::to_string(a.group));
  int64_t m = w[1] < 0 ? -1 : w[1] * a.group;
  check_bias(c, m);
  Shape out = {x[0], m};
  for (int64_t d : conv_transpose_out_dims(c, a, spatial(x))) out.push_back(d);
  c.set_output(0, c.input(0).dtype, out);
}

// A run of `count` partner positions for one kernel tap: "a" positions a0, a0+1, ... (flat,
// inside one channel) pair with "b" positions b0, b0+step, ... where along every axis
// b = a * stride + tap * dilation - pad_begin. Conv walks a = output, b = input;
// ConvTranspose walks a = input, b = output.
struct TapRun {
  int64_t tap, a0, b0, count;
  int64_t a_pos;  // a0's position along the last axis
};

// Odometer increment of a multi-index over `dims`; false after the last index.
bool next_index(Shape& idx, const Shape& dims) {
  for (size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

std::vector<TapRun> tap_runs(const ConvAttrs& g, const Shape& a_dims, const Shape& b_dims) {
  std::vector<TapRun> runs;
  int64_t last = g.nd - 1;
  Shape outer_dims(a_dims.begin(), a_dims.end() - 1);
  Shape a_idx(last, 0), k_idx(g.nd, 0);
  if (shape_numel(a_dims) == 0 || shape_numel(b_dims) == 0) return runs;
  do {
    int64_t tap = 0;
    do {
      int64_t a_row = 0, b_row = 0;
      bool inside = true;
      for (int64_t i = 0; i < last; ++i) {
        int64_t b = a_idx[i] * g.strides[i] + k_idx[i] * g.dilations[i] - g.pads[i];
        inside = inside && b >= 0 && b < b_dims[i];
        a_row = a_row * a_dims[i] + a_idx[i];
        b_row = b_row * b_dims[i] + b;
      }
      int64_t s = g.strides[last], off = k_idx[last] * g.dilations[last] - g.pads[last];
      // a in [lo, hi] keeps b = a*s + off inside [0, b_dims[last]).
      int64_t lo = std::max<int64_t>(0, ceil_div(-off, s));
      int64_t hi = std::min(a_dims[last] - 1, floor_div(b_dims[last] - 1 - off, s));
      if (inside && hi >= lo)
        runs.push_back({tap, a_row * a_dims[last] + lo, b_row * b_dims[last] + lo * s + off, hi - lo + 1, lo});
      ++tap;
    } while (next_index(k_idx, g.kernel));
  } while (next_index(a_idx, outer_dims));
  return runs;
}

// The parts of `runs` whose last-axis "a" positions lie in [lo, hi).
std::vector<TapRun> clip_runs(const std::vector<TapRun>& runs, int64_t lo, int64_t hi, int64_t stride) {
  std::vector<TapRun> out;
  for (const TapRun& r : runs) {
    int64_t begin = std::max(lo, r.a_pos), end = std::min(hi, r.a_pos + r.count);
    if (begin >= end) continue;
    int64_t skip = begin - r.a_pos;
    out.push_back({r.tap, r.a0 + skip, r.b0 + skip * stride, end - begin, begin});
  }
  return out;
}

// The geometry the reference loops need, from the actual tensors.
ConvAttrs ref_attrs(const RefCtx& c, bool transpose, Shape& out_spatial) {
  const Shape &x = c.input(0).shape, &w = c.input(1).shape;
  int64_t nd = static_cast<int64_t>(x.size()) - 2;
  ConvAttrs a = parse_attrs(c, nd, spatial(w), transpose);
  out_spatial = transpose ? conv_transpose_out_dims(c, a, spatial(x)) : conv_out_dims(c, a, spatial(x));
  return a;
}

void fill_bias(const RefCtx& c, double* y, int64_t n, int64_t channel) {
  double b = c.has_input(2) ? c.input(2).f[channel] : 0.0;
  std::fill(y, y + n, b);
}

// Up to kBlock input channels that feed one output row together, so each load and store of
// the output is shared by several multiply-adds (the loops are memory-bound otherwise).
// The full-block loop names its 4 operands one by one: arrays there measured 1.7x slower.
constexpr int kBlock = 4;
struct ChannelBlock {
  int size = 0;
  const double* x[kBlock];  // the channel's input row
  const double* w[kBlock];  // its kernel taps for this output channel
};

// y[yo + t*ys] += sum_j w_j[tap] * x_j[xo + t*xs] for every run. Conv walks a = output
// (ys = 1, xs = stride), ConvTranspose a = input (ys = stride, xs = 1).
void accumulate(double* y, const ChannelBlock& b, const std::vector<TapRun>& runs, bool transpose,
                int64_t stride) {
  int64_t ys = transpose ? stride : 1, xs = transpose ? 1 : stride;
  for (const TapRun& r : runs) {
    double* yr = y + (transpose ? r.b0 : r.a0);
    int64_t xo = transpose ? r.a0 : r.b0;
    if (b.size == kBlock) {
      const double *x0 = b.x[0] + xo, *x1 = b.x[1] + xo, *x2 = b.x[2] + xo, *x3 = b.x[3] + xo;
      double w0 = b.w[0][r.tap], w1 = b.w[1][r.tap], w2 = b.w[2][r.tap], w3 = b.w[3][r.tap];
      if (ys == 1 && xs == 1) {  // the common case: two outputs a step, which -O2 vectorises
        int64_t t = 0;
        for (; t + 2 <= r.count; t += 2) {
          double s0 = w0 * x0[t] + w1 * x1[t] + w2 * x2[t] + w3 * x3[t];
          double s1 = w0 * x0[t + 1] + w1 * x1[t + 1] + w2 * x2[t + 1] + w3 * x3[t + 1];
          yr[t] += s0;
          yr[t + 1] += s1;
        }
        for (; t < r.count; ++t) yr[t] += w0 * x0[t] + w1 * x1[t] + w2 * x2[t] + w3 * x3[t];
      } else
        for (int64_t t = 0; t < r.count; ++t)
          yr[t * ys] += w0 * x0[t * xs] + w1 * x1[t * xs] + w2 * x2[t * xs] + w3 * x3[t * xs];
      continue;
    }
    for (int j = 0; j < b.size; ++j) {
      const double* xj = b.x[j] + xo;
      double wj = b.w[j][r.tap];
      for (int64_t t = 0; t < r.count; ++t) yr[t * ys] += wj * xj[t * xs];
    }
  }
}

// Shared loop nest: Conv (W is [M, C/group, k...]) and ConvTranspose (W is [C, M/group, k...]).
void ref_conv_any(RefCtx& c, bool transpose) {
  const RefTensor &X = c.input(0), &W = c.input(1);
  Shape out_sp;
  ConvAttrs a = ref_attrs(c, transpose, out_sp);
  Shape in_sp = spatial(X.shape);
  int64_t n_batch = X.shape[0], cin = X.shape[1], cg = cin / a.group;
  int64_t m_out = transpose ? W.shape[1] * a.group : W.shape[0], mg = m_out / a.group;
  int64_t k_size = shape_numel(a.kernel), in_size = shape_numel(in_sp), out_size = shape_numel(out_sp);
  Shape out = {n_batch, m_out};
  out.insert(out.end(), out_sp.begin(), out_sp.end());
  RefTensor Y(X.dtype, out);
  std::vector<TapRun> runs = transpose ? tap_runs(a, in_sp, out_sp) : tap_runs(a, out_sp, in_sp);
  int64_t stride = a.strides[a.nd - 1], a_len = transpose ? in_sp.back() : out_sp.back();
  // Long rows are done in tiles along the last axis, all output channels per tile, so the
  // slice of X a tile reads stays in cache instead of streaming from memory per channel.
  constexpr int64_t kTile = 256;
  std::vector<std::vector<TapRun>> tiles;
  for (int64_t lo = 0; lo < a_len; lo += kTile) tiles.push_back(clip_runs(runs, lo, lo + kTile, stride));
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t m = 0; m < m_out; ++m) fill_bias(c, Y.f.data() + (n * m_out + m) * out_size, out_size, m);
    for (const std::vector<TapRun>& tile : tiles)
      for (int64_t m = 0; m < m_out; ++m) {
        int64_t g = m / mg;
        for (int64_t c0 = 0; c0 < cg; c0 += kBlock) {
          ChannelBlock b;
          for (int64_t ci = c0; ci < std::min(cg, c0 + kBlock); ++ci, ++b.size) {
            int64_t x_channel = g * cg + ci;
            int64_t w_row = transpose ? x_channel * mg + m % mg : m * cg + ci;
            b.x[b.size] = X.f.data() + (n * cin + x_channel) * in_size;
            b.w[b.size] = W.f.data() + w_row * k_size;
          }
          accumulate(Y.f.data() + (n * m_out + m) * out_size, b, tile, transpose, stride);
        }
      }
  }
  c.out[0] = std::move(Y);
}

// Conv's padding is zeros that take part in the products (as ONNX's reference pads the input):
// a weight of +-Inf or NaN meeting padding makes that output NaN. The tap runs above skip the
// padding, so this pass adds what those products give.
void pad_products(RefCtx& c, const ConvAttrs& a, const Shape& out_sp, RefTensor& Y) {
  const RefTensor &X = c.input(0), &W = c.input(1);
  if (std::all_of(W.f.begin(), W.f.end(), [](double w) { return std::isfinite(w); })) return;
  Shape in_sp = spatial(X.shape);
  int64_t n_batch = X.shape[0], cg = X.shape[1] / a.group, m_out = W.shape[0];
  int64_t k_size = shape_numel(a.kernel), out_size = shape_numel(out_sp);
  for (int64_t o = 0; o < out_size; ++o)
    for (int64_t k = 0; k < k_size; ++k) {
      bool padded = false;
      for (int64_t d = a.nd, oi = o, ki = k; d-- > 0; oi /= out_sp[d], ki /= a.kernel[d]) {
        int64_t at = (oi % out_sp[d]) * a.strides[d] - a.pads[d] + (ki % a.kernel[d]) * a.dilations[d];
        padded = padded || at < 0 || at >= in_sp[d];
      }
      if (!padded) continue;
      for (int64_t m = 0; m < m_out; ++m)
        for (int64_t ci = 0; ci < cg; ++ci)
          if (!std::isfinite(W.f[(m * cg + ci) * k_size + k]))
            for (int64_t n = 0; n < n_batch; ++n) Y.f[(n * m_out + m) * out_size + o] = NAN;
    }
}

void ref_conv(RefCtx& c) {
  ref_conv_any(c, false);
  Shape out_sp;
  ConvAttrs a = ref_attrs(c, false, out_sp);
  pad_products(c, a, out_sp, c.out[0]);
}
void ref_conv_transpose(RefCtx& c) { ref_conv_any(c, true); }

const std::vector<std::string> kConvAttrs = {"auto_pad", "dilations", "group", "kernel_shape",
                                             "pads", "strides"};
const std::vector<std::string> kConvTransposeAttrs = {
    "auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads",
    "strides"};

const OpDef kOps[] = {
    {"Conv", 2, 3, 1, 1, kConvAttrs, infer_conv, ref_conv},
    {"ConvTranspose", 2, 3, 1, 1, kConvTransposeAttrs, infer_conv_transpose, ref_conv_transpose},
};

}  // namespace

static ConvGeometry geometry_of(const ConvAttrs& a, Shape out_spatial) {
  ConvGeometry g;
  g.out_spatial = std::move(out_spatial);
  g.group = a.group;
  g.kernel = a.kernel;
  g.strides = a.strides;
  g.dilations = a.dilations;
  g.pads_begin.assign(a.pads.begin(), a.pads.begin() + a.nd);
  g.pads_end.assign(a.pads.begin() + a.nd, a.pads.end());
  g.output_padding = a.output_padding;
  return g;
}

ConvGeometry conv_geometry(const OpCtx& c, const Shape& x, const Shape& w, bool transpose) {
  int64_t nd = static_cast<int64_t>(x.size()) - 2;
  ConvAttrs a = parse_attrs(c, nd, spatial(w), transpose);
  return geometry_of(a, transpose ? conv_transpose_out_dims(c, a, spatial(x)) : conv_out_dims(c, a, spatial(x)));
}

// Pools: kernel_shape is required and there are no weights. ceil_mode counts a last partial
// window, unless it would start in the end padding (ONNX's rule, as PyTorch's).
ConvGeometry pool_geometry(const OpCtx& c, const Shape& x) {
  int64_t nd = static_cast<int64_t>(x.size()) - 2;
  if (nd < 1) c.fail("input must be [N, C, D1, ...], got rank " + std::to_string(x.size()));
  c.attr_required("kernel_shape");
  ConvAttrs a = parse_attrs(c, nd, Shape(nd, -1), false);
  int64_t ceil_mode = c.attr_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) c.fail("ceil_mode must be 0 or 1, got " + std::to_string(ceil_mode));
  a.ceil_mode = ceil_mode == 1;
  for (int64_t i = 0; i < nd; ++i)
    if (a.pads[i] >= dilated(a, i) || a.pads[i + nd] >= dilated(a, i))
      c.fail("pads " + shape_str(a.pads) + " must be smaller than the kernel " + shape_str(a.kernel) + " on each axis");
  return geometry_of(a, conv_out_dims(c, a, spatial(x)));
}

std::span<const OpDef> conv_ops() { return kOps; }

}  // namespace lockstep
