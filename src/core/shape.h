// Shapes and the index arithmetic every op needs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);                 // product; 1 for a scalar
std::vector<int64_t> shape_strides(const Shape& s);  // row-major element strides
std::string shape_str(const Shape& s);               // "[1,128,1024]"; -1 printed as "?"

// Normalises a possibly negative axis against rank; returns -1 when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);

// Numpy-style broadcast of two shapes; false when incompatible. -1 (unknown) dims propagate.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out);

}  // namespace lockstep
