// Run-time divisors of symbolic GPU plans (kernel/symbols.h): the multiplier divides exactly,
// and the Symbols buffer holds each one after the symbols.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "kernel/symbols.h"

namespace lockstep::kir {
namespace {

// The printed ls_udiv32 (codegen/prelude.cpp), term for term (Symbolic.CudaSourceCompilesWithNvrtc
// finds this expression in the printed source).
uint32_t udiv32(uint32_t x, uint64_t m) {
  return m == 0 ? x : static_cast<uint32_t>((static_cast<uint64_t>(x) * (m >> 32) + ((static_cast<uint64_t>(x) * static_cast<uint32_t>(m)) >> 32)) >> 32);
}

TEST(Symbols, TheMultiplierDividesEveryIndexUnder2To32Exactly) {
  std::vector<uint64_t> divisors = {1, 2, 3, 5, 7, 8, 64, 641, 8194, 65535, 65536, 65537, 1000003, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff};
  std::mt19937_64 rng(7);
  for (int k = 0; k < 200; ++k) divisors.push_back(1 + rng() % 0xffffffffull);
  for (uint64_t d : divisors) {
    uint64_t m = divide_multiplier(static_cast<int64_t>(d));
    std::vector<uint64_t> xs = {0, 1, d - 1, d, d + 1, 0xffffffff, 0xfffffffe, 0xffffffff / d * d, 0xffffffff / d * d - 1};
    for (int k = 0; k < 300; ++k) xs.push_back(rng() % 0x100000000ull);
    for (uint64_t q = 1; q < 0x100000000ull / d && q < 4096; q *= 3) xs.insert(xs.end(), {q * d - 1, q * d, q * d + 1});
    for (uint64_t x : xs) {
      if (x > 0xffffffff) continue;
      ASSERT_EQ(udiv32(static_cast<uint32_t>(x), m), x / d) << x << " / " << d;
    }
  }
}

TEST(Symbols, TheSymbolsBufferHoldsEachDivisorsMultiplierAfterTheSymbols) {
  Plan p;
  p.symbols = {"T", "U"};
  p.symbol_buf = 0;
  p.buffers.resize(1);
  p.buffers[0].kind = Buffer::Symbols;
  p.buffers[0].dtype = DType::i64;
  p.buffers[0].shape = {2};
  ExprP t = load_flat(0, {2}, DType::i64, icst(0)), u = load_flat(0, {2}, DType::i64, icst(1));
  p.divisors = {add(mul(t, icst(8)), icst(2)), mul(t, u), binary(Fn::Div, mul(t, icst(8)), icst(4))};
  std::vector<int64_t> w = symbol_words(p, {1024, 3});
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w[0], 1024);
  EXPECT_EQ(w[1], 3);
  EXPECT_EQ(static_cast<uint64_t>(w[2]), divide_multiplier(8194));
  EXPECT_EQ(static_cast<uint64_t>(w[3]), divide_multiplier(3072));
  EXPECT_EQ(static_cast<uint64_t>(w[4]), divide_multiplier(2048));
  EXPECT_EQ(divisor_slot(p, mul(t, u)), 1);
  EXPECT_EQ(divisor_slot(p, mul(u, icst(8))), -1);
  EXPECT_EQ(divide_multiplier(1), 0u);  // x / 1 is x
}

}  // namespace
}  // namespace lockstep::kir
