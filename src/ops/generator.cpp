// Ops that make tensors from attributes or shapes: Shape, Constant, ConstantOfShape, Range, OneHot.
// Shape and Constant give their values to inference, so shape arithmetic folds to numbers.
#include <algorithm>
#include <cmath>

#include "ops/elementwise.h"
#include "ops/infer.h"

namespace lockstep {

using namespace ew;

namespace {

// Shape-15 slices the dims with `start`/`end`, clamped to [0, rank] like Python slices.
std::pair<int64_t, int64_t> shape_slice(const OpCtx& c, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  int64_t lo = clamp(c.attr_int("start", 0)), hi = clamp(c.attr_int("end", rank));
  return {lo, std::max(lo, hi)};
}

RefTensor dims_value(const Shape& dims, int64_t lo, int64_t hi) {
  RefTensor v(DType::i64, {hi - lo});
  for (int64_t k = lo; k < hi; ++k) v.i[k - lo] = dims[k];
  return v;
}

void infer_shape(InferCtx& c) {
  require_present(c, 0);
  if (c.opset < 15 && (c.has_attr("start") || c.has_attr("end")))
    c.fail("attributes 'start' and 'end' exist from opset 15, the model imports opset " +
           std::to_string(c.opset));
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) return c.set_output(0, DType::i64, {-1});
  auto [lo, hi] = shape_slice(c, static_cast<int64_t>(x.dims.size()));
  c.set_output(0, DType::i64, {hi - lo});
  if (std::all_of(x.dims.begin() + lo, x.dims.begin() + hi, [](int64_t d) { return d >= 0; }))
    c.out_value[0] = dims_value(x.dims, lo, hi);
}

void ref_shape(RefCtx& c) {
  const Shape& dims = c.input(0).shape;
  auto [lo, hi] = shape_slice(c, static_cast<int64_t>(dims.size()));
  c.out[0] = dims_value(dims, lo, hi);
}

// Size: the element count, as an int64 scalar; known before running once every dim is.
RefTensor count_value(const Shape& dims) {
  RefTensor v(DType::i64, {});
  v.i[0] = shape_numel(dims);
  return v;
}

void infer_size(InferCtx& c) {
  require_present(c, 0);
  const TypeInfo& x = c.input(0);
  c.set_output(0, DType::i64, {});
  if (x.fully_known()) c.out_value[0] = count_value(x.dims);
}

void ref_size(RefCtx& c) { c.out[0] = count_value(c.input(0).shape); }

const char* const kConstantAttrs[] = {"value", "value_float", "value_floats", "value_int",
                                      "value_ints", "value_string", "value_strings",
                                      "sparse_value"};

// The one attribute that holds a Constant's value, checked against the opset.
const Attr& constant_attr(const OpCtx& c) {
  const char* key = nullptr;
  for (const char* k : kConstantAttrs) {
    if (!c.has_attr(k)) continue;
    if (key) c.fail(std::string("has both '") + key + "' and '" + k + "'; exactly one is allowed");
    key = k;
  }
  if (!key) c.fail("needs one of the attributes value, value_float(s), value_int(s)");
  std::string name = key;
  if (name != "value" && name != "sparse_value" && c.opset < 12)
    c.fail("attribute '" + name + "' exists from opset 12");
  if (name == "value_string" || name == "value_strings" || name == "sparse_value")
    throw Unsupported(c.graph.label(c.node_index) + ": Constant with '" + name +
                      "' is not supported");
  const Attr& a = *c.node.attr(key);
  Attr::Kind want = name == "value" ? Attr::TensorK
                    : name == "value_float" ? Attr::Float
                    : name == "value_floats" ? Attr::Floats
                    : name == "value_int" ? Attr::Int : Attr::Ints;
  if (a.kind != want || (want == Attr::TensorK && !a.t))
    c.fail("attribute '" + name + "' has the wrong kind");
  return a;
}

TypeInfo constant_type(const Attr& a) {
  switch (a.kind) {
    case Attr::TensorK: return TypeInfo{a.t->dtype, true, a.t->shape};
    case Attr::Float: return TypeInfo{DType::f32, true, {}};
    case Attr::Floats: return TypeInfo{DType::f32, true, {static_cast<int64_t>(a.floats.size())}};
    case Attr::Int: return TypeInfo{DType::i64, true, {}};
    default: return TypeInfo{DType::i64, true, {static_cast<int64_t>(a.ints.size())}};
  }
}

// value_float(s) are float32 in the file, so their doubles are exact float32 values.
RefTensor constant_value(const Attr& a) {
  if (a.kind == Attr::TensorK) return to_ref(*a.t);
  RefTensor v(constant_type(a).dtype, constant_type(a).dims);
  switch (a.kind) {
    case Attr::Float: v.f[0] = a.f; break;
    case Attr::Floats: v.f = a.floats; break;
    case Attr::Int: v.i[0] = a.i; break;
    default: v.i = a.ints; break;
  }
  return v;
}

// Constant's output type is not checked against Constant-1's float-only list (opsets 7-8):
// exporters wrote int64 Constants at those opsets and runtimes accept them.
void infer_constant(InferCtx& c) {
  const Attr& a = constant_attr(c);
  c.out[0] = constant_type(a);
  if (shape_numel(c.out[0].dims) <= kFoldLimit) c.out_value[0] = constant_value(a);
}

void ref_constant(RefCtx& c) { c.out[0] = constant_value(constant_attr(c)); }

// The fill value of ConstantOfShape: a one-element tensor attribute, float32 0 by default.
RefTensor fill_value(const OpCtx& c) {
  const Attr* a = c.node.attr("value");
  if (!a) return RefTensor(DType::f32, {});
  if (a->kind != Attr::TensorK || !a->t) c.fail("attribute 'value' must be a tensor");
  if (a->t->numel() != 1)
    c.fail("attribute 'value' must hold one element, got shape " + shape_str(a->t->shape));
  TypeSet allowed = types_at({{9, (kNumeric & ~kBf16) | kBool}, {20, kNumeric | kBool}}, c.opset);
  if (!(allowed & types({a->t->dtype})))
    c.fail(std::string("attribute 'value' has dtype ") + dtype_name(a->t->dtype) +
           ", which ConstantOfShape does not accept at opset " + std::to_string(c.opset));
  return to_ref(*a->t);
}

// Data-dependent sizes are checked here too: inference cannot see them in advance.
void require_allocatable(const OpCtx& c, __int128 n, const std::string& what) {
  if (n > kMaxElements) c.fail(what + " is too large to allocate");
}

Shape requested_shape(const OpCtx& c, const RefTensor& v) {
  Shape s(v.i.begin(), v.i.end());
  __int128 n = 1;
  for (int64_t d : s) {
    if (d < 0) c.fail("shape input " + shape_str(s) + " has a negative dim");
    n = std::min<__int128>(n * d, __int128{kMaxElements} + 1);
  }
  require_allocatable(c, n, "output shape " + shape_str(s));
  return s;
}

void infer_constant_of_shape(InferCtx& c) {
  require_types(c, 0, {{9, types({DType::i64})}});
  c.require_rank(0, 1);
  DType t = fill_value(c).dtype;
  const TypeInfo& in = c.input(0);
  if (const RefTensor* v = c.value(0)) c.set_output(0, t, requested_shape(c, *v));
  else if (in.rank_known && in.dims[0] >= 0) c.set_output(0, t, Shape(in.dims[0], -1));
  else c.set_output_unknown_rank(0, t);
}

void ref_constant_of_shape(RefCtx& c) {
  const RefTensor& dims = c.input(0);
  if (dims.shape.size() != 1) c.fail("input 0 must be 1-D, got " + shape_str(dims.shape));
  RefTensor fill = fill_value(c);
  RefTensor out(fill.dtype, requested_shape(c, dims));
  for (int64_t k = 0; k < out.numel(); ++k) out.copy_elem(k, fill, 0);
  c.out[0] = std::move(out);
}

constexpr TypeSet kRange11 = types({DType::f32, DType::f64, DType::i16, DType::i32, DType::i64});
const TypeHistory kRangeTypes = {{11, kRange11}, {27, kRange11 | types({DType::f16, DType::bf16})}};

bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

// max(ceil((limit - start) / delta), 0); for float32 the difference is taken in float32 first,
// as ONNX's own shape inference does, and so for float16 and bfloat16, which Range-27 computes
// in float32 (stash_type 1).
int64_t range_length(const OpCtx& c, const RefTensor& start, const RefTensor& limit,
                     const RefTensor& delta) {
  for (const RefTensor* t : {&start, &limit, &delta})
    if (!t->shape.empty()) c.fail("inputs must be scalars, got shape " + shape_str(t->shape));
  if (start.is_float()) {
    if (delta.f[0] == 0) c.fail("delta is zero");
    DType work = is_half(start.dtype) ? DType::f32 : start.dtype;
    double n = std::ceil(round_to_dtype(limit.f[0] - start.f[0], work) / delta.f[0]);
    if (!(n <= static_cast<double>(kMaxElements)))  // also catches NaN
      c.fail("range length ceil((limit - start) / delta) is not finite or too large to allocate");
    return std::max<int64_t>(static_cast<int64_t>(n), 0);
  }
  if (delta.i[0] == 0) c.fail("delta is zero");
  __int128 span = static_cast<__int128>(limit.i[0]) - start.i[0], d = delta.i[0];
  __int128 q = span / d;
  if (span % d != 0 && (span > 0) == (d > 0)) ++q;  // ceil of an inexact positive quotient
  require_allocatable(c, q,
                      q > kMaxElements ? "a range of more than 2^40 elements"
                                       : "a range of length " + std::to_string(static_cast<int64_t>(q)));
  return static_cast<int64_t>(std::max<__int128>(q, 0));
}

void infer_range(InferCtx& c) {
  if (c.has_attr("stash_type") && c.opset < 27) c.fail("attribute 'stash_type' exists from opset 27");
  if (is_half(c.input(0).dtype) && c.attr_int("stash_type", 1) != 1)
    c.fail("stash_type other than 1 (float) is not supported");
  for (size_t k = 0; k < 3; ++k) {
    require_types(c, k, kRangeTypes);
    c.require_same_dtype(0, k);
    c.require_rank(k, 0);
  }
  const RefTensor *s = c.value(0), *l = c.value(1), *d = c.value(2);
  int64_t n = s && l && d ? range_length(c, *s, *l, *d) : -1;
  c.set_output(0, c.input(0).dtype, {n});
}

// Element i is start + i * delta, as the spec defines it (no accumulated rounding).
void ref_range(RefCtx& c) {
  const RefTensor &s = c.input(0), &l = c.input(1), &d = c.input(2);
  int64_t n = range_length(c, s, l, d);
  RefTensor out(s.dtype, {n});
  for (int64_t k = 0; k < n; ++k) {
    if (s.is_float()) out.f[k] = s.f[0] + static_cast<double>(k) * d.f[0];
    else out.set_int(k, s.i[0] + k * d.i[0]);
  }
  c.out[0] = std::move(out);
}

// OneHot: the indices' shape with a depth axis inserted at `axis`; along it, values[1] where
// the index (a negative one counted back from depth) equals the position, values[0] elsewhere,
// so an index out of range marks nothing.
int64_t one_hot_depth(const OpCtx& c, const RefTensor& d, int64_t indices) {
  if (d.numel() != 1) c.fail("depth must hold one value, got " + std::to_string(d.numel()));
  double v = d.is_float() ? std::trunc(d.f[0]) : static_cast<double>(d.get_int(0));  // cast to int64
  if (!(v >= 1)) c.fail("depth must be at least 1, got " + std::to_string(d.is_float() ? d.f[0] : v));
  __int128 total = static_cast<__int128>(std::min(v, static_cast<double>(kMaxElements) + 1)) * indices;
  require_allocatable(c, total, "a one-hot output of depth " + std::to_string(static_cast<int64_t>(v)));
  return static_cast<int64_t>(v);
}

int64_t one_hot_axis(const OpCtx& c, int64_t rank) {
  int64_t a = c.attr_int("axis", -1), k = normalize_axis(a, rank + 1);
  if (k < 0) c.fail("axis " + std::to_string(a) + " is out of range for an output of rank " + std::to_string(rank + 1));
  return k;
}

void infer_one_hot(InferCtx& c) {
  TypeHistory h = {{9, kNumeric & ~kBf16}, {11, kNumeric}};
  require_types(c, 0, h);
  require_types(c, 1, h);
  require_types(c, 2, {{9, (kNumeric & ~kBf16) | kBool}, {11, kNumeric | kBool}});
  const TypeInfo &x = c.input(0), &values = c.input(2);
  if (values.rank_known && (values.dims.size() != 1 || (values.dims[0] >= 0 && values.dims[0] != 2)))
    c.fail("values must be [off, on], shape [2], got " + shape_str(values.dims));
  if (!x.rank_known) return c.set_output_unknown_rank(0, values.dtype);
  int64_t axis = one_hot_axis(c, static_cast<int64_t>(x.dims.size()));
  int64_t n = shape_numel(x.dims);
  Shape out = x.dims;
  out.insert(out.begin() + axis, c.value(1) ? one_hot_depth(c, *c.value(1), std::max<int64_t>(n, 1)) : -1);
  c.set_output(0, values.dtype, out);
}

void ref_one_hot(RefCtx& c) {
  const RefTensor &x = c.input(0), &values = c.input(2);
  if (values.numel() != 2) c.fail("values must hold [off, on], got " + std::to_string(values.numel()) + " values");
  int64_t depth = one_hot_depth(c, c.input(1), std::max<int64_t>(x.numel(), 1));
  int64_t axis = one_hot_axis(c, static_cast<int64_t>(x.shape.size()));
  Shape out_shape = x.shape;
  out_shape.insert(out_shape.begin() + axis, depth);
  int64_t inner = 1;
  for (size_t a = axis; a < x.shape.size(); ++a) inner *= x.shape[a];
  RefTensor out(values.dtype, out_shape);
  for (int64_t e = 0; e < out.numel(); ++e) {
    int64_t j = e / inner % depth, at = e / (inner * depth) * inner + e % inner;
    double v = x.is_float() ? x.f[at] : static_cast<double>(x.get_int(at));
    if (v < 0) v += static_cast<double>(depth);
    out.copy_elem(e, values, v == static_cast<double>(j) ? 1 : 0);
  }
  c.out[0] = std::move(out);
}

const OpDef kOps[] = {
    {"Shape", 1, 1, 1, 1, {"start", "end"}, infer_shape, ref_shape},
    {"Size", 1, 1, 1, 1, {}, infer_size, ref_size},
    {"Constant",
     0,
     0,
     1,
     1,
     {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings",
      "sparse_value"},
     infer_constant,
     ref_constant},
    {"ConstantOfShape", 1, 1, 1, 1, {"value"}, infer_constant_of_shape, ref_constant_of_shape},
    {"Range", 3, 3, 1, 1, {"stash_type"}, infer_range, ref_range},
    {"OneHot", 3, 3, 1, 1, {"axis"}, infer_one_hot, ref_one_hot},
};

}  // namespace

std::span<const OpDef> generator_ops() { return kOps; }

}  // namespace lockstep
