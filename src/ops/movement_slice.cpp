// Ops that cut a tensor into ranges along axes or join ranges back: Slice, Split, Concat.
#include <algorithm>
#include <limits>

#include "ops/movement_common.h"

namespace lockstep {

// ---- Slice ----

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;  // axes already normalised
};

// Starts/ends/axes/steps as given: attributes before opset 10 (no steps), inputs 1..4 from 10.
struct RawSlice {
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
};

static void require_bounds(const OpCtx& c, bool starts, bool ends) {
  if (!starts || !ends)
    c.fail(c.opset < 10 ? "attributes 'starts' and 'ends' are required"
                        : "inputs 'starts' and 'ends' are required");
}

// nullopt when one of the inputs has a value the shape rule cannot see.
static std::optional<RawSlice> raw_slice(const InferCtx& c) {
  IntsParam starts = ints_param(c, "starts", 1, 10), ends = ints_param(c, "ends", 2, 10);
  IntsParam axes = ints_param(c, "axes", 3, 10);
  IntsParam steps = c.opset >= 10 ? ints_param(c, "steps", 4, 10) : IntsParam{};
  require_bounds(c, starts.present, ends.present);
  for (const IntsParam* q : {&starts, &ends, &axes, &steps})
    if (q->present && !q->v) return std::nullopt;
  return RawSlice{*starts.v, *ends.v, axes.v, steps.v};
}

static RawSlice raw_slice(const RefCtx& c) {
  auto starts = ints_param(c, "starts", 1, 10), ends = ints_param(c, "ends", 2, 10);
  require_bounds(c, starts.has_value(), ends.has_value());
  auto steps = c.opset >= 10 ? ints_param(c, "steps", 4, 10) : std::nullopt;
  return RawSlice{*starts, *ends, ints_param(c, "axes", 3, 10), steps};
}

// Checks lengths and steps; axes come back normalised (default 0..n-1).
static SliceParams slice_params(const OpCtx& c, const RawSlice& raw, int64_t rank) {
  SliceParams p{raw.starts, raw.ends, {}, {}};
  size_t n = p.starts.size();
  if (p.ends.size() != n)
    c.fail("starts " + ints_str(p.starts) + " and ends " + ints_str(p.ends) + " differ in length");
  std::vector<int64_t> axes(n);
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  if (raw.axes) axes = *raw.axes;
  if (axes.size() != n) c.fail("axes " + ints_str(axes) + " and starts differ in length");
  p.axes = normalize_axes(c, axes, rank, "axes");
  p.steps = raw.steps ? *raw.steps : std::vector<int64_t>(n, 1);
  if (p.steps.size() != n) c.fail("steps " + ints_str(p.steps) + " and starts differ in length");
  for (int64_t s : p.steps)
    if (s == 0) c.fail("steps " + ints_str(p.steps) + " contain 0");
  return p;
}

struct AxisRange {
  int64_t start = 0, len = 0;
};

// The ONNX clamping rules: negatives count from the end, then starts clamp to [0, dim] and
// ends to [0, dim] for positive steps, [0, dim-1] and [-1, dim-1] for negative steps.
// This is what makes INT64_MAX / INT64_MIN ends (PyTorch's "to the end") work. (ONNX Runtime
// alone reads end INT64_MAX with a negative step as "to the start"; the spec and ONNX's
// reference give an empty slice, and so does lockstep.)
static AxisRange slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  AxisRange r;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.len = end > start ? (end - start - 1) / step + 1 : 0;  // no overflow for huge steps
  } else {
    start = std::min(std::max<int64_t>(start, 0), dim - 1);  // dim 0 gives -1: empty
    end = std::min(std::max<int64_t>(end, -1), dim - 1);
    int64_t stride = step == std::numeric_limits<int64_t>::min() ? dim + 1 : -step;
    r.len = start > end ? (start - end - 1) / stride + 1 : 0;
  }
  r.start = start;
  return r;
}

void infer_slice(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  std::optional<RawSlice> raw = raw_slice(c);
  Shape out = x.dims;
  if (!raw) {  // only inputs (opset >= 10) can be unknown
    auto axes = known_ints(c, 3, "axes");
    if (c.has_input(3) && !axes) return c.set_output(0, x.dtype, Shape(rank, -1));
    if (axes)
      for (int64_t a : normalize_axes(c, *axes, rank, "axes")) out[a] = -1;
    else
      out.assign(rank, -1);  // default axes are 0..n-1 for an n we cannot see
    return c.set_output(0, x.dtype, out);
  }
  SliceParams p = slice_params(c, *raw, rank);
  for (size_t i = 0; i < p.axes.size(); ++i) {
    int64_t a = p.axes[i];
    out[a] = x.dims[a] < 0 ? -1 : slice_axis(x.dims[a], p.starts[i], p.ends[i], p.steps[i]).len;
  }
  c.set_output(0, x.dtype, out);
}

void ref_slice(RefCtx& c) {
  const RefTensor& x = c.input(0);
  SliceParams p = slice_params(c, raw_slice(c), static_cast<int64_t>(x.shape.size()));
  Shape out = x.shape;
  StridedView src = dense_view(x.shape);
  std::vector<int64_t> unit = src.strides;
  for (size_t i = 0; i < p.axes.size(); ++i) {
    int64_t a = p.axes[i];
    AxisRange r = slice_axis(x.shape[a], p.starts[i], p.ends[i], p.steps[i]);
    out[a] = r.len;
    if (r.len == 0) continue;  // start may be -1 on an empty range; nothing is read
    src.offset += r.start * unit[a];
    src.strides[a] = r.len > 1 ? unit[a] * p.steps[i] : 0;  // a huge step taking one element
  }
  c.out[0] = RefTensor(x.dtype, out);
  strided_copy(out, c.out[0], dense_view(out), x, src);
}

// ---- Split ----

static int64_t split_axis(const OpCtx& c, int64_t rank) {
  return normalize_axis_or_fail(c, c.attr_int("axis", 0), rank, "axis");
}

// Part sizes along an axis of length `dim` (-1: unknown). `given` is the split attribute or
// input when known. Without sizes: equal parts before opset 18; from 18, `num_outputs` parts
// of ceil(dim / n), the last one smaller.
static std::vector<int64_t> split_sizes(const OpCtx& c, int64_t dim,
                                        const std::optional<std::vector<int64_t>>& given) {
  int64_t n = static_cast<int64_t>(c.num_outputs());
  if (given) {
    if (static_cast<int64_t>(given->size()) != n)
      c.fail("split " + ints_str(*given) + " has " + std::to_string(given->size()) +
             " sizes for " + std::to_string(n) + " outputs");
    __int128 sum = 0;
    for (int64_t s : *given) {
      if (s < 0) c.fail("split " + ints_str(*given) + " has a negative size");
      sum += s;
    }
    if (dim >= 0 && sum != dim)
      c.fail("split " + ints_str(*given) + " sums to " + std::to_string(checked_dim(c, sum)) +
             ", the axis has length " + std::to_string(dim));
    return *given;
  }
  if (c.opset >= 18) {
    if (!c.has_attr("num_outputs")) c.fail("needs the 'split' input or the 'num_outputs' attribute");
    if (c.attr_int("num_outputs", 0) != n)
      c.fail("num_outputs=" + std::to_string(c.attr_int("num_outputs", 0)) + " but the node has " +
             std::to_string(n) + " outputs");
  }
  if (dim < 0) return std::vector<int64_t>(n, -1);
  if (c.opset < 18 && dim % n != 0)
    c.fail("axis of length " + std::to_string(dim) + " does not split evenly into " +
           std::to_string(n) + " parts");
  int64_t chunk = dim / n + (dim % n != 0);
  std::vector<int64_t> sizes(n, chunk);
  sizes.back() = dim - chunk * (n - 1);
  if (sizes.back() < 0)
    c.fail("axis of length " + std::to_string(dim) + " cannot be split into " + std::to_string(n) +
           " parts of " + std::to_string(chunk));
  return sizes;
}

static void check_split_form(const OpCtx& c, bool sizes_given) {
  if (c.opset < 18 && c.has_attr("num_outputs"))
    c.fail("attribute 'num_outputs' needs opset 18, the model imports " + std::to_string(c.opset));
  if (sizes_given && c.has_attr("num_outputs"))
    c.fail("give either the 'split' input or the 'num_outputs' attribute, not both");
}

void infer_split(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  IntsParam given = ints_param(c, "split", 1, 13);
  check_split_form(c, given.present);
  if (!x.rank_known) {
    for (size_t k = 0; k < c.num_outputs(); ++k) c.set_output_unknown_rank(k, x.dtype);
    return;
  }
  int64_t axis = split_axis(c, static_cast<int64_t>(x.dims.size()));
  std::vector<int64_t> sizes = given.present && !given.v
                                   ? std::vector<int64_t>(c.num_outputs(), -1)
                                   : split_sizes(c, x.dims[axis], given.v);
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    Shape d = x.dims;
    d[axis] = sizes[k];
    c.set_output(k, x.dtype, d);
  }
}

void ref_split(RefCtx& c) {
  const RefTensor& x = c.input(0);
  auto given = ints_param(c, "split", 1, 13);
  check_split_form(c, given.has_value());
  int64_t axis = split_axis(c, static_cast<int64_t>(x.shape.size()));
  std::vector<int64_t> sizes = split_sizes(c, x.shape[axis], given);
  StridedView src = dense_view(x.shape);
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    Shape d = x.shape;
    d[axis] = sizes[k];
    if (c.has_output(k)) {
      c.out[k] = RefTensor(x.dtype, d);
      strided_copy(d, c.out[k], dense_view(d), x, src);
    }
    src.offset += sizes[k] * src.strides[axis];
  }
}

// ---- Concat ----

static int64_t concat_axis(const OpCtx& c, int64_t rank) {
  if (rank == 0) c.fail("cannot concatenate scalars");
  return normalize_axis_or_fail(c, c.attr_int("axis", 0), rank, "axis");
}

void infer_concat(InferCtx& c) {
  c.attr_required("axis");
  const TypeInfo* first = nullptr;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    if (!c.has_input(k)) c.fail("input " + std::to_string(k) + " is omitted");
    if (k > 0) c.require_same_dtype(0, k);
    if (!first && c.input(k).rank_known) first = &c.input(k);
  }
  DType t = c.input(0).dtype;
  if (!first) return c.set_output_unknown_rank(0, t);
  int64_t rank = static_cast<int64_t>(first->dims.size());
  int64_t axis = concat_axis(c, rank);
  Shape out = first->dims;
  out[axis] = 0;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    const TypeInfo& in = c.input(k);
    if (!in.rank_known) {
      out[axis] = -1;
      continue;
    }
    if (static_cast<int64_t>(in.dims.size()) != rank)
      c.fail("input " + std::to_string(k) + " " + in.str() + " has a different rank from " +
             first->str());
    for (int64_t a = 0; a < rank; ++a) {
      int64_t d = in.dims[a];
      if (a == axis) out[a] = (out[a] < 0 || d < 0) ? -1 : checked_dim(c, __int128{out[a]} + d);
      else if (out[a] < 0) out[a] = d;
      else if (d >= 0 && d != out[a])
        c.fail("input " + std::to_string(k) + " " + in.str() + " differs from " + first->str() +
               " in dim " + std::to_string(a) + " (concat axis is " + std::to_string(axis) + ")");
    }
  }
  c.set_output(0, t, out);
}

void ref_concat(RefCtx& c) {
  const RefTensor& x0 = c.input(0);
  int64_t axis = concat_axis(c, static_cast<int64_t>(x0.shape.size()));
  Shape out = x0.shape;
  out[axis] = 0;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    const RefTensor& x = c.input(k);
    Shape same = x.shape;
    if (same.size() == out.size()) same[axis] = 0;
    if (x.dtype != x0.dtype || same != out)
      c.fail("input " + std::to_string(k) + " " + type_of(x).str() + " does not concatenate with " +
             type_of(x0).str() + " on axis " + std::to_string(axis));
  }
  for (size_t k = 0; k < c.num_inputs(); ++k) out[axis] += c.input(k).shape[axis];
  c.out[0] = RefTensor(x0.dtype, out);
  StridedView dst = dense_view(out);
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    const RefTensor& x = c.input(k);
    strided_copy(x.shape, c.out[0], dst, x, dense_view(x.shape));
    dst.offset += x.shape[axis] * dst.strides[axis];
  }
}

}  // namespace lockstep
