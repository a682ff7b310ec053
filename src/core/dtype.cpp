#include "core/dtype.h"

#include <cmath>
#include <cstring>

namespace lockstep {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::i32: case DType::u32: return 4;
    case DType::u8: case DType::i8: case DType::boolean: return 1;
    case DType::u16: case DType::i16: case DType::f16: case DType::bf16: return 2;
    case DType::i64: case DType::f64: case DType::u64: return 8;
    default: return 0;
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::u8: return "uint8";
    case DType::i8: return "int8";
    case DType::u16: return "uint16";
    case DType::i16: return "int16";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::string: return "string";
    case DType::boolean: return "bool";
    case DType::f16: return "float16";
    case DType::f64: return "float64";
    case DType::u32: return "uint32";
    case DType::u64: return "uint64";
    case DType::bf16: return "bfloat16";
    default: return "undefined";
  }
}

bool dtype_is_float(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16;
}
bool dtype_is_signed_int(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}
bool dtype_is_unsigned_int(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64 ||
         t == DType::boolean;
}
bool dtype_is_supported(DType t) { return dtype_size(t) != 0; }

DType dtype_from_onnx(int onnx_type) {
  DType t = static_cast<DType>(onnx_type);
  return (dtype_size(t) != 0 || t == DType::string) ? t : DType::undefined;
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return 0x7e00;                 // NaN: the one every target stores
  if (ax >= 0x477ff000) return sign | 0x7c00;         // overflow rounds to inf
  if (ax < 0x38800000) {                               // subnormal or zero
    float a;
    std::memcpy(&a, &ax, 4);
    // 2^-24 is one subnormal step; nearbyint rounds to even.
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  uint32_t mant = ax & 0x7fffff, e = (ax >> 23) - 112;
  uint32_t h = (e << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return sign | static_cast<uint16_t>(h);
}

float bf16_to_float(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return 0x7fc0;  // NaN: the one every target stores
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace lockstep
