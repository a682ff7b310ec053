// RotaryEmbedding: each head's first rotary_embedding_dim values turn pairwise by the angle
// whose cosine and sine the caches hold, at the token's position (position_ids indexes the
// caches' rows, or the caches are per batch and token already); the rest pass unchanged.
#include "ops/rotary.h"

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

RotaryGeom rotary_geom(const OpCtx& c, const Shape& x, const Shape& cache, bool positions) {
  RotaryGeom g;
  if (x.size() != 3 && x.size() != 4) c.fail("input must have rank 3 or 4, got " + shape_str(x));
  g.interleaved = c.attr_int("interleaved", 0) != 0;
  g.by_position = positions;
  g.three_d = x.size() == 3;
  g.batch = x[0];
  if (g.three_d) {
    g.heads = c.attr_int("num_heads", 0);
    if (g.heads <= 0) c.fail("a 3-D input needs a positive num_heads");
    g.seq = x[1];
    if (x[2] >= 0 && x[2] % g.heads) c.fail("hidden size " + std::to_string(x[2]) + " is not a multiple of num_heads");
    g.head = x[2] < 0 ? -1 : x[2] / g.heads;
  } else {
    g.heads = x[1], g.seq = x[2], g.head = x[3];
    if (c.has_attr("num_heads"))
      require_same_dim(c, c.attr_int("num_heads", 0), g.heads, "num_heads and the input's heads");
  }
  g.rotated = c.attr_int("rotary_embedding_dim", 0);
  if (g.rotated == 0) g.rotated = g.head;
  if (g.rotated >= 0 && g.rotated % 2) c.fail("rotary_embedding_dim " + std::to_string(g.rotated) + " is odd");
  if (g.head >= 0 && g.rotated > g.head)
    c.fail("rotary_embedding_dim " + std::to_string(g.rotated) + " is more than the head size " +
           std::to_string(g.head));
  if (positions) {
    if (cache.size() != 2) c.fail("with position_ids the caches must be [positions, dim / 2], got " + shape_str(cache));
    g.positions = cache[0];
  } else {
    if (cache.size() != 3)
      c.fail("without position_ids the caches must be [batch, sequence, dim / 2], got " + shape_str(cache));
    require_same_dim(c, cache[0], g.batch, "the caches' batch and the input's");
    require_same_dim(c, cache[1], g.seq, "the caches' sequence and the input's");
  }
  require_same_dim(c, cache.back(), g.rotated < 0 ? -1 : g.rotated / 2,
                   "the caches' last dim and rotary_embedding_dim / 2");
  return g;
}

namespace {

void infer_rotary(InferCtx& c) {
  const TypeHistory kT = {{23, kFloat | kBf16}};
  for (size_t k = 0; k < 3; ++k) require_types(c, k, kT);
  c.require_same_dtype(0, 1);
  c.require_same_dtype(0, 2);
  bool positions = c.has_input(3);
  if (positions) require_types(c, 3, {{23, types({DType::i64})}});
  const TypeInfo &x = c.input(0), &cos = c.input(1), &sin = c.input(2);
  if (x.rank_known && cos.rank_known) {
    RotaryGeom g = rotary_geom(c, x.dims, cos.dims, positions);
    if (sin.rank_known && sin.dims.size() != cos.dims.size()) c.fail("cos_cache and sin_cache differ in rank");
    if (positions && c.input(3).rank_known) {
      const Shape& p = c.input(3).dims;
      if (p.size() != 2 || (p[0] >= 0 && g.batch >= 0 && p[0] != g.batch) || (p[1] >= 0 && g.seq >= 0 && p[1] != g.seq))
        c.fail("position_ids must be [batch, sequence], got " + shape_str(p));
    }
  }
  c.out[0] = x;
}

void ref_rotary(RefCtx& c) {
  const RefTensor &x = c.input(0), &cos = c.input(1), &sin = c.input(2);
  const RefTensor* pos = c.in.size() > 3 ? c.in[3] : nullptr;
  RotaryGeom g = rotary_geom(c, x.shape, cos.shape, pos != nullptr);
  if (sin.shape != cos.shape)
    c.fail("cos_cache " + shape_str(cos.shape) + " and sin_cache " + shape_str(sin.shape) + "");
  int64_t half = g.rotated / 2;
  RefTensor y(x.dtype, x.shape);
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t s = 0; s < g.seq; ++s) {
      int64_t row = b * g.seq + s;
      if (pos) {
        row = pos->i[b * g.seq + s];
        if (row < 0 || row >= g.positions)
          c.fail("position_ids value " + std::to_string(row) + " is not a row of the caches [0, " +
                 std::to_string(g.positions) + ")");
      }
      for (int64_t h = 0; h < g.heads; ++h) {
        int64_t base =
            g.three_d ? (b * g.seq + s) * g.heads * g.head + h * g.head : ((b * g.heads + h) * g.seq + s) * g.head;
        for (int64_t d = 0; d < g.head; ++d) y.f[base + d] = x.f[base + d];
        for (int64_t k = 0; k < half; ++k) {
          int64_t i1 = g.interleaved ? 2 * k : k, i2 = g.interleaved ? 2 * k + 1 : k + half;
          double co = cos.f[row * half + k], si = sin.f[row * half + k];
          double x1 = x.f[base + i1], x2 = x.f[base + i2];
          y.f[base + i1] = co * x1 - si * x2;
          y.f[base + i2] = si * x1 + co * x2;
        }
      }
    }
  c.out[0] = std::move(y);
}

const OpDef kOps[] = {
    {"RotaryEmbedding", 3, 4, 1, 1, {"interleaved", "num_heads", "rotary_embedding_dim"}, infer_rotary, ref_rotary},
};

}  // namespace

std::span<const OpDef> rotary_ops() { return kOps; }

}  // namespace lockstep
