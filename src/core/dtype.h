// Element types. Values match ONNX TensorProto.DataType so import is a cast.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace lockstep {

enum class DType : int {
  undefined = 0, f32 = 1, u8 = 2, i8 = 3, u16 = 4, i16 = 5, i32 = 6, i64 = 7,
  string = 8, boolean = 9, f16 = 10, f64 = 11, u32 = 12, u64 = 13, bf16 = 16,
};

size_t dtype_size(DType t);             // bytes per element; 0 for undefined/string
const char* dtype_name(DType t);        // "float32", "int64", ... (numpy spelling)
bool dtype_is_float(DType t);           // f16, bf16, f32, f64
bool dtype_is_signed_int(DType t);
bool dtype_is_unsigned_int(DType t);    // also bool
bool dtype_is_supported(DType t);       // every numeric type and bool; not string
DType dtype_from_onnx(int onnx_type);   // DType::undefined when unknown

// float16 / bfloat16 conversions, round to nearest even.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

}  // namespace lockstep
