// Ops that only change the shape: the elements keep their row-major order.
// Identity, Reshape, Flatten, Squeeze, Unsqueeze.
#include "ops/movement_common.h"

namespace lockstep {

// The same elements under new dims (the shape rule has already checked the count).
static void ref_reshaped(RefCtx& c, Shape dims) {
  RefTensor out = c.input(0);
  out.shape = std::move(dims);
  c.out[0] = std::move(out);
}

void infer_identity(InferCtx& c) { c.out[0] = c.input(0); }
void ref_identity(RefCtx& c) { c.out[0] = c.input(0); }

// ---- Reshape ----

static bool reshape_allowzero(const OpCtx& c) {
  if (c.opset < 14 && c.has_attr("allowzero"))
    c.fail("attribute 'allowzero' needs opset 14, the model imports " + std::to_string(c.opset));
  return c.attr_int("allowzero", 0) != 0;
}

// Output dims for `spec`: 0 copies the input dim (unless allowzero), -1 takes what is left.
// -1 in the result where the input's unknown dims leave it open.
static Shape reshape_dims(const OpCtx& c, const TypeInfo& in, const std::vector<int64_t>& spec,
                          bool allowzero) {
  Shape out(spec.size());
  int64_t infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (v == -1) {
      if (infer_at >= 0) c.fail("shape " + ints_str(spec) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
    } else if (v == 0 && !allowzero) {
      if (in.rank_known && i >= in.dims.size())
        c.fail("shape " + ints_str(spec) + " copies dim " + std::to_string(i) +
               " (0) of input " + in.str() + ", which has no such dim");
      out[i] = in.rank_known ? in.dims[i] : -1;
    } else if (v < 0) {
      c.fail("shape " + ints_str(spec) + " has invalid dim " + std::to_string(v));
    } else {
      out[i] = v;
      has_zero = has_zero || v == 0;
    }
  }
  if (allowzero && has_zero && infer_at >= 0)
    c.fail("shape " + ints_str(spec) + " has both 0 and -1, which allowzero=1 forbids");
  int64_t n = in.rank_known ? numel_or_unknown(in.dims) : -1;
  auto mismatch = [&] {
    c.fail("cannot reshape " + in.str() + " (" + std::to_string(n) + " elements) to " +
           ints_str(spec));
  };
  if (infer_at < 0) {
    int64_t m = numel_or_unknown(out);
    if (n >= 0 && m >= 0 && n != m) mismatch();
    return out;
  }
  out[infer_at] = 1;
  int64_t rest = numel_or_unknown(out);
  out[infer_at] = -1;
  if (n >= 0 && rest >= 0) {
    if (rest == 0 || n % rest != 0) mismatch();  // rest 0: the -1 would be ambiguous
    out[infer_at] = n / rest;
  }
  return out;
}

void infer_reshape(InferCtx& c) {
  bool allowzero = reshape_allowzero(c);
  DType t = c.input(0).dtype;
  auto spec = known_ints(c, 1, "shape");
  if (spec) return c.set_output(0, t, reshape_dims(c, c.input(0), *spec, allowzero));
  const TypeInfo& s = c.input(1);
  if (s.rank_known && s.dims.size() == 1 && s.dims[0] >= 0)
    c.set_output(0, t, Shape(s.dims[0], -1));
  else
    c.set_output_unknown_rank(0, t);
}

void ref_reshape(RefCtx& c) {
  Shape dims =
      reshape_dims(c, type_of(c.input(0)), ref_ints(c, 1, "shape"), reshape_allowzero(c));
  ref_reshaped(c, std::move(dims));
}

// ---- Flatten ----

static Shape flatten_dims(const OpCtx& c, const Shape& in) {
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < -r || axis > r)
    c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  return {numel_or_unknown(Shape(in.begin(), in.begin() + axis)),
          numel_or_unknown(Shape(in.begin() + axis, in.end()))};
}

void infer_flatten(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  c.set_output(0, x.dtype, x.rank_known ? flatten_dims(c, x.dims) : Shape{-1, -1});
}

void ref_flatten(RefCtx& c) { ref_reshaped(c, flatten_dims(c, c.input(0).shape)); }

// ---- Squeeze ----

// Drops the listed axes (each must have size 1), or every size-1 axis when none are listed.
static Shape squeeze_dims(const OpCtx& c, const Shape& in,
                          const std::optional<std::vector<int64_t>>& axes) {
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<bool> drop(r, false);
  if (axes) {
    for (int64_t a : normalize_axes(c, *axes, r, "axes")) {
      if (in[a] >= 0 && in[a] != 1)
        c.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[a]) +
               " in " + shape_str(in));
      drop[a] = true;
    }
  } else {
    for (int64_t a = 0; a < r; ++a) drop[a] = in[a] == 1;
  }
  Shape out;
  for (int64_t a = 0; a < r; ++a)
    if (!drop[a]) out.push_back(in[a]);
  return out;
}

void infer_squeeze(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  IntsParam axes = ints_param(c, "axes", 1, 13);
  int64_t r = static_cast<int64_t>(x.dims.size());
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  if (axes.present && !axes.v) {
    if (axes.len >= 0 && axes.len <= r) return c.set_output(0, x.dtype, Shape(r - axes.len, -1));
    return c.set_output_unknown_rank(0, x.dtype);
  }
  bool any_unknown = false;
  for (int64_t d : x.dims) any_unknown = any_unknown || d < 0;
  if (!axes.present && any_unknown) return c.set_output_unknown_rank(0, x.dtype);
  c.set_output(0, x.dtype, squeeze_dims(c, x.dims, axes.v));
}

void ref_squeeze(RefCtx& c) {
  ref_reshaped(c, squeeze_dims(c, c.input(0).shape, ints_param(c, "axes", 1, 13)));
}

// ---- Unsqueeze ----

// Inserts size-1 axes at the listed positions of the output (any order, negative allowed).
static Shape unsqueeze_dims(const OpCtx& c, const Shape& in, const std::vector<int64_t>& axes) {
  int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> is_new(rank, false);
  for (int64_t a : normalize_axes(c, axes, rank, "axes")) is_new[a] = true;
  Shape out(rank, 1);
  size_t j = 0;
  for (int64_t a = 0; a < rank; ++a)
    if (!is_new[a]) out[a] = in[j++];
  return out;
}

static void require_axes(const OpCtx& c, bool present) {
  if (!present)
    c.fail(c.opset < 13 ? "required attribute 'axes' is missing" : "input 'axes' is required");
}

void infer_unsqueeze(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  IntsParam axes = ints_param(c, "axes", 1, 13);
  require_axes(c, axes.present);
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  if (!axes.v) {
    if (axes.len < 0) return c.set_output_unknown_rank(0, x.dtype);
    return c.set_output(0, x.dtype, Shape(x.dims.size() + axes.len, -1));
  }
  c.set_output(0, x.dtype, unsqueeze_dims(c, x.dims, *axes.v));
}

void ref_unsqueeze(RefCtx& c) {
  auto axes = ints_param(c, "axes", 1, 13);
  require_axes(c, axes.has_value());
  ref_reshaped(c, unsqueeze_dims(c, c.input(0).shape, *axes));
}

}  // namespace lockstep
