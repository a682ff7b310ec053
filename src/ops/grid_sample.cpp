// GridSample: each output point reads X where the grid puts it (normalised to [-1, 1], x
// first), by nearest pixel, linear or Keys cubic (a = -0.75) taps, with zeros, border or
// reflection padding. A coordinate that is NaN after padding makes the point NaN.
#include "ops/grid_sample.h"

#include <array>
#include <cmath>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

GridSampleAttrs grid_sample_attrs(const OpCtx& c) {
  GridSampleAttrs a;
  std::string mode = c.attr_string("mode", c.opset < 20 ? "bilinear" : "linear");
  if (mode == "nearest") a.mode = GridSampleAttrs::Nearest;
  else if (mode == "bilinear" || mode == "linear") a.mode = GridSampleAttrs::Linear;
  else if (mode == "bicubic" || mode == "cubic") a.mode = GridSampleAttrs::Cubic;
  else c.fail("mode '" + mode + "' is not one of nearest, linear (bilinear), cubic (bicubic)");
  std::string pad = c.attr_string("padding_mode", "zeros");
  if (pad == "zeros") a.padding = GridSampleAttrs::Zeros;
  else if (pad == "border") a.padding = GridSampleAttrs::Border;
  else if (pad == "reflection") a.padding = GridSampleAttrs::Reflection;
  else c.fail("padding_mode '" + pad + "' is not one of zeros, border, reflection");
  int64_t align = c.attr_int("align_corners", 0);
  if (align != 0 && align != 1) c.fail("align_corners must be 0 or 1, got " + std::to_string(align));
  a.align = align == 1;
  return a;
}

void check_grid_sample(const OpCtx& c, const Shape& x, const Shape& grid) {
  size_t k = x.size() < 2 ? 0 : x.size() - 2;
  if (x.size() < 3 || (c.opset < 20 && x.size() != 4))
    c.fail("X must be [N, C, H, W]" + std::string(c.opset < 20 ? "" : " or have more spatial axes") + ", got " +
           shape_str(x));
  if (grid.size() != k + 2 || (grid.back() >= 0 && grid.back() != static_cast<int64_t>(k)))
    c.fail("grid must be [N, " + std::to_string(k) + " output axes, " + std::to_string(k) + "], got " +
           shape_str(grid));
  if (grid[0] >= 0 && x[0] >= 0 && grid[0] != x[0]) c.fail("the batches of X and grid differ");
  for (size_t d = 2; d < x.size(); ++d)
    if (x[d] == 0) c.fail("X has an empty spatial axis: " + shape_str(x));
}

namespace {

void infer_grid_sample(InferCtx& c) {
  require_types(c, 0, {{16, kFloat}, {20, kFloat | kBf16}});
  require_types(c, 1, {{16, kFloat}, {20, kFloat | kBf16}});
  grid_sample_attrs(c);
  const TypeInfo &x = c.input(0), &grid = c.input(1);
  if (!x.rank_known || !grid.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  check_grid_sample(c, x.dims, grid.dims);
  Shape dims = {x.dims[0], x.dims[1]};
  dims.insert(dims.end(), grid.dims.begin() + 1, grid.dims.end() - 1);
  c.set_output(0, x.dtype, dims);
}

// The sampling of one output point, in the coordinate type (float or double).
template <class W>
struct Sampler {
  const GridSampleAttrs& a;
  const Shape& dims;  // X's spatial dims

  W reflect(W v, W lo, W hi) const {
    W range = hi - lo;
    if (range == 0) return lo;
    bool below = v < lo;
    W dx = below ? lo - v : v - hi;
    W n = std::floor(dx / range);
    W r = dx - n * range;
    bool even = std::fmod(n, W(2)) == 0;
    return below == even ? lo + r : hi - r;
  }

  // Axis d's coordinate from its normalised value g, padded; NaN stays NaN.
  W coordinate(W g, size_t d) const {
    W len = static_cast<W>(dims[d]);
    W x = a.align ? (g + W(1)) / W(2) * (len - W(1)) : ((g + W(1)) * len - W(1)) / W(2);
    if (a.mode == GridSampleAttrs::Nearest) x = std::nearbyint(x);
    W lo = static_cast<W>(a.lo(dims[d])), hi = static_cast<W>(a.hi(dims[d]));
    if (x < lo || x > hi) {
      if (a.padding == GridSampleAttrs::Border) x = std::min(std::max(x, W(0)), len - W(1));
      else if (a.padding == GridSampleAttrs::Reflection) x = reflect(x, lo, hi);
    }
    return x;
  }

  // Pixel index i of axis d after padding, or -1 (zeros padding, outside).
  int64_t pixel(int64_t i, size_t d) const {
    int64_t len = dims[d];
    if (a.padding == GridSampleAttrs::Zeros) return i >= 0 && i < len ? i : -1;
    if (a.padding == GridSampleAttrs::Border) return std::min(std::max<int64_t>(i, 0), len - 1);
    return static_cast<int64_t>(reflect(static_cast<W>(i), static_cast<W>(a.lo(len)), static_cast<W>(a.hi(len))));
  }
};

// Keys cubic weights (a = -0.75) of the taps at t + 1, t, 1 - t, 2 - t.
void cubic_weights(double t, double w[4]) {
  const double A = -0.75;
  auto near = [&](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto far = [&](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  w[0] = far(t + 1), w[1] = near(t), w[2] = near(1 - t), w[3] = far(2 - t);
}

template <class W>
double sample(const RefTensor& x, int64_t plane_at, const Shape& dims, const GridSampleAttrs& a,
              const std::vector<double>& g) {
  Sampler<W> s{a, dims};
  size_t k = dims.size();
  std::vector<int64_t> first(k);
  std::vector<std::array<double, 4>> w(k);
  for (size_t d = 0; d < k; ++d) {
    W xc = s.coordinate(static_cast<W>(g[k - 1 - d]), d);
    if (std::isnan(xc)) return NAN;
    xc = std::min(std::max(xc, W(-8)), static_cast<W>(dims[d]) + W(8));
    W x0 = std::floor(xc);  // nearest: xc is whole already
    double t = static_cast<double>(xc - x0);
    first[d] = static_cast<int64_t>(x0) - (a.mode == GridSampleAttrs::Cubic ? 1 : 0);
    if (a.mode == GridSampleAttrs::Nearest) w[d] = {1, 0, 0, 0};
    else if (a.mode == GridSampleAttrs::Linear) w[d] = {1 - t, t, 0, 0};
    else cubic_weights(t, w[d].data());
  }
  int taps = a.taps();
  int64_t combos = 1;
  for (size_t d = 0; d < k; ++d) combos *= taps;
  std::vector<int64_t> strides = shape_strides(dims);
  double sum = 0;
  for (int64_t combo = 0; combo < combos; ++combo) {
    double weight = 1;
    int64_t at = 0, rest = combo;
    bool outside = false;
    for (size_t d = k; d-- > 0;) {
      int tap = static_cast<int>(rest % taps);
      rest /= taps;
      weight *= w[d][tap];
      int64_t i = s.pixel(first[d] + tap, d);
      outside |= i < 0;
      at += i * strides[d];
    }
    if (outside) continue;
    if (taps == 1) return x.f[plane_at + at];  // nearest: the pixel itself (its sign of zero too)
    sum += weight * x.f[plane_at + at];
  }
  return sum;
}

void ref_grid_sample(RefCtx& c) {
  const RefTensor &x = c.input(0), &grid = c.input(1);
  check_grid_sample(c, x.shape, grid.shape);
  GridSampleAttrs a = grid_sample_attrs(c);
  Shape dims(x.shape.begin() + 2, x.shape.end()), out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), grid.shape.begin() + 1, grid.shape.end() - 1);
  size_t k = dims.size();
  int64_t points = shape_numel(Shape(out.begin() + 2, out.end())), plane = shape_numel(dims);
  RefTensor y(x.dtype, out);
  std::vector<double> g(k);
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t ch = 0; ch < out[1]; ++ch)
      for (int64_t p = 0; p < points; ++p) {
        for (size_t j = 0; j < k; ++j) g[j] = grid.f[(n * points + p) * k + j];
        int64_t plane_at = (n * out[1] + ch) * plane;
        y.f[(n * out[1] + ch) * points + p] =
            x.dtype == DType::f64 ? sample<double>(x, plane_at, dims, a, g) : sample<float>(x, plane_at, dims, a, g);
      }
  c.out[0] = std::move(y);
}

const OpDef kOps[] = {
    {"GridSample", 2, 2, 1, 1, {"align_corners", "mode", "padding_mode"}, infer_grid_sample, ref_grid_sample},
};

}  // namespace

std::span<const OpDef> grid_sample_ops() { return kOps; }

}  // namespace lockstep
