// Windowed pools: MaxPool, AveragePool and LpPool over N-D windows (kernel, strides, dilations,
// pads, auto_pad, ceil_mode). Positions in the padding take no part: MaxPool skips them,
// AveragePool divides by the positions inside the input (or, count_include_pad, inside the
// padded input) and LpPool adds nothing for them.
#include <cmath>

#include "ops/conv.h"
#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

const std::vector<std::string> kPoolAttrs = {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"};

constexpr TypeSet kBytes = types({DType::i8, DType::u8});
const TypeHistory kMaxPoolTypes = {{8, kFloat}, {12, kFloat | kBytes}, {22, kFloat | kBf16 | kBytes}};
const TypeHistory kPoolTypes = {{2, kFloat}, {22, kFloat | kBf16}};

void infer_pool(InferCtx& c) {
  const std::string& op = c.node.op_type;
  require_types(c, 0, op == "MaxPool" ? kMaxPoolTypes : kPoolTypes);
  if (op == "MaxPool" && c.has_output(1))
    throw Unsupported(c.graph.label(c.node_index) + ": MaxPool's Indices output is not supported");
  if (op == "LpPool" && c.attr_int("p", 2) < 1)
    c.fail("attribute 'p' must be at least 1, got " + std::to_string(c.attr_int("p", 2)));
  c.attr_int("count_include_pad", 0);
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  ConvGeometry g = pool_geometry(c, x.dims);
  Shape out = {x.dims[0], x.dims[1]};
  out.insert(out.end(), g.out_spatial.begin(), g.out_spatial.end());
  c.set_output(0, x.dtype, out);
}

// One output element's window: the offsets of its positions inside X, and how many positions
// lie inside the padded input.
struct Window {
  std::vector<int64_t> offsets;
  int64_t padded = 0;
};

Window window_at(const ConvGeometry& g, const Shape& x, int64_t plane, const Shape& o) {
  size_t nd = g.kernel.size();
  std::vector<int64_t> k(nd, 0), strides = shape_strides(x);
  Window w;
  for (;;) {
    bool inside = true, in_pads = true;
    int64_t at = plane * strides[1];
    for (size_t a = 0; a < nd; ++a) {
      int64_t i = o[a] * g.strides[a] - g.pads_begin[a] + k[a] * g.dilations[a], n = x[a + 2];
      inside = inside && i >= 0 && i < n;
      in_pads = in_pads && i >= -g.pads_begin[a] && i < n + g.pads_end[a];
      at += i * strides[a + 2];
    }
    if (inside) w.offsets.push_back(at);
    w.padded += in_pads;
    size_t a = nd;
    while (a-- > 0 && ++k[a] == g.kernel[a]) k[a] = 0;
    if (a == static_cast<size_t>(-1)) return w;
  }
}

void ref_pool(RefCtx& c) {
  const std::string& op = c.node.op_type;
  const RefTensor& x = c.input(0);
  ConvGeometry g = pool_geometry(c, x.shape);
  Shape out_shape = {x.shape[0], x.shape[1]};
  out_shape.insert(out_shape.end(), g.out_spatial.begin(), g.out_spatial.end());
  RefTensor y(x.dtype, out_shape);
  int64_t spatial = shape_numel(g.out_spatial), p = c.attr_int("p", 2);
  bool include_pad = c.attr_int("count_include_pad", 0) != 0;
  Shape o(g.out_spatial.size());
  for (int64_t e = 0; e < y.numel(); ++e) {
    for (size_t a = o.size(), r = e % spatial; a-- > 0; r /= g.out_spatial[a]) o[a] = r % g.out_spatial[a];
    Window w = window_at(g, x.shape, e / spatial, o);
    if (op == "MaxPool" && !x.is_float()) {  // int8 or uint8: an empty window gives the lowest value
      int64_t acc = x.dtype == DType::i8 ? -128 : 0;
      for (int64_t at : w.offsets) acc = int_less(acc, x.i[at], x.dtype) ? x.i[at] : acc;
      y.set_int(e, acc);
      continue;
    }
    double acc = op == "MaxPool" ? -INFINITY : 0.0;
    for (int64_t at : w.offsets) {
      double v = x.f[at];  // NaN wins and ties keep the earlier value, as ReduceMax's fold
      acc = op == "MaxPool"  ? (v > acc || v != v ? v : acc)
            : op == "LpPool" ? acc + std::pow(std::fabs(v), p)
                             : acc + v;
    }
    if (op == "AveragePool") acc /= static_cast<double>(include_pad ? w.padded : w.offsets.size());
    if (op == "LpPool") acc = std::pow(acc, 1.0 / static_cast<double>(p));
    y.f[e] = acc;
  }
  c.out[0] = std::move(y);
}

std::vector<std::string> with(std::vector<std::string> a, std::vector<std::string> more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

const OpDef kOps[] = {
    {"MaxPool", 1, 1, 1, 2, with(kPoolAttrs, {"storage_order"}), infer_pool, ref_pool},
    {"AveragePool", 1, 1, 1, 1, with(kPoolAttrs, {"count_include_pad"}), infer_pool, ref_pool},
    {"LpPool", 1, 1, 1, 1, with(kPoolAttrs, {"p"}), infer_pool, ref_pool},
};

}  // namespace

std::span<const OpDef> pool_ops() { return kOps; }

}  // namespace lockstep
