// Schedules are data: the schedule pass decides every kernel's loop layout from a TargetDesc,
// the printers only spell it, and legalize rewrites what a target lacks before printing.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_codegen.h"
#include "backend/cuda/cuda_codegen.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "codegen/gpu_printer.h"
#include "codegen/host_printer.h"
#include "codegen/prelude.h"
#include "core/error.h"
#include "graph/builder.h"
#include "passes/pipeline.h"
#include "passes/schedule.h"
#include "test_util.h"

namespace lockstep {
namespace {

using namespace kir;
using testing::error_of;

Buffer buffer(Buffer::Kind kind, const Shape& s, const std::string& name) {
  Buffer b;
  b.kind = kind;
  b.shape = s;
  b.name = name;
  return b;
}

// y[0, co, t] = sum over ci < 8, tap < 3 of x[0, ci, t + tap] * w[co, ci, tap] (masked: each
// term behind a select, as a strided transposed conv's phases are).
Plan conv_like(int64_t co, int64_t t, bool masked = false) {
  Plan p;
  Shape xs = {1, 8, t + 2}, ws = {co, 8, 3}, ys = {1, co, t};
  p.buffers = {buffer(Buffer::Input, xs, "x"), buffer(Buffer::Input, ws, "w"), buffer(Buffer::Output, ys, "y")};
  ExprP term = mul(load(0, xs, DType::f32, {var(0), var(3), add(var(2), var(4))}), load(1, ws, DType::f32, {var(1), var(3), var(4)}));
  if (masked) term = select(binary(Fn::Lt, var(4), icst(2)), term, cst(0, DType::f32));
  Kernel k;
  k.name = "k0";
  k.nodes = {"conv"};
  k.out = 2;
  k.body = unary(Fn::Tanh, reduce(Fn::Add, term, 3, {8, 3}));
  p.kernels = {k};
  p.inputs = {0, 1};
  p.outputs = {2};
  return p;
}

// y = tanh(x) over [2, 300].
Plan elementwise() {
  Plan p;
  p.buffers = {buffer(Buffer::Input, {2, 300}, "x"), buffer(Buffer::Output, {2, 300}, "y")};
  Kernel k;
  k.name = "k0";
  k.nodes = {"tanh"};
  k.out = 1;
  k.body = unary(Fn::Tanh, load(0, {2, 300}, DType::f32, out_vars(2)));
  p.kernels = {k};
  p.inputs = {0};
  p.outputs = {1};
  return p;
}

Schedule scheduled(Plan p, const TargetDesc& t) {
  choose_schedules(p, t);
  return p.kernels[0].schedule;
}

TEST(Schedule, HostReductionTilesLanesAndRowsOutsideTheDimBeforeTheLast) {
  Schedule s = scheduled(conv_like(16, 30), cpu::target_desc());
  EXPECT_EQ(s.loops, Schedule::Loops::Host);
  EXPECT_EQ(s.lanes, __builtin_cpu_supports("avx512f") ? 32 : 16);  // two vectors per row
  // 8 rows with AVX-512's 32 registers, 6 with AVX2's 16 (12 accumulators, no spills).
  EXPECT_EQ(s.rows, __builtin_cpu_supports("avx512f") ? 8 : 6);
  EXPECT_EQ(s.tile_at, 1);
  EXPECT_EQ(scheduled(conv_like(6, 30), cpu::target_desc()).rows, 6);  // 8 need not divide 6: a last block of the rest
  EXPECT_EQ(scheduled(conv_like(4, 30), cpu::target_desc()).rows, 4);  // the whole dim where it is shorter
}

TEST(Schedule, HostElementwiseTilesTheLastDim) {
  Schedule s = scheduled(elementwise(), cpu::target_desc());
  EXPECT_EQ(s.loops, Schedule::Loops::Host);
  EXPECT_EQ(s.lanes, 256);
  EXPECT_EQ(s.rows, 1);
  EXPECT_EQ(s.tile_at, 1);
}

// The tile rules with tiles of at most 4 x 4 (whatever cuda's own are).
TargetDesc cuda_4x4() {
  TargetDesc t = cuda::target_desc();
  t.thread_rows = t.thread_cols = 4;
  return t;
}

// The tile rules on their own: these convs are far too small to fill a GPU.
TargetDesc cuda_unfilled() {
  TargetDesc t = cuda_4x4();
  t.fill_threads = 0;
  return t;
}

TEST(Schedule, GpuReductionComputesRowsTimesColumnsPerWorkItem) {
  Schedule s = scheduled(conv_like(16, 30), cuda_unfilled());
  EXPECT_EQ(s.loops, Schedule::Loops::Gpu);
  EXPECT_EQ(s.group, 256);
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.cols, 2);  // 4 does not divide 30
  EXPECT_EQ(s.threads, 16 * 30 / 8);
  EXPECT_EQ(s.unroll, 16);
  Schedule wide = scheduled(conv_like(6, 32), cuda_unfilled());
  EXPECT_EQ(wide.rows, 2);
  EXPECT_EQ(wide.cols, 4);
  EXPECT_EQ(wide.threads, 6 * 32 / 8);
}

TEST(Schedule, GpuMaskedReductionKeepsOneColumnAndRollsItsLoops) {
  Schedule s = scheduled(conv_like(16, 32, true), cuda_unfilled());
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.cols, 1);
  EXPECT_EQ(s.unroll, 0);
  EXPECT_EQ(s.threads, 16 * 32 / 4);
}

// conv_like with its output length given as `k * T + c` of a symbol T (at T = 61).
Plan symbolic_conv_like(int64_t k, int64_t c) {
  Plan p = conv_like(16, k * 61 + c);
  p.symbols = {"T"};
  p.symbol_buf = static_cast<int>(p.buffers.size());
  p.buffers.push_back(buffer(Buffer::Symbols, {1}, "symbols"));
  p.buffers.back().dtype = DType::i64;
  ExprP T = load_flat(p.symbol_buf, {1}, DType::i64, icst(0));
  p.buffers[2].dims = {icst(1), icst(16), add(mul(T, icst(k)), icst(c))};
  return p;
}

// Columns block a symbolic length only where it is their multiple at every length: 8*T for
// four, 2*T+2 for two, T+2 for none. The fill rule cannot shrink a symbolic kernel's tile when
// compiling: the kernel carries the target's fill and picks one output per item at run time.
TEST(Schedule, GpuColumnsOverALengthThatIsTheirMultipleAtEveryLength) {
  EXPECT_EQ(scheduled(symbolic_conv_like(8, 0), cuda_4x4()).cols, 4);
  EXPECT_EQ(scheduled(symbolic_conv_like(2, 2), cuda_4x4()).cols, 2);
  EXPECT_EQ(scheduled(symbolic_conv_like(1, 2), cuda_4x4()).cols, 1);
  Schedule s = scheduled(symbolic_conv_like(8, 4), cuda_4x4());
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.fill, cuda::target_desc().symbolic_fill_threads);
  EXPECT_EQ(s.fill_rows * s.fill_cols, 4);  // and a quarter tile before one output per item
  EXPECT_EQ(tile_choices(s, true).size(), 3u);
  int64_t f = s.fill;
  EXPECT_TRUE(tile_suits(s, tile_choices(s, true)[0], f * 16, 1 << 16));  // f items of 16
  EXPECT_FALSE(tile_suits(s, tile_choices(s, true)[0], f * 16 - 16, 1 << 15));
  EXPECT_TRUE(tile_suits(s, tile_choices(s, true)[1], f * 16 - 16, 1 << 15));  // 4f - 4 items of 4
  EXPECT_EQ(scheduled(conv_like(16, 4096), cuda::target_desc()).fill, 0);  // fixed: decided now
}

// A conv with fewer outputs than fill_threads x rows x cols computes fewer per work item
// (columns and rows halved in turn) until the device has enough work items, or one each.
TEST(Schedule, GpuReductionTooSmallToFillTheDeviceComputesFewerOutputsPerItem) {
  TargetDesc t = cuda_4x4();
  t.fill_threads = 16 * 32 / 4;
  Schedule half = scheduled(conv_like(16, 32), t);
  EXPECT_EQ(half.rows * half.cols, 4);
  EXPECT_EQ(half.cols, 2);
  EXPECT_EQ(half.threads, 16 * 32 / 4);
  t.fill_threads = 1 << 20;
  Schedule one = scheduled(conv_like(16, 32), t);
  EXPECT_EQ(one.rows * one.cols, 1);
  EXPECT_EQ(one.threads, 16 * 32);
  EXPECT_EQ(one.unroll, 0);
}

// A work item's columns lie 1/cols of a row apart (a warp's loads of a row then coalesce), at
// any length; a target without the rule keeps them adjacent.
TEST(Schedule, GpuColumnsSpreadOverTheRow) {
  EXPECT_TRUE(scheduled(conv_like(16, 96), cuda_unfilled()).spread_cols);
  EXPECT_TRUE(scheduled(symbolic_conv_like(8, 0), cuda_4x4()).spread_cols);
  EXPECT_FALSE(scheduled(conv_like(16, 30, true), cuda_unfilled()).spread_cols);  // one column
  TargetDesc adjacent = cuda_unfilled();
  adjacent.spread_cols = false;
  EXPECT_FALSE(scheduled(conv_like(16, 96), adjacent).spread_cols);
}

// A group stages the weights (no output column in their index) in shared memory: one row
// block's where each row block of the output holds whole groups, else the two a group may
// straddle (a symbolic length's kernel checks at bind that a block holds a group); never the
// input, never past the target's shared memory, never on the host.
TEST(Schedule, GpuGroupStagesTheOperandItsWorkItemsShare) {
  Schedule s = scheduled(conv_like(16, 1024), cuda_unfilled());
  EXPECT_EQ(s.rows * s.cols, 16);
  EXPECT_EQ(s.stage, 1);  // w, not x
  EXPECT_EQ(s.stage_slots, 1);
  EXPECT_NE(describe(s).find("stage=b1x1"), std::string::npos);
  Schedule straddled = scheduled(conv_like(16, 1280), cuda_unfilled());  // 320 work items per row block
  EXPECT_EQ(straddled.stage, 1);
  EXPECT_EQ(straddled.stage_slots, 2);
  EXPECT_EQ(scheduled(conv_like(16, 512), cuda_unfilled()).stage, -1);  // 128 work items per row block
  Schedule symbolic = scheduled(symbolic_conv_like(1024, 0), cuda_4x4());
  EXPECT_EQ(symbolic.stage, 1);
  EXPECT_EQ(symbolic.stage_slots, 2);
  EXPECT_EQ(s.shared, 4 * 8 * 3 * 4);  // rows x terms floats, known now
  EXPECT_EQ(symbolic.shared, 0);       // known at bind: the tile a length takes
  std::vector<Schedule> tiles = tile_choices(symbolic, true);
  EXPECT_EQ(shared_bytes(tiles.front()), 2 * 4 * 8 * 3 * 4);
  EXPECT_EQ(shared_bytes(tiles.back()), 0);  // one output per item stages nothing
  TargetDesc small = cuda_unfilled();
  small.shared_bytes = 4 * 8 * 3 * 4 - 1;  // a byte short of rows x terms floats
  EXPECT_EQ(scheduled(conv_like(16, 1024), small).stage, -1);
  small.shared_bytes += 1;
  EXPECT_EQ(scheduled(conv_like(16, 1024), small).stage, 1);
  EXPECT_EQ(scheduled(conv_like(16, 1280), small).stage, -1);  // two blocks do not fit
  EXPECT_EQ(scheduled(conv_like(16, 1024), cpu::target_desc()).stage, -1);
}

TEST(Schedule, GpuElementwiseIsOneWorkItemPerElement) {
  Schedule s = scheduled(elementwise(), cuda::target_desc());
  EXPECT_EQ(s.loops, Schedule::Loops::Gpu);
  EXPECT_EQ(s.group, 256);
  EXPECT_EQ(s.rows * s.cols, 1);
  EXPECT_EQ(s.threads, 600);
  EXPECT_EQ(s.unroll, 0);
}

TEST(Schedule, GpuElementwiseItemsTakeSeveralElementsWhileTheDeviceStaysFull) {
  TargetDesc t = cuda::target_desc();
  t.element_fill = 0;  // no device to fill: every item takes element_items
  Schedule s = scheduled(elementwise(), t);
  EXPECT_EQ(s.per_item, 4);
  EXPECT_EQ(s.threads, 600 / 4);
  EXPECT_EQ(work_items(s, 601), 151) << "the last item takes fewer";
  t.element_fill = 600 / 2;  // a quarter as many items as elements would be too few; half is not
  EXPECT_EQ(scheduled(elementwise(), t).per_item, 2);
  EXPECT_EQ(scheduled(elementwise(), t).threads, 300);
  EXPECT_EQ(scheduled(elementwise(), t).fill, 0) << "a fixed shape's count is decided now";
  EXPECT_EQ(scheduled(conv_like(16, 1024), t).per_item, 1) << "a reduction's items take tiles instead";
}

// elementwise() with its last dim a symbol T (at T = 300).
Plan symbolic_elementwise() {
  Plan p = elementwise();
  p.symbols = {"T"};
  p.symbol_buf = static_cast<int>(p.buffers.size());
  p.buffers.push_back(buffer(Buffer::Symbols, {1}, "symbols"));
  p.buffers.back().dtype = DType::i64;
  p.buffers[1].dims = {icst(2), load_flat(p.symbol_buf, {1}, DType::i64, icst(0))};
  return p;
}

TEST(Schedule, ASymbolicLengthsElementsPerItemAreChosenAtBind) {
  TargetDesc t = cuda::target_desc();
  t.element_fill = 1000;
  Schedule s = scheduled(symbolic_elementwise(), t);
  EXPECT_EQ(s.per_item, 4) << "the loop is printed for 4 and serves any launch size";
  EXPECT_EQ(s.fill, 1000);
  EXPECT_EQ(work_items(s, 4000), 1000);
  EXPECT_EQ(work_items(s, 3999), 2000) << "a quarter would be under 1000 items: half";
  EXPECT_EQ(work_items(s, 1999), 1999) << "half would be too: one each";
}

TEST(Printers, GpuElementsOfARoundAreAllComputedBeforeAnyIsStored) {
  Plan p = elementwise();
  TargetDesc t = cuda::target_desc();
  t.element_fill = 0;
  choose_schedules(p, t);
  std::string src = cuda::source_files(p)[1].second;
  EXPECT_NE(src.find("const int64_t n = 600;"), std::string::npos) << src;
  EXPECT_NE(src.find("i0 < n; i0 += 4 * step) {"), std::string::npos) << src;
  EXPECT_NE(src.find("if (i0 + 3 * step < n) {"), std::string::npos) << src;
  size_t computed = src.find("ls_e[u] = "), stored = src.find("b1[i] = ls_canon_f(ls_e[u]);");
  ASSERT_NE(computed, std::string::npos) << src;
  ASSERT_NE(stored, std::string::npos) << src;
  EXPECT_LT(computed, stored) << src;
  EXPECT_NE(src.find("if (i >= n) break;"), std::string::npos) << "the partial round: " << src;
}

TEST(Schedule, KernelsTakingMoreBuffersThanTheTargetAllowsAreRefused) {
  TargetDesc t = cuda::target_desc();
  t.max_buffer_args = 2;
  Plan p = conv_like(16, 30);
  std::string m = error_of([&] { choose_schedules(p, t); });
  EXPECT_NE(m.find("takes 3 buffers"), std::string::npos) << m;
  EXPECT_NE(m.find("conv"), std::string::npos) << m;
}

Graph conv_relu() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(8), dim(32)});
  int w = b.initializer("w", Tensor(DType::f32, {16, 8, 3}));
  int y = b.op("Conv", "conv", {x, w});
  b.output(b.op("Relu", "relu", {y}));
  return b.finish();
}

PipelineResult pipeline_for(const Graph& g, const TargetDesc* t, int pass_limit = -1) {
  PipelineOptions o;
  o.target = t;
  o.pass_limit = pass_limit;
  return run_pipeline(g, specialisation_for(g, {{"x", Tensor(DType::f32, {1, 8, 32})}}), o);
}

TEST(Schedule, ThePipelineSchedulesLastInOneRecordThatNoPassLimitCuts) {
  Graph g = conv_relu();
  for (int limit : {-1, 0, 1}) {
    PipelineResult r = pipeline_for(g, &cuda::target_desc(), limit);
    ASSERT_FALSE(r.log.empty());
    const PassRecord& last = r.log.back();
    EXPECT_EQ(last.pass, kSchedulePass);
    EXPECT_TRUE(last.applied) << "limit " << limit;
    EXPECT_EQ(last.number, static_cast<int>(r.log.size()));
    EXPECT_EQ(format_record(last), "#" + std::to_string(last.number) + " schedule: " + std::to_string(r.plan.kernels.size()) + " kernels for cuda");
    for (const Kernel& k : r.plan.kernels) EXPECT_EQ(k.schedule.loops, Schedule::Loops::Gpu) << k.name;
  }
  PipelineResult none = pipeline_for(g, nullptr);
  for (const PassRecord& r : none.log) EXPECT_NE(r.pass, kSchedulePass);
  for (const Kernel& k : none.plan.kernels) EXPECT_FALSE(k.schedule.chosen());
}

// ------------------------------------------------------------------ printers spell the schedule

TEST(Printers, GpuPrinterSpellsAHandSetSchedule) {
  Plan p = conv_like(16, 30);
  Schedule& s = p.kernels[0].schedule;
  s.loops = Schedule::Loops::Gpu;
  s.group = 64;
  s.rows = 2;
  s.cols = 3;
  s.threads = 16 * 30 / 6;
  s.unroll = 3;
  std::string src = cuda::source_files(p)[1].second;
  EXPECT_NE(src.find("__launch_bounds__(64, 3) k0("), std::string::npos) << src;
  EXPECT_NE(src.find("const int64_t n = 80;"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int c = 0; c < 2; ++c)"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int l = 0; l < 3; ++l)"), std::string::npos) << src;
  EXPECT_NE(src.find("#pragma unroll\n    for (int64_t v4 = 0; v4 < 3; ++v4)"), std::string::npos) << src;
  s.unroll = 2;  // shorter than the taps: rolled
  src = cuda::source_files(p)[1].second;
  EXPECT_EQ(src.find("#pragma unroll\n    for (int64_t v4"), std::string::npos) << src;
  s.spread_cols = true;  // columns a third of the row apart
  s.stage = 1;           // w copied by the group, read from there
  s.stage_row_bytes = 8 * 3 * 4;
  src = cuda::source_files(p)[1].second;
  EXPECT_NE(src.find("const int64_t v2 = l * 10 + vl;"), std::string::npos) << src;
  EXPECT_NE(src.find("extern __shared__"), std::string::npos) << src;
  EXPECT_NE(src.find("ls_stage[e] = b1["), std::string::npos) << src;
  EXPECT_NE(src.find(" * ls_stage[(v4 + v3 * 3) * 2 + c]"), std::string::npos) << src;
  EXPECT_EQ(src.find("b1[v1"), src.rfind("b1[v1")) << "w is loaded once, by the copy: " << src;
}

TEST(Printers, HostPrinterSpellsAHandSetSchedule) {
  Plan p = conv_like(16, 30);
  Schedule& s = p.kernels[0].schedule;
  s.loops = Schedule::Loops::Host;
  s.lanes = 4;
  s.rows = 2;
  s.tile_at = 1;
  std::string src = cpu::source_files(p)[1].second;
  EXPECT_NE(src.find("const int64_t lo = vt * 4;"), std::string::npos) << src;
  EXPECT_NE(src.find("float acc[8];"), std::string::npos) << src;
  // The outer loops flattened into one range, innermost first: vrow (8 blocks of 2 rows) inside vt
  // (8 tiles of 4 lanes) inside v0, counted on in that order after the first iteration.
  EXPECT_NE(src.find("int64_t vrow = ls_q % (8); ls_q /= (8);\n  int64_t vt = ls_q % (8); ls_q /= (8);\n  int64_t v0 = ls_q;"),
            std::string::npos) << src;
  EXPECT_NE(src.find("if (++vrow == (8)) { vrow = 0; if (++vt == (8)) { vt = 0; ++v0;}}"), std::string::npos) << src;
  // 4 lanes x 2 rows x 24 reduction steps per iteration: at least 32768 / 192 iterations a claim.
  EXPECT_NE(src.find("ls_run(k0_range, bufs, (int64_t)(8) * (int64_t)(8), 170);"), std::string::npos) << src;
  EXPECT_NE(src.find("const int64_t v1 = vrow * 2 + c;"), std::string::npos) << src;
}

TEST(Printers, AKernelWithoutItsTargetsScheduleIsAnInternalError) {
  Plan p = conv_like(16, 30);
  EXPECT_THROW(cuda::program_source(p).text, InternalError);
  EXPECT_THROW(cpu::program_source(p).text, InternalError);
  choose_schedules(p, cpu::target_desc());
  EXPECT_THROW(cuda::program_source(p).text, InternalError);  // a host schedule on a GPU
  EXPECT_NO_THROW(cpu::program_source(p).text);
  p.kernels[0].schedule.rows = 3;  // 5 blocks of 16 output channels, then one of the last
  EXPECT_NO_THROW(cpu::program_source(p).text);
  p.kernels[0].schedule.rows = 17;  // more rows than the 16 output channels
  EXPECT_THROW(cpu::program_source(p).text, InternalError);
}

TEST(Printers, AnUnknownExpressionIsAnInternalErrorNamingIt) {
  codegen::CPrinter printer{codegen::CDialect{}};
  for (ExprP e : {unary(Fn::Add, var(0)), binary(Fn::Neg, var(0), var(1))}) {
    try {
      printer.expr(e);
      FAIL() << "expected an InternalError for " << to_string(e);
    } catch (const InternalError& err) {
      EXPECT_NE(std::string(err.what()).find(to_string(e)), std::string::npos) << err.what();
    }
  }
}

TEST(Printers, ThePreludeIsWrittenOnceWithTheDialectsQualifier) {
  codegen::CDialect d;
  d.fn = "QUAL";
  d.conversions = "// conversions\n";
  std::string text = codegen::helper_functions(d);
  EXPECT_EQ(text.rfind("// conversions\n", 0), 0u);
  EXPECT_NE(text.find("QUAL float ls_sigmoid("), std::string::npos);
  EXPECT_NE(text.find("QUAL T ls_max_nan_##T(T acc, T x)"), std::string::npos);
  EXPECT_NE(text.find("LS_INTEGER_TYPE(int64_t)"), std::string::npos);
  EXPECT_NE(text.find("ls_sigmoid_d"), std::string::npos);
  d.f64 = false;
  EXPECT_EQ(codegen::helper_functions(d).find("double"), std::string::npos);
}

// ------------------------------------------------------------------ legalize

TargetDesc without(bool f64, bool i64) {
  TargetDesc t = cpu::target_desc();
  t.name = "fake";
  t.has_f64 = f64;
  t.has_i64 = i64;
  return t;
}

Graph pow_graph(DType base, DType exponent) {
  GraphBuilder b;
  int x = b.input("x", base, {dim(4)});
  int e = b.input("e", exponent, {dim(4)});
  b.output(b.op("Pow", "power", {x, e}));
  return b.finish();
}

PipelineResult pipeline_on(const Graph& g, const TargetDesc& t, DType base, DType exponent) {
  PipelineOptions o;
  o.target = &t;
  TensorMap in = {{"x", Tensor(base, {4})}, {"e", Tensor(exponent, {4})}};
  return run_pipeline(g, specialisation_for(g, in), o);
}

// Integer to an integer power is exact on every target, with or without double: through double
// pow, 3^39 in int64 was off (past 2^53) and an overflow was undefined.
TEST(Legalize, IntegerPowIsAnExactIntegerPowerOnEveryTarget) {
  Graph g = pow_graph(DType::i32, DType::i64);
  for (const TargetDesc& t : {without(false, true), cpu::target_desc()}) {
    Plan p = pipeline_on(g, t, DType::i32, DType::i64).plan;
    std::string ir = describe(p);
    EXPECT_NE(ir.find("ipow("), std::string::npos) << t.name << ": " << ir;
    EXPECT_EQ(ir.find("float64"), std::string::npos) << t.name << ": " << ir;
    EXPECT_NE(cpu::program_source(p).text.find("ls_ipow_int32_t_int64_t("), std::string::npos);
  }
}

TEST(Legalize, WhatNeedsAMissingTypeIsAnErrorNamingTheNodeAndType) {
  TargetDesc t = without(false, true);
  Graph g = pow_graph(DType::i32, DType::f32);  // a float exponent: no exact integer path
  std::string m = error_of([&] { pipeline_on(g, t, DType::i32, DType::f32); });
  EXPECT_NE(m.find("'power'"), std::string::npos) << m;
  EXPECT_NE(m.find("f64"), std::string::npos) << m;
  EXPECT_NE(m.find("'fake'"), std::string::npos) << m;
  Graph f64 = pow_graph(DType::f64, DType::f64);
  m = error_of([&] { pipeline_on(f64, t, DType::f64, DType::f64); });
  EXPECT_NE(m.find("'power' writes f64"), std::string::npos) << m;
  TargetDesc no_i64 = without(true, false);
  m = error_of([&] { pipeline_on(pow_graph(DType::i32, DType::i64), no_i64, DType::i32, DType::i64); });
  EXPECT_NE(m.find("'power' reads 64-bit integers"), std::string::npos) << m;
}

TEST(Legalize, TheExactIntegerPowerCompilesWithNvrtc) {
  std::string why;
  if (!cuda::nvrtc(&why)) GTEST_SKIP() << "CUDA codegen not checked: " << why;
  TargetDesc t = cuda::target_desc();
  t.has_f64 = false;
  Plan p = pipeline_on(pow_graph(DType::i32, DType::i64), t, DType::i32, DType::i64).plan;
  std::string src = cuda::program_source(p).text;
  EXPECT_NE(src.find("ls_ipow_int32_t_int64_t("), std::string::npos);
  EXPECT_FALSE(cuda::nvrtc_compile(src, cuda::default_compute_capability()).image.empty());
}

}  // namespace
}  // namespace lockstep
