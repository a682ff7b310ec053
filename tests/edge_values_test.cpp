// The differential edge-value suite: every registered op over every dtype its shape rule
// accepts, every Cast pair, and the standard cases, fed NaN, +-Inf, +-0, subnormals, the
// extremes of each type and seeded random mixes. Each target must give the ref's bytes (ops
// whose result is correctly rounded, every integer result) or the ref's value within a few ulp
// with the same NaN/Inf/zero signs (transcendental ops, sums), or the ref's error naming the
// same node. Cases come from the registry: a new op joins by being registered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "backend/registry.h"
#include "core/random.h"
#include "harness.h"
#include "ops/infer.h"
#include "ops/op.h"
#include "test_util.h"

namespace lockstep {
namespace {

constexpr DType kTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i64, DType::i32,    DType::i16,
                            DType::i8,  DType::u8,  DType::u16, DType::u32,  DType::u64, DType::boolean};

// The fixed edge set of a dtype, as the reference holds values (double / int64).
std::vector<double> float_edges(DType t) {
  const double inf = INFINITY, nan = NAN;
  std::vector<double> v = {nan, inf, -inf, 0.0, -0.0, 1, -1, 2, 0.5, 2.5, -2.5, 3.5, 300, -300, 1e10, -1e10};
  auto add = [&](std::initializer_list<double> xs) { v.insert(v.end(), xs); };
  if (t == DType::f16) add({65504, -65504, 5.960464477539063e-08, -5.960464477539063e-08, 6.103515625e-05});
  if (t == DType::bf16 || t == DType::f32 || t == DType::f64)
    add({FLT_MAX, -FLT_MAX, 3e38, -3e38, 0x1p-149, -0x1p-149, FLT_MIN, 2147483648.0, -2147483648.0,
         9223372036854775808.0, 18446744073709551616.0, 65520, 127.5, 255.5, -128.5, 32767.5});
  if (t == DType::f64) add({DBL_MAX, -DBL_MAX, 4.9406564584124654e-324, 1e300, -1e300});
  return v;
}

std::vector<int64_t> int_edges(DType t) {
  if (t == DType::boolean) return {0, 1};
  std::vector<int64_t> v = {0, 1, 2, 3, 7, 64, 100, 127};
  if (dtype_is_signed_int(t)) {
    int bits = static_cast<int>(dtype_size(t)) * 8;
    int64_t mx = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1, mn = -mx - 1;
    for (int64_t x : {mn, mn + 1, mx, mx - 1, int64_t{-1}, int64_t{-2}, int64_t{-3}, int64_t{-100}}) v.push_back(x);
  } else {
    int bits = static_cast<int>(dtype_size(t)) * 8;
    uint64_t mx = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
    for (uint64_t x : {mx, mx - 1, mx / 2, mx / 2 + 1}) v.push_back(static_cast<int64_t>(x));
  }
  return v;
}

size_t edge_count(DType t) { return dtype_is_float(t) ? float_edges(t).size() : int_edges(t).size(); }

// Fills `n` values: the edge set first, then a seeded mix of edges and small random values.
RefTensor edge_tensor(DType t, const Shape& shape, uint64_t seed, bool huge_ok = true) {
  RefTensor r(t, shape);
  SplitMix64 rng(seed);
  std::vector<double> fe = dtype_is_float(t) ? float_edges(t) : std::vector<double>{};
  std::vector<int64_t> ie = dtype_is_float(t) ? std::vector<int64_t>{} : int_edges(t);
  if (!huge_ok)  // contractions: no finite value whose partial sums overflow the type
    std::erase_if(fe, [](double x) { return std::isfinite(x) && std::fabs(x) > 1e4; });
  size_t edges = fe.empty() ? ie.size() : fe.size();
  for (int64_t k = 0; k < r.numel(); ++k) {
    bool edge = static_cast<size_t>(k) < edges || rng.uniform(0, 1) < 0.3;
    size_t pick = static_cast<size_t>(k) < edges ? k : static_cast<size_t>(rng.uniform(0, edges)) % edges;
    if (r.is_float()) r.f[k] = edge ? fe[pick] : rng.uniform(-3, 3);
    else r.i[k] = edge ? ie[pick] : static_cast<int64_t>(std::floor(rng.uniform(-3, 3)));
  }
  return r;
}

// An edge case: an op case whose inputs are given as values, not generated.
struct EdgeCase {
  OpCase op;
  std::vector<RefTensor> values;  // one per graph input
  bool exact = false;             // every float result correctly rounded: bitwise equal to ref
};

// Ops whose float results are a correctly rounded function of their inputs (or a copy of
// them): the ref's bytes are the only right answer.
bool exact_op(const std::string& op) {
  static const std::set<std::string> exact = {"Add",
                                              "Sub",
                                              "Mul",
                                              "Div",
                                              "Neg",
                                              "Abs",
                                              "Relu",
                                              "Sqrt",
                                              "Clip",
                                              "Where",
                                              "Cast",
                                              "Equal",
                                              "Less",
                                              "Greater",
                                              "Identity",
                                              "Reshape",
                                              "Flatten",
                                              "Squeeze",
                                              "Unsqueeze",
                                              "Slice",
                                              "Split",
                                              "Concat",
                                              "Transpose",
                                              "Tile",
                                              "Expand",
                                              "Gather",
                                              "Pad",
                                              "Shape",
                                              "Constant",
                                              "ConstantOfShape",
                                              "GreaterOrEqual",
                                              "LessOrEqual",
                                              "And",
                                              "Or",
                                              "Xor",
                                              "Not",
                                              "Floor",
                                              "Ceil",
                                              "Reciprocal",
                                              "Sign",
                                              "Max",
                                              "Min",
                                              "ReduceMax",
                                              "ReduceMin",
                                              "ArgMax",
                                              "ArgMin",
                                              "Hardmax",
                                              "Trilu",
                                              "Dropout",
                                              "Size",
                                              "GatherElements",
                                              "ThresholdedRelu",
                                              "PRelu",
                                              "CastLike",
                                              "GlobalMaxPool",
                                              "Mod",
                                              "Round",
                                              "IsNaN",
                                              "IsInf",
                                              "Shrink",
                                              "MaxPool"};
  return exact.count(op) > 0;
}

// Ops whose results sum many products: partial sums may overflow the type where float64's do not.
bool contraction(const std::string& op) {
  static const std::set<std::string> ops = {"Conv",
                                            "ConvTranspose",
                                            "MatMul",
                                            "Gemm",
                                            "ReduceSum",
                                            "ReduceMean",
                                            "Softmax",
                                            "LogSoftmax",
                                            "Sum",
                                            "Mean",
                                            "ReduceProd",
                                            "ReduceL1",
                                            "GlobalAveragePool",
                                            "InstanceNormalization",
                                            "BatchNormalization",
                                            "LayerNormalization",
                                            "ReduceL2",
                                            "ReduceSumSquare",
                                            "ReduceLogSum",
                                            "ReduceLogSumExp",
                                            "CumSum",
                                            "CumProd",
                                            "RMSNormalization",
                                            "LpNormalization",
                                            "AveragePool",
                                            "LpPool",
                                            "NegativeLogLikelihoodLoss",
                                            "SoftmaxCrossEntropyLoss",
                                            "Resize",
                                            "Upsample",
                                            "Attention",
                                            "RotaryEmbedding",
                                            "ScatterElements",
                                            "ScatterND",
                                            "CausalConvWithState",
                                            "GroupNormalization",
                                            "MeanVarianceNormalization",
                                            "LRN",
                                            "Einsum"};
  return ops.count(op) > 0;
}

uint64_t seed_of(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

std::vector<Shape> broadcast_shapes(size_t arity, int64_t e) {
  if (arity == 1) return {{e}};
  if (arity == 2) return {{e, 1}, {1, e}};
  return {{e, 1, 1}, {1, e, 1}, {1, 1, e}};
}

bool ref_accepts(const OpCase& c) {
  try {
    infer_graph(build_case(c));  // the op's shape rule and dtype checks
    return true;
  } catch (const Error&) {
    return false;
  }
}

// A scalar input of variant `variant` takes one edge value: NaN, then +Inf, -Inf, ...
RefTensor edge_scalar(DType t, size_t pick) {
  RefTensor r(t, {});
  if (r.is_float()) r.f[0] = float_edges(t)[pick % float_edges(t).size()];
  else r.i[0] = int_edges(t)[pick % int_edges(t).size()];
  return r;
}

EdgeCase with_edges(OpCase c, size_t variant = 0) {
  EdgeCase ec;
  bool huge = !contraction(c.op);
  for (const OpCase::Input& in : c.inputs) {
    bool index = in.dtype == DType::i64 && c.op == "Gather";  // indices: the edges of int64
    size_t k = ec.values.size();
    ec.values.push_back(in.shape.empty() && k > 0
                            ? edge_scalar(in.dtype, variant * 3 + k)
                            : edge_tensor(in.dtype, in.shape, seed_of(c.name) + k, huge || index));
  }
  ec.exact = exact_op(c.op);
  ec.op = std::move(c);
  return ec;
}

// Opset 17 (the harness's default), or the first that has the op or its widest dtypes.
int case_opset(const std::string& op) {
  static const std::map<std::string, int> later = {
      {"Mish", 18},  {"BitwiseAnd", 18}, {"BitwiseOr", 18}, {"BitwiseXor", 18}, {"BitwiseNot", 18},
      {"IsInf", 20}, {"Round", 22},      {"Swish", 24},     {"CumProd", 26},    {"BitShift", 28}};
  auto it = later.find(op);
  return it == later.end() ? 17 : it->second;
}

// The other operands as scalars (Clip's bounds, a Pow exponent), each variant another pair of
// edge values.
void add_scalar_operands(std::vector<EdgeCase>& cases, const char* op, const std::string& suffix, const Attrs& attrs,
                         DType t, int arity) {
  OpCase c;
  c.op = op;
  c.attrs = attrs;
  c.opset = case_opset(c.op);
  c.inputs.push_back(OpCase::Input{t, {static_cast<int64_t>(edge_count(t)) + 16}});
  for (int k = 1; k < arity; ++k) c.inputs.push_back(OpCase::Input{t, {}});
  if (!ref_accepts(c)) return;
  for (size_t variant = 0; variant < 6; ++variant) {
    c.name = std::string(op) + suffix + " " + dtype_name(t) + " x" + std::to_string(arity) + " scalars " +
             std::to_string(variant);
    cases.push_back(with_edges(c, variant));
  }
}

// The attribute sets an op is tried with beyond its defaults, each named in the case.
std::vector<std::pair<std::string, Attrs>> attr_variants(const std::string& op) {
  if (op == "Mod") return {{"", {}}, {" fmod", {{"fmod", attr_int(1)}}}};
  if (op == "BitShift")
    return {{" left", {{"direction", attr_string("LEFT")}}}, {" right", {{"direction", attr_string("RIGHT")}}}};
  return {{"", {}}};
}

// Every registered op x dtype x arity its shape rule accepts, inputs broadcast against each
// other so every pair of edge values meets; the first input also as bool (Where's condition).
void add_registered(std::vector<EdgeCase>& cases) {
  for (const OpDef* d : registered_ops()) {
    for (DType t : kTypes) {
      for (int arity = std::max(1, d->min_inputs); arity <= std::min(3, d->max_inputs); ++arity) {
        int64_t e = static_cast<int64_t>(edge_count(t)) + (arity == 1 ? 16 : 0);
        for (auto& [suffix, attrs] : attr_variants(d->name))
          for (bool bool_first : {false, true}) {
            if (bool_first && (arity < 2 || t == DType::boolean)) continue;
            OpCase c;
            c.op = d->name;
            c.attrs = attrs;
            c.opset = case_opset(c.op);
            c.name = std::string(d->name) + suffix + " " + dtype_name(t) + " x" + std::to_string(arity) +
                     (bool_first ? " cond" : "");
            for (const Shape& s : broadcast_shapes(arity, e))
              c.inputs.push_back(OpCase::Input{c.inputs.empty() && bool_first ? DType::boolean : t, s});
            if (ref_accepts(c)) cases.push_back(with_edges(c));
          }
        for (auto& [suffix, attrs] : attr_variants(d->name))
          if (arity > 1) add_scalar_operands(cases, d->name, suffix, attrs, t, arity);
      }
    }
  }
}

// Folds along the last axis of an [E, 4] input: its rows hold the edge values four at a time,
// then seeded mixes, so NaN, infinities and extremes meet each other and ordinary values.
void add_rows(std::vector<EdgeCase>& cases) {
  for (const OpDef* d : registered_ops()) {
    std::string op = d->name;
    bool arg = op.starts_with("Arg"), reduce = op.starts_with("Reduce");
    bool cum = op == "CumSum" || op == "CumProd";
    if (!arg && !reduce && !cum && !op.ends_with("max") && op != "Trilu") continue;  // and the Softmax family
    for (DType t : kTypes)
      for (int last = 0; last < (arg || cum ? 2 : 1); ++last) {
        OpCase c;
        c.op = op;
        c.opset = op == "Trilu" || cum ? std::max(14, case_opset(op)) : 12;  // axes as an attribute for every Reduce
        c.name = op + " " + dtype_name(t) + " rows" + (last ? " last" : "");
        c.inputs.push_back(OpCase::Input{t, {static_cast<int64_t>(edge_count(t)), 4}});
        if (reduce) c.attrs = {{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}};
        else if (arg) c.attrs = {{"axis", attr_int(1)}, {"select_last_index", attr_int(last)}};
        else if (cum) c.attrs = {{"reverse", attr_int(last)}, {"exclusive", attr_int(last)}};
        else if (op != "Trilu") c.attrs = {{"axis", attr_int(1)}};
        if (cum) {
          Tensor axis(DType::i64, {});
          axis.data<int64_t>()[0] = -1;
          c.constants = {{1, axis}};
        }
        if (ref_accepts(c)) cases.push_back(with_edges(c));
      }
  }
}

// A [n] float parameter of dtype t: 1, 4, 1/3, 8, ... (positive, so a variance stays one).
Tensor param(DType t, int64_t n) {
  RefTensor r(t, {n});
  for (int64_t k = 0; k < n; ++k) r.f[k] = k % 2 ? 2.0 * (k + 1) : 1.0 / (k + 1);
  return from_ref(r);
}

// The normalisations and global pools over the same rows: [E, 1, 4] (N = E, C = 1) for the
// per-plane ones, [E, 4] with its 4 channels or its last axis for BatchNormalization and
// LayerNormalization; the parameters are constants.
void add_norm_rows(std::vector<EdgeCase>& cases) {
  const std::pair<const char*, int> ops[] = {{"GlobalAveragePool", 0},
                                             {"GlobalMaxPool", 0},
                                             {"InstanceNormalization", 2},
                                             {"BatchNormalization", 4},
                                             {"LayerNormalization", 2}};
  for (auto [op, params] : ops)
    for (DType t : kTypes) {
      if (!dtype_is_float(t)) continue;
      bool plane = std::string(op) != "BatchNormalization" && std::string(op) != "LayerNormalization";
      int64_t e = static_cast<int64_t>(edge_count(t)), ch = plane ? 1 : 4;
      OpCase c;
      c.op = op;
      c.opset = 17;
      c.name = std::string(op) + " " + dtype_name(t) + " rows";
      c.inputs.push_back(OpCase::Input{t, plane ? Shape{e, 1, 4} : Shape{e, 4}});
      for (int k = 1; k <= params; ++k) c.constants.push_back({static_cast<size_t>(k), param(t, ch)});
      if (ref_accepts(c)) cases.push_back(with_edges(c));
    }
}

// ScatterElements of edge-valued data and updates at constant in-range indices that repeat
// along each row, so NaN, infinities and extremes fold into each other in every reduction.
void add_scatter_rows(std::vector<EdgeCase>& cases) {
  for (const char* r : {"none", "add", "mul", "max", "min"})
    for (DType t : kTypes) {
      if (t == DType::boolean) continue;
      int64_t e = static_cast<int64_t>(edge_count(t));
      OpCase c;
      c.op = "ScatterElements";
      c.opset = 18;
      c.name = std::string("ScatterElements ") + r + " " + dtype_name(t) + " rows";
      c.attrs = {{"axis", attr_int(1)}, {"reduction", attr_string(r)}};
      Tensor idx(DType::i64, {e, 4});
      for (int64_t k = 0; k < 4 * e; ++k) idx.data<int64_t>()[k] = (k * 5 / 3) % 4 - (k % 3 == 0 ? 4 : 0);
      c.inputs = {OpCase::Input{t, {e, 4}}, OpCase::Input{t, {e, 4}}};
      c.constants = {{1, idx}};
      if (ref_accepts(c)) cases.push_back(with_edges(c));
    }
}

void add_casts(std::vector<EdgeCase>& cases) {
  for (DType from : kTypes)
    for (DType to : kTypes) {
      OpCase c{std::string("Cast ") + dtype_name(from) + "->" + dtype_name(to),
               "Cast",
               {OpCase::Input{from, {static_cast<int64_t>(edge_count(from)) + 16}}},
               {},
               {{"to", attr_int(static_cast<int64_t>(to))}}};
      cases.push_back(with_edges(c));
    }
}

std::vector<EdgeCase> edge_cases() {
  std::vector<EdgeCase> cases;
  add_registered(cases);
  add_rows(cases);
  add_norm_rows(cases);
  add_scatter_rows(cases);
  add_casts(cases);
  for (OpCase& c : standard_cases()) {
    c.name = "standard " + c.name;
    cases.push_back(with_edges(c));
  }
  return cases;
}

// The cases joined into one graph (one compile per target): case k's node is named "e<k>_...".
struct Joined {
  Graph graph;
  TensorMap feed;
  std::vector<std::pair<size_t, size_t>> outputs;  // graph output -> (case, output)
};

Joined join(const std::vector<EdgeCase>& cases, const std::vector<size_t>& picked) {
  Joined j;
  GraphBuilder b(cases[picked.at(0)].op.opset);  // the caller joins cases of one opset
  for (size_t k : picked) {
    const EdgeCase& ec = cases[k];
    const OpCase& c = ec.op;
    std::string p = "e" + std::to_string(k) + "_";
    std::vector<int> ins(c.node_inputs(), -1);
    size_t next = 0;
    for (size_t a = 0; a < ins.size(); ++a) {
      if (c.is_omitted(a)) continue;
      for (const auto& [idx, t] : c.constants)
        if (idx == a) ins[a] = b.initializer(p + "c" + std::to_string(a), t);
      if (ins[a] >= 0) continue;
      const RefTensor& v = ec.values[next++];
      std::vector<Dim> dims;
      for (int64_t d : v.shape) dims.push_back(dim(d));
      ins[a] = b.input(p + "x" + std::to_string(a), v.dtype, dims);
      j.feed[p + "x" + std::to_string(a)] = from_ref(v);
    }
    std::vector<int> outs = b.node(c.op, p + c.op, ins, c.attrs, c.outputs);
    for (size_t o = 0; o < outs.size(); ++o) {
      b.output(outs[o]);
      j.outputs.push_back({k, o});
    }
  }
  j.graph = b.finish();
  return j;
}

// Runs case k alone on `target`: its outputs, or the error's text in `error`.
std::vector<Tensor> run_alone(const std::vector<EdgeCase>& cases, size_t k, const std::string& target,
                              std::string& error) {
  Joined j = join(cases, {k});
  try {
    return compile(j.graph, target)->run(j.feed);
  } catch (const Error& e) {
    error = e.what();
    return {};
  }
}

bool float_close(double got, double want, DType t) {
  if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got) || want == 0 || got == 0)
    return std::isnan(want) ? std::isnan(got) : (got == want && std::signbit(got) == std::signbit(want));
  double eps = t == DType::f64 ? 1e-14 : t == DType::f32 ? 4e-6 : t == DType::f16 ? 2e-3 : 1.6e-2;
  double tiny = t == DType::f64 ? 1e-300 : t == DType::f32 ? 1e-37 : t == DType::f16 ? 1e-4 : 1e-37;
  return std::fabs(got - want) <= eps * std::fabs(want) + tiny;
}

enum class Promise { Bytes, Ulps, Sums };

// Sums of products (Promise::Sums) agree as lockstep's tolerance says (rel L2 <= 1e-4 over the
// finite elements), NaN and +-Inf at the same places; their zeros' signs follow the order of
// the sum (a float32 product may underflow where float64's does not).
std::string sums_mismatch(const RefTensor& g, const RefTensor& w) {
  double diff = 0, norm = 0;
  for (int64_t k = 0; k < g.numel(); ++k) {
    double a = g.f[k], b = w.f[k];
    bool same_kind = std::isnan(a) == std::isnan(b) && std::isinf(a) == std::isinf(b) && (!std::isinf(a) || a == b);
    if (!same_kind) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << k << ": " << a << " where ref gives " << b;
      return os.str();
    }
    if (std::isfinite(a)) diff += (a - b) * (a - b), norm += b * b;
  }
  if (std::sqrt(diff) <= 1e-4 * std::sqrt(norm)) return "";
  return "rel L2 " + std::to_string(std::sqrt(diff / norm)) + " over the finite elements";
}

// Empty when `got` is what the case promises against `want` (the ref's output).
std::string mismatch(const Tensor& got, const Tensor& want, Promise promise) {
  if (got.dtype != want.dtype || got.shape != want.shape)
    return std::string("dtype/shape ") + dtype_name(got.dtype) + shape_str(got.shape) + " vs " +
           dtype_name(want.dtype) + shape_str(want.shape);
  if (got.bytes == want.bytes) return "";
  RefTensor g = to_ref(got), w = to_ref(want);
  if (promise == Promise::Sums) return sums_mismatch(g, w);
  size_t width = dtype_size(got.dtype);
  for (int64_t k = 0; k < g.numel(); ++k) {
    bool same = std::memcmp(got.bytes.data() + k * width, want.bytes.data() + k * width, width) == 0;
    if (same || (promise == Promise::Ulps && float_close(g.f[k], w.f[k], got.dtype))) continue;
    std::ostringstream os;
    os.precision(17);
    os << "element " << k << ": " << g.get(k) << " where ref gives " << w.get(k);
    return os.str();
  }
  return "";
}

Promise promise(const EdgeCase& c, DType out) {
  if (!dtype_is_float(out) || c.exact) return Promise::Bytes;
  return contraction(c.op.op) ? Promise::Sums : Promise::Ulps;
}

struct Tally {
  int compared = 0, errors_agreed = 0;
  std::vector<std::string> failures, not_compiled;
};

// Cases the ref refuses at run time (0 to a negative power, an index out of range): the
// target must refuse them too, naming the same node.
void check_errors(const std::vector<EdgeCase>& cases, const std::vector<size_t>& erring, const std::string& target,
                  Tally& t) {
  for (size_t k : erring) {
    std::string error;
    std::vector<Tensor> got = run_alone(cases, k, target, error);
    std::string node = "e" + std::to_string(k) + "_" + cases[k].op.op;
    if (error.find("'" + node + "'") != std::string::npos) ++t.errors_agreed;
    else if (error.find("unsupported") != std::string::npos || error.find("not supported") != std::string::npos)
      t.not_compiled.push_back(cases[k].op.name + ": " + error);
    else
      t.failures.push_back(cases[k].op.name + ": ref refuses it, " + target + " " +
                           (error.empty() ? "runs it" : "says: " + error));
  }
}

// The clause of a refusal that names `key`: "node 'e7_Cast' writes f64" of a list of them.
std::string clause_naming(const std::string& what, const std::string& key) {
  size_t at = what.find(key), from = 0;
  for (const char* sep : {"; ", "(also: "})
    if (size_t s = what.rfind(sep, at); s != std::string::npos) from = std::max(from, s + std::strlen(sep));
  size_t to = std::min({what.find(';', at), what.find(", which", at), what.find(')', at)});
  return what.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

// The cases a run checks: in the default tier each op's first case in each dtype and a quarter of
// the rest, a different quarter each day (every case is minutes of native compiles a target
// with an empty cache); all of them in the exhaustive tier (LOCKSTEP_SWEEP=full).
std::vector<size_t> sampled(const std::vector<EdgeCase>& cases) {
  std::vector<size_t> picked;
  std::set<std::string> seen;
  size_t slice = testing::sample_slice(4);
  for (size_t k = 0; k < cases.size(); ++k) {
    const OpCase& c = cases[k].op;
    std::string kind = c.op + " " + (c.inputs.empty() ? "" : dtype_name(c.inputs[0].dtype));
    if (testing::full_sweep() || seen.insert(kind).second || k % 4 == slice) picked.push_back(k);
  }
  if (!testing::full_sweep())
    std::cout << "edge cases checked: " << picked.size() << " of " << cases.size()
              << " (each op's first in each dtype, and slice " << slice
              << " of 4 of the rest: LOCKSTEP_SAMPLE_SLICE=" << slice << " repeats it, LOCKSTEP_SWEEP=full runs all)\n";
  return picked;
}

// Compiles the joined graph, dropping every case the target cannot compile (named in the
// error, which names them all at once).
std::vector<Tensor> run_joined(const std::vector<EdgeCase>& cases, std::vector<size_t>& picked,
                               const std::string& target, Tally& t, Joined& j) {
  for (;;) {
    j = join(cases, picked);
    try {
      return compile(j.graph, target)->run(j.feed);
    } catch (const Unsupported& e) {
      std::string what = e.what();
      size_t before = picked.size();
      std::erase_if(picked, [&](size_t k) {  // node 'e7_Cast' or value 'e7_Cast_output_0'
        std::string key = "'e" + std::to_string(k) + "_";
        if (what.find(key) == std::string::npos) return false;
        t.not_compiled.push_back(cases[k].op.name + ": " + clause_naming(what, key));
        return true;
      });
      if (picked.size() == before) throw;
    }
  }
}

LOCKSTEP_ON_EACH_TARGET(EdgeValues);

TEST_P(EdgeValues, EveryTargetGivesTheRefsBytesOrItsError) {
  const std::string target = GetParam();
  std::vector<EdgeCase> cases = edge_cases();
  std::vector<size_t> fine, erring;
  std::vector<std::vector<Tensor>> want(cases.size());
  for (size_t k : sampled(cases)) {
    std::string error;
    want[k] = run_alone(cases, k, "ref", error);
    (error.empty() ? fine : erring).push_back(k);
  }
  Tally t;
  check_errors(cases, erring, target, t);
  std::map<int, std::vector<size_t>> by_opset;
  for (size_t k : fine) by_opset[cases[k].op.opset].push_back(k);
  for (auto& [opset, picked] : by_opset) {
    Joined j;
    std::vector<Tensor> got = run_joined(cases, picked, target, t, j);
    ASSERT_EQ(got.size(), j.outputs.size());
    for (size_t o = 0; o < got.size(); ++o) {
      auto [k, out] = j.outputs[o];
      std::string why = mismatch(got[o], want[k].at(out), promise(cases[k], got[o].dtype));
      ++t.compared;
      if (!why.empty()) t.failures.push_back(cases[k].op.name + " output " + std::to_string(out) + ": " + why);
    }
  }
  std::cout << target << ": " << cases.size() << " edge cases (" << fine.size() + erring.size() << " checked), "
            << t.compared << " outputs compared, " << t.errors_agreed << " refused as ref refuses them, "
            << t.not_compiled.size() << " not compiled, " << t.failures.size() << " wrong\n";
  std::set<std::string> without;  // ops no case reaches (Constant: no inputs to feed)
  for (const OpDef* d : registered_ops()) without.insert(d->name);
  for (const EdgeCase& c : cases) without.erase(c.op.op);
  std::cout << "  ops without an edge case:";
  for (const std::string& op : without) std::cout << " " << op;
  std::cout << "\n";
  std::map<std::string, int> refused;
  for (size_t k : erring) ++refused[cases[k].op.op];
  std::cout << "  refused by ref (and " << target << ") per op:";
  for (const auto& [op, count] : refused) std::cout << " " << op << " " << count;
  std::cout << "\n";
  for (const std::string& s : t.not_compiled) std::cout << "  not compiled: " << s << "\n";
  EXPECT_TRUE(t.failures.empty()) << ::testing::PrintToString(t.failures);
}

}  // namespace
}  // namespace lockstep
