// Machinery shared by the elementwise and generator families: the dtypes each op accepts at
// each opset (from the ONNX spec), and numpy multidirectional broadcasting.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ops/op.h"

namespace lockstep::ew {

// A set of dtypes, one bit per DType value (all lockstep dtypes are < 32).
using TypeSet = uint32_t;
constexpr TypeSet types(std::initializer_list<DType> ts) {
  TypeSet s = 0;
  for (DType t : ts) s |= 1u << static_cast<int>(t);
  return s;
}
constexpr TypeSet kFloat = types({DType::f16, DType::f32, DType::f64});  // bf16 came later
constexpr TypeSet kBf16 = types({DType::bf16});
constexpr TypeSet kSigned = types({DType::i8, DType::i16, DType::i32, DType::i64});
constexpr TypeSet kUnsigned = types({DType::u8, DType::u16, DType::u32, DType::u64});
constexpr TypeSet kBool = types({DType::boolean});
constexpr TypeSet kNumeric = kFloat | kBf16 | kSigned | kUnsigned;

// The dtypes an input accepts from opset `since` on; a history lists them in increasing
// opset order and its first entry is the opset that introduced the op.
struct TypesSince {
  int since;
  TypeSet types;
};
using TypeHistory = std::initializer_list<TypesSince>;

// The dtypes `h` allows at `opset` (empty before the op exists).
TypeSet types_at(TypeHistory h, int opset);
// Fails unless the model's opset has the op at all (first entry of `h`).
void require_op_exists(const InferCtx& c, TypeHistory h);
// Fails unless input k is present and its dtype is allowed at the model's opset.
void require_types(const InferCtx& c, size_t k, TypeHistory h);
// Fails when input k is omitted ("" in the node's input list).
void require_present(const InferCtx& c, size_t k);
// Fails with "<what> differ: a and b" when both dims are known and differ.
void require_same_dim(const OpCtx& c, int64_t a, int64_t b, const std::string& what);
// "input 1 ('b')", for messages.
std::string input_label(const OpCtx& c, size_t k);
// The dtype attribute `key` names (Cast's `to`, EyeLike's `dtype`); `what` ("Cast to ") starts
// the refusal of a type lockstep does not implement.
DType dtype_attr(const OpCtx& c, const char* key, const std::string& what);
// Comma-separated dtype names of a set, for messages.
std::string type_names(TypeSet s);

// Output type of broadcasting the listed inputs; unknown rank when any input's rank is.
// Fails naming the node and the inputs when two known dims disagree.
TypeInfo infer_broadcast(const InferCtx& c, const std::vector<size_t>& inputs, DType out);
// Broadcast shape of the given run-time inputs; fails like infer_broadcast.
Shape ref_broadcast(const RefCtx& c, const std::vector<size_t>& inputs);

// Element strides of `in` read through the broadcast shape `out`: 0 along broadcast dims.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Calls f(k, idx) for every element k of `out` in row-major order, where idx[j] is the flat
// index of the matching element of input j (shapes broadcast to `out`).
template <class F>
void for_each_broadcast(const Shape& out, const std::vector<Shape>& ins, F&& f) {
  std::vector<std::vector<int64_t>> st;
  for (const Shape& s : ins) st.push_back(broadcast_strides(s, out));
  const size_t n = st.size(), rank = out.size();
  std::vector<int64_t> pos(rank, 0), idx(n, 0);
  const int64_t total = shape_numel(out);
  for (int64_t k = 0; k < total; ++k) {
    f(k, idx.data());
    for (size_t d = rank; d-- > 0;) {  // odometer step, innermost dim first
      ++pos[d];
      for (size_t j = 0; j < n; ++j) idx[j] += st[j][d];
      if (pos[d] < out[d]) break;
      for (size_t j = 0; j < n; ++j) idx[j] -= st[j][d] * out[d];
      pos[d] = 0;
    }
  }
}

// Element k as a double, reading uint64 storage as unsigned.
inline double elem_double(const RefTensor& t, int64_t k) {
  if (t.is_float()) return t.f[k];
  if (t.dtype == DType::u64) return static_cast<double>(static_cast<uint64_t>(t.i[k]));
  return static_cast<double>(t.i[k]);
}

// a < b for integer storage of dtype t (uint64 compares unsigned).
inline bool int_less(int64_t a, int64_t b, DType t) {
  if (t == DType::u64) return static_cast<uint64_t>(a) < static_cast<uint64_t>(b);
  return a < b;
}

// Ops with rules of their own (elementwise_special.cpp).
void infer_pow(InferCtx& c);
void ref_pow(RefCtx& c);
void infer_clip(InferCtx& c);
void ref_clip(RefCtx& c);
void infer_where(InferCtx& c);
void ref_where(RefCtx& c);
void infer_cast(InferCtx& c);
void ref_cast(RefCtx& c);
void infer_eye_like(InferCtx& c);
void ref_eye_like(RefCtx& c);

}  // namespace lockstep::ew
