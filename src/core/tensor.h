// Host tensors: Tensor holds the model's bytes; RefTensor holds the float64 / int64 values
// the reference interpreter computes with.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace lockstep {

// Dense row-major tensor in its own dtype, as read from ONNX or .npy and as returned to users.
struct Tensor {
  DType dtype = DType::undefined;
  Shape shape;
  std::vector<uint8_t> bytes;

  Tensor() = default;
  Tensor(DType t, Shape s);  // zero-filled
  int64_t numel() const { return shape_numel(shape); }
  template <class T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
};

// Reference-interpreter value: floating dtypes in `f` (float64), integers and bool in `i`.
// `dtype` is the ONNX type the value has in the model; arithmetic is done in double/int64.
struct RefTensor {
  DType dtype = DType::undefined;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  RefTensor() = default;
  RefTensor(DType t, Shape s);  // zero-filled, storage chosen by dtype
  bool is_float() const { return dtype_is_float(dtype); }
  int64_t numel() const { return shape_numel(shape); }
  double get(int64_t k) const { return is_float() ? f[k] : static_cast<double>(i[k]); }
  int64_t get_int(int64_t k) const { return is_float() ? static_cast<int64_t>(f[k]) : i[k]; }
  // Stores v converted to this tensor's dtype (integers wrap as C casts do, bool is v != 0).
  void set(int64_t k, double v);
  void set_int(int64_t k, int64_t v);
  // dst[k] = src[j] for same-dtype tensors; the primitive of every data-movement op.
  void copy_elem(int64_t k, const RefTensor& src, int64_t j) {
    if (is_float()) f[k] = src.f[j]; else i[k] = src.i[j];
  }
  // n elements from src[j] on to this[k] on (the ranges do not overlap).
  void copy_run(int64_t k, const RefTensor& src, int64_t j, int64_t n) {
    if (is_float()) std::copy_n(src.f.begin() + j, n, f.begin() + k);
    else std::copy_n(src.i.begin() + j, n, i.begin() + k);
  }
};

// memcpy that accepts empty ranges: an empty tensor's data() may be null, and memcpy from or
// to null is undefined even for zero bytes.
inline void copy_bytes(void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

RefTensor to_ref(const Tensor& t);
// Rounds to the tensor's dtype (float: round to nearest; ints: wrap to width).
Tensor from_ref(const RefTensor& r);
// Same values, cast to another dtype with ONNX Cast semantics.
RefTensor cast_ref(const RefTensor& r, DType to);
// Rounds a double to what `t` can hold; the value the model's dtype would store.
double round_to_dtype(double v, DType t);
int64_t wrap_to_dtype(int64_t v, DType t);
// A float converted to integer type `t`, the same on every target: NaN is 0, a value past the
// type's range is its MIN or MAX, the rest truncates toward zero (bool: v != 0).
int64_t saturate_to_dtype(double v, DType t);
// `v` kept in full precision but not past the range of float type `t`: a value that rounds to
// +-Inf or +-0 in `t` takes that value, as any engine computing in `t` gives it.
double clamp_to_range(double v, DType t);
// clamp_to_range over a whole tensor's values.
void clamp_to_range(std::vector<double>& values, DType t);

}  // namespace lockstep
