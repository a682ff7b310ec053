// Elementwise ops with rules of their own: Pow (mixed dtypes), Clip (bounds moved from
// attributes to inputs at opset 11), Where (three-way broadcast) and Cast.
//
// uint64 values are stored in int64 by their bit pattern. Comparisons, division and Clip read
// them as unsigned; converting a float to uint64 above INT64_MAX (out of range for the
// reference's int64 path) is out of scope and saturates at INT64_MAX.
#include <cfloat>
#include <cmath>
#include <limits>

#include "ops/elementwise.h"

namespace lockstep::ew {

namespace {

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }

// Exact integer power, wrapping like repeated multiplication in the dtype.
int64_t int_pow(const RefCtx& c, int64_t base, int64_t e, DType etype) {
  bool negative = etype != DType::u64 && e < 0;
  if (negative) {
    // The truncated value of base^e for e < 0: only |base| == 1 survives.
    if (base == 0) c.fail("integer 0 raised to a negative power");
    if (base == 1) return 1;
    if (base == -1) return (e % 2) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, b = u(base);
  for (uint64_t n = u(e); n; n >>= 1, b *= b)
    if (n & 1) r *= b;
  return static_cast<int64_t>(r);
}

}  // namespace

// Pow-7 has one dtype for both; from 12 the exponent may be any numeric type. The result has
// the base's dtype.
void infer_pow(InferCtx& c) {
  constexpr TypeSet kIntBase = types({DType::i32, DType::i64});
  require_types(c, 0, {{7, kFloat}, {12, kFloat | kIntBase}, {13, kFloat | kBf16 | kIntBase}});
  require_types(c, 1, {{7, kFloat}, {12, kNumeric & ~kBf16}, {15, kNumeric}});
  if (c.opset < 12) c.require_same_dtype(0, 1);
  c.out[0] = infer_broadcast(c, {0, 1}, c.input(0).dtype);
}

void ref_pow(RefCtx& c) {
  const RefTensor& a = c.input(0);
  const RefTensor& b = c.input(1);
  RefTensor out(a.dtype, ref_broadcast(c, {0, 1}));
  for_each_broadcast(out.shape, {a.shape, b.shape}, [&](int64_t k, const int64_t* ix) {
    if (a.is_float() || b.is_float())  // an integer result truncates toward zero on store
      out.set(k, std::pow(elem_double(a, ix[0]), elem_double(b, ix[1])));
    else
      out.set_int(k, int_pow(c, a.i[ix[0]], b.i[ix[1]], b.dtype));
  });
  c.out[0] = std::move(out);
}

// Bounds are attributes `min`/`max` before opset 11 and optional scalar inputs from 11.
void infer_clip(InferCtx& c) {
  require_types(c, 0, {{7, kFloat}, {12, kNumeric & ~kBf16}, {13, kNumeric}});
  if (c.opset < 11) {
    if (c.has_input(1) || c.has_input(2))
      c.fail("min and max are inputs only from opset 11 (the model imports opset " +
             std::to_string(c.opset) + "); before that they are attributes");
    c.attr_float("min", 0);  // checks the attributes' kinds
    c.attr_float("max", 0);
  } else {
    if (c.has_attr("min") || c.has_attr("max"))
      c.fail("attributes 'min' and 'max' were replaced by inputs at opset 11");
    for (size_t k = 1; k < 3; ++k) {
      if (!c.has_input(k)) continue;
      c.require_same_dtype(0, k);
      const TypeInfo& t = c.input(k);
      // ONNX says scalar; a one-element [1] is accepted as ONNX Runtime does.
      if (t.rank_known && !(t.dims.empty() || (t.dims.size() == 1 && t.dims[0] == 1)))
        c.fail(input_label(c, k) + " must be a scalar, got " + t.str());
    }
  }
  c.out[0] = c.input(0);
}

static const RefTensor* clip_bound(const RefCtx& c, size_t k) {
  if (c.opset < 11 || k >= c.in.size() || !c.in[k]) return nullptr;
  if (c.in[k]->numel() != 1) c.fail(input_label(c, k) + " must be a scalar");
  return c.in[k];
}

void ref_clip(RefCtx& c) {
  const RefTensor& x = c.input(0);
  const RefTensor *lo_t = clip_bound(c, 1), *hi_t = clip_bound(c, 2);
  RefTensor out(x.dtype, x.shape);
  if (x.is_float()) {
    double inf = std::numeric_limits<double>::infinity();
    double lo = lo_t ? lo_t->f[0] : c.opset < 11 ? c.attr_float("min", -FLT_MAX) : -inf;
    double hi = hi_t ? hi_t->f[0] : c.opset < 11 ? c.attr_float("max", FLT_MAX) : inf;
    for (int64_t k = 0; k < x.numel(); ++k) {
      double v = x.f[k];  // min > max gives max everywhere, as ONNX specifies
      out.f[k] = std::isnan(v) ? v : std::min(std::max(v, lo), hi);
    }
  } else {
    bool u64 = x.dtype == DType::u64;
    int64_t lo = lo_t ? lo_t->i[0] : u64 ? 0 : std::numeric_limits<int64_t>::min();
    int64_t hi = hi_t ? hi_t->i[0] : u64 ? -1 : std::numeric_limits<int64_t>::max();
    for (int64_t k = 0; k < x.numel(); ++k) {
      int64_t v = int_less(x.i[k], lo, x.dtype) ? lo : x.i[k];
      out.i[k] = int_less(hi, v, x.dtype) ? hi : v;
    }
  }
  c.out[0] = std::move(out);
}

void infer_where(InferCtx& c) {
  require_types(c, 0, {{9, kBool}});
  TypeHistory value_types = {{9, (kNumeric & ~kBf16) | kBool}, {16, kNumeric | kBool}};
  require_types(c, 1, value_types);
  require_types(c, 2, value_types);
  c.require_same_dtype(1, 2);
  c.out[0] = infer_broadcast(c, {0, 1, 2}, c.input(1).dtype);
}

void ref_where(RefCtx& c) {
  const RefTensor& cond = c.input(0);
  const RefTensor& x = c.input(1);
  const RefTensor& y = c.input(2);
  RefTensor out(x.dtype, ref_broadcast(c, {0, 1, 2}));
  for_each_broadcast(out.shape, {cond.shape, x.shape, y.shape}, [&](int64_t k, const int64_t* ix) {
    if (cond.i[ix[0]]) out.copy_elem(k, x, ix[1]);
    else out.copy_elem(k, y, ix[2]);
  });
  c.out[0] = std::move(out);
}

// Valid ONNX element types lockstep does not implement, by TensorProto.DataType code.
static const char* unimplemented_type(int64_t code) {
  switch (code) {
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    case 25: return "uint2";
    case 26: return "int2";
    default: return nullptr;
  }
}

// The dtype an attribute names (Cast's `to`, EyeLike's `dtype`); `what` says what it makes.
DType dtype_attr(const OpCtx& c, const char* key, const std::string& what) {
  int64_t to = c.attr_int(key, 0);
  DType t = to > 0 && to < 32 ? dtype_from_onnx(static_cast<int>(to)) : DType::undefined;
  if (dtype_is_supported(t)) return t;
  if (const char* name = unimplemented_type(to))
    throw Unsupported(c.graph.label(c.node_index) + ": " + what + name + " is not supported");
  c.fail(std::string("attribute '") + key + "' = " + std::to_string(to) + " is not an ONNX data type");
}

static DType cast_target(const OpCtx& c) {
  c.attr_required("to");
  return dtype_attr(c, "to", "Cast to ");
}

// CastLike casts to its second input's dtype (from opset 15).
static bool like(const OpCtx& c) { return c.node.op_type == "CastLike"; }

void infer_cast(InferCtx& c) {
  TypeHistory cast_types = {{7, (kNumeric & ~kBf16) | kBool}, {13, kNumeric | kBool}};
  if (like(c)) require_op_exists(c, {{15, 0}});
  require_types(c, 0, cast_types);
  if (like(c)) require_types(c, 1, cast_types);
  DType to = like(c) ? c.input(1).dtype : cast_target(c);
  if (!(types_at(cast_types, c.opset) & types({to})))
    c.fail(std::string("Cast to ") + dtype_name(to) + " needs opset 13 or later");
  // saturate (19+) and round_mode (25+) only affect float8 targets, which are refused above.
  if (c.has_attr("saturate") && c.opset < 19) c.fail("attribute 'saturate' exists from opset 19");
  c.attr_int("saturate", 1);
  if (c.has_attr("round_mode") && c.opset < 25) c.fail("attribute 'round_mode' exists from opset 25");
  std::string mode = c.attr_string("round_mode", "up");
  if (mode != "up" && mode != "down" && mode != "nearest")
    c.fail("attribute 'round_mode' must be 'up', 'down' or 'nearest', got '" + mode + "'");
  c.out[0] = TypeInfo{to, c.input(0).rank_known, c.input(0).dims};
}

// Floats round to the target's precision; float to integer truncates toward zero; integer to
// integer wraps like a C cast; anything to bool is v != 0.
void ref_cast(RefCtx& c) {
  const RefTensor& x = c.input(0);
  DType to = like(c) ? c.input(1).dtype : cast_target(c);
  RefTensor out(to, x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (dtype_is_float(to)) out.f[k] = round_to_dtype(elem_double(x, k), to);
    else if (x.is_float()) out.set(k, x.f[k]);
    else out.set_int(k, x.i[k]);
  }
  c.out[0] = std::move(out);
}

// EyeLike: a rank-2 tensor of the input's shape with ones on diagonal k (column - row = k),
// of the attribute dtype's type, or the input's.
static DType eye_dtype(const OpCtx& c, DType in) {
  return c.has_attr("dtype") ? dtype_attr(c, "dtype", "EyeLike of ") : in;
}

void infer_eye_like(InferCtx& c) {
  TypeHistory eye_types = {{9, (kNumeric & ~kBf16) | kBool}, {22, kNumeric | kBool}};
  require_types(c, 0, eye_types);
  DType to = eye_dtype(c, c.input(0).dtype);
  if (!(types_at(eye_types, c.opset) & types({to})))
    c.fail(std::string("EyeLike of ") + dtype_name(to) + " needs a later opset");
  c.require_rank(0, 2);
  c.attr_int("k", 0);
  c.out[0] = TypeInfo{to, true, c.input(0).rank_known ? c.input(0).dims : Shape{-1, -1}};
}

void ref_eye_like(RefCtx& c) {
  const RefTensor& x = c.input(0);
  if (x.shape.size() != 2) c.fail("input must have rank 2, got " + std::to_string(x.shape.size()));
  int64_t k = c.attr_int("k", 0), cols = x.shape[1];
  RefTensor out(eye_dtype(c, x.dtype), x.shape);
  for (int64_t e = 0; e < out.numel(); ++e) out.set(e, e % cols - e / cols == k ? 1.0 : 0.0);
  c.out[0] = std::move(out);
}

}  // namespace lockstep::ew
