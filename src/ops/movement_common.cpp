#include "ops/movement_common.h"

#include <algorithm>
#include <limits>

namespace lockstep {

StridedView dense_view(const Shape& s) { return StridedView{0, shape_strides(s)}; }

void strided_copy(const Shape& extent, RefTensor& dst, const StridedView& dv, const RefTensor& src,
                  const StridedView& sv) {
  int64_t n = shape_numel(extent);
  if (n == 0) return;
  // A last axis that both sides step by one goes as one run (a Concat or Slice of big rows
  // took seconds element by element under AddressSanitizer).
  size_t rank = extent.size();
  bool runs = rank > 0 && dv.strides[rank - 1] == 1 && sv.strides[rank - 1] == 1;
  int64_t len = runs ? extent[rank - 1] : 1;
  size_t outer = runs ? rank - 1 : rank;
  std::vector<int64_t> idx(outer, 0);
  int64_t d = dv.offset, s = sv.offset;
  for (int64_t k = 0; k < n / len; ++k) {
    dst.copy_run(d, src, s, len);
    // Odometer: step the last outer axis, carry into the ones before it.
    for (size_t a = outer; a-- > 0;) {
      d += dv.strides[a];
      s += sv.strides[a];
      if (++idx[a] < extent[a]) break;
      d -= dv.strides[a] * extent[a];
      s -= sv.strides[a] * extent[a];
      idx[a] = 0;
    }
  }
}

static std::string input_label(const OpCtx& c, size_t k, const char* what) {
  return std::string("input '") + what + "' ('" + c.graph.values[c.node.inputs[k]].name + "')";
}

void require_int_list(const InferCtx& c, size_t k, const char* what) {
  const TypeInfo& t = c.input(k);
  if (!dtype_is_signed_int(t.dtype) && !dtype_is_unsigned_int(t.dtype))
    c.fail(input_label(c, k, what) + " must be an integer tensor, got " + t.str());
  if (t.dtype == DType::boolean)
    c.fail(input_label(c, k, what) + " must be an integer tensor, got " + t.str());
  if (t.rank_known && t.dims.size() > 1)
    c.fail(input_label(c, k, what) + " must be a 1-D list, got " + t.str());
}

std::optional<std::vector<int64_t>> known_ints(const InferCtx& c, size_t k, const char* what) {
  if (!c.has_input(k)) return std::nullopt;
  require_int_list(c, k, what);
  const RefTensor* v = c.value(k);
  if (!v) return std::nullopt;
  return v->i;
}

std::vector<int64_t> ref_ints(const RefCtx& c, size_t k, const char* what) {
  const RefTensor& t = c.input(k);
  if (t.is_float() || t.dtype == DType::boolean)
    c.fail(input_label(c, k, what) + " must be an integer tensor, got " + dtype_name(t.dtype));
  if (t.shape.size() > 1)
    c.fail(input_label(c, k, what) + " must be a 1-D list, got shape " + shape_str(t.shape));
  return t.i;
}

int64_t normalize_axis_or_fail(const OpCtx& c, int64_t axis, int64_t rank, const char* what) {
  int64_t a = normalize_axis(axis, rank);
  if (a < 0)
    c.fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(rank));
  return a;
}

std::vector<int64_t> normalize_axes(const OpCtx& c, const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what) {
  std::vector<int64_t> out;
  for (int64_t axis : axes) {
    int64_t a = normalize_axis_or_fail(c, axis, rank, what);
    if (std::find(out.begin(), out.end(), a) != out.end())
      c.fail(std::string(what) + " repeat axis " + std::to_string(a));
    out.push_back(a);
  }
  return out;
}

IntsParam ints_param(const InferCtx& c, const char* key, size_t k, int input_from) {
  IntsParam p;
  if (c.opset < input_from) {
    if (c.has_input(k))
      c.fail(std::string("'") + key + "' is an attribute before opset " +
             std::to_string(input_from) + ", not an input");
    if (c.has_attr(key)) {
      p.present = true;
      p.v = c.attr_ints(key);
      p.len = static_cast<int64_t>(p.v->size());
    }
    return p;
  }
  if (c.has_attr(key))
    c.fail(std::string("'") + key + "' is an input from opset " + std::to_string(input_from) +
           ", not an attribute");
  if (!c.has_input(k)) return p;
  p.present = true;
  p.v = known_ints(c, k, key);
  const TypeInfo& t = c.input(k);
  if (p.v) p.len = static_cast<int64_t>(p.v->size());
  else if (t.rank_known) p.len = t.dims.empty() ? 1 : t.dims[0];
  return p;
}

std::optional<std::vector<int64_t>> ints_param(const RefCtx& c, const char* key, size_t k,
                                               int input_from) {
  if (c.opset < input_from) {
    if (!c.has_attr(key)) return std::nullopt;
    return c.attr_ints(key);
  }
  if (!c.has_input(k)) return std::nullopt;
  return ref_ints(c, k, key);
}

int64_t numel_or_unknown(const Shape& s) {
  constexpr __int128 kCap = std::numeric_limits<int64_t>::max();
  __int128 n = 1;
  bool unknown = false;
  for (int64_t d : s) {
    if (d == 0) return 0;
    if (d < 0) unknown = true;
    else n = std::min(n * d, kCap);
  }
  return unknown ? -1 : static_cast<int64_t>(n);
}

int64_t checked_dim(const OpCtx& c, __int128 v) {
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
    c.fail("a dimension of the output is too large");
  return static_cast<int64_t>(v);
}

TypeInfo type_of(const RefTensor& t) { return TypeInfo{t.dtype, true, t.shape}; }

std::string ints_str(const std::vector<int64_t>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
  return r + "]";
}

}  // namespace lockstep
