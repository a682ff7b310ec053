// NumPy .npy files: read format versions 1-3, write version 1.0 (little-endian, C order).
#pragma once
#include <string>

#include "core/tensor.h"

namespace lockstep {

// Reads a .npy file into a row-major little-endian Tensor. Fortran-order and big-endian data
// are converted. Object, string, complex and structured arrays, a corrupt or truncated header
// and a data size that does not match the shape are Errors naming the file.
Tensor read_npy(const std::string& path);

// The same from bytes already in memory; `what` names them in errors.
Tensor parse_npy(const std::string& bytes, const std::string& what);

// The bytes of a version 1.0 .npy file; header padded so the data starts on 64 bytes.
// bfloat16 has no NumPy dtype and is an Error.
std::string encode_npy(const Tensor& t);

// Writes encode_npy(t) to `path` atomically (core/files.h's write_file_atomic).
void write_npy(const std::string& path, const Tensor& t);

}  // namespace lockstep
