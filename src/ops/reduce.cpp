// The Reduce family. Floats fold in double, integers exactly in their own type.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/elementwise.h"
#include "ops/reduce.h"

namespace lockstep {

namespace {

// Which axes a Reduce node reduces, as far as inference can tell.
struct ReducePlan {
  bool known = true;         // false: axes come from an input whose value is not known yet
  bool noop = false;         // empty axes with noop_with_empty_axes: the output is the input
  std::vector<bool> reduce;  // per input axis
};

// Opset where `axes` moved from an attribute to the second input.
int axes_input_opset(const OpCtx& c) { return c.node.op_type == "ReduceSum" ? 13 : 18; }

// Square roots and logarithms of integers would need a rounding rule no target shares.
bool float_only(ReduceKind k) { return k == ReduceKind::L2 || k == ReduceKind::LogSum || k == ReduceKind::LogSumExp; }

ReducePlan plan_from_axes(const OpCtx& c, const std::vector<int64_t>& axes, int64_t rank, bool noop) {
  ReducePlan p;
  if (axes.empty()) {
    p.noop = noop;
    p.reduce.assign(rank, !noop);
    return p;
  }
  p.reduce.assign(rank, false);
  for (int64_t ax : axes) {
    int64_t a = normalize_axis(ax, rank);
    if (a < 0)
      c.fail("axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(rank));
    if (p.reduce[a]) c.fail("axis " + std::to_string(ax) + " is listed twice");
    p.reduce[a] = true;
  }
  return p;
}

// Reads axes from the attribute or input 1; `axes_value` is null when the input's value is
// not known (inference before run time).
// Attribute and input forms must match the opset; returns true when axes are an input.
bool axes_are_input(const OpCtx& c) {
  bool as_input = c.opset >= axes_input_opset(c);
  if (as_input && c.has_attr("axes"))
    c.fail("axes is an input, not an attribute, from opset " + std::to_string(axes_input_opset(c)));
  if (!as_input && c.has_attr("noop_with_empty_axes"))
    c.fail("noop_with_empty_axes exists only from opset " + std::to_string(axes_input_opset(c)));
  if (!as_input && c.num_inputs() > 1)
    c.fail("axes is an attribute, not an input, before opset " + std::to_string(axes_input_opset(c)));
  return as_input;
}

// GlobalAveragePool / GlobalMaxPool: a Reduce over every spatial axis (2 on), dims kept.
bool global_pool(const OpCtx& c) { return c.node.op_type.starts_with("Global"); }

ReducePlan reduce_plan(const OpCtx& c, int64_t rank, const RefTensor* axes_value, bool axes_given) {
  if (global_pool(c)) {
    if (rank < 2) c.fail("input must be [N, C, ...], got rank " + std::to_string(rank));
    std::vector<int64_t> spatial;
    for (int64_t a = 2; a < rank; ++a) spatial.push_back(a);
    return spatial.empty() ? ReducePlan{true, true, {}} : plan_from_axes(c, spatial, rank, false);
  }
  bool as_input = axes_are_input(c);
  bool noop = c.attr_int("noop_with_empty_axes", 0) != 0;
  if (!as_input) return plan_from_axes(c, c.attr_ints("axes"), rank, false);
  if (!axes_given) return plan_from_axes(c, {}, rank, noop);
  if (!axes_value) return ReducePlan{false, false, {}};
  std::vector<int64_t> axes;
  for (int64_t k = 0; k < axes_value->numel(); ++k) axes.push_back(axes_value->get_int(k));
  return plan_from_axes(c, axes, rank, noop);
}

Shape reduced_shape(const Shape& in, const ReducePlan& p, bool keepdims) {
  Shape out;
  for (size_t a = 0; a < in.size(); ++a) {
    if (!p.reduce[a]) out.push_back(in[a]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

void infer_reduce(InferCtx& c) {
  DType t = c.input(0).dtype;
  ReduceKind kind = *reduce_kind(c.node.op_type);
  if (float_only(kind) && !dtype_is_float(t))
    throw Unsupported(c.graph.label(c.node_index) + ": " + c.node.op_type + " of " + dtype_name(t) +
                      " is not supported (lockstep reduces floats only with it)");
  if (global_pool(c)) c.require_float(0);
  bool any_all = t == DType::boolean && c.opset >= 20 && (kind == ReduceKind::Max || kind == ReduceKind::Min);
  if (!dtype_is_float(t) && !dtype_is_signed_int(t) && !(dtype_is_unsigned_int(t) && t != DType::boolean) && !any_all)
    c.fail(std::string("input must be a number type") +
           (kind == ReduceKind::Max || kind == ReduceKind::Min ? " (or bool from opset 20)" : "") + ", got " +
           dtype_name(t));
  bool axes_given = c.has_input(1);
  if (axes_given) {
    if (c.input(1).dtype != DType::i64)
      c.fail(std::string("axes must be int64, got ") + dtype_name(c.input(1).dtype));
    c.require_rank(1, 1);
  }
  bool keepdims = c.attr_int("keepdims", 1) != 0;
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) {
    axes_are_input(c);
    return c.set_output_unknown_rank(0, t);
  }
  int64_t rank = x.dims.size();
  ReducePlan p = reduce_plan(c, rank, c.value(1), axes_given);
  if (p.known) return c.set_output(0, t, p.noop ? x.dims : reduced_shape(x.dims, p, keepdims));
  // Axes not known before run time: with keepdims the rank survives, each dim is d or 1.
  if (!keepdims) return c.set_output_unknown_rank(0, t);
  Shape out = x.dims;
  for (int64_t& d : out)
    if (d != 1) d = -1;
  c.set_output(0, t, out);
}

// Output element index of every input element (reduced axes collapse to index 0).
std::vector<int64_t> output_index_of(const Shape& in, const ReducePlan& p) {
  Shape kept = in;
  for (size_t a = 0; a < in.size(); ++a)
    if (p.reduce[a]) kept[a] = 1;
  Shape out_strides = shape_strides(kept);
  std::vector<int64_t> map(shape_numel(in));
  Shape idx(in.size(), 0);
  for (int64_t e = 0; e < static_cast<int64_t>(map.size()); ++e) {
    int64_t o = 0;
    for (size_t a = 0; a < in.size(); ++a)
      if (!p.reduce[a]) o += idx[a] * out_strides[a];
    map[e] = o;
    for (size_t a = in.size(); a-- > 0;)
      if (++idx[a] < in[a]) break; else idx[a] = 0;
  }
  return map;
}

// Folds one output element's inputs in order. Floats run in double; integers exactly in
// uint64 (wrapping like the type, narrowed on store), compared as their dtype.
struct Fold {
  ReduceKind kind;
  DType t;

  double init_f() const {
    if (kind == ReduceKind::Max) return -INFINITY;
    if (kind == ReduceKind::Min) return INFINITY;
    return kind == ReduceKind::Prod ? 1.0 : 0.0;
  }
  int64_t init_i() const {
    if (kind == ReduceKind::Max)
      return dtype_is_unsigned_int(t) ? 0 : wrap_to_dtype(INT64_MIN >> (64 - 8 * dtype_size(t)), t);
    if (kind == ReduceKind::Min)
      return wrap_to_dtype(dtype_is_unsigned_int(t) ? -1 : INT64_MAX >> (64 - 8 * dtype_size(t)), t);
    return kind == ReduceKind::Prod ? 1 : 0;
  }
  // NaN wins and ties keep the earlier value, as the targets' ls_max_nan / ls_min_nan do.
  double step_f(double acc, double x) const {
    switch (kind) {
      case ReduceKind::Max:
        return x > acc || x != x ? x : acc;
      case ReduceKind::Min:
        return x < acc || x != x ? x : acc;
      case ReduceKind::Prod:
        return acc * x;
      case ReduceKind::L1:
        return acc + std::fabs(x);
      case ReduceKind::L2:
      case ReduceKind::SumSquare:
        return acc + x * x;
      default:
        return acc + x;
    }
  }
  int64_t step_i(int64_t acc, int64_t x) const {
    uint64_t a = static_cast<uint64_t>(acc), v = static_cast<uint64_t>(x);
    switch (kind) {
      case ReduceKind::Max:
        return ew::int_less(acc, x, t) ? x : acc;
      case ReduceKind::Min:
        return ew::int_less(x, acc, t) ? x : acc;
      case ReduceKind::Prod:
        return wrap_to_dtype(static_cast<int64_t>(a * v), t);
      case ReduceKind::L1:
        return wrap_to_dtype(static_cast<int64_t>(a + (x < 0 && !dtype_is_unsigned_int(t) ? 0 - v : v)), t);
      case ReduceKind::SumSquare:
        return wrap_to_dtype(static_cast<int64_t>(a + v * v), t);
      default:
        return wrap_to_dtype(static_cast<int64_t>(a + v), t);
    }
  }
};

// log(sum(exp(x))) shifted by the (finite) max so that exp never overflows; the targets do
// the same, in two kernels.
void ref_log_sum_exp(const RefTensor& X, const std::vector<int64_t>& to_out, RefTensor& Y) {
  std::vector<double> mx(Y.numel(), -INFINITY), sum(Y.numel(), 0.0);
  Fold max{ReduceKind::Max, X.dtype};
  for (int64_t e = 0; e < X.numel(); ++e) mx[to_out[e]] = max.step_f(mx[to_out[e]], X.f[e]);
  for (double& m : mx)
    if (std::isinf(m)) m = 0;
  for (int64_t e = 0; e < X.numel(); ++e) sum[to_out[e]] += std::exp(X.f[e] - mx[to_out[e]]);
  for (int64_t o = 0; o < Y.numel(); ++o) Y.f[o] = std::log(sum[o]) + mx[o];
}

void ref_reduce(RefCtx& c) {
  ReduceKind kind = *reduce_kind(c.node.op_type);
  const RefTensor& X = c.input(0);
  bool keepdims = c.attr_int("keepdims", 1) != 0;
  const RefTensor* axes = c.has_input(1) ? c.in[1] : nullptr;
  ReducePlan p = reduce_plan(c, X.shape.size(), axes, axes != nullptr);
  if (p.noop) {
    c.out[0] = X;
    return;
  }
  RefTensor Y(X.dtype, reduced_shape(X.shape, p, keepdims));
  int64_t count = 1;
  for (size_t a = 0; a < X.shape.size(); ++a)
    if (p.reduce[a]) count *= X.shape[a];
  std::vector<int64_t> to_out = output_index_of(X.shape, p);
  Fold fold{kind, X.dtype};
  if (kind == ReduceKind::LogSumExp) {
    ref_log_sum_exp(X, to_out, Y);
  } else if (X.is_float()) {
    std::fill(Y.f.begin(), Y.f.end(), fold.init_f());
    for (int64_t e = 0; e < X.numel(); ++e) Y.f[to_out[e]] = fold.step_f(Y.f[to_out[e]], X.f[e]);
    for (double& v : Y.f) {
      if (kind == ReduceKind::Mean) v /= static_cast<double>(count);  // of nothing: 0/0 = NaN, as numpy
      else if (kind == ReduceKind::L2) v = std::sqrt(v);
      else if (kind == ReduceKind::LogSum) v = std::log(v);
    }
  } else {
    // Sums wrap in the type, as numpy and ONNX's own reference do; the mean then truncates
    // toward zero like C integer division; of nothing, 0.
    std::vector<int64_t> acc(Y.numel(), fold.init_i());
    for (int64_t e = 0; e < X.numel(); ++e) acc[to_out[e]] = fold.step_i(acc[to_out[e]], X.i[e]);
    for (int64_t o = 0; o < Y.numel(); ++o) {
      int64_t s = acc[o];
      if (kind == ReduceKind::Mean && count > 0)
        s = X.dtype == DType::u64 ? static_cast<int64_t>(static_cast<uint64_t>(s) / count) : s / count;
      Y.set_int(o, s);
    }
  }
  c.out[0] = std::move(Y);
}

#define LS_REDUCE(name) \
  { name, 1, 2, 1, 1, {"axes", "keepdims", "noop_with_empty_axes"}, infer_reduce, ref_reduce }
const OpDef kOps[] = {
    LS_REDUCE("ReduceSum"),
    LS_REDUCE("ReduceMean"),
    LS_REDUCE("ReduceMax"),
    LS_REDUCE("ReduceMin"),
    LS_REDUCE("ReduceProd"),
    LS_REDUCE("ReduceL1"),
    LS_REDUCE("ReduceL2"),
    LS_REDUCE("ReduceSumSquare"),
    LS_REDUCE("ReduceLogSum"),
    LS_REDUCE("ReduceLogSumExp"),
    {"GlobalAveragePool", 1, 1, 1, 1, {}, infer_reduce, ref_reduce},
    {"GlobalMaxPool", 1, 1, 1, 1, {}, infer_reduce, ref_reduce},
};
#undef LS_REDUCE

}  // namespace

std::optional<ReduceKind> reduce_kind(const std::string& op_type) {
  static const std::pair<const char*, ReduceKind> kinds[] = {{"ReduceSum", ReduceKind::Sum},
                                                             {"ReduceMean", ReduceKind::Mean},
                                                             {"ReduceMax", ReduceKind::Max},
                                                             {"ReduceMin", ReduceKind::Min},
                                                             {"ReduceProd", ReduceKind::Prod},
                                                             {"ReduceL1", ReduceKind::L1},
                                                             {"ReduceL2", ReduceKind::L2},
                                                             {"ReduceSumSquare", ReduceKind::SumSquare},
                                                             {"ReduceLogSum", ReduceKind::LogSum},
                                                             {"ReduceLogSumExp", ReduceKind::LogSumExp},
                                                             {"GlobalAveragePool", ReduceKind::Mean},
                                                             {"GlobalMaxPool", ReduceKind::Max}};
  for (auto [name, k] : kinds)
    if (op_type == name) return k;
  return std::nullopt;
}

std::vector<int64_t> reduce_axes(const OpCtx& c, int64_t rank, const RefTensor* axes_value) {
  ReducePlan p = reduce_plan(c, rank, axes_value, c.has_input(1));
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a)
    if (p.reduce[a]) axes.push_back(a);
  return axes;
}

std::span<const OpDef> reduce_ops() { return kOps; }

}  // namespace lockstep
