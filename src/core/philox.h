// lockstep's random streams (docs/random.md): Philox4x32-10 (Salmon et al., SC'11) over the
// element's flat index, and the draws built on it. The kernels' copy is in codegen/prelude.cpp;
// this one serves the reference interpreter and the tests, and both follow the same steps.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>

namespace lockstep::philox {

// Philox4x32-10: ten rounds of counter `c` under key (k[0], k[1]).
inline std::array<uint32_t, 4> block(std::array<uint32_t, 4> c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  return c;
}

// The block of counter (n, attempt, 0) under `key`: words 0, 1 (upper 0) or 2, 3 (upper 1),
// the first in the low 32 bits.
inline uint64_t words(uint64_t n, uint32_t attempt, uint64_t key, uint32_t upper) {
  std::array<uint32_t, 4> c = block({static_cast<uint32_t>(n), static_cast<uint32_t>(n >> 32), attempt, 0},
                                    static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
  return upper ? (uint64_t{c[3]} << 32 | c[2]) : (uint64_t{c[1]} << 32 | c[0]);
}

// The polar method's tries before an element gives up and is 0: all 32 fail with probability
// (1 - pi/4)^32, about 4e-22.
constexpr uint32_t kTries = 32;

// Uniform on [0, 1): 24 bits (float32) or 53 (float64) of the first word(s), exact.
inline double uniform_f32(uint64_t n, uint64_t key) {
  return static_cast<double>(static_cast<uint32_t>(words(n, 0, key, 0)) >> 8) * 0x1p-24;
}
inline double uniform_f64(uint64_t n, uint64_t key) { return static_cast<double>(words(n, 0, key, 0) >> 11) * 0x1p-53; }

// A standard normal by Marsaglia's polar method. Float32: x and y are odd multiples of 2^-24 in
// (-1, 1) and s = x*x + y*y is rounded to float32 as every target rounds it (the steps up to s
// are exact IEEE operations, so this reproduces them); the rest is float64 here.
inline double normal_f32(uint64_t n, uint64_t key) {
  for (uint32_t k = 0; k < kTries; ++k) {
    uint64_t w = words(n, k, key, 0);
    float x = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(w) >> 8) * 2 - 16777215) * 0x1p-24f;
    float y = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(w >> 32) >> 8) * 2 - 16777215) * 0x1p-24f;
    float s = x * x + y * y;
    if (s < 1.0f) return x * std::sqrt(-2.0 * std::log(static_cast<double>(s)) / s);
  }
  return 0;
}

inline double normal_f64(uint64_t n, uint64_t key) {
  for (uint32_t k = 0; k < kTries; ++k) {
    uint64_t wx = words(n, k, key, 0), wy = words(n, k, key, 1);
    double x = static_cast<double>(static_cast<int64_t>(wx >> 11) * 2 - 9007199254740991) * 0x1p-53;
    double y = static_cast<double>(static_cast<int64_t>(wy >> 11) * 2 - 9007199254740991) * 0x1p-53;
    double s = x * x + y * y;
    if (s < 1.0) return x * std::sqrt(-2.0 * std::log(s) / s);
  }
  return 0;
}

}  // namespace lockstep::philox
