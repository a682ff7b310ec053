// Normalisations: BatchNormalization at inference (per-channel statistics given), and
// InstanceNormalization, LayerNormalization, RMSNormalization and LpNormalization (statistics
// of the input itself), in double.
#include <algorithm>
#include <cmath>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

// x viewed as [outer, n]: rows of n elements that share one mean and variance.
struct Rows {
  int64_t outer = 1, n = 1;
};

Rows rows_from(const Shape& dims, int64_t first) {
  Rows r;
  for (size_t a = 0; a < dims.size(); ++a) (static_cast<int64_t>(a) < first ? r.outer : r.n) *= dims[a];
  return r;
}

// The mean and 1 / sqrt(variance + eps) of each row (variance over n, not n - 1).
void row_stats(const RefTensor& x, const Rows& r, double eps, std::vector<double>& mean, std::vector<double>& inv) {
  mean.assign(r.outer, 0.0);
  inv.assign(r.outer, 0.0);
  for (int64_t o = 0; o < r.outer; ++o) {
    double s = 0, v = 0;
    for (int64_t j = 0; j < r.n; ++j) s += x.f[o * r.n + j];
    mean[o] = s / static_cast<double>(r.n);
    for (int64_t j = 0; j < r.n; ++j) v += (x.f[o * r.n + j] - mean[o]) * (x.f[o * r.n + j] - mean[o]);
    inv[o] = 1.0 / std::sqrt(v / static_cast<double>(r.n) + eps);
  }
}

// A per-channel parameter: shape [C] where x is [N, C, ...].
void require_channel_param(const InferCtx& c, size_t k, const TypeInfo& x) {
  require_present(c, k);
  const TypeInfo& p = c.input(k);
  if (!dtype_is_float(p.dtype)) c.fail(input_label(c, k) + " must be a float type");
  if (p.rank_known &&
      (p.dims.size() != 1 || (x.rank_known && x.dims[1] >= 0 && p.dims[0] >= 0 && p.dims[0] != x.dims[1])))
    c.fail(input_label(c, k) + " must have shape [C] = [" + (x.rank_known ? std::to_string(x.dims[1]) : "?") +
           "], got " + shape_str(p.dims));
}

void require_nc(const InferCtx& c, const TypeInfo& x) {
  if (!dtype_is_float(x.dtype)) c.fail(std::string("input must be a float type, got ") + dtype_name(x.dtype));
  if (x.rank_known && x.dims.size() < 2) c.fail("input must be [N, C, ...], got rank " + std::to_string(x.dims.size()));
}

void infer_batch_norm(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  require_nc(c, x);
  for (size_t k = 1; k < 5; ++k) require_channel_param(c, k, x);
  if (c.opset < 9 && c.attr_int("spatial", 1) != 1)
    throw Unsupported(c.graph.label(c.node_index) + ": BatchNormalization with spatial=0 is not supported");
  if (c.attr_int("training_mode", 0) != 0 || c.num_outputs() > 1)
    throw Unsupported(c.graph.label(c.node_index) + ": BatchNormalization in training mode is not supported");
  c.attr_float("epsilon", 1e-5);
  c.out[0] = x;
}

// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
void ref_batch_norm(RefCtx& c) {
  const RefTensor& x = c.input(0);
  double eps = c.attr_float("epsilon", 1e-5);
  const RefTensor &scale = c.input(1), &bias = c.input(2), &mean = c.input(3), &var = c.input(4);
  int64_t C = x.shape[1], inner = x.numel() / std::max<int64_t>(x.shape[0] * C, 1);
  RefTensor y(x.dtype, x.shape);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t ch = e / inner % C;
    y.f[e] = (x.f[e] - mean.f[ch]) / std::sqrt(var.f[ch] + eps) * scale.f[ch] + bias.f[ch];
  }
  c.out[0] = std::move(y);
}

void infer_instance_norm(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  require_nc(c, x);
  require_channel_param(c, 1, x);
  require_channel_param(c, 2, x);
  c.attr_float("epsilon", 1e-5);
  c.out[0] = x;
}

// Each (n, c) plane normalised by its own statistics, then scale[c] and bias[c].
void ref_instance_norm(RefCtx& c) {
  const RefTensor &x = c.input(0), &scale = c.input(1), &bias = c.input(2);
  Rows r = rows_from(x.shape, 2);
  std::vector<double> mean, inv;
  row_stats(x, r, c.attr_float("epsilon", 1e-5), mean, inv);
  RefTensor y(x.dtype, x.shape);
  for (int64_t o = 0; o < r.outer; ++o)
    for (int64_t j = 0; j < r.n; ++j) {
      int64_t ch = o % x.shape[1];
      y.f[o * r.n + j] = (x.f[o * r.n + j] - mean[o]) * inv[o] * scale.f[ch] + bias.f[ch];
    }
  c.out[0] = std::move(y);
}

// Mean and InvStdDev's shape: the input's with the normalised dims [axis, rank) 1.
Shape stat_shape(Shape dims, int64_t axis) {
  for (size_t a = axis; a < dims.size(); ++a) dims[a] = 1;
  return dims;
}

int64_t layer_axis(const OpCtx& c, int64_t rank) {
  int64_t a = c.attr_int("axis", -1), k = normalize_axis(a, rank);
  if (k < 0) c.fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return k;
}

// LayerNormalization (opset 17) and RMSNormalization (opset 23, no bias or statistics outputs):
// rows of the trailing dims [axis, rank), parameters that broadcast to them.
void infer_rows_norm(InferCtx& c, int since) {
  require_op_exists(c, {{since, 0}});
  const TypeInfo& x = c.input(0);
  if (!dtype_is_float(x.dtype)) c.fail(std::string("input must be a float type, got ") + dtype_name(x.dtype));
  if (c.attr_int("stash_type", 1) != 1)
    throw Unsupported(c.graph.label(c.node_index) + ": " + c.node.op_type +
                      " with a stash_type other than float is not supported");
  c.attr_float("epsilon", 1e-5);
  int64_t axis = x.rank_known ? layer_axis(c, static_cast<int64_t>(x.dims.size())) : 0;
  for (size_t k = 1; k < 3 && k < c.num_inputs(); ++k) {
    if (!c.has_input(k)) continue;
    if (c.input(k).dtype != x.dtype) c.fail(input_label(c, k) + " must have the input's dtype");
    if (!x.rank_known || !c.input(k).rank_known) continue;
    TypeInfo b = infer_broadcast(c, {0, k}, x.dtype);
    if (b.rank_known && b.dims != x.dims)
      c.fail(input_label(c, k) + " must broadcast to " + shape_str(Shape(x.dims.begin() + axis, x.dims.end())));
  }
  require_present(c, 1);
  if (!x.rank_known) {
    for (size_t k = 0; k < c.num_outputs(); ++k) c.set_output_unknown_rank(k, k ? DType::f32 : x.dtype);
    return;
  }
  c.out[0] = x;
  for (size_t k = 1; k < c.num_outputs(); ++k) c.set_output(k, DType::f32, stat_shape(x.dims, axis));
}

// y = x / sqrt(mean(x^2 over [axis, rank)) + eps) * scale.
void ref_rms_norm(RefCtx& c) {
  const RefTensor &x = c.input(0), &scale = c.input(1);
  Rows r = rows_from(x.shape, layer_axis(c, static_cast<int64_t>(x.shape.size())));
  double eps = c.attr_float("epsilon", 1e-5);
  std::vector<double> inv(r.outer);
  for (int64_t o = 0; o < r.outer; ++o) {
    double sq = 0;
    for (int64_t j = 0; j < r.n; ++j) sq += x.f[o * r.n + j] * x.f[o * r.n + j];
    inv[o] = 1.0 / std::sqrt(sq / static_cast<double>(r.n) + eps);
  }
  RefTensor out(x.dtype, x.shape);
  for_each_broadcast(x.shape, {x.shape, scale.shape}, [&](int64_t k, const int64_t* ix) {
    out.f[k] = x.f[k] * inv[k / std::max<int64_t>(r.n, 1)] * scale.f[ix[1]];
  });
  c.out[0] = std::move(out);
}

// Rows of the trailing dims [axis, rank) normalised, then Scale and B broadcast to them.
void ref_layer_norm(RefCtx& c) {
  const RefTensor& x = c.input(0);
  int64_t axis = layer_axis(c, static_cast<int64_t>(x.shape.size()));
  Rows r = rows_from(x.shape, axis);
  std::vector<double> mean, inv;
  row_stats(x, r, c.attr_float("epsilon", 1e-5), mean, inv);
  RefTensor y(x.dtype, x.shape);
  for (int64_t o = 0; o < r.outer; ++o)
    for (int64_t j = 0; j < r.n; ++j) y.f[o * r.n + j] = (x.f[o * r.n + j] - mean[o]) * inv[o];
  std::vector<Shape> shapes = {y.shape, c.input(1).shape};
  if (c.has_input(2)) shapes.push_back(c.input(2).shape);
  RefTensor out(x.dtype, x.shape);
  for_each_broadcast(x.shape, shapes, [&](int64_t k, const int64_t* ix) {
    out.f[k] = y.f[ix[0]] * c.input(1).f[ix[1]] + (c.has_input(2) ? c.input(2).f[ix[2]] : 0.0);
  });
  c.out[0] = std::move(out);
  for (size_t k = 1; k < c.num_outputs(); ++k) {
    if (!c.has_output(k)) continue;
    RefTensor s(DType::f32, stat_shape(x.shape, axis));
    for (int64_t o = 0; o < r.outer; ++o) s.f[o] = k == 1 ? mean[o] : inv[o];
    c.out[k] = std::move(s);
  }
}

// LpNormalization: x / ||x||_p along one axis, p 1 or 2; 0 where the norm is 0.
void infer_lp_norm(InferCtx& c) {
  require_types(c, 0, {{1, kFloat}, {22, kFloat | kBf16}});
  int64_t p = c.attr_int("p", 2);
  if (p != 1 && p != 2) c.fail("attribute 'p' must be 1 or 2, got " + std::to_string(p));
  if (c.input(0).rank_known) layer_axis(c, static_cast<int64_t>(c.input(0).dims.size()));
  c.out[0] = c.input(0);
}

void ref_lp_norm(RefCtx& c) {
  const RefTensor& x = c.input(0);
  int64_t axis = layer_axis(c, static_cast<int64_t>(x.shape.size())), p = c.attr_int("p", 2);
  int64_t n = x.shape[axis], inner = shape_strides(x.shape)[axis], outer = x.numel() / std::max<int64_t>(n * inner, 1);
  RefTensor y(x.dtype, x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double norm = 0;
      for (int64_t j = 0; j < n; ++j) {
        double v = x.f[(o * n + j) * inner + i];
        norm += p == 1 ? std::fabs(v) : v * v;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t j = 0; j < n; ++j)  // a row of zeros stays zeros, as ONNX's cases expect
        y.f[(o * n + j) * inner + i] = norm == 0 ? 0.0 : x.f[(o * n + j) * inner + i] / norm;
    }
  c.out[0] = std::move(y);
}

// GroupNormalization: the channels in num_groups consecutive groups, each group of a sample
// one row (its channels and positions); scale and bias per channel (opset 21) or per group (18).
int64_t group_count(const OpCtx& c, int64_t channels) {
  int64_t g = c.attr_int("num_groups", 0);
  if (g <= 0) c.fail("num_groups must be positive, got " + std::to_string(g));
  if (channels >= 0 && channels % g)
    c.fail(std::to_string(channels) + " channels do not split into " + std::to_string(g) + " groups");
  return g;
}

void infer_group_norm(InferCtx& c) {
  require_op_exists(c, {{18, 0}});
  const TypeInfo& x = c.input(0);
  require_nc(c, x);
  if (c.attr_int("stash_type", 1) != 1)
    throw Unsupported(c.graph.label(c.node_index) +
                      ": GroupNormalization with a stash_type other than float is not supported");
  int64_t g = group_count(c, x.rank_known ? x.dims[1] : -1);
  for (size_t k : {1, 2}) {
    require_present(c, k);
    c.require_same_dtype(0, k);
    const TypeInfo& p = c.input(k);
    int64_t want = c.opset < 21 ? g : x.rank_known ? x.dims[1] : -1;
    if (p.rank_known && (p.dims.size() != 1 || (want >= 0 && p.dims[0] >= 0 && p.dims[0] != want)))
      c.fail(input_label(c, k) + " must have one value per " + (c.opset < 21 ? "group" : "channel") + ", got " +
             shape_str(p.dims));
  }
  c.out[0] = x;
}

void ref_group_norm(RefCtx& c) {
  const RefTensor &x = c.input(0), &scale = c.input(1), &bias = c.input(2);
  int64_t channels = x.shape[1], g = group_count(c, channels);
  Rows per_sample = rows_from(x.shape, 1), groups{per_sample.outer * g, per_sample.n / g};
  std::vector<double> mean, inv;
  row_stats(x, groups, c.attr_float("epsilon", 1e-5), mean, inv);
  int64_t plane = per_sample.n / std::max<int64_t>(channels, 1);
  RefTensor y(x.dtype, x.shape);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t ch = e / std::max<int64_t>(plane, 1) % channels, row = e / std::max<int64_t>(groups.n, 1);
    int64_t p = c.opset < 21 ? ch / (channels / g) : ch;
    y.f[e] = (x.f[e] - mean[row]) * inv[row] * scale.f[p] + bias.f[p];
  }
  c.out[0] = std::move(y);
}

// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over `axes` (default 0, 2, 3).
std::vector<int64_t> mvn_axes(const OpCtx& c, int64_t rank) {
  std::vector<int64_t> axes = c.attr_ints("axes", {0, 2, 3});
  for (int64_t& a : axes) {
    int64_t k = normalize_axis(a, rank);
    if (k < 0) c.fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    a = k;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("axes repeat");
  return axes;
}

void infer_mvn(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  require_types(c, 0, {{9, kFloat}, {13, kFloat | kBf16}});
  if (x.rank_known) mvn_axes(c, static_cast<int64_t>(x.dims.size()));
  c.out[0] = x;
}

void ref_mvn(RefCtx& c) {
  const RefTensor& x = c.input(0);
  std::vector<int64_t> axes = mvn_axes(c, static_cast<int64_t>(x.shape.size()));
  Shape kept = x.shape;
  for (int64_t a : axes) kept[a] = 1;
  std::vector<int64_t> ks = shape_strides(kept), pos(x.shape.size(), 0);
  std::vector<int64_t> row(x.numel());
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t r = 0;
    for (size_t d = 0; d < pos.size(); ++d) r += (kept[d] == 1 ? 0 : pos[d]) * ks[d];
    row[e] = r;
    for (size_t d = pos.size(); d-- > 0;)
      if (++pos[d] < x.shape[d]) break;
      else pos[d] = 0;
  }
  int64_t rows = shape_numel(kept), n = rows ? x.numel() / rows : 0;
  std::vector<double> mean(rows, 0.0), var(rows, 0.0);
  for (int64_t e = 0; e < x.numel(); ++e) mean[row[e]] += x.f[e] / static_cast<double>(n);
  for (int64_t e = 0; e < x.numel(); ++e)
    var[row[e]] += (x.f[e] - mean[row[e]]) * (x.f[e] - mean[row[e]]) / static_cast<double>(n);
  RefTensor y(x.dtype, x.shape);
  for (int64_t e = 0; e < x.numel(); ++e) y.f[e] = (x.f[e] - mean[row[e]]) / (std::sqrt(var[row[e]]) + 1e-9);
  c.out[0] = std::move(y);
}

// LRN: x / (bias + alpha / size * (sum of squares over the channel window))^beta, the window
// floor((size - 1) / 2) channels back and ceil((size - 1) / 2) forward, cut at the edges.
int64_t lrn_size(const OpCtx& c) {
  int64_t size = c.attr_required("size").i;
  if (size <= 0) c.fail("size must be positive, got " + std::to_string(size));
  return size;
}

void infer_lrn(InferCtx& c) {
  require_types(c, 0, {{1, kFloat}, {13, kFloat | kBf16}});
  const TypeInfo& x = c.input(0);
  if (x.rank_known && x.dims.size() < 3) c.fail("input must be [N, C, D1, ...], got " + x.str());
  lrn_size(c);
  c.out[0] = x;
}

void ref_lrn(RefCtx& c) {
  const RefTensor& x = c.input(0);
  int64_t size = lrn_size(c), back = (size - 1) / 2, ahead = size - 1 - back;
  double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75), bias = c.attr_float("bias", 1.0);
  int64_t channels = x.shape[1], plane = x.numel() / std::max<int64_t>(x.shape[0] * channels, 1);
  RefTensor y(x.dtype, x.shape);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t ch = e / std::max<int64_t>(plane, 1) % channels, sq_from = std::max<int64_t>(ch - back, 0);
    double sq = 0;
    for (int64_t k = sq_from; k <= std::min(ch + ahead, channels - 1); ++k) {
      double v = x.f[e + (k - ch) * plane];
      sq += v * v;
    }
    y.f[e] = x.f[e] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
  }
  c.out[0] = std::move(y);
}

const OpDef kOps[] = {
    {"BatchNormalization",
     5,
     5,
     1,
     3,
     {"epsilon", "momentum", "spatial", "training_mode"},
     infer_batch_norm,
     ref_batch_norm},
    {"InstanceNormalization", 3, 3, 1, 1, {"epsilon"}, infer_instance_norm, ref_instance_norm},
    {"LayerNormalization",
     2,
     3,
     1,
     3,
     {"axis", "epsilon", "stash_type"},
     [](InferCtx& c) { infer_rows_norm(c, 17); },
     ref_layer_norm},
    {"LpNormalization", 1, 1, 1, 1, {"axis", "p"}, infer_lp_norm, ref_lp_norm},
    {"GroupNormalization", 3, 3, 1, 1, {"epsilon", "num_groups", "stash_type"}, infer_group_norm, ref_group_norm},
    {"MeanVarianceNormalization", 1, 1, 1, 1, {"axes"}, infer_mvn, ref_mvn},
    {"LRN", 1, 1, 1, 1, {"alpha", "beta", "bias", "size"}, infer_lrn, ref_lrn},
    {"RMSNormalization",
     2,
     2,
     1,
     1,
     {"axis", "epsilon", "stash_type"},
     [](InferCtx& c) { infer_rows_norm(c, 23); },
     ref_rms_norm},
};

}  // namespace

std::span<const OpDef> normalization_ops() { return kOps; }

}  // namespace lockstep
