#include "core/tensor.h"
#include "core/memory.h"

#include <cmath>
#include <limits>

namespace lockstep {

// Every tensor's bytes are checked against what the process may use before they are taken
// (small ones cost nothing: require_memory looks only at large requests).
Tensor::Tensor(DType t, Shape s) : dtype(t), shape(std::move(s)) {
  int64_t n = checked_bytes(checked_numel(shape), static_cast<int64_t>(dtype_size(t)));
  require_memory(n, "a tensor of " + std::string(dtype_name(t)) + shape_str(shape));
  bytes.assign(static_cast<size_t>(n), 0);
}

RefTensor::RefTensor(DType t, Shape s) : dtype(t), shape(std::move(s)) {
  require_memory(checked_bytes(checked_numel(shape), 8), "a float64/int64 tensor of shape " + shape_str(shape));
  if (is_float()) f.assign(numel(), 0.0);
  else i.assign(numel(), 0);
}

int64_t wrap_to_dtype(int64_t v, DType t) {
  switch (t) {
    case DType::i8: return static_cast<int8_t>(v);
    case DType::u8: return static_cast<uint8_t>(v);
    case DType::i16: return static_cast<int16_t>(v);
    case DType::u16: return static_cast<uint16_t>(v);
    case DType::i32: return static_cast<int32_t>(v);
    case DType::u32: return static_cast<uint32_t>(v);
    case DType::boolean: return v != 0;
    default: return v;  // i64; u64 keeps its bit pattern
  }
}

// Float to integer as C++ would, but defined for NaN/out-of-range (they become 0 / saturate).
static int64_t float_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

void RefTensor::set(int64_t k, double v) {
  if (is_float()) f[k] = v;
  else if (dtype == DType::boolean) i[k] = v != 0.0;
  else i[k] = wrap_to_dtype(float_to_int64(v), dtype);
}

void RefTensor::set_int(int64_t k, int64_t v) {
  if (is_float()) f[k] = static_cast<double>(v);
  else i[k] = wrap_to_dtype(v, dtype);
}

double round_to_dtype(double v, DType t) {
  switch (t) {
    case DType::f32: return static_cast<float>(v);
    case DType::f16: return half_to_float(float_to_half(static_cast<float>(v)));
    case DType::bf16: return bf16_to_float(float_to_bf16(static_cast<float>(v)));
    default: return v;
  }
}

template <class T> static void load_ints(const Tensor& t, RefTensor& r) {
  const T* p = t.data<T>();
  for (int64_t k = 0; k < r.numel(); ++k) r.i[k] = static_cast<int64_t>(p[k]);
}
template <class T> static void store_ints(const RefTensor& r, Tensor& t) {
  T* p = t.data<T>();
  for (int64_t k = 0; k < r.numel(); ++k) p[k] = static_cast<T>(r.i[k]);
}

RefTensor to_ref(const Tensor& t) {
  RefTensor r(t.dtype, t.shape);
  int64_t n = r.numel();
  switch (t.dtype) {
    case DType::f32: for (int64_t k = 0; k < n; ++k) r.f[k] = t.data<float>()[k]; break;
    case DType::f64: for (int64_t k = 0; k < n; ++k) r.f[k] = t.data<double>()[k]; break;
    case DType::f16: for (int64_t k = 0; k < n; ++k) r.f[k] = half_to_float(t.data<uint16_t>()[k]); break;
    case DType::bf16: for (int64_t k = 0; k < n; ++k) r.f[k] = bf16_to_float(t.data<uint16_t>()[k]); break;
    case DType::i8: load_ints<int8_t>(t, r); break;
    case DType::u8: case DType::boolean: load_ints<uint8_t>(t, r); break;
    case DType::i16: load_ints<int16_t>(t, r); break;
    case DType::u16: load_ints<uint16_t>(t, r); break;
    case DType::i32: load_ints<int32_t>(t, r); break;
    case DType::u32: load_ints<uint32_t>(t, r); break;
    case DType::i64: load_ints<int64_t>(t, r); break;
    case DType::u64: load_ints<uint64_t>(t, r); break;
    default: break;
  }
  if (t.dtype == DType::boolean) for (auto& v : r.i) v = v != 0;
  return r;
}

Tensor from_ref(const RefTensor& r) {
  Tensor t(r.dtype, r.shape);
  int64_t n = r.numel();
  switch (r.dtype) {
    case DType::f32: for (int64_t k = 0; k < n; ++k) t.data<float>()[k] = static_cast<float>(r.f[k]); break;
    case DType::f64: for (int64_t k = 0; k < n; ++k) t.data<double>()[k] = r.f[k]; break;
    case DType::f16: for (int64_t k = 0; k < n; ++k) t.data<uint16_t>()[k] = float_to_half(static_cast<float>(r.f[k])); break;
    case DType::bf16: for (int64_t k = 0; k < n; ++k) t.data<uint16_t>()[k] = float_to_bf16(static_cast<float>(r.f[k])); break;
    case DType::i8: store_ints<int8_t>(r, t); break;
    case DType::u8: case DType::boolean: store_ints<uint8_t>(r, t); break;
    case DType::i16: store_ints<int16_t>(r, t); break;
    case DType::u16: store_ints<uint16_t>(r, t); break;
    case DType::i32: store_ints<int32_t>(r, t); break;
    case DType::u32: store_ints<uint32_t>(r, t); break;
    case DType::i64: store_ints<int64_t>(r, t); break;
    case DType::u64: store_ints<uint64_t>(r, t); break;
    default: break;
  }
  return t;
}

RefTensor cast_ref(const RefTensor& r, DType to) {
  RefTensor out(to, r.shape);
  for (int64_t k = 0; k < r.numel(); ++k) {
    if (r.is_float()) out.set(k, r.f[k]);
    else out.set_int(k, r.i[k]);
  }
  return out;
}

}  // namespace lockstep
