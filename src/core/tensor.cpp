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

int64_t saturate_to_dtype(double v, DType t) {
  if (t == DType::boolean) return v != 0.0;  // NaN is true (the spec: only +-0 is false)
  if (std::isnan(v)) return 0;
  int bits = static_cast<int>(8 * dtype_size(t));
  bool is_unsigned = t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64;
  if (is_unsigned) {
    double top = std::ldexp(1.0, bits);  // 2^N: every bound is a power of two, exact in double
    if (v >= top) return bits == 64 ? -1 : static_cast<int64_t>(top) - 1;  // u64's all-ones bit pattern
    if (v <= -1.0) return 0;
    return bits == 64 ? static_cast<int64_t>(static_cast<uint64_t>(v)) : static_cast<int64_t>(v);
  }
  double half = std::ldexp(1.0, bits - 1);
  if (v >= half) return static_cast<int64_t>(static_cast<uint64_t>(half) - 1);
  if (v < -half) return static_cast<int64_t>(0 - static_cast<uint64_t>(half));
  return static_cast<int64_t>(v);
}

void RefTensor::set(int64_t k, double v) {
  if (is_float()) f[k] = v;
  else i[k] = saturate_to_dtype(v, dtype);
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

double clamp_to_range(double v, DType t) {
  if (t != DType::f32 && t != DType::f16 && t != DType::bf16) return v;
  double r = round_to_dtype(v, t);
  return std::isinf(r) || (r == 0 && v != 0) ? r : v;
}

void clamp_to_range(std::vector<double>& values, DType t) {
  // Between the type's smallest normal and its largest finite a value neither overflows nor
  // flushes: only the rest takes the slow path (a big Concat spent a third of its time here).
  double lo = 0x1p-126, hi = std::numeric_limits<float>::max();
  if (t == DType::f16) lo = 0x1p-14, hi = 65504.0;
  else if (t == DType::bf16) hi = 0x1.FEp127;
  else if (t != DType::f32) return;
  for (double& v : values) {
    double a = std::fabs(v);
    if (!(a >= lo && a <= hi)) v = clamp_to_range(v, t);
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
    // One NaN for every float type (positive, quiet), as every target stores it.
    case DType::f32:
      for (int64_t k = 0; k < n; ++k)
        t.data<float>()[k] = std::isnan(r.f[k]) ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(r.f[k]);
      break;
    case DType::f64:
      for (int64_t k = 0; k < n; ++k)
        t.data<double>()[k] = std::isnan(r.f[k]) ? std::numeric_limits<double>::quiet_NaN() : r.f[k];
      break;
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
