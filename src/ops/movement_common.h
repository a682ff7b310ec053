// Shared pieces of the data-movement ops: the strided copy every op lowers to, readers for
// the int inputs (shape, axes, pads, ...) whose values decide output shapes, and the
// per-op entry points that movement.cpp joins into the table.
#pragma once
#include <optional>
#include <vector>

#include "ops/op.h"

namespace lockstep {

// A view of a flat buffer: element at index (i0, i1, ...) lives at offset + sum(ik * strides[k]).
// Strides may be zero (broadcast) or negative (reversed slices).
struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

StridedView dense_view(const Shape& s);  // row-major, offset 0

// dst[dv(idx)] = src[sv(idx)] for every index of `extent`, via RefTensor::copy_elem so one
// path serves every dtype. Both tensors must share a dtype.
void strided_copy(const Shape& extent, RefTensor& dst, const StridedView& dv, const RefTensor& src,
                  const StridedView& sv);

// Input k's value as int64s when the shape rule can see it, else nullopt. Fails when the
// input is not an integer tensor (these inputs are shapes, axes, pads, sizes).
std::optional<std::vector<int64_t>> known_ints(const InferCtx& c, size_t k, const char* what);
// The same at run time; fails when the value is not an integer tensor.
std::vector<int64_t> ref_ints(const RefCtx& c, size_t k, const char* what);
// Checks that input k is an integer tensor of rank <= 1 where its type is known.
void require_int_list(const InferCtx& c, size_t k, const char* what);

// An int-list parameter that is attribute `key` before opset `input_from` and input k from
// then on (Squeeze axes, Split sizes, Slice starts, Pad pads). Giving it the other way fails.
struct IntsParam {
  bool present = false;                   // given at all
  std::optional<std::vector<int64_t>> v;  // its value, when the shape rule can see it
  int64_t len = -1;                       // its length, when known from value or type
};
IntsParam ints_param(const InferCtx& c, const char* key, size_t k, int input_from);
std::optional<std::vector<int64_t>> ints_param(const RefCtx& c, const char* key, size_t k,
                                               int input_from);

// Product of dims; -1 when one is unknown and none is 0. Saturates at INT64_MAX (such a
// shape fails later as too large) so hostile dims cannot overflow.
int64_t numel_or_unknown(const Shape& s);
// A dim computed in 128 bits (sums, products of dims and pads); fails when it leaves int64.
int64_t checked_dim(const OpCtx& c, __int128 v);
// A run-time value's type, so one dims function serves infer (TypeInfo) and ref.
TypeInfo type_of(const RefTensor& t);
// "[2,-1,0]": int lists as given (shape_str would print -1 as "?").
std::string ints_str(const std::vector<int64_t>& v);

// Normalises each axis against rank; fails on out-of-range or repeated axes.
std::vector<int64_t> normalize_axes(const OpCtx& c, const std::vector<int64_t>& axes, int64_t rank,
                                    const char* what);
int64_t normalize_axis_or_fail(const OpCtx& c, int64_t axis, int64_t rank, const char* what);

// Index k of `idx` counted back from dim when negative; fails unless it is then in [0, dim).
int64_t gather_index(const OpCtx& c, const std::vector<int64_t>& idx, size_t k, int64_t dim);
// Fails unless input k (indices) is int32 or int64.
void require_index_type(const InferCtx& c, size_t k);

// Entry points, one pair per op (movement_shape.cpp, movement_slice.cpp, ...).
void infer_identity(InferCtx& c);
void ref_identity(RefCtx& c);
void infer_reshape(InferCtx& c);
void ref_reshape(RefCtx& c);
void infer_flatten(InferCtx& c);
void ref_flatten(RefCtx& c);
void infer_squeeze(InferCtx& c);
void ref_squeeze(RefCtx& c);
void infer_unsqueeze(InferCtx& c);
void ref_unsqueeze(RefCtx& c);
void infer_slice(InferCtx& c);
void ref_slice(RefCtx& c);
void infer_split(InferCtx& c);
void ref_split(RefCtx& c);
void infer_concat(InferCtx& c);
void ref_concat(RefCtx& c);
void infer_transpose(InferCtx& c);
void infer_block_move(InferCtx& c);
void infer_gather_nd(InferCtx& c);
void infer_center_crop_pad(InferCtx& c);
void ref_center_crop_pad(RefCtx& c);
void ref_gather_nd(RefCtx& c);
void ref_block_move(RefCtx& c);
void ref_transpose(RefCtx& c);
void infer_tile(InferCtx& c);
void ref_tile(RefCtx& c);
void infer_expand(InferCtx& c);
void ref_expand(RefCtx& c);
void infer_gather(InferCtx& c);
void ref_gather(RefCtx& c);
void infer_gather_elements(InferCtx& c);
void ref_gather_elements(RefCtx& c);
void infer_pad(InferCtx& c);
void ref_pad(RefCtx& c);

}  // namespace lockstep
