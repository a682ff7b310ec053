// MatMul (numpy matmul: 1-D operands, broadcast batch dims) and Gemm.
#include <algorithm>

#include "ops/op.h"

namespace lockstep {

namespace {

bool matmul_int_dtype(DType t) {
  return t == DType::i32 || t == DType::i64 || t == DType::u32 || t == DType::u64;
}

// numpy's view of a MatMul: 1-D A gains a leading 1, 1-D B a trailing 1, both dropped after.
struct MatMulShape {
  Shape a, b;      // promoted to rank >= 2
  Shape batch;     // broadcast batch dims
  int64_t m, k, n;
  Shape out;       // the ONNX output shape
};

MatMulShape matmul_shape(const OpCtx& c, const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) c.fail("MatMul operands must have rank >= 1, not scalars");
  MatMulShape s{a_in, b_in, {}, 0, 0, 0, {}};
  if (s.a.size() == 1) s.a.insert(s.a.begin(), 1);
  if (s.b.size() == 1) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  int64_t kb = s.b[s.b.size() - 2];
  if (s.k >= 0 && kb >= 0 && s.k != kb)
    c.fail("inner dimensions differ: A " + shape_str(a_in) + " has " + std::to_string(s.k) +
           " columns, B " + shape_str(b_in) + " has " + std::to_string(kb) + " rows");
  if (s.k < 0) s.k = kb;
  Shape ab(s.a.begin(), s.a.end() - 2), bb(s.b.begin(), s.b.end() - 2);
  if (!broadcast_shapes(ab, bb, s.batch))
    c.fail("batch dims of A " + shape_str(a_in) + " and B " + shape_str(b_in) + " do not broadcast");
  s.out = s.batch;
  if (a_in.size() > 1) s.out.push_back(s.m);
  if (b_in.size() > 1) s.out.push_back(s.n);
  return s;
}

void infer_matmul(InferCtx& c) {
  DType t = c.input(0).dtype;
  if (!dtype_is_float(t) && !matmul_int_dtype(t))
    c.fail(std::string("MatMul takes float, int32, int64, uint32 or uint64 inputs, got ") + dtype_name(t));
  c.require_same_dtype(0, 1);
  if (!c.input(0).rank_known || !c.input(1).rank_known) return c.set_output_unknown_rank(0, t);
  c.set_output(0, t, matmul_shape(c, c.input(0).dims, c.input(1).dims).out);
}

// Element offset of each batch index into an operand whose batch dims broadcast to `batch`.
std::vector<int64_t> batch_offsets(const Shape& operand, const Shape& batch) {
  Shape strides = shape_strides(operand);
  size_t lead = batch.size() - (operand.size() - 2);
  std::vector<int64_t> offs(shape_numel(batch), 0);
  Shape idx(batch.size(), 0);
  for (int64_t flat = 0; flat < static_cast<int64_t>(offs.size()); ++flat) {
    int64_t off = 0;
    for (size_t d = lead; d < batch.size(); ++d)
      if (operand[d - lead] != 1) off += idx[d] * strides[d - lead];
    offs[flat] = off;
    for (size_t d = batch.size(); d-- > 0;)
      if (++idx[d] < batch[d]) break; else idx[d] = 0;
  }
  return offs;
}

// out[m,n] = sum_k a[m,k] * b[k,n]; j innermost so both b and out are walked contiguously.
template <class T>
void matmul_block(const T* a, const T* b, T* out, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      T av = a[i * k + p];
      for (int64_t j = 0; j < n; ++j) out[i * n + j] += av * b[p * n + j];
    }
}

void ref_matmul(RefCtx& c) {
  const RefTensor &A = c.input(0), &B = c.input(1);
  MatMulShape s = matmul_shape(c, A.shape, B.shape);
  RefTensor Y(A.dtype, s.out);
  std::vector<int64_t> ao = batch_offsets(s.a, s.batch), bo = batch_offsets(s.b, s.batch);
  int64_t block = s.m * s.n;
  if (A.is_float()) {
    for (size_t bi = 0; bi < ao.size(); ++bi)
      matmul_block(A.f.data() + ao[bi], B.f.data() + bo[bi], Y.f.data() + bi * block, s.m, s.k, s.n);  // data(): a dim may be 0
    c.out[0] = std::move(Y);
    return;
  }
  // Integers: exact modulo 2^64 (unsigned arithmetic wraps without UB), then to the dtype's width.
  std::vector<uint64_t> a(A.i.begin(), A.i.end()), b(B.i.begin(), B.i.end()), y(Y.numel(), 0);
  for (size_t bi = 0; bi < ao.size(); ++bi)
    matmul_block(a.data() + ao[bi], b.data() + bo[bi], y.data() + bi * block, s.m, s.k, s.n);
  for (int64_t e = 0; e < Y.numel(); ++e) Y.set_int(e, static_cast<int64_t>(y[e]));
  c.out[0] = std::move(Y);
}

[[noreturn]] void unsupported(const OpCtx& c, const std::string& msg) {
  throw Unsupported(c.graph.label(c.node_index) + ": " + msg);
}

struct GemmDims {
  int64_t m, k, n;
};

GemmDims gemm_dims(const OpCtx& c, const Shape& a, const Shape& b) {
  bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  GemmDims d{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1]};
  int64_t kb = tb ? b[1] : b[0];
  if (d.k >= 0 && kb >= 0 && d.k != kb)
    c.fail("inner dimensions differ: A " + shape_str(a) + (ta ? " (transposed)" : "") + " gives K=" +
           std::to_string(d.k) + ", B " + shape_str(b) + (tb ? " (transposed)" : "") + " gives K=" +
           std::to_string(kb));
  return d;
}

void infer_gemm(InferCtx& c) {
  DType t = c.input(0).dtype;
  if (dtype_is_signed_int(t) || dtype_is_unsigned_int(t))
    unsupported(c, std::string("Gemm on ") + dtype_name(t) + " is not implemented (floats only)");
  c.require_float(0);
  c.require_same_dtype(0, 1);
  if (c.opset < 11 && !c.has_input(2)) c.fail("input C is required before opset 11");
  c.require_rank(0, 2);
  c.require_rank(1, 2);
  Shape a = c.input(0).rank_known ? c.input(0).dims : Shape{-1, -1};
  Shape b = c.input(1).rank_known ? c.input(1).dims : Shape{-1, -1};
  GemmDims d = gemm_dims(c, a, b);
  if (c.has_input(2) && c.input(2).rank_known) {
    c.require_same_dtype(0, 2);
    const Shape& cs = c.input(2).dims;
    Shape target = {d.m, d.n};
    bool ok = cs.size() <= 2;
    for (size_t i = 0; ok && i < cs.size(); ++i) {
      int64_t want = target[2 - cs.size() + i];
      ok = cs[i] == 1 || cs[i] < 0 || want < 0 || cs[i] == want;
    }
    if (!ok)
      c.fail("C " + shape_str(cs) + " does not broadcast to the output " + shape_str(target));
  } else if (c.has_input(2)) {
    c.require_same_dtype(0, 2);
  }
  c.set_output(0, t, {d.m, d.n});
}

void ref_gemm(RefCtx& c) {
  const RefTensor &A = c.input(0), &B = c.input(1);
  bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  GemmDims d = gemm_dims(c, A.shape, B.shape);
  // Transpose into plain row-major [M,K] and [K,N] first, so one simple kernel does the sum.
  std::vector<double> a(d.m * d.k), b(d.k * d.n), y(d.m * d.n, 0.0);
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t p = 0; p < d.k; ++p) a[i * d.k + p] = ta ? A.f[p * d.m + i] : A.f[i * d.k + p];
  for (int64_t p = 0; p < d.k; ++p)
    for (int64_t j = 0; j < d.n; ++j) b[p * d.n + j] = tb ? B.f[j * d.k + p] : B.f[p * d.n + j];
  matmul_block(a.data(), b.data(), y.data(), d.m, d.k, d.n);
  RefTensor Y(A.dtype, {d.m, d.n});
  const RefTensor* C = c.has_input(2) ? c.in[2] : nullptr;
  // C broadcasts from the right: a missing or size-1 axis repeats.
  int64_t c_rows = C && C->shape.size() == 2 ? C->shape[0] : 1;
  int64_t c_cols = C && !C->shape.empty() ? C->shape.back() : 1;
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j) {
      double v = alpha * y[i * d.n + j];
      if (C) v += beta * C->f[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
      Y.f[i * d.n + j] = v;
    }
  c.out[0] = std::move(Y);
}

const OpDef kOps[] = {
    {"MatMul", 2, 2, 1, 1, {}, infer_matmul, ref_matmul},
    {"Gemm", 2, 3, 1, 1, {"alpha", "beta", "transA", "transB"}, infer_gemm, ref_gemm},
};

}  // namespace

std::span<const OpDef> linalg_ops() { return kOps; }

}  // namespace lockstep
