// Activations with parameters: Elu, Selu, Celu, Softplus, Softsign, HardSigmoid, HardSwish,
// ThresholdedRelu, Mish, Swish, Shrink and PRelu. The references compute in double with expm1 and log1p,
// which the targets' formulas match to a few ulp (kernel/lower_activation.cpp).
#include <cmath>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

void infer_act(InferCtx& c) {
  static const std::pair<const char*, int> since[] = {
      {"ThresholdedRelu", 10}, {"Celu", 12}, {"HardSwish", 14}, {"Mish", 18}, {"Swish", 24}};
  const std::string& op = c.node.op_type;
  int from = 7;
  for (auto [name, v] : since)
    if (op == name) from = v;
  if (op == "Celu") require_types(c, 0, {{12, types({DType::f32})}, {28, kFloat | kBf16}});
  else if (op == "Shrink") {
    require_types(c, 0, {{9, kNumeric}});
    if (!dtype_is_float(c.input(0).dtype))
      throw Unsupported(c.graph.label(c.node_index) + ": Shrink of " + dtype_name(c.input(0).dtype) +
                        " is not supported");
  } else if (op == "Swish") require_types(c, 0, {{24, kFloat | kBf16}});
  else require_types(c, 0, {{from, kFloat}, {22, kFloat | kBf16}});
  for (const char* a : {"alpha", "beta", "gamma", "bias", "lambd"})
    if (c.has_attr(a)) c.attr_float(a, 0);  // checks the attribute's kind
  c.out[0] = c.input(0);
}

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

// One activation of x in double; `c` gives the attributes.
double activate(const RefCtx& c, double x) {
  const std::string& op = c.node.op_type;
  if (op == "ThresholdedRelu") return x > c.attr_float("alpha", 1.0) ? x : 0.0;  // NaN gives 0, as numpy's where
  if (op == "Shrink") {
    double lambd = c.attr_float("lambd", 0.5), bias = c.attr_float("bias", 0.0);
    return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0;  // NaN gives 0, as numpy's where
  }
  if (x != x) return x;
  if (op == "Elu") return x < 0 ? c.attr_float("alpha", 1.0) * std::expm1(x) : x;
  if (op == "Selu") {
    double alpha = c.attr_float("alpha", 1.67326319217681884765625),
           gamma = c.attr_float("gamma", 1.05070102214813232421875);
    return gamma * (x > 0 ? x : alpha * std::expm1(x));
  }
  if (op == "Celu") {
    double alpha = c.attr_float("alpha", 1.0);
    return x < 0 ? alpha * std::expm1(x / alpha) : x;  // max(0, x) + min(0, ...), with -0 kept
  }
  if (op == "Softplus") return softplus(x);
  if (op == "Softsign") return x / (1 + std::fabs(x));
  if (op == "Mish") return x * std::tanh(softplus(x));
  if (op == "Swish") return x / (1 + std::exp(-c.attr_float("alpha", 1.0) * x));
  double alpha = op == "HardSwish" ? 1.0 / 6 : c.attr_float("alpha", 0.2);
  double beta = op == "HardSwish" ? 0.5 : c.attr_float("beta", 0.5);
  double v = alpha * x + beta, h = v < 0 ? 0.0 : v > 1 ? 1.0 : v;
  return op == "HardSwish" ? x * h : h;
}

void ref_act(RefCtx& c) {
  const RefTensor& x = c.input(0);
  RefTensor out(x.dtype, x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) out.f[k] = activate(c, x.f[k]);
  c.out[0] = std::move(out);
}

// PRelu: x where x >= 0, slope * x elsewhere; the slope broadcasts to x (unidirectionally).
const TypeHistory kPReluTypes = {{7, kFloat},
                                 {9, kFloat | types({DType::i32, DType::i64, DType::u32, DType::u64})},
                                 {16, kFloat | kBf16 | types({DType::i32, DType::i64, DType::u32, DType::u64})}};

void infer_prelu(InferCtx& c) {
  require_types(c, 0, kPReluTypes);
  require_types(c, 1, kPReluTypes);
  c.require_same_dtype(0, 1);
  TypeInfo out = infer_broadcast(c, {0, 1}, c.input(0).dtype);
  if (out.rank_known && c.input(0).rank_known && out.dims != c.input(0).dims)
    c.fail("slope must broadcast to the input's shape " + shape_str(c.input(0).dims));
  c.out[0] = c.input(0);
}

void ref_prelu(RefCtx& c) {
  const RefTensor &x = c.input(0), &s = c.input(1);
  RefTensor out(x.dtype, ref_broadcast(c, {0, 1}));
  for_each_broadcast(out.shape, {x.shape, s.shape}, [&](int64_t k, const int64_t* ix) {
    if (x.is_float()) out.f[k] = x.f[ix[0]] < 0 ? s.f[ix[1]] * x.f[ix[0]] : x.f[ix[0]];
    else
      out.set_int(k, x.i[ix[0]] < 0 && x.dtype != DType::u64 && x.dtype != DType::u32
                         ? static_cast<int64_t>(static_cast<uint64_t>(s.i[ix[1]]) * static_cast<uint64_t>(x.i[ix[0]]))
                         : x.i[ix[0]]);
  });
  c.out[0] = std::move(out);
}

// SwiGLU (opset 28): a * sigmoid(alpha * a) * b, of two inputs of one shape (no broadcasting).
void infer_swiglu(InferCtx& c) {
  require_types(c, 0, {{28, kFloat | kBf16}});
  c.require_same_dtype(0, 1);
  const TypeInfo &a = c.input(0), &b = c.input(1);
  if (a.rank_known && b.rank_known) {
    bool same = a.dims.size() == b.dims.size();
    for (size_t k = 0; same && k < a.dims.size(); ++k) same = a.dims[k] < 0 || b.dims[k] < 0 || a.dims[k] == b.dims[k];
    if (!same) c.fail("A " + a.str() + " and B " + b.str() + " must have one shape (SwiGLU does not broadcast)");
  }
  c.out[0] = a;
}

void ref_swiglu(RefCtx& c) {
  const RefTensor &a = c.input(0), &b = c.input(1);
  if (a.shape != b.shape) c.fail("A and B must have one shape (SwiGLU does not broadcast)");
  double alpha = c.attr_float("alpha", 1.0);
  RefTensor out(a.dtype, a.shape);
  for (int64_t k = 0; k < a.numel(); ++k) out.f[k] = a.f[k] / (1 + std::exp(-alpha * a.f[k])) * b.f[k];
  c.out[0] = std::move(out);
}

#define LS_ACT(name, ...) \
  { name, 1, 1, 1, 1, {__VA_ARGS__}, infer_act, ref_act }
const OpDef kOps[] = {
    LS_ACT("Elu", "alpha"),
    LS_ACT("Selu", "alpha", "gamma"),
    LS_ACT("Celu", "alpha"),
    LS_ACT("Softplus"),
    LS_ACT("Softsign"),
    LS_ACT("HardSigmoid", "alpha", "beta"),
    LS_ACT("HardSwish"),
    LS_ACT("ThresholdedRelu", "alpha"),
    LS_ACT("Mish"),
    LS_ACT("Swish", "alpha"),
    LS_ACT("Shrink", "bias", "lambd"),
    {"PRelu", 2, 2, 1, 1, {}, infer_prelu, ref_prelu},
    {"SwiGLU", 2, 2, 1, 1, {"alpha"}, infer_swiglu, ref_swiglu},
};
#undef LS_ACT

}  // namespace

std::span<const OpDef> activation_ops() { return kOps; }

}  // namespace lockstep
