// Ops that reorder or repeat elements: Transpose, DepthToSpace, SpaceToDepth, Tile, Expand, Gather,
// GatherElements. Each is one strided_copy (or one per gathered index) with suitable strides.
#include <algorithm>

#include "ops/movement_common.h"

namespace lockstep {

// ---- Transpose ----

static std::vector<int64_t> transpose_perm(const OpCtx& c, int64_t rank) {
  std::vector<int64_t> perm(rank);
  for (int64_t a = 0; a < rank; ++a) perm[a] = rank - 1 - a;  // default reverses the axes
  if (!c.has_attr("perm")) return perm;
  perm = c.attr_ints("perm");
  std::vector<bool> seen(rank, false);
  bool ok = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < rank && !seen[p];
    if (ok) seen[p] = true;
  }
  if (!ok) c.fail("perm " + ints_str(perm) + " is not a permutation of " + std::to_string(rank) + " axes");
  return perm;
}

void infer_transpose(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  if (!x.rank_known) {
    if (!c.has_attr("perm")) return c.set_output_unknown_rank(0, x.dtype);
    return c.set_output(0, x.dtype, Shape(c.attr_ints("perm").size(), -1));
  }
  std::vector<int64_t> perm = transpose_perm(c, static_cast<int64_t>(x.dims.size()));
  Shape out(perm.size());
  for (size_t a = 0; a < perm.size(); ++a) out[a] = x.dims[perm[a]];
  c.set_output(0, x.dtype, out);
}

void ref_transpose(RefCtx& c) {
  const RefTensor& x = c.input(0);
  std::vector<int64_t> perm = transpose_perm(c, static_cast<int64_t>(x.shape.size()));
  std::vector<int64_t> in_strides = shape_strides(x.shape);
  Shape out(perm.size());
  StridedView src;
  for (size_t a = 0; a < perm.size(); ++a) {
    out[a] = x.shape[perm[a]];
    src.strides.push_back(in_strides[perm[a]]);
  }
  c.out[0] = RefTensor(x.dtype, out);
  strided_copy(out, c.out[0], dense_view(out), x, src);
}

// ---- DepthToSpace, SpaceToDepth ----

// The rank-6 view of [N, C, H, W] and the axis order that makes the output of it, as
// ONNX's own reshape-transpose-reshape definition says (DCR or CRD).
struct BlockMove {
  Shape view;
  std::vector<int64_t> perm;
  Shape out;
};

static BlockMove block_move(const OpCtx& c, const Shape& x) {
  bool to_space = c.node.op_type == "DepthToSpace";
  if (!to_space && c.has_attr("mode") && c.opset < 28) c.fail("attribute 'mode' exists from opset 28");
  int64_t b = c.attr_int("blocksize", 0);
  std::string mode = c.attr_string("mode", "DCR");
  c.attr_required("blocksize");
  if (b <= 0) c.fail("blocksize must be positive, got " + std::to_string(b));
  if (mode != "DCR" && mode != "CRD") c.fail("attribute 'mode' must be \"DCR\" or \"CRD\", got \"" + mode + "\"");
  if (x.size() != 4) c.fail("input must have rank 4 [N, C, H, W], got rank " + std::to_string(x.size()));
  int64_t n = x[0], ch = x[1], h = x[2], w = x[3];
  bool dcr = mode == "DCR";
  if (to_space) {
    if (ch % (b * b))
      c.fail("channels " + std::to_string(ch) + " are not a multiple of blocksize^2 = " + std::to_string(b * b));
    int64_t co = ch / (b * b);
    if (dcr) return {{n, b, b, co, h, w}, {0, 3, 4, 1, 5, 2}, {n, co, h * b, w * b}};
    return {{n, co, b, b, h, w}, {0, 1, 4, 2, 5, 3}, {n, co, h * b, w * b}};
  }
  if (h % b || w % b)
    c.fail("height and width " + std::to_string(h) + " x " + std::to_string(w) + " are not multiples of blocksize " +
           std::to_string(b));
  Shape view = {n, ch, h / b, b, w / b, b};
  Shape out = {n, ch * b * b, h / b, w / b};
  if (dcr) return {view, {0, 3, 5, 1, 2, 4}, out};
  return {view, {0, 1, 3, 5, 2, 4}, out};
}

void infer_block_move(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  if (!x.rank_known || std::count(x.dims.begin(), x.dims.end(), -1)) {
    if (x.rank_known && x.dims.size() != 4) c.fail("input must have rank 4 [N, C, H, W]");
    return c.set_output(0, x.dtype, Shape(4, -1));
  }
  c.set_output(0, x.dtype, block_move(c, x.dims).out);
}

void ref_block_move(RefCtx& c) {
  const RefTensor& x = c.input(0);
  BlockMove m = block_move(c, x.shape);
  std::vector<int64_t> in_strides = shape_strides(m.view);
  Shape extent(6);
  StridedView src;
  for (size_t a = 0; a < 6; ++a) {
    extent[a] = m.view[m.perm[a]];
    src.strides.push_back(in_strides[m.perm[a]]);
  }
  c.out[0] = RefTensor(x.dtype, m.out);
  strided_copy(extent, c.out[0], dense_view(extent), x, src);
}

// ---- Tile ----

static void check_repeats(const OpCtx& c, const std::vector<int64_t>& reps, size_t rank) {
  if (reps.size() != rank)
    c.fail("repeats " + ints_str(reps) + " must have one entry per axis of the rank-" +
           std::to_string(rank) + " input");
  for (int64_t r : reps)
    if (r < 0) c.fail("repeats " + ints_str(reps) + " has a negative entry");
}

void infer_tile(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  auto reps = known_ints(c, 1, "repeats");
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  Shape out(x.dims.size(), -1);
  if (reps) {
    check_repeats(c, *reps, x.dims.size());
    for (size_t a = 0; a < out.size(); ++a)
      out[a] = (*reps)[a] == 0 ? 0 : x.dims[a] < 0 ? -1 : checked_dim(c, __int128{x.dims[a]} * (*reps)[a]);
  }
  c.set_output(0, x.dtype, out);
}

// Output axis a of length r*d is read as a pair (repeat, index) with strides (0, stride):
// a strided copy over [r0, d0, r1, d1, ...] writes the output in row-major order.
void ref_tile(RefCtx& c) {
  const RefTensor& x = c.input(0);
  std::vector<int64_t> reps = ref_ints(c, 1, "repeats");
  check_repeats(c, reps, x.shape.size());
  std::vector<int64_t> in_strides = shape_strides(x.shape);
  Shape out, pairs;
  StridedView src;
  for (size_t a = 0; a < x.shape.size(); ++a) {
    out.push_back(checked_dim(c, __int128{x.shape[a]} * reps[a]));
    pairs.insert(pairs.end(), {reps[a], x.shape[a]});
    src.strides.insert(src.strides.end(), {0, in_strides[a]});
  }
  c.out[0] = RefTensor(x.dtype, out);
  strided_copy(pairs, c.out[0], dense_view(pairs), x, src);
}

// ---- Expand ----

// Bidirectional (numpy) broadcast of the input's dims with `shape`; -1 for unknown input dims
// that `shape` does not decide.
static Shape expand_dims(const OpCtx& c, const Shape& in, const std::vector<int64_t>& shape) {
  size_t rank = std::max(in.size(), shape.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - in.size() ? 1 : in[i - (rank - in.size())];
    int64_t b = i < rank - shape.size() ? 1 : shape[i - (rank - shape.size())];
    if (b < 0) c.fail("shape " + ints_str(shape) + " has a negative dim");
    if (a < 0) out[i] = b == 1 ? -1 : b;
    else if (a == b || b == 1) out[i] = a;
    else if (a == 1) out[i] = b;
    else
      c.fail("cannot broadcast input " + shape_str(in) + " to shape " + ints_str(shape));
  }
  return out;
}

void infer_expand(InferCtx& c) {
  const TypeInfo& x = c.input(0);
  auto shape = known_ints(c, 1, "shape");
  if (!x.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  if (shape) return c.set_output(0, x.dtype, expand_dims(c, x.dims, *shape));
  const TypeInfo& s = c.input(1);
  if (!s.rank_known || s.dims.size() != 1 || s.dims[0] < 0)
    return c.set_output_unknown_rank(0, x.dtype);
  size_t rank = std::max<size_t>(x.dims.size(), s.dims[0]);
  Shape out(rank, -1);
  for (size_t i = 0; i < x.dims.size(); ++i)  // a dim above 1 survives any broadcast
    if (x.dims[i] > 1) out[rank - x.dims.size() + i] = x.dims[i];
  c.set_output(0, x.dtype, out);
}

void ref_expand(RefCtx& c) {
  const RefTensor& x = c.input(0);
  Shape out = expand_dims(c, x.shape, ref_ints(c, 1, "shape"));
  std::vector<int64_t> in_strides = shape_strides(x.shape);
  size_t lead = out.size() - x.shape.size();
  StridedView src{0, std::vector<int64_t>(out.size(), 0)};  // broadcast axes read stride 0
  for (size_t i = 0; i < x.shape.size(); ++i)
    if (x.shape[i] == out[lead + i]) src.strides[lead + i] = in_strides[i];
  c.out[0] = RefTensor(x.dtype, out);
  strided_copy(out, c.out[0], dense_view(out), x, src);
}

// ---- Gather ----

static int64_t gather_axis(const OpCtx& c, int64_t rank) {
  if (rank == 0) c.fail("cannot gather from a scalar");
  return normalize_axis_or_fail(c, c.attr_int("axis", 0), rank, "axis");
}

// Index k of `idx` normalised into [0, dim), failing on out-of-range values.
int64_t gather_index(const OpCtx& c, const std::vector<int64_t>& idx, size_t k, int64_t dim) {
  int64_t i = idx[k] < 0 ? idx[k] + dim : idx[k];
  if (i < 0 || i >= dim)
    c.fail("index " + std::to_string(idx[k]) + " is out of range for an axis of length " +
           std::to_string(dim));
  return i;
}

void require_index_type(const InferCtx& c, size_t k) {
  DType t = c.input(k).dtype;
  if (t != DType::i32 && t != DType::i64)
    c.fail(std::string("indices must be int32 or int64, got ") + dtype_name(t));
}

void infer_gather(InferCtx& c) {
  const TypeInfo &x = c.input(0), &idx = c.input(1);
  require_index_type(c, 1);
  if (!x.rank_known || !idx.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  int64_t axis = gather_axis(c, static_cast<int64_t>(x.dims.size()));
  if (const RefTensor* v = c.value(1); v && x.dims[axis] >= 0)
    for (size_t k = 0; k < v->i.size(); ++k) gather_index(c, v->i, k, x.dims[axis]);
  Shape out(x.dims.begin(), x.dims.begin() + axis);
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
  c.set_output(0, x.dtype, out);
}

// Data viewed as [outer, dim, inner], output as [outer, n, inner]: one copy per index.
void ref_gather(RefCtx& c) {
  const RefTensor &x = c.input(0), &idx = c.input(1);
  if (idx.is_float()) c.fail("indices must be int32 or int64");
  int64_t axis = gather_axis(c, static_cast<int64_t>(x.shape.size()));
  Shape out(x.shape.begin(), x.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
  int64_t dim = x.shape[axis], n = idx.numel();
  Shape extent{shape_numel(Shape(x.shape.begin(), x.shape.begin() + axis)),
               shape_numel(Shape(x.shape.begin() + axis + 1, x.shape.end()))};
  c.out[0] = RefTensor(x.dtype, out);
  for (int64_t k = 0; k < n; ++k) {
    int64_t i = gather_index(c, idx.i, k, dim);
    StridedView dst{k * extent[1], {n * extent[1], 1}}, src{i * extent[1], {dim * extent[1], 1}};
    strided_copy(extent, c.out[0], dst, x, src);
  }
}

// ---- GatherElements ----

// The gather axis; fails unless the indices have the data's rank and, off the axis, fit its
// dims (-1, unknown, fits).
static int64_t elements_axis(const OpCtx& c, const Shape& x, const Shape& idx) {
  int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = gather_axis(c, rank);
  if (static_cast<int64_t>(idx.size()) != rank)
    c.fail("indices must have the data's rank " + std::to_string(rank) + ", got " + std::to_string(idx.size()));
  for (int64_t k = 0; k < rank; ++k)
    if (k != axis && x[k] >= 0 && idx[k] > x[k])
      c.fail("indices dim " + std::to_string(k) + " (" + std::to_string(idx[k]) + ") exceeds the data's (" +
             std::to_string(x[k]) + ")");
  return axis;
}

// Output shape = indices' shape; out[..., j, ...] = data[..., idx[..., j, ...], ...] along axis.
void infer_gather_elements(InferCtx& c) {
  const TypeInfo &x = c.input(0), &idx = c.input(1);
  require_index_type(c, 1);
  if (!x.rank_known || !idx.rank_known) return c.set_output_unknown_rank(0, x.dtype);
  int64_t axis = elements_axis(c, x.dims, idx.dims);
  if (const RefTensor* v = c.value(1); v && x.dims[axis] >= 0)
    for (size_t k = 0; k < v->i.size(); ++k) gather_index(c, v->i, k, x.dims[axis]);
  c.set_output(0, x.dtype, idx.dims);
}

void ref_gather_elements(RefCtx& c) {
  const RefTensor &x = c.input(0), &idx = c.input(1);
  int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = elements_axis(c, x.shape, idx.shape);
  RefTensor out(x.dtype, idx.shape);
  Shape xs = shape_strides(x.shape), pos(rank, 0);
  for (int64_t e = 0; e < idx.numel(); ++e) {
    int64_t src = 0;
    for (int64_t k = 0; k < rank; ++k) src += (k == axis ? gather_index(c, idx.i, e, x.shape[axis]) : pos[k]) * xs[k];
    out.copy_elem(e, x, src);
    for (int64_t k = rank; k-- > 0;)
      if (++pos[k] < idx.shape[k]) break;
      else pos[k] = 0;
  }
  c.out[0] = std::move(out);
}

// ---- GatherND ----

// The output's shape, after checking ranks: indices [batch..., m..., k] pick k leading data dims
// after batch_dims shared ones, so out = indices.shape[:-1] + data.shape[batch_dims + k:].
static Shape gather_nd_shape(const OpCtx& c, const Shape& x, const Shape& idx) {
  int64_t b = c.attr_int("batch_dims", 0), r = static_cast<int64_t>(x.size()), q = static_cast<int64_t>(idx.size());
  if (b < 0 || b >= std::min(r, q)) c.fail("batch_dims " + std::to_string(b) + " must be below both ranks");
  if (q < 1) c.fail("indices must have rank 1 or more");
  int64_t k = idx.back();  // known: the shape rule stops earlier when it is not
  if (k < 1 || b + k > r)
    c.fail("indices' last dim " + std::to_string(k) + " must be from 1 to " + std::to_string(r - b));
  for (int64_t a = 0; a < b; ++a)
    if (x[a] >= 0 && idx[a] >= 0 && x[a] != idx[a])
      c.fail("batch dim " + std::to_string(a) + " differs: data " + shape_str(x) + ", indices " + shape_str(idx));
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + b + k, x.end());
  return out;
}

void infer_gather_nd(InferCtx& c) {
  const TypeInfo &x = c.input(0), &idx = c.input(1);
  if (idx.dtype != DType::i64) c.fail(std::string("indices must be int64, got ") + dtype_name(idx.dtype));
  if (!x.rank_known || !idx.rank_known || (!idx.dims.empty() && idx.dims.back() < 0))
    return c.set_output_unknown_rank(0, x.dtype);
  c.set_output(0, x.dtype, gather_nd_shape(c, x.dims, idx.dims));
}

void ref_gather_nd(RefCtx& c) {
  const RefTensor &x = c.input(0), &idx = c.input(1);
  Shape out_shape = gather_nd_shape(c, x.shape, idx.shape);
  int64_t b = c.attr_int("batch_dims", 0), k = idx.shape.back();
  int64_t slice = 1, batch = 1;
  for (size_t a = b + k; a < x.shape.size(); ++a) slice *= x.shape[a];
  for (int64_t a = 0; a < b; ++a) batch *= x.shape[a];
  int64_t per_batch = batch ? idx.numel() / k / batch : 0;  // index tuples per batch element
  Shape xs = shape_strides(x.shape);
  RefTensor out(x.dtype, out_shape);
  for (int64_t t = 0; t < idx.numel() / k; ++t) {
    int64_t src = (t / std::max<int64_t>(per_batch, 1)) * (b ? xs[b - 1] : 0);
    for (int64_t j = 0; j < k; ++j) src += gather_index(c, idx.i, t * k + j, x.shape[b + j]) * xs[b + j];
    for (int64_t e = 0; e < slice; ++e) out.copy_elem(t * slice + e, x, src + e);
  }
  c.out[0] = std::move(out);
}

}  // namespace lockstep
