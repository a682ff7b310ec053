#include <gtest/gtest.h>

#include "core/dtype.h"

TEST(DType, HalfRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(lockstep::half_to_float(lockstep::float_to_half(f)), f);
}
