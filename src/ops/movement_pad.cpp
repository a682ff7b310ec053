// Pad: constant / reflect / edge / wrap; CenterCropPad. Negative pads crop; the cropped tensor is then padded
// (as ONNX Runtime does, which matters for wrap and reflect next to a crop).
#include <algorithm>

#include "ops/elementwise.h"
#include "ops/movement_common.h"

namespace lockstep {

enum class PadMode { Constant, Reflect, Edge, Wrap };

static PadMode pad_mode(const OpCtx& c) {
  std::string m = c.attr_string("mode", "constant");
  if (m == "constant") return PadMode::Constant;
  if (m == "reflect") return PadMode::Reflect;
  if (m == "edge") return PadMode::Edge;
  if (m == "wrap") {
    if (c.opset < 19) c.fail("mode 'wrap' needs opset 19, the model imports " + std::to_string(c.opset));
    return PadMode::Wrap;
  }
  c.fail("mode '" + m + "' is not one of constant, reflect, edge, wrap");
}

// Begin and end pads for every axis of a rank-`rank` input, from the pads list (all
// begins, then all ends) over `axes` (all axes when absent).
struct AxisPads {
  std::vector<int64_t> begin, end;
};

static AxisPads full_pads(const OpCtx& c, const std::vector<int64_t>& pads,
                          const std::optional<std::vector<int64_t>>& axes_given, int64_t rank) {
  std::vector<int64_t> axes;
  if (axes_given) axes = normalize_axes(c, *axes_given, rank, "axes");
  else
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  size_t n = axes.size();
  if (pads.size() != 2 * n)
    c.fail("pads " + ints_str(pads) + " must have 2 entries per padded axis (" +
           std::to_string(n) + " axes)");
  AxisPads p{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 0)};
  for (size_t i = 0; i < n; ++i) {
    p.begin[axes[i]] = pads[i];
    p.end[axes[i]] = pads[i + n];
  }
  return p;
}

static Shape padded_dims(const OpCtx& c, const Shape& in, const AxisPads& p) {
  Shape out(in.size());
  for (size_t a = 0; a < in.size(); ++a) {
    if (in[a] < 0) {
      out[a] = -1;
      continue;
    }
    // Crops (negative pads) apply first, so together they may not exceed the axis.
    if (__int128{in[a]} + std::min<int64_t>(p.begin[a], 0) + std::min<int64_t>(p.end[a], 0) < 0)
      c.fail("pads " + std::to_string(p.begin[a]) + "," + std::to_string(p.end[a]) +
             " remove more than the " + std::to_string(in[a]) + " elements of axis " +
             std::to_string(a));
    out[a] = checked_dim(c, __int128{in[a]} + p.begin[a] + p.end[a]);
  }
  return out;
}

void infer_pad(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  pad_mode(c);
  IntsParam pads = ints_param(c, "pads", 1, 11);
  if (!pads.present) c.fail(c.opset < 11 ? "required attribute 'pads' is missing" : "input 'pads' is required");
  if (c.opset < 11 && c.num_inputs() > 1) c.fail("inputs other than data need opset 11");
  if (c.opset < 18 && c.has_input(3)) c.fail("input 'axes' needs opset 18");
  if (c.opset >= 11 && c.has_attr("value"))
    c.fail("attribute 'value' is input 'constant_value' from opset 11");
  if (c.has_input(2)) c.require_same_dtype(0, 2);
  std::optional<std::vector<int64_t>> axes = known_ints(c, 3, "axes");
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  if (!pads.v || (c.has_input(3) && !axes)) return c.set_output(0, x.dtype, Shape(rank, -1));
  c.set_output(0, x.dtype, padded_dims(c, x.dims, full_pads(c, *pads.v, axes, rank)));
}

// Source coordinate for output coordinate o on one axis, or -1 for the constant.
// `lo`..`lo+n` is the part of the input that survives cropping.
static int64_t pad_source(PadMode mode, int64_t o, int64_t begin, int64_t lo, int64_t n) {
  int64_t j = o - std::max<int64_t>(begin, 0);  // coordinate in the cropped input
  if (j >= 0 && j < n) return lo + j;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return lo + std::clamp<int64_t>(j, 0, n - 1);
    case PadMode::Wrap: return lo + ((j % n) + n) % n;
    case PadMode::Reflect: {
      if (n == 1) return lo;
      int64_t period = 2 * (n - 1), m = ((j % period) + period) % period;
      return lo + (m < n ? m : period - m);
    }
  }
  return -1;
}

// The fill value: input 2 from opset 11 (0 when omitted), the `value` attribute before.
static RefTensor pad_fill(const RefCtx& c, DType t) {
  RefTensor v(t, {});
  if (c.opset < 11) {
    v.set(0, c.attr_float("value", 0.0));
  } else if (c.has_input(2)) {
    const RefTensor& given = c.input(2);
    if (given.numel() != 1 || given.dtype != t)
      c.fail("constant_value must be one " + std::string(dtype_name(t)) + " value, got " +
             type_of(given).str());
    v.copy_elem(0, given, 0);
  }
  return v;
}

// Per-axis tables of source coordinates, then one walk over the output.
void ref_pad(RefCtx& c) {
  const RefTensor& x = c.input(0);
  PadMode mode = pad_mode(c);
  auto pads = ints_param(c, "pads", 1, 11);
  if (!pads) c.fail("pads are required");
  auto axes = c.has_input(3) ? std::optional(ref_ints(c, 3, "axes")) : std::nullopt;
  int64_t rank = static_cast<int64_t>(x.shape.size());
  AxisPads p = full_pads(c, *pads, axes, rank);
  Shape out = padded_dims(c, x.shape, p);
  std::vector<std::vector<int64_t>> src(rank);
  for (int64_t a = 0; a < rank; ++a) {
    int64_t lo = std::max<int64_t>(-p.begin[a], 0);
    int64_t n = x.shape[a] - lo - std::max<int64_t>(-p.end[a], 0);
    if (n == 0 && mode != PadMode::Constant && out[a] > 0)
      c.fail("cannot pad an empty axis " + std::to_string(a) + " in this mode");
    for (int64_t o = 0; o < out[a]; ++o) src[a].push_back(pad_source(mode, o, p.begin[a], lo, n));
  }
  RefTensor fill = pad_fill(c, x.dtype);
  c.out[0] = RefTensor(x.dtype, out);
  std::vector<int64_t> strides = shape_strides(x.shape), idx(rank, 0);
  for (int64_t k = 0, total = shape_numel(out); k < total; ++k) {
    int64_t s = 0;
    for (int64_t a = 0; a < rank && s >= 0; ++a)
      s = src[a][idx[a]] < 0 ? -1 : s + src[a][idx[a]] * strides[a];
    if (s < 0) c.out[0].copy_elem(k, fill, 0);
    else c.out[0].copy_elem(k, x, s);
    for (int64_t a = rank; a-- > 0;) {
      if (++idx[a] < out[a]) break;
      idx[a] = 0;
    }
  }
}

// ---- CenterCropPad ----

// The axes (default all) and the target length of each, checked against the input's rank.
static std::vector<int64_t> crop_axes(const OpCtx& c, int64_t rank, size_t count) {
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (!c.has_attr("axes"))
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  axes = normalize_axes(c, axes, rank, "axes");
  if (axes.size() != count)
    c.fail("shape has " + std::to_string(count) + " lengths for " + std::to_string(axes.size()) + " axes");
  return axes;
}

void infer_center_crop_pad(InferCtx& c) {
  ew::require_op_exists(c, {{18, 0}});
  const TypeInfo& x = c.input(0);
  require_int_list(c, 1, "shape");
  std::optional<std::vector<int64_t>> shape = known_ints(c, 1, "shape");
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  Shape dims = x.dims;
  if (!shape) {
    std::vector<int64_t> axes = c.attr_ints("axes");
    if (!c.has_attr("axes")) std::fill(dims.begin(), dims.end(), -1);
    for (int64_t a : normalize_axes(c, axes, static_cast<int64_t>(dims.size()), "axes")) dims[a] = -1;
    return c.set_output(0, x.dtype, dims);
  }
  std::vector<int64_t> axes = crop_axes(c, static_cast<int64_t>(dims.size()), shape->size());
  for (size_t k = 0; k < axes.size(); ++k) {
    if ((*shape)[k] < 0) c.fail("shape has a negative length " + std::to_string((*shape)[k]));
    dims[axes[k]] = (*shape)[k];
  }
  c.set_output(0, x.dtype, dims);
}

// Each axis cropped or zero-padded about its centre (an odd difference puts the extra element
// at the end); the common box is copied.
void ref_center_crop_pad(RefCtx& c) {
  const RefTensor& x = c.input(0);
  std::vector<int64_t> shape = ref_ints(c, 1, "shape");
  int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes = crop_axes(c, rank, shape.size());
  Shape out = x.shape, extent = x.shape;
  StridedView src = dense_view(x.shape), dst;
  std::vector<int64_t> from(rank, 0), to(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k], dim = x.shape[a], want = shape[k];
    if (want < 0) c.fail("shape has a negative length " + std::to_string(want));
    out[a] = want;
    extent[a] = std::min(dim, want);
    (want < dim ? from : to)[a] = std::abs(dim - want) / 2;
  }
  dst = dense_view(out);
  for (int64_t a = 0; a < rank; ++a) {
    src.offset += from[a] * src.strides[a];
    dst.offset += to[a] * dst.strides[a];
  }
  c.out[0] = RefTensor(x.dtype, out);
  strided_copy(extent, c.out[0], dst, x, src);
}

}  // namespace lockstep
