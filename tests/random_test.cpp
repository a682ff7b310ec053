// Random generators (docs/random.md): Philox4x32-10 against its published answers, the
// draws' distributions, how streams follow seeds and node ids, and the same bytes on every
// target (the uniform and Bernoulli draws also the reference's bytes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/philox.h"
#include "core/sha256.h"
#include "graph/builder.h"
#include "ref/interpreter.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/compare.h"

namespace lockstep {
namespace {

// Random123's known-answer vectors for philox4x32_10 (kat_vectors).
TEST(Philox, GivesThePublishedKnownAnswers) {
  using W = std::array<uint32_t, 4>;
  EXPECT_EQ(philox::block({0, 0, 0, 0}, 0, 0), (W{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox::block({~0u, ~0u, ~0u, ~0u}, ~0u, ~0u), (W{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox::block({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (W{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  EXPECT_EQ(philox::words(0, 0, 0, 0), 0xe169c58d6627e8d5ULL);
  EXPECT_EQ(philox::words(0, 0, 0, 1), 0x9b00dbd8bc57ac4cULL);
}

// Kolmogorov-Smirnov distance of sorted draws from a distribution function.
double ks_distance(std::vector<double> x, double (*cdf)(double)) {
  std::sort(x.begin(), x.end());
  double n = static_cast<double>(x.size()), d = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    double f = cdf(x[k]);
    d = std::max({d, std::abs(f - k / n), std::abs((k + 1) / n - f)});
  }
  return d;
}

double uniform_cdf(double x) { return std::clamp(x, 0.0, 1.0); }
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

struct Moments {
  double mean = 0, var = 0, lag1 = 0;  // lag1: correlation of neighbouring elements
};

Moments moments(const std::vector<double>& x) {
  Moments m;
  double n = static_cast<double>(x.size());
  for (double v : x) m.mean += v / n;
  for (double v : x) m.var += (v - m.mean) * (v - m.mean) / n;
  for (size_t k = 1; k < x.size(); ++k) m.lag1 += (x[k] - m.mean) * (x[k - 1] - m.mean) / ((n - 1) * m.var);
  return m;
}

// 2^18 draws of each kind from one key, as the elements of one tensor draw them. The bounds are
// about four standard errors (KS: the 0.1% point, 1.95 / sqrt(n)); the key is fixed, so the
// test is a fixed computation that a broken generator fails.
TEST(Philox, DrawsHaveTheirDistributions) {
  const size_t n = size_t{1} << 18;
  const double se = 1 / std::sqrt(static_cast<double>(n)), ks = 1.95 * se;
  const uint64_t key = 0x1234567890abcdefULL >> 1;
  for (bool wide : {false, true}) {
    std::vector<double> u(n), z(n);
    for (size_t k = 0; k < n; ++k) {
      u[k] = wide ? philox::uniform_f64(k, key) : philox::uniform_f32(k, key);
      z[k] = wide ? philox::normal_f64(k, key) : philox::normal_f32(k, key);
      ASSERT_TRUE(u[k] >= 0 && u[k] < 1) << k;
    }
    Moments mu = moments(u), mz = moments(z);
    SCOPED_TRACE(wide ? "float64" : "float32");
    EXPECT_NEAR(mu.mean, 0.5, 4 * se * std::sqrt(1 / 12.0));
    EXPECT_NEAR(mu.var, 1 / 12.0, 4 * se * std::sqrt(1 / 180.0));  // var of (u - 1/2)^2 is 1/180
    EXPECT_LT(ks_distance(u, uniform_cdf), ks);
    EXPECT_NEAR(mz.mean, 0, 4 * se);
    EXPECT_NEAR(mz.var, 1, 4 * se * std::sqrt(2.0));
    EXPECT_LT(ks_distance(z, normal_cdf), ks);
    EXPECT_LT(std::abs(mu.lag1), 4 * se);
    EXPECT_LT(std::abs(mz.lag1), 4 * se);
    double tail = 0;  // P(|z| > 3) = 0.0026998
    for (double v : z) tail += std::abs(v) > 3 ? 1.0 / n : 0;
    EXPECT_NEAR(tail, 0.0026998, 4 * std::sqrt(0.0027 / n));
  }
}

Attrs seeded(double seed, Attrs a = {}) {
  a["seed"] = attr_float(static_cast<float>(seed));
  return a;
}

// Two draws of each kind: with the same seed, and without one (keyed by the node's id).
Graph stream_pairs(uint64_t run_seed) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(4), dim(16)});
  Attrs shape = {{"shape", attr_ints({4, 16})}};
  b.output(b.op("RandomNormal", "a", {}, seeded(3, shape)));
  b.output(b.op("RandomNormalLike", "b", {x}, seeded(3)));
  b.output(b.op("RandomNormal", "c", {}, shape));
  b.output(b.op("RandomNormal", "d", {}, shape));
  Graph g = b.finish();
  g.random_seed = run_seed;
  return g;
}

TEST(RandomOps, StreamsFollowTheSeedAttributeElseTheRunSeedAndTheNode) {
  TensorMap in = {{"x", Tensor(DType::f32, {4, 16})}};
  std::vector<RefTensor> r0 = run_reference(stream_pairs(0), in), r7 = run_reference(stream_pairs(7), in);
  EXPECT_EQ(r0[0].f, r0[1].f);  // one seed, one stream, whichever op draws it
  EXPECT_NE(r0[2].f, r0[3].f);  // unseeded nodes: each its own stream
  EXPECT_EQ(r0[0].f, r7[0].f);  // --seed leaves a seeded node alone
  EXPECT_NE(r0[2].f, r7[2].f);  // and moves an unseeded one
  EXPECT_EQ(run_reference(stream_pairs(7), in)[2].f, r7[2].f);
}

// Each kind of draw and dtype; the shapes are odd so no tile divides them.
Graph draws() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(3), dim(5), dim(67)});
  b.output(b.op("RandomNormalLike", "/noise", {x}));
  b.output(b.op("RandomNormal", "/scaled", {},
                seeded(11, {{"shape", attr_ints({7, 45})}, {"mean", attr_float(0.5f)}, {"scale", attr_float(2.0f)}})));
  b.output(b.op("RandomUniform", "/unit", {}, {{"shape", attr_ints({9, 31})}}));
  b.output(b.op("RandomUniformLike", "/wide", {x}, {{"low", attr_float(-3)}, {"high", attr_float(5)}}));
  b.output(b.op("RandomNormalLike", "/half", {x}, {{"dtype", attr_int(10)}}));  // float16
  b.output(b.op("Bernoulli", "/coin", {b.op("Sigmoid", "/p", {x})}));
  return b.finish();
}

TensorMap draw_inputs() {
  Tensor x(DType::f32, {3, 5, 67});
  for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = static_cast<float>(std::sin(0.37 * k) * 3);
  return {{"x", x}};
}

std::string hash(const Tensor& t) { return sha256_hex(t.bytes.data(), t.bytes.size()); }

LOCKSTEP_ON_EACH_TARGET(RandomOn);

TEST_P(RandomOn, DrawsAgreeWithTheReferenceAndGiveTheCpusBytes) {
  Graph g = draws();
  TensorMap in = draw_inputs();
  std::vector<Tensor> want = compile(g, "ref")->run(in);
  CompileOptions opts;
  opts.checked = true;
  std::vector<Tensor> got = compile(g, GetParam(), opts)->run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    Agreement a = compare(to_ref(got[k]), to_ref(want[k]));
    EXPECT_TRUE(agrees(a)) << "output " << k << ": cosine " << a.cosine << ", rel L2 " << a.rel_l2;
  }
  // The uniform draws on [0, 1) and the coin flips are exact: the reference's bytes.
  EXPECT_EQ(hash(got[2]), hash(want[2]));
  EXPECT_EQ(hash(got[5]), hash(want[5]));
  if (GetParam() == "cpu") return;
  SKIP_UNLESS_RUNS("cpu");
  std::vector<Tensor> cpu = compile(g, "cpu")->run(in);
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(hash(got[k]), hash(cpu[k])) << "output " << k;
}

// The float64 draws: 53-bit uniforms and the polar method in float64; a target without
// float64 (metal-sim) refuses them by name.
TEST_P(RandomOn, Float64DrawsAgreeWithTheReference) {
  GraphBuilder b;
  int x = b.input("x", DType::f64, {dim(5), dim(41)});
  b.output(b.op("RandomNormalLike", "/noise", {x}));
  b.output(b.op("RandomUniform", "/unit", {}, {{"shape", attr_ints({6, 29})}, {"dtype", attr_int(11)}}));
  b.output(b.op("Bernoulli", "/coin", {b.op("Sigmoid", "/p", {x})}));
  Graph g = b.finish();
  Tensor xv(DType::f64, {5, 41});
  for (int64_t k = 0; k < xv.numel(); ++k) xv.data<double>()[k] = std::cos(0.91 * k) * 2;
  std::vector<Tensor> want = compile(g, "ref")->run({{"x", xv}}), got;
  std::string err = testing::error_of([&] { got = compile(g, GetParam())->run({{"x", xv}}); });
  if (!err.empty() && err.find("f64") != std::string::npos) GTEST_SKIP() << err;
  ASSERT_EQ(err, "");
  Agreement a = compare(to_ref(got[0]), to_ref(want[0]));
  EXPECT_TRUE(agrees(a)) << "cosine " << a.cosine << ", rel L2 " << a.rel_l2;
  EXPECT_EQ(hash(got[1]), hash(want[1]));
  EXPECT_EQ(hash(got[2]), hash(want[2]));
}

}  // namespace
}  // namespace lockstep
