// The float32 math library (codegen/math_library.h) against the float64 reference: each
// target within the documented bounds, on the special values exactly the reference, with the
// same bits as the cpu; and, compiled on the host alone, the worst cases docs/math.md quotes.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "backend/registry.h"
#include "codegen/prelude.h"
#include "core/dirs.h"
#include "core/sha256.h"
#include "test_util.h"
#include "verify/math_ulp.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using codegen::math_fn_info;

// Few enough points for a few seconds a target; the CLI's default sweep is 64 times larger.
constexpr int64_t kTestPoints = int64_t{1} << 16;

LOCKSTEP_ON_EACH_TARGET(MathUlp);

TEST_P(MathUlp, EveryFunctionIsWithinItsDocumentedBound) {
  for (MathFn fn : codegen::kMathFns) {
    UlpResult r = measure_ulp(GetParam(), fn, kTestPoints);
    EXPECT_LE(r.worst_ulp, math_fn_info(fn).bound_ulp)
        << math_fn_info(fn).name << " on " << GetParam() << " at x=" << float_text(r.x) << " y=" << float_text(r.y)
        << ": got " << float_text(r.got) << ", exact " << r.exact;
  }
}

// Special inputs, with the float64 reference's results rounded to float32, which must come out
// exactly (signed zeros included; NaN as any NaN).
TEST_P(MathUlp, SpecialValuesGiveTheReferencesResultsExactly) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float sub = std::numeric_limits<float>::denorm_min(), big = std::numeric_limits<float>::max();
  std::vector<float> specials = {0.0f, -0.0f, inf, -inf, nan};
  std::vector<float> saturating = {sub, -sub, big, -big, 200.0f, -200.0f};  // 1, 0, +-1, +-x exactly
  std::vector<float> log_specials = {1.0f, -1.0f, -sub, -big, -200.0f};
  std::vector<float> tanh_erf_specials = {20.0f, -20.0f, 5.0f, -5.0f};
  std::vector<float> pow_operands = {0.0f, -0.0f, inf, -inf, nan, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f,
                                     2.5f, -2.5f, sub, big, -big, 0x1p24f, -0x1p24f};
  for (MathFn fn : codegen::kMathFns) {
    MathSweep s;
    if (fn != MathFn::Pow) s.x = specials;
    for (float v : fn == MathFn::Log ? log_specials : fn == MathFn::Pow ? std::vector<float>{} : saturating) s.x.push_back(v);
    if (fn == MathFn::Tanh || fn == MathFn::Erf) s.x.insert(s.x.end(), tanh_erf_specials.begin(), tanh_erf_specials.end());
    for (float x : fn == MathFn::Pow ? pow_operands : std::vector<float>{})
      for (float y : pow_operands) {
        bool special = [](float v) { return v == 0 || std::isinf(v) || std::isnan(v) || std::fabs(v) == 1; }(x) ||
                       y == 0 || std::isinf(y) || std::isnan(y) || std::fabs(y) == 1 || y == 2;
        if (special) s.x.push_back(x), s.y.push_back(y);
      }
    Graph g = math_graph(fn, static_cast<int64_t>(s.x.size()));
    TensorMap in = math_inputs(fn, s);
    Tensor out = compile(g, GetParam())->run(in).at(0);
    std::vector<double> exact = math_reference(fn, s);
    for (size_t k = 0; k < s.x.size(); ++k) {
      float want = static_cast<float>(exact[k]), got = out.data<float>()[k];
      std::string where = std::string(math_fn_info(fn).name) + "(" + float_text(s.x[k]) +
                          (fn == MathFn::Pow ? ", " + float_text(s.y[k]) : "") + ") on " + GetParam();
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << where << ": got " << got;
        continue;
      }
      EXPECT_EQ(got, want) << where;
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << where << ": the sign of " << got;
    }
  }
}

// The point of one library: every target computes the same algorithm with correctly rounded
// operations, so its results have the cpu's bits, NaN included.
TEST_P(MathUlp, ResultsHaveTheCpusBits) {
  if (GetParam() == "cpu") GTEST_SKIP() << "the cpu is the one compared with";
  SKIP_UNLESS_RUNS("cpu");
  for (MathFn fn : codegen::kMathFns) {
    MathSweep s = math_sweep(fn, kTestPoints);
    Graph g = math_graph(fn, static_cast<int64_t>(s.x.size()));
    TensorMap in = math_inputs(fn, s);
    Tensor here = compile(g, GetParam())->run(in).at(0), cpu = compile(g, "cpu")->run(in).at(0);
    ASSERT_EQ(here.bytes.size(), cpu.bytes.size());
    size_t differ = 0, first = 0;
    for (size_t k = 0; k < s.x.size(); ++k)
      if (std::memcmp(here.data<float>() + k, cpu.data<float>() + k, 4) != 0 && differ++ == 0) first = k;
    EXPECT_EQ(differ, 0u) << math_fn_info(fn).name << " on " << GetParam() << ": " << differ << " results differ from the cpu's, first at x="
                          << float_text(s.x[first]) << (s.y.empty() ? "" : " y=" + float_text(s.y[first])) << ": "
                          << float_text(here.data<float>()[first]) << " against " << float_text(cpu.data<float>()[first]);
  }
}

// The library compiled by the system compiler with the cpu target's flags, alone (no graph, no
// pipeline), called over `lockstep ulp`'s default sweep: its worst case for each function is
// the one docs/math.md quotes (codegen::math_fn_info).
class HostLibrary {
 public:
  HostLibrary() : dir_("lockstep-mathlib") {
    codegen::CDialect d;
    d.fn = "static inline";
    d.conversions = R"(#include <cmath>
#include <cstdint>
#include <cstring>
static inline float ls_as_float(uint32_t x) { float f; std::memcpy(&f, &x, 4); return f; }
static inline uint32_t ls_as_uint(float f) { uint32_t x; std::memcpy(&x, &f, 4); return x; }
static inline double ls_as_double(uint64_t x) { double d; std::memcpy(&d, &x, 8); return d; }
)";
    std::string source = codegen::helper_functions(d) + R"(
extern "C" void ls_sweep(int fn, const float* x, const float* y, float* out, long n) {
  switch (fn) {
    case 0: for (long k = 0; k < n; ++k) out[k] = ls_exp(x[k]); break;
    case 1: for (long k = 0; k < n; ++k) out[k] = ls_log(x[k]); break;
    case 2: for (long k = 0; k < n; ++k) out[k] = ls_tanh(x[k]); break;
    case 3: for (long k = 0; k < n; ++k) out[k] = ls_erf(x[k]); break;
    case 4: for (long k = 0; k < n; ++k) out[k] = ls_pow(x[k], y[k]); break;
    case 5: for (long k = 0; k < n; ++k) out[k] = ls_sigmoid(x[k]); break;
  }
}
)";
    std::string code = find_target("cpu")->make_compiler(CompileOptions{}, nullptr)->compile(source);
    std::string so = (dir_.path() / "mathlib.so").string();
    std::ofstream(so, std::ios::binary) << code;
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw Error(std::string("dlopen: ") + dlerror());
    sweep_ = reinterpret_cast<void (*)(int, const float*, const float*, float*, long)>(dlsym(handle_, "ls_sweep"));
  }
  ~HostLibrary() {
    if (handle_) dlclose(handle_);
  }
  std::vector<float> run(MathFn fn, const MathSweep& s) const {
    std::vector<float> out(s.x.size());
    sweep_(static_cast<int>(fn), s.x.data(), s.y.empty() ? s.x.data() : s.y.data(), out.data(), static_cast<long>(out.size()));
    return out;
  }

 private:
  PrivateTempDir dir_;
  void* handle_ = nullptr;
  void (*sweep_)(int, const float*, const float*, float*, long) = nullptr;
};

TEST(MathLibrary, TheCpuWorstCasesAreTheDocumentedOnes) {
  SKIP_UNLESS_RUNS("cpu");
  HostLibrary lib;
  for (MathFn fn : codegen::kMathFns) {
    const codegen::MathFnInfo& info = math_fn_info(fn);
    MathSweep s = math_sweep(fn, kUlpDefaultPoints);
    UlpResult r = worst_ulp(fn, s, math_reference(fn, s), lib.run(fn, s));
    EXPECT_NEAR(r.worst_ulp, info.cpu_worst_ulp, 0.0005) << info.name << " at x=" << float_text(r.x) << " y=" << float_text(r.y);
    EXPECT_EQ(r.x, info.cpu_worst_x) << info.name << ": worst case at x=" << float_text(r.x);
    EXPECT_EQ(r.y, info.cpu_worst_y) << info.name << ": worst case at y=" << float_text(r.y);
    EXPECT_LE(r.worst_ulp, info.bound_ulp) << info.name;
    EXPECT_LT(info.cpu_worst_ulp, info.bound_ulp + 1e-9) << info.name << ": the documented figure exceeds the bound";
  }
}

// The same library in a kernel of the cpu target: the same bits as compiled alone (the pipeline
// and the host loop printer change nothing about the values).
TEST(MathLibrary, KernelsComputeWhatTheLibraryAloneComputes) {
  SKIP_UNLESS_RUNS("cpu");
  HostLibrary lib;
  for (MathFn fn : codegen::kMathFns) {
    MathSweep s = math_sweep(fn, kTestPoints);
    std::vector<float> alone = lib.run(fn, s);
    Tensor kernel = compile(math_graph(fn, static_cast<int64_t>(s.x.size())), "cpu")->run(math_inputs(fn, s)).at(0);
    EXPECT_EQ(sha256_hex(alone.data(), alone.size() * 4), sha256_hex(kernel.bytes.data(), kernel.bytes.size()))
        << math_fn_info(fn).name;
  }
}

TEST(MathLibrary, UlpErrorCountsInTheExactValuesBinade) {
  EXPECT_EQ(ulp_error(1.0, 1.0f), 0);
  EXPECT_DOUBLE_EQ(ulp_error(1.0, std::nextafter(1.0f, 2.0f)), 1.0);   // spacing 2^-23 above 1
  EXPECT_DOUBLE_EQ(ulp_error(1.0, std::nextafter(1.0f, 0.0f)), 0.5);   // 2^-24 below, in ulp of [1, 2)
  EXPECT_DOUBLE_EQ(ulp_error(0x1p-149, 0.0f), 1.0);                    // subnormal spacing
  EXPECT_EQ(ulp_error(1e300, std::numeric_limits<float>::infinity()), 0);  // overflow rounds to infinity
  EXPECT_EQ(ulp_error(NAN, NAN), 0);
  EXPECT_TRUE(std::isinf(ulp_error(NAN, 1.0f)));
  EXPECT_TRUE(std::isinf(ulp_error(1.0, NAN)));
  EXPECT_TRUE(std::isinf(ulp_error(-1e-50, 0.0f)));  // rounds to -0, not +0
  EXPECT_EQ(ulp_error(-1e-50, -0.0f), 0x1p149 * 1e-50);
  EXPECT_TRUE(std::isinf(ulp_error(-INFINITY, std::numeric_limits<float>::lowest())));
}

TEST(MathLibrary, SweepsAreTheSameEveryTimeAndCoverTheSpecials) {
  for (MathFn fn : codegen::kMathFns) {
    MathSweep a = math_sweep(fn, 1000), b = math_sweep(fn, 1000);
    ASSERT_GE(a.x.size(), 1000u);
    EXPECT_EQ(sha256_hex(a.x.data(), a.x.size() * 4), sha256_hex(b.x.data(), b.x.size() * 4));
    EXPECT_EQ(a.y.size(), fn == MathFn::Pow ? a.x.size() : 0u);
    bool nan = false, inf = false, negzero = false;
    for (float v : a.x) nan |= std::isnan(v), inf |= std::isinf(v), negzero |= v == 0 && std::signbit(v);
    EXPECT_TRUE(nan && inf && negzero) << math_fn_info(fn).name;
  }
}

TEST(MathLibrary, UlpCommandPrintsEachFunctionAndTargetWithinTheBound) {
  SKIP_UNLESS_RUNS("cpu");
  verify_test::CliResult r = verify_test::lockstep({"ulp", "--targets", "cpu", "--points", "4096"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("worst ulp"), std::string::npos) << r.out;
  for (MathFn fn : codegen::kMathFns) {
    std::string row = r.line(std::string(math_fn_info(fn).name) + " ");
    EXPECT_NE(row.find("cpu"), std::string::npos) << math_fn_info(fn).name << " has no cpu row in:\n" << r.out;
    EXPECT_EQ(row.find("ABOVE"), std::string::npos) << row;
  }
  r = verify_test::lockstep({"ulp", "--targets", "cpu", "--functions", "exp,gamma"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown function 'gamma'"), std::string::npos) << r.err;
  r = verify_test::lockstep({"ulp", "--targets", "ref"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("give a compiled target"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lockstep
