// One compile serves every length: a decoder with a symbolic time axis, compiled once, run at
// lengths it was never compiled for, against the float64 reference and against programs
// compiled for each length on their own.
#include <gtest/gtest.h>

#include <array>

#include "backend/registry.h"
#include "graph/builder.h"
#include "passes/generalise.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/parity.h"
#include "vits.h"

namespace lockstep {
namespace {

using testing::error_of;

vits::Config small_decoder() {
  vits::Config c;
  c.part = vits::Part::decoder;
  c.T = -1;  // symbolic "T"
  c.flow.channels = 8;
  c.flow.hidden = 8;
  c.flow.layers = 2;
  c.flow.flows = 2;
  c.dec.upsample_initial = 16;
  c.dec.rates = {4, 2};
  c.dec.kernels = {8, 4};
  return c;
}

std::string sha_of(const std::vector<Tensor>& outs) {
  std::string s;
  for (const Tensor& t : outs) s += tensor_sha256(t) + ",";
  return s;
}

// T = 1 included, where a kernel of 8 taps is wider than the input.
LOCKSTEP_ON_EACH_TARGET(SymbolicLengths);

TEST_P(SymbolicLengths, OneCompileServesEveryLengthBitForBitAsCompiledForIt) {
  Graph g = vits::build(small_decoder());
  CompileOptions sym, spec;
  spec.symbolic = false;
  std::unique_ptr<Program> p = compile(g, GetParam(), sym);
  // Each length is also compiled for itself (PoCL: half a minute each with an empty cache): the
  // default tier binds T = 1 and binds 17 again; the exhaustive tier adds 5 and 40.
  std::vector<int64_t> lengths =
      testing::full_sweep() ? std::vector<int64_t>{17, 5, 1, 40, 17} : std::vector<int64_t>{17, 1, 17};
  for (int64_t T : lengths) {
    TensorMap in = vits::seed_inputs(g, T);
    std::vector<Tensor> outs = p->run(in);
    ASSERT_TRUE(p->stats().symbolic) << p->stats().note;
    EXPECT_EQ(outs[0].shape, (Shape{1, 1, 8 * T}));
    for (const Agreement& a : agreement_with_ref(g, in, outs)) EXPECT_TRUE(agrees(a)) << "T=" << T << ": " << describe(a);
    EXPECT_EQ(sha_of(outs), sha_of(compile(g, GetParam(), spec)->run(in))) << "T=" << T;
  }
  EXPECT_EQ(p->stats().compiles, 1);
  EXPECT_EQ(p->stats().binds, static_cast<int>(lengths.size()) - 1);
}

// x [1, 16, T] -> Conv 16 -> 16 channels, 3 taps. From T = 256 a GPU work group copies the
// weights of its row blocks into shared memory; at most lengths a group's items straddle two
// row blocks and the last group lies partly past the end, which the probe length (a multiple of
// the group) never shows.
Graph wide_conv() {
  GraphBuilder b(23);
  int x = b.input("x", DType::f32, {dim(1), dim(16), dim("T")});
  Tensor w(DType::f32, {16, 16, 3});
  for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.01f * static_cast<float>(k % 37) - 0.17f;
  b.output(b.op("Conv", "/conv", {x, b.initializer("w", w)}, {{"pads", attr_ints({1, 1})}}));
  return b.finish();
}

TEST_P(SymbolicLengths, GroupsStraddlingRowBlocksGiveTheBytesCompiledForTheLength) {
  Graph g = wide_conv();
  CompileOptions spec;
  spec.symbolic = false;
  std::unique_ptr<Program> p = compile(g, GetParam());
  for (int64_t T : {300, 400, 257, 384, 1000}) {
    Tensor x(DType::f32, {1, 16, T});
    for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = 0.001f * static_cast<float>(k % 997) - 0.4f;
    TensorMap in = {{"x", x}};
    std::vector<Tensor> outs = p->run(in);
    ASSERT_TRUE(p->stats().symbolic) << p->stats().note;
    for (const Agreement& a : agreement_with_ref(g, in, outs)) EXPECT_TRUE(agrees(a)) << "T=" << T << ": " << describe(a);
    EXPECT_EQ(sha_of(outs), sha_of(compile(g, GetParam(), spec)->run(in))) << "T=" << T;
  }
}

// Printers are shared by every compile of a process: the first symbolic program printed its
// loop bounds from the symbols buffer, every later one from the locals read_symbols declares
// (state left by the kernel printed before), so two compiles of one model made two programs.
TEST_P(SymbolicLengths, EveryCompileInAProcessPrintsTheSameProgram) {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(4), dim(5)});
  b.output(b.op("Tanh", "/tanh", {x}));
  compile(b.finish(), GetParam())->prepare({{"x", Tensor(DType::f32, {1, 4, 5})}});  // a plan of no symbols
  Graph g = wide_conv();
  TensorMap in = {{"x", Tensor(DType::f32, {1, 16, 40})}};
  std::unique_ptr<Program> first = compile(g, GetParam()), second = compile(g, GetParam());
  first->prepare(in);
  second->prepare(in);
  ASSERT_TRUE(first->stats().symbolic) << first->stats().note;
  EXPECT_EQ(first->identity(), second->identity());
}

// x [1, 16, T] -> ConvTranspose 16 -> 8 channels with K taps, stride S, output S T: computed
// phase by phase, where S does not divide K the phases with fewer real taps masking the rest.
// At K = 8, S = 4, T = 5 GCC's -O3 interchanged the cpu tile's channel and tap loops (16 and 2
// long, 6 output channels of 5 columns), another order of every sum, so other bytes than the
// symbolic program's, until the cpu flags said -fno-loop-interchange.
Graph transposed_conv(int64_t K, int64_t S, int64_t pad, int64_t output_padding) {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(16), dim("T")});
  Tensor w(DType::f32, {16, 8, K});
  for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.013f * static_cast<float>(k % 41) - 0.25f;
  b.output(b.op("ConvTranspose", "/up", {x, b.initializer("w", w)},
                {{"strides", attr_ints({S})}, {"pads", attr_ints({pad, pad})}, {"output_padding", attr_ints({output_padding})}}));
  return b.finish();
}

TEST_P(SymbolicLengths, TransposedConvsGiveTheBytesCompiledForTheLength) {
  struct Case { int64_t K, S, pad, output_padding; };
  for (Case c : {Case{8, 4, 2, 0}, Case{7, 4, 2, 1}}) {
    Graph g = transposed_conv(c.K, c.S, c.pad, c.output_padding);
    CompileOptions spec;
    spec.symbolic = false;
    std::unique_ptr<Program> p = compile(g, GetParam());
    for (int64_t T : {5, 17, 1}) {
      Tensor x(DType::f32, {1, 16, T});
      for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = 0.002f * static_cast<float>(k % 613) - 0.6f;
      TensorMap in = {{"x", x}};
      std::vector<Tensor> outs = p->run(in);
      std::string at = "K=" + std::to_string(c.K) + " S=" + std::to_string(c.S) + " T=" + std::to_string(T);
      ASSERT_TRUE(p->stats().symbolic) << p->stats().note;
      EXPECT_EQ(outs[0].shape, (Shape{1, 8, c.S * T})) << at;
      for (const Agreement& a : agreement_with_ref(g, in, outs)) EXPECT_TRUE(agrees(a)) << at << ": " << describe(a);
      EXPECT_EQ(sha_of(outs), sha_of(compile(g, GetParam(), spec)->run(in))) << at;
    }
  }
}

// Three symbols: y = Conv(Concat(tanh(x), 2 * z)) with x [B, 4, T] and z [B, 4, U].
Graph three_symbols() {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim("B"), dim(4), dim("T")});
  int z = b.input("z", DType::f32, {dim("B"), dim(4), dim("U")});
  Tensor two(DType::f32, {});
  two.data<float>()[0] = 2.0f;
  Tensor w(DType::f32, {3, 4, 3});
  for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.05f * static_cast<float>(k % 7) - 0.1f;
  int joined = b.op("Concat", "/join", {b.op("Tanh", "/tanh", {x}), b.op("Mul", "/twice", {z, b.initializer("two", two)})},
                    {{"axis", attr_int(2)}});
  b.output(b.op("Conv", "/conv", {joined, b.initializer("w", w)}, {{"pads", attr_ints({1, 1})}}));
  return b.finish();
}

TensorMap three_inputs(int64_t B, int64_t T, int64_t U) {
  Tensor x(DType::f32, {B, 4, T}), z(DType::f32, {B, 4, U});
  for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = 0.03f * static_cast<float>(k % 53) - 0.7f;
  for (int64_t k = 0; k < z.numel(); ++k) z.data<float>()[k] = 0.02f * static_cast<float>(k % 31) - 0.3f;
  return {{"x", x}, {"z", z}};
}

TEST_P(SymbolicLengths, SeveralSymbolsBindTogether) {
  Graph g = three_symbols();
  CompileOptions spec;
  spec.symbolic = false;
  std::unique_ptr<Program> p = compile(g, GetParam());
  for (auto [B, T, U] : std::vector<std::array<int64_t, 3>>{{1, 5, 7}, {2, 1, 30}, {3, 17, 1}, {1, 5, 7}}) {
    TensorMap in = three_inputs(B, T, U);
    std::vector<Tensor> outs = p->run(in);
    ASSERT_TRUE(p->stats().symbolic) << p->stats().note;
    EXPECT_EQ(outs[0].shape, (Shape{B, 3, T + U}));
    for (const Agreement& a : agreement_with_ref(g, in, outs)) EXPECT_TRUE(agrees(a)) << B << "," << T << "," << U << ": " << describe(a);
    EXPECT_EQ(sha_of(outs), sha_of(compile(g, GetParam(), spec)->run(in))) << B << "," << T << "," << U;
  }
  EXPECT_EQ(p->stats().compiles, 1);
  EXPECT_EQ(p->stats().binds, 3);
}

// --reserve T=N sizes the memory at the first bind for lengths up to N: no later bind up to N
// allocates, one needing more (twice N) does, and the values are the same either way. (Just
// past N may still fit: each length's memory plan packs its buffers anew.)
TEST(Symbolic, ReserveSizesMemoryForLengthsUpToIt) {
  Graph g = vits::build(small_decoder());
  CompileOptions reserved;
  reserved.reserve["T"] = 40;
  std::unique_ptr<Program> grown = compile(g, "cpu"), kept = compile(g, "cpu", reserved);
  for (int64_t T : {5, 40, 17}) {
    TensorMap in = vits::seed_inputs(g, T);
    EXPECT_EQ(sha_of(grown->run(in)), sha_of(kept->run(in))) << "T=" << T;
  }
  EXPECT_EQ(grown->stats().grows, 1);
  EXPECT_EQ(kept->stats().grows, 0);
  kept->run(vits::seed_inputs(g, 80));
  EXPECT_EQ(kept->stats().grows, 1);
  CompileOptions wrong;
  wrong.reserve["U"] = 4;
  std::string e = error_of([&] { compile(g, "cpu", wrong)->run(vits::seed_inputs(g, 5)); });
  EXPECT_NE(e.find("--reserve U: the symbolic program has no symbol 'U' (symbols: T)"), std::string::npos) << e;
}

TEST(Symbolic, TheSourceIsOneForEveryLengthAndReadsTheLength) {
  Graph g = vits::build(small_decoder());
  std::unique_ptr<Program> p = compile(g, "cpu");
  p->prepare(vits::seed_inputs(g, 5));
  auto at5 = p->sources();
  p->prepare(vits::seed_inputs(g, 9));
  EXPECT_EQ(at5, p->sources());
  std::string all;
  for (const auto& [name, text] : at5) all += text;
  EXPECT_NE(all.find("const int64_t ls_s0 = "), std::string::npos);
  EXPECT_EQ(all.find(" < 9;"), std::string::npos);
  EXPECT_EQ(all.find(" < 72;"), std::string::npos);
}

TEST(Symbolic, InputsThatDisagreeOnTAreAnErrorNamingBoth) {
  Graph g = vits::build(small_decoder());
  std::unique_ptr<Program> p = compile(g, "cpu");
  p->run(vits::seed_inputs(g, 6));  // the symbolic program exists
  TensorMap in = vits::seed_inputs(g, 6);
  in["y_mask"] = Tensor(DType::f32, {1, 1, 7});
  std::string e = error_of([&] { p->run(in); });
  EXPECT_NE(e.find("'T'"), std::string::npos) << e;
  EXPECT_NE(e.find("z_p"), std::string::npos) << e;
  EXPECT_NE(e.find("y_mask"), std::string::npos) << e;
}

// x[1,4,T] -> Slice(end 100 on T) -> Relu: at the probe lengths the slice keeps all of T,
// beyond 100 it cuts. The shape rules say so at bind time, and that length is compiled apart.
Graph sliced_at_100() {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(4), dim("T")});
  auto ints = [&](const std::string& name, int64_t v) {
    Tensor t(DType::i64, {1});
    t.data<int64_t>()[0] = v;
    return b.initializer(name, t);
  };
  int s = b.op("Slice", "/slice", {x, ints("starts", 0), ints("ends", 100), ints("axes", 2)});
  b.output(b.op("Relu", "/relu", {s}));
  return b.finish();
}

TensorMap ramp(int64_t T) {
  Tensor t(DType::f32, {1, 4, T});
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = 0.01f * static_cast<float>(k) - 1.0f;
  return {{"x", t}};
}

TEST(Symbolic, ALengthTheShapeRulesTreatApartIsCompiledApart) {
  Graph g = sliced_at_100();
  std::unique_ptr<Program> p = compile(g, "cpu");
  for (int64_t T : {30, 150, 7}) {
    TensorMap in = ramp(T);
    std::vector<Tensor> outs = p->run(in);
    EXPECT_EQ(outs[0].shape, (Shape{1, 4, std::min<int64_t>(T, 100)})) << "T=" << T;
    for (const Agreement& a : agreement_with_ref(g, in, outs)) EXPECT_TRUE(agrees(a)) << "T=" << T << ": " << describe(a);
    EXPECT_EQ(p->stats().symbolic, T != 150) << "T=" << T;
  }
  EXPECT_NE(p->stats().note.find("/slice"), std::string::npos) << p->stats().note;
  EXPECT_EQ(p->stats().compiles, 2);
}

int scalar_i64(GraphBuilder& b, const std::string& name, int64_t v, bool vector = false) {
  Tensor t(DType::i64, vector ? Shape{1} : Shape{});
  t.data<int64_t>()[0] = v;
  return b.initializer(name, t);
}

// y = x[:, :, min(T - 1, 40)]: the index folds to 40 at every probe length, and is T - 1 below
// 41. The kernels were built with 40, so a shorter length must not use them.
Graph gather_min_index() {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(4), dim("T")});
  int t = b.op("Gather", "/len", {b.op("Shape", "/shape", {x}), scalar_i64(b, "two", 2)}, {{"axis", attr_int(0)}});
  int last = b.op("Sub", "/last", {t, scalar_i64(b, "one", 1)});
  int forty = scalar_i64(b, "forty", 40);
  int at = b.op("Where", "/at", {b.op("Less", "/less", {last, forty}), last, forty});
  b.output(b.op("Gather", "/pick", {x, at}, {{"axis", attr_int(2)}}));
  return b.finish();
}

// y = x reversed along T, through Gather(x, Range(T - 1, -1, -1)): the folded Range is a
// constant whose length is T, read by no kernel (the gather lowers to a view).
Graph flip() {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(4), dim("T")});
  int t = b.op("Gather", "/len", {b.op("Shape", "/shape", {x}), scalar_i64(b, "two", 2)}, {{"axis", attr_int(0)}});
  int start = b.op("Sub", "/start", {t, scalar_i64(b, "one", 1)});
  int idx = b.op("Range", "/range", {start, scalar_i64(b, "minus_one", -1), scalar_i64(b, "step", -1)});
  b.output(b.op("Gather", "/flip", {x, idx}, {{"axis", attr_int(2)}}));
  return b.finish();
}

TEST(Symbolic, ValuesFoldedFromTheLengthAreCheckedAtEachBind) {
  for (bool checked : {false, true}) {
    for (Graph g : {gather_min_index(), flip()}) {
      CompileOptions o;
      o.checked = checked;
      std::unique_ptr<Program> p = compile(g, "cpu", o);
      for (int64_t T : {100, 10, 150, 3, 100}) {
        TensorMap in = ramp(T);
        std::vector<Tensor> outs = p->run(in);
        for (const Agreement& a : agreement_with_ref(g, in, outs))
          EXPECT_TRUE(agrees(a)) << node_id(g, 0) << " T=" << T << ": " << describe(a);
      }
    }
  }
}

// A bind runs the shape rules again in the previous length's types: every value's type and
// folded value must be a fresh inference's, including values that fold at one length only.
// (flip's Range folds up to kFoldLimit elements: T = 70000 leaves it unknown.)
TEST(Symbolic, ShapeRulesRunAgainInPlaceGiveAFreshInferencesTypes) {
  auto types_at = [](int64_t T) { return std::vector<TypeInfo>{TypeInfo{DType::f32, true, {1, 4, T}}}; };
  for (const Graph& g : {gather_min_index(), flip()}) {
    std::vector<TypeInfo> first = types_at(100);
    GraphTypes again = infer_graph(g, &first, nullptr, 64);
    for (int64_t T : {10, 150, 70000, 3, 100, 41}) {
      std::vector<TypeInfo> types = types_at(T);
      reinfer_graph(g, again, types);
      GraphTypes fresh = infer_graph(g, &types, nullptr, 64);
      for (size_t v = 0; v < g.values.size(); ++v) {
        const std::string& name = g.values[v].name;
        EXPECT_EQ(again.type[v].str(), fresh.type[v].str()) << name << " T=" << T;
        ASSERT_EQ(again.value[v].has_value(), fresh.value[v].has_value()) << name << " T=" << T;
        if (fresh.value[v]) {
          EXPECT_EQ(again.value[v]->i, fresh.value[v]->i) << name << " T=" << T;
        }
      }
    }
  }
}

TEST(Symbolic, ShapesAreAffineInTheSymbols) {
  Graph g = vits::build(small_decoder());
  Specialisation like = specialisation_for(g, vits::seed_inputs(g, 11));
  std::string why;
  std::optional<SymbolicPlan> s = generalise(g, like, {}, &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->plan.symbols, std::vector<std::string>{"T"});
  const kir::Buffer& audio = s->plan.buffers[s->plan.outputs[0]];
  ASSERT_EQ(audio.dims.size(), 3u);
  kir::Plan at3 = instantiate(*s, {3});
  EXPECT_EQ(at3.buffers[at3.outputs[0]].shape, (Shape{1, 1, 24}));
  int audio_value = g.find_value("audio");
  ASSERT_GE(audio_value, 0);
  EXPECT_EQ(s->value_dims[audio_value][2].str({"T"}), "8*T");
}

// Where no GPU is, cuda still generates and compiles its symbolic program (NVRTC).
TEST(Symbolic, CudaSourceCompilesWithNvrtc) {
  Graph g = vits::build(small_decoder());
  std::unique_ptr<Program> p;
  try {
    p = compile(g, "cuda");
    p->prepare(vits::seed_inputs(g, 9));
  } catch (const Error& e) {
    GTEST_SKIP() << "cuda cannot compile here: " << e.what();
  }
  EXPECT_TRUE(p->stats().symbolic) << p->stats().note;
  EXPECT_EQ(p->stats().compiles, 1);
  std::string all;
  for (const auto& [name, text] : p->sources()) all += text;
  EXPECT_NE(all.find("const int64_t ls_s0 = "), std::string::npos);
  // Work items unflatten by the length through its multipliers, never a run-time division
  // in 32 bits (a constant prints without a parenthesis: "(uint32_t)8194").
  EXPECT_NE(all.find("ls_udiv32((uint32_t)i, "), std::string::npos);
  for (const char* by : {" / (uint32_t)(", " % (uint32_t)(", " / (uint32_t)ls_s", " % (uint32_t)ls_s"})
    EXPECT_EQ(all.find(by), std::string::npos) << by;
  // The helper as tests/symbols_test.cpp checks it, term for term.
  EXPECT_NE(all.find("return m == 0 ? x : (uint32_t)(((uint64_t)x * (m >> 32) + (((uint64_t)x * (uint32_t)m) >> 32)) >> 32);"),
            std::string::npos);
  EXPECT_NE(all.find("for (uint32_t i32 = "), std::string::npos);  // elementwise loops count in 32 bits
  // A group that copies two row blocks finds them by the multiplier too, not a 64-bit division.
  EXPECT_NE(all.find("const int64_t first_block = (n32 ? (int64_t)ls_udiv32((uint32_t)i0, "), std::string::npos);
  EXPECT_EQ(all.find("/ per_block"), std::string::npos);
}

TEST(Symbolic, SpecialiseCompilesEachLength) {
  Graph g = vits::build(small_decoder());
  CompileOptions o;
  o.symbolic = false;
  std::unique_ptr<Program> p = compile(g, "cpu", o);
  p->run(vits::seed_inputs(g, 4));
  p->run(vits::seed_inputs(g, 6));
  EXPECT_EQ(p->stats().compiles, 2);
  EXPECT_FALSE(p->stats().symbolic);
}

}  // namespace
}  // namespace lockstep
