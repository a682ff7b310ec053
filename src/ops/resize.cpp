// Resize (opsets 10 to 19) and Upsample (7 to 9): nearest, linear and cubic interpolation with
// every coordinate transform, antialiasing, exclude_outside, crops with an extrapolation value,
// axes and keep_aspect_ratio_policy, after ONNX's definition: each axis maps an output
// coordinate to an input one, and the kernel's taps around it are edge-clamped.
#include "ops/resize.h"

#include <algorithm>
#include <cmath>

#include "core/memory.h"
#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

bool upsample(const OpCtx& c) { return c.node.op_type == "Upsample"; }

// Attributes, with the defaults of the node's opset (before 11: asymmetric, nearest floors).
struct ResizeAttrs {
  std::string mode, transform, nearest, policy;
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false, antialias = false;
  std::vector<int64_t> axes;  // all of them when the node names none
};

std::string one_of(const OpCtx& c, const char* key, const std::string& def, std::initializer_list<const char*> ok) {
  std::string v = c.attr_string(key, def);
  std::string list;
  for (const char* o : ok) {
    if (v == o) return v;
    list += std::string(list.empty() ? "" : ", ") + o;
  }
  c.fail(std::string(key) + " '" + v + "' is not one of " + list);
}

ResizeAttrs resize_attrs(const OpCtx& c, int64_t rank) {
  ResizeAttrs a;
  bool old = upsample(c) || c.opset < 11;
  a.mode = old ? one_of(c, "mode", "nearest", {"nearest", "linear"})
               : one_of(c, "mode", "nearest", {"nearest", "linear", "cubic"});
  if (old) {
    a.transform = "asymmetric";
    a.nearest = "floor";
  } else {
    if (c.opset < 13)
      a.transform = one_of(c, "coordinate_transformation_mode", "half_pixel",
                           {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                            "tf_crop_and_resize"});
    else if (c.opset < 19)
      a.transform = one_of(c, "coordinate_transformation_mode", "half_pixel",
                           {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"});
    else
      a.transform = one_of(c, "coordinate_transformation_mode", "half_pixel",
                           {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                            "tf_crop_and_resize"});
    a.nearest =
        one_of(c, "nearest_mode", "round_prefer_floor", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
    a.cubic_a = c.attr_float("cubic_coeff_a", -0.75);
    a.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
    a.extrapolation = c.attr_float("extrapolation_value", 0);
  }
  if (c.opset < 18 || upsample(c)) {
    for (const char* k : {"antialias", "axes", "keep_aspect_ratio_policy"})
      if (c.has_attr(k)) c.fail(std::string(k) + " exists only from opset 18");
  }
  a.antialias = c.attr_int("antialias", 0) != 0;
  if (a.antialias && a.mode == "nearest") c.fail("antialias applies to linear and cubic modes only");
  a.policy = one_of(c, "keep_aspect_ratio_policy", "stretch", {"stretch", "not_larger", "not_smaller"});
  std::vector<int64_t> axes = c.attr_ints("axes", {});
  for (int64_t ax : axes) {
    int64_t k = normalize_axis(ax, rank);
    if (k < 0) c.fail("axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(rank));
    if (std::count(a.axes.begin(), a.axes.end(), k)) c.fail("axis " + std::to_string(ax) + " is repeated");
    a.axes.push_back(k);
  }
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k) a.axes.push_back(k);
  return a;
}

// Per input axis: the scale and the output length.
struct AxisScale {
  double scale = 1;
  int64_t out = 0;
  double roi_start = 0, roi_end = 1;
};

// Scales or sizes (one of them non-empty), and the roi for crops. nullopt while not known.
std::optional<std::vector<AxisScale>> axis_scales(const OpCtx& c, const ResizeAttrs& a, const Shape& in,
                                                  const RefTensor* roi, const RefTensor* scales,
                                                  const RefTensor* sizes) {
  size_t rank = in.size(), n = a.axes.size();
  std::vector<AxisScale> s(rank);
  for (size_t k = 0; k < rank; ++k) s[k].out = in[k];
  std::vector<double> given;
  bool from_attr = upsample(c) && c.opset < 9;
  if (from_attr) given = c.attr_floats("scales", {});
  bool have_scales = from_attr || (scales && scales->numel() > 0);
  bool have_sizes = sizes && sizes->numel() > 0;
  ResizeSlots slots = resize_slots(c);
  bool scales_pending = !from_attr && slots.scales >= 0 && c.has_input(slots.scales) && !scales;
  bool sizes_pending = slots.sizes >= 0 && c.has_input(slots.sizes) && !sizes;
  if (scales_pending || sizes_pending) return std::nullopt;
  if (have_scales == have_sizes)
    c.fail(have_scales ? "scales and sizes are both given: give one" : "neither scales nor sizes is given");
  if (have_scales && !from_attr)
    for (int64_t k = 0; k < scales->numel(); ++k) given.push_back(scales->f[k]);
  int64_t count = have_scales ? static_cast<int64_t>(given.size()) : sizes->numel();
  if (count != static_cast<int64_t>(n))
    c.fail(std::string(have_scales ? "scales" : "sizes") + " has " + std::to_string(count) + " values for " +
           std::to_string(n) + " axes");
  for (size_t j = 0; j < n; ++j)
    if (in[a.axes[j]] == 0) c.fail("axis " + std::to_string(a.axes[j]) + " is empty: there is nothing to resize");
  if (have_scales) {
    for (size_t j = 0; j < n; ++j) {
      double sc = given[j];
      if (!(sc > 0) || !std::isfinite(sc)) c.fail("scale " + std::to_string(sc) + " is not a positive number");
      AxisScale& x = s[a.axes[j]];
      x.scale = sc;
      double len = std::floor(sc * static_cast<double>(in[a.axes[j]]));
      if (len > 0x1p62)
        c.fail("scale " + std::to_string(sc) + " makes axis " + std::to_string(a.axes[j]) + " too long");
      x.out = static_cast<int64_t>(len);
    }
  } else {
    std::vector<double> ratio(n);
    for (size_t j = 0; j < n; ++j) {
      if (sizes->i[j] < 0) c.fail("size " + std::to_string(sizes->i[j]) + " is negative");
      ratio[j] = static_cast<double>(sizes->i[j]) / static_cast<double>(in[a.axes[j]]);
    }
    bool keep = a.policy != "stretch";
    double one = a.policy == "not_larger" ? *std::min_element(ratio.begin(), ratio.end())
                                          : *std::max_element(ratio.begin(), ratio.end());
    for (size_t j = 0; j < n; ++j) {
      AxisScale& x = s[a.axes[j]];
      x.scale = keep ? one : ratio[j];
      // Kept aspect: the length rounds half up, as the spec's formula does.
      x.out = keep ? static_cast<int64_t>(one * static_cast<double>(in[a.axes[j]]) + 0.5) : sizes->i[j];
    }
  }
  if (a.transform == "tf_crop_and_resize") {
    if (!roi) {
      if (slots.roi >= 0 && c.has_input(slots.roi)) return std::nullopt;
      c.fail("tf_crop_and_resize needs the roi input");
    }
    if (roi->numel() != static_cast<int64_t>(2 * n))
      c.fail("roi has " + std::to_string(roi->numel()) + " values, not 2 per axis (" + std::to_string(2 * n) + ")");
    for (size_t j = 0; j < n; ++j) {
      s[a.axes[j]].roi_start = roi->f[j];
      s[a.axes[j]].roi_end = roi->f[n + j];
    }
  }
  return s;
}

// The input coordinate of output coordinate x, after the spec's formulas (the output length
// there is scale * in, not rounded); nullopt where a crop falls outside the input.
std::optional<double> source_coordinate(const ResizeAttrs& a, const AxisScale& s, int64_t in_len, int64_t x) {
  double in = static_cast<double>(in_len), out = s.scale * in, xd = static_cast<double>(x);
  const std::string& m = a.transform;
  if (m == "align_corners") return out == 1 ? 0.0 : xd * (in - 1) / (out - 1);
  if (m == "asymmetric") return xd / s.scale;
  if (m == "tf_half_pixel_for_nn") return (xd + 0.5) / s.scale;
  if (m == "pytorch_half_pixel") return out == 1 ? -0.5 : (xd + 0.5) / s.scale - 0.5;
  if (m == "half_pixel_symmetric") {
    double offset = in / 2 * (1 - static_cast<double>(s.out) / out);
    return offset + (xd + 0.5) / s.scale - 0.5;
  }
  if (m == "tf_crop_and_resize") {
    double span = s.roi_end - s.roi_start;
    double v = (out == 1 ? span * (in - 1) / 2 : xd * span * (in - 1) / (out - 1)) + s.roi_start * (in - 1);
    if (v < 0 || v > in - 1) return std::nullopt;
    return v;
  }
  return (xd + 0.5) / s.scale - 0.5;  // half_pixel
}

double cubic(double x, double A) {
  x = std::fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0;
}

// The kernel's weights for taps floor - n/2 + 1 ... floor + n/2 at distance ratio in (0, 1].
std::vector<double> coefficients(const ResizeAttrs& a, double ratio, double scale) {
  if (a.mode == "nearest") {
    bool right = ratio == 1 || a.nearest == "ceil" || (a.nearest == "round_prefer_floor" && ratio > 0.5) ||
                 (a.nearest == "round_prefer_ceil" && ratio >= 0.5);
    return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
  }
  bool cub = a.mode == "cubic";
  double s = a.antialias ? std::min(scale, 1.0) : 1.0;
  // Antialiased, the kernel stretches by 1 / scale: more taps, normalised to sum to 1.
  int64_t start = cub ? static_cast<int64_t>(std::floor(-2 / s)) + 1 : static_cast<int64_t>(std::floor(-1 / s)) + 1;
  std::vector<double> w;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    double x = s * (static_cast<double>(i) - ratio);
    w.push_back(cub ? cubic(x, a.cubic_a) : std::clamp(1 - std::fabs(x), 0.0, 1.0));
    sum += w.back();
  }
  if (a.antialias)
    for (double& v : w) v /= sum;
  return w;
}

// Taps per output coordinate before the zero weights are dropped (antialiasing widens them).
double footprint(const ResizeAttrs& a, double scale) {
  if (a.mode == "nearest") return 2;
  double s = a.antialias ? std::min(scale, 1.0) : 1.0, reach = a.mode == "cubic" ? 2 : 1;
  return 2 * std::ceil(reach / s);
}

ResizeAxis plan_axis(const ResizeAttrs& a, const AxisScale& s, int64_t in) {
  ResizeAxis ax;
  ax.out = s.out;
  std::vector<std::vector<std::pair<int64_t, double>>> taps(s.out);
  for (int64_t x = 0; x < s.out; ++x) {
    std::optional<double> src = source_coordinate(a, s, in, x);
    if (!src) {
      taps[x] = {{-1, 0.0}};
      continue;
    }
    double f = std::floor(*src), ratio = *src - f;
    if (ratio == 0) f -= 1, ratio = 1;  // an integer coordinate prefers the pixel on its left
    std::vector<double> w = coefficients(a, ratio, s.scale);
    int64_t first = static_cast<int64_t>(f) - static_cast<int64_t>(w.size()) / 2 + 1;
    if (a.exclude_outside) {
      double sum = 0;
      for (size_t j = 0; j < w.size(); ++j) {
        int64_t i = first + static_cast<int64_t>(j);
        if (i < 0 || i >= in) w[j] = 0;
        sum += w[j];
      }
      for (double& v : w) v /= sum;
    }
    for (size_t j = 0; j < w.size(); ++j)
      if (w[j] != 0) taps[x].push_back({std::clamp<int64_t>(first + static_cast<int64_t>(j), 0, in - 1), w[j]});
  }
  for (const auto& t : taps) ax.taps = std::max<int64_t>(ax.taps, static_cast<int64_t>(t.size()));
  ax.identity = s.out == in;
  for (int64_t x = 0; x < s.out; ++x) {
    const auto& t = taps[x];
    ax.count.push_back(static_cast<int64_t>(t.size()));
    ax.identity = ax.identity && t.size() == 1 && t[0].first == x && t[0].second == 1;
    for (int64_t j = 0; j < ax.taps; ++j) {
      bool used = j < static_cast<int64_t>(t.size());
      ax.index.push_back(used ? t[j].first : t.empty() ? 0 : t.back().first);
      ax.weight.push_back(used ? t[j].second : 0.0);
    }
  }
  return ax;
}

void infer_resize(InferCtx& c) {
  TypeSet all = kNumeric | kBool;
  if (upsample(c)) require_types(c, 0, {{7, all}});
  else require_types(c, 0, {{10, all}});
  const TypeInfo& x = c.input(0);
  ResizeSlots s = resize_slots(c);
  if (s.scales >= 0 && c.has_input(s.scales)) require_types(c, s.scales, {{7, types({DType::f32})}});
  if (s.sizes >= 0 && c.has_input(s.sizes)) require_types(c, s.sizes, {{11, types({DType::i64})}});
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  ResizeAttrs a = resize_attrs(c, static_cast<int64_t>(x.dims.size()));
  if (a.mode != "nearest" && !(kFloat & types({x.dtype})) && x.dtype != DType::bf16)
    c.fail(a.mode + " interpolation of " + dtype_name(x.dtype) + " is not supported (nearest picks any type)");
  auto value = [&](int k) { return k >= 0 && c.has_input(k) ? c.value(k) : nullptr; };
  bool known = x.fully_known();
  auto dims = known ? resize_out_dims(c, x.dims, value(s.roi), value(s.scales), value(s.sizes)) : std::nullopt;
  if (dims) return c.set_output(0, x.dtype, *dims);
  c.set_output(0, x.dtype, Shape(x.dims.size(), -1));
}

// Odometer over a multi-index of `dims`.
void step(std::vector<int64_t>& idx, const Shape& dims) {
  for (size_t a = dims.size(); a-- > 0;) {
    if (++idx[a] < dims[a]) return;
    idx[a] = 0;
  }
}

void ref_resize(RefCtx& c) {
  const RefTensor& x = c.input(0);
  ResizeSlots s = resize_slots(c);
  auto value = [&](int k) { return k >= 0 && k < static_cast<int>(c.in.size()) ? c.in[k] : nullptr; };
  ResizePlan p = resize_plan(c, x.shape, value(s.roi), value(s.scales), value(s.sizes));
  size_t r = x.shape.size();
  Shape out;
  for (const ResizeAxis& ax : p.axes) out.push_back(ax.out);
  RefTensor y(x.dtype, out);
  std::vector<int64_t> strides = shape_strides(x.shape), o(r, 0), j(r, 0);
  // Interpolating along no axis is a copy (no sum: a -0 stays -0), as the lowering prints it.
  bool every_axis_identity = std::all_of(p.axes.begin(), p.axes.end(), [](const ResizeAxis& a) { return a.identity; });
  for (int64_t e = 0; e < y.numel(); ++e, step(o, out)) {
    bool inside = true;
    for (size_t a = 0; a < r; ++a) inside = inside && p.axes[a].index[o[a] * p.axes[a].taps] >= 0;
    if (!inside) {
      y.set(e, p.extrapolation);
      continue;
    }
    auto tap = [&](size_t a) { return o[a] * p.axes[a].taps + j[a]; };
    if (!p.weighted || every_axis_identity) {
      int64_t at = 0;
      for (size_t a = 0; a < r; ++a) at += p.axes[a].index[tap(a)] * strides[a];
      y.copy_elem(e, x, at);
      continue;
    }
    // Taps outer axis to inner, each the product of the axes' weights times the value.
    double sum = 0;
    std::fill(j.begin(), j.end(), 0);
    for (bool more = true; more;) {
      double w = 1;
      int64_t at = 0;
      for (size_t a = 0; a < r; ++a) {
        w *= p.axes[a].weight[tap(a)];
        at += p.axes[a].index[tap(a)] * strides[a];
      }
      sum += w * x.f[at];
      more = false;
      for (size_t a = r; a-- > 0 && !more;) {
        if (++j[a] < p.axes[a].count[o[a]]) more = true;
        else j[a] = 0;
      }
    }
    y.f[e] = sum;
  }
  c.out[0] = std::move(y);
}

const OpDef kOps[] = {
    {"Resize",
     1,
     4,
     1,
     1,
     {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
      "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"},
     infer_resize,
     ref_resize},
    {"Upsample", 1, 2, 1, 1, {"mode", "scales"}, infer_resize, ref_resize},
};

}  // namespace

ResizeSlots resize_slots(const OpCtx& c) {
  if (upsample(c)) return c.opset < 9 ? ResizeSlots{} : ResizeSlots{-1, 1, -1};
  if (c.opset < 11) return {-1, 1, -1};
  return {1, 2, 3};
}

std::optional<Shape> resize_out_dims(const OpCtx& c, const Shape& in, const RefTensor* roi, const RefTensor* scales,
                                     const RefTensor* sizes) {
  ResizeAttrs a = resize_attrs(c, static_cast<int64_t>(in.size()));
  auto s = axis_scales(c, a, in, roi, scales, sizes);
  if (!s) return std::nullopt;
  Shape out;
  for (const AxisScale& x : *s) out.push_back(x.out);
  return out;
}

ResizePlan resize_plan(const OpCtx& c, const Shape& in, const RefTensor* roi, const RefTensor* scales,
                       const RefTensor* sizes) {
  ResizeAttrs a = resize_attrs(c, static_cast<int64_t>(in.size()));
  auto s = axis_scales(c, a, in, roi, scales, sizes);
  if (!s) c.fail("scales, sizes and roi must be known");
  ResizePlan p;
  p.weighted = a.mode != "nearest";
  p.extrapolation = a.extrapolation;
  for (size_t k = 0; k < in.size(); ++k) {
    // A tiny antialiasing scale or a huge length asks for more taps than memory holds: refuse first.
    double taps = footprint(a, (*s)[k].scale);
    std::string what = "Resize's taps for axis " + std::to_string(k);
    if (taps > 0x1p40) c.fail(what + ": the scale is too small to antialias");
    require_memory(checked_bytes(checked_numel({(*s)[k].out, static_cast<int64_t>(taps)}), 24), what);
    p.axes.push_back(plan_axis(a, (*s)[k], in[k]));
  }
  return p;
}

std::span<const OpDef> resize_ops() { return kOps; }

}  // namespace lockstep
