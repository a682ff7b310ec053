// The reference keeps full precision but not past an output type's range: the whole-tensor
// clamp (with its fast path) must give the scalar rule's bits for every value.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "core/tensor.h"

using namespace lockstep;

namespace {

std::vector<double> probes() {
  std::vector<double> v = {0.0, -0.0, std::numeric_limits<double>::infinity(), std::nan(""), 1.0};
  // Each type's edges: smallest normal and largest finite, their neighbours and the midpoints
  // where rounding tips over to +-Inf or +-0.
  for (double e : {0x1p-126, 0x1p-149, 0x1p-150, 0x1p-14, 0x1p-24, 0x1p-25, 0x1p-133, 0x1p-134,
                   double(std::numeric_limits<float>::max()), 0x1.FFFFFFp127, 0x1.FEp127, 0x1.FFp127, 65504.0, 65520.0,
                   1e300, 1e-300})
    for (double x : {e, std::nextafter(e, 0.0), std::nextafter(e, 1e308)}) v.push_back(x);
  std::mt19937_64 rng(7);
  for (int k = 0; k < 20000; ++k) {
    double m = std::ldexp(1.0 + double(rng() >> 12) * 0x1p-52, int(rng() % 320) - 160);
    v.push_back(m);
  }
  size_t n = v.size();
  for (size_t k = 0; k < n; ++k) v.push_back(-v[k]);
  return v;
}

}  // namespace

TEST(ClampToRange, WholeTensorGivesTheScalarRulesBits) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    std::vector<double> in = probes(), out = in;
    clamp_to_range(out, t);
    for (size_t k = 0; k < in.size(); ++k)
      ASSERT_EQ(std::bit_cast<uint64_t>(out[k]), std::bit_cast<uint64_t>(clamp_to_range(in[k], t)))
          << dtype_name(t) << " value " << in[k];
  }
}

TEST(ClampToRange, OverflowAndUnderflowTakeTheTypesValue) {
  std::vector<double> v = {3.5e38, -1e-46, 1e-40, 70000.0, 1e-8, 65519.0};
  std::vector<double> f32 = v, f16 = v;
  clamp_to_range(f32, DType::f32);
  clamp_to_range(f16, DType::f16);
  EXPECT_EQ(f32[0], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(f32[1] == 0 && std::signbit(f32[1]));
  EXPECT_EQ(f32[2], 1e-40);  // a float32 subnormal keeps full precision
  EXPECT_EQ(f16[3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(f16[4], 0.0);
  EXPECT_EQ(f16[5], 65519.0);  // rounds to 65504, not past the range
}
