// Attention (opsets 23-25): softmax(softcap(Q K^T * scale) + bias) V per head, with grouped
// query heads, a key/value cache (past -> present), causal and sliding-window masks aligned to
// the cache, per-batch key padding (nonpad_kv_seqlen) and the scores as an optional output.
// The reference follows the op's definition in float64; a row with every key masked is 0.
#include "ops/attention.h"

#include <cmath>
#include <limits>

#include "ops/elementwise.h"

namespace lockstep {

using namespace ew;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::string dim(int64_t d) { return d < 0 ? "?" : std::to_string(d); }

// `whole` split into `parts` equal heads, -1 when unknown; fails when it does not divide.
int64_t split_heads(const OpCtx& c, int64_t whole, int64_t parts, const char* what) {
  if (whole < 0) return -1;
  if (whole % parts)
    c.fail(std::string(what) + "'s hidden size " + std::to_string(whole) + " is not a multiple of its " +
           std::to_string(parts) + " heads");
  return whole / parts;
}

int64_t positive_attr(const OpCtx& c, const char* key) {
  if (!c.has_attr(key)) c.fail("3-D Q, K and V need the q_num_heads and kv_num_heads attributes");
  int64_t h = c.attr_int(key, 0);
  if (h <= 0) c.fail(std::string(key) + " must be positive, got " + std::to_string(h));
  return h;
}

void geom_3d(const OpCtx& c, AttentionGeom& g, const Shape& q, const Shape& k, const Shape& v) {
  g.three_d = true;
  g.q_heads = positive_attr(c, "q_num_heads");
  g.kv_heads = positive_attr(c, "kv_num_heads");
  g.q_len = q[1];
  g.fresh = k[1];
  require_same_dim(c, k[1], v[1], "the sequence lengths of K and V");
  g.head = split_heads(c, q[2], g.q_heads, "Q");
  require_same_dim(c, split_heads(c, k[2], g.kv_heads, "K"), g.head, "the head sizes of Q and K");
  g.v_head = split_heads(c, v[2], g.kv_heads, "V");
}

void geom_4d(const OpCtx& c, AttentionGeom& g, const Shape& q, const Shape& k, const Shape& v) {
  g.q_heads = q[1];
  g.kv_heads = k[1];
  require_same_dim(c, k[1], v[1], "the head counts of K and V");
  g.q_len = q[2];
  g.fresh = k[2];
  require_same_dim(c, k[2], v[2], "the sequence lengths of K and V");
  g.head = q[3];
  require_same_dim(c, k[3], q[3], "the head sizes of Q and K");
  g.v_head = v[3];
  if (c.has_attr("q_num_heads"))
    require_same_dim(c, c.attr_int("q_num_heads", 0), g.q_heads, "q_num_heads and Q's heads");
  if (c.has_attr("kv_num_heads"))
    require_same_dim(c, c.attr_int("kv_num_heads", 0), g.kv_heads, "kv_num_heads and K's heads");
}

// past_key [B, Hkv, P, D] and past_value [B, Hkv, P, Dv].
void geom_past(const OpCtx& c, AttentionGeom& g, const Shape& pk, const Shape& pv) {
  if (pk.size() != 4 || pv.size() != 4)
    c.fail("past_key and past_value must have rank 4, got " + shape_str(pk) + " and " + shape_str(pv));
  require_same_dim(c, pk[0], g.batch, "the batches of past_key and Q");
  require_same_dim(c, pv[0], g.batch, "the batches of past_value and Q");
  require_same_dim(c, pk[1], g.kv_heads, "the head counts of past_key and K");
  require_same_dim(c, pv[1], g.kv_heads, "the head counts of past_value and V");
  require_same_dim(c, pk[2], pv[2], "the lengths of past_key and past_value");
  require_same_dim(c, pk[3], g.head, "the head sizes of past_key and K");
  require_same_dim(c, pv[3], g.v_head, "the head sizes of past_value and V");
  g.past = pk[2];
}

}  // namespace

AttentionGeom attention_geom(const OpCtx& c, const Shape& q, const Shape& k, const Shape& v, const Shape* past_k,
                             const Shape* past_v) {
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    c.fail("Q, K and V must all have rank 3 or all rank 4, got " + shape_str(q) + ", " + shape_str(k) + ", " +
           shape_str(v));
  AttentionGeom g;
  g.batch = q[0];
  require_same_dim(c, q[0], k[0], "the batches of Q and K");
  require_same_dim(c, q[0], v[0], "the batches of Q and V");
  if (q.size() == 3) geom_3d(c, g, q, k, v);
  else geom_4d(c, g, q, k, v);
  if (g.q_heads > 0 && g.kv_heads > 0 && g.q_heads % g.kv_heads)
    c.fail("Q's " + std::to_string(g.q_heads) + " heads are not a multiple of K and V's " + std::to_string(g.kv_heads));
  if (past_k && past_v) geom_past(c, g, *past_k, *past_v);
  g.total = g.past >= 0 && g.fresh >= 0 ? g.past + g.fresh : -1;
  if (g.total == 0) c.fail("there are no keys to attend (K and past_key are empty)");
  return g;
}

AttentionAttrs attention_attrs(const OpCtx& c, int64_t head) {
  AttentionAttrs a;
  int64_t causal = c.attr_int("is_causal", 0);
  if (causal != 0 && causal != 1) c.fail("is_causal must be 0 or 1, got " + std::to_string(causal));
  a.causal = causal == 1;
  a.scale = c.has_attr("scale") ? c.attr_float("scale", 1.0) : 1.0 / std::sqrt(static_cast<double>(head));
  a.softcap = c.attr_float("softcap", 0.0);
  int64_t mode = c.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) c.fail("qk_matmul_output_mode must be 0 to 3, got " + std::to_string(mode));
  a.mode = static_cast<int>(mode);
  int64_t precision = c.attr_int("softmax_precision", 1);
  if (precision != 1 && precision != 10 && precision != 11 && precision != 16)
    c.fail("softmax_precision " + std::to_string(precision) + " is not a float type (1, 10, 11 or 16)");
  for (const char* key : {"left_window_size", "right_window_size"}) {
    if (!c.has_attr(key)) continue;
    if (c.opset < 25) c.fail(std::string(key) + " is an attribute of Attention from opset 25");
    int64_t w = c.attr_int(key, -1);
    if (w < -1) c.fail(std::string(key) + " must be -1 or more, got " + std::to_string(w));
    (key[0] == 'l' ? a.left : a.right) = w;
  }
  return a;
}

void check_attention_mask(const OpCtx& c, const Shape& m, const AttentionGeom& g) {
  if (m.empty() || m.size() > 4) c.fail("attn_mask must have rank 1 to 4, got " + shape_str(m));
  Shape target = {g.batch, g.q_heads, g.q_len, g.total};
  std::string want = "[" + dim(g.batch) + "," + dim(g.q_heads) + "," + dim(g.q_len) + "," + dim(g.total) + "]";
  for (size_t k = 0; k + 1 < m.size(); ++k) {
    int64_t t = target[4 - m.size() + k];
    if (m[k] >= 0 && t >= 0 && m[k] != 1 && m[k] != t)
      c.fail("attn_mask " + shape_str(m) + " does not broadcast to the scores " + want);
  }
  if (m.back() >= 0 && g.total >= 0 && m.back() > g.total)
    c.fail("attn_mask " + shape_str(m) + " has more keys than the " + std::to_string(g.total) + " attended");
}

namespace {

const TypeHistory kAttnFloat = {{23, kFloat | kBf16}};

bool has(const OpCtx& c, size_t k) { return c.has_input(k); }

// The inputs' dtypes and the optional ones' presence rules.
void check_attention_inputs(const InferCtx& c) {
  for (size_t k = 0; k < 3; ++k) require_types(c, k, kAttnFloat);
  c.require_same_dtype(0, 1);
  c.require_same_dtype(0, 2);
  if (has(c, 3)) require_types(c, 3, {{23, kFloat | kBf16 | kBool}});
  if (has(c, 4) != has(c, 5)) c.fail("past_key and past_value must be given together");
  if (has(c, 4)) {
    c.require_same_dtype(1, 4);
    c.require_same_dtype(2, 5);
  }
  if (has(c, 6)) {
    if (c.opset < 24) c.fail("nonpad_kv_seqlen is an input of Attention from opset 24");
    require_types(c, 6, {{24, types({DType::i64})}});
    if (has(c, 4)) c.fail("nonpad_kv_seqlen cannot be combined with past_key and past_value");
  }
}

void infer_attention(InferCtx& c) {
  check_attention_inputs(c);
  const TypeInfo &q = c.input(0), &k = c.input(1), &v = c.input(2);
  bool past = has(c, 4);
  bool known =
      q.rank_known && k.rank_known && v.rank_known && (!past || (c.input(4).rank_known && c.input(5).rank_known));
  if (!known) {
    for (size_t o = 0; o < c.num_outputs(); ++o)
      c.set_output_unknown_rank(o, o == 1 ? k.dtype : o == 2 ? v.dtype : q.dtype);
    return;
  }
  AttentionGeom g =
      attention_geom(c, q.dims, k.dims, v.dims, past ? &c.input(4).dims : nullptr, past ? &c.input(5).dims : nullptr);
  attention_attrs(c, g.head);
  if (has(c, 3) && c.input(3).rank_known) check_attention_mask(c, c.input(3).dims, g);
  if (has(c, 6) && c.input(6).rank_known) {
    const Shape& s = c.input(6).dims;
    if (s.size() != 1 || (s[0] >= 0 && g.batch >= 0 && s[0] != g.batch))
      c.fail("nonpad_kv_seqlen must be one length per batch [" + dim(g.batch) + "], got " + shape_str(s));
  }
  auto times = [](int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; };
  if (g.three_d) c.set_output(0, q.dtype, {g.batch, g.q_len, times(g.q_heads, g.v_head)});
  else c.set_output(0, q.dtype, {g.batch, g.q_heads, g.q_len, g.v_head});
  if (c.num_outputs() > 1) c.set_output(1, k.dtype, {g.batch, g.kv_heads, g.total, g.head});
  if (c.num_outputs() > 2) c.set_output(2, v.dtype, {g.batch, g.kv_heads, g.total, g.v_head});
  if (c.num_outputs() > 3) c.set_output(3, q.dtype, {g.batch, g.q_heads, g.q_len, g.total});
}

// NaN when any element is NaN, as numpy's max; -inf for an empty row.
double row_max(const std::vector<double>& x) {
  double m = kNegInf;
  for (double e : x) {
    if (std::isnan(e)) return e;
    m = std::max(m, e);
  }
  return m;
}

struct RefAttention {
  RefCtx& c;
  AttentionGeom g;
  AttentionAttrs a;
  const RefTensor *mask, *nonpad;
  RefTensor key, val;  // present_key, present_value
  // The scores and probabilities are tensors of the softmax's type (float32, or float64 for
  // float64 inputs): rounded to it, as the spec's Q-typed intermediates are, so a probability
  // that underflows there meets an infinite value as 0 does.
  DType work;
  double w(double x) const { return round_to_dtype(x, work); }

  // K or V's element (b, h, j, d) of the new tokens, in either layout.
  double fresh(const RefTensor& x, int64_t b, int64_t h, int64_t j, int64_t d, int64_t size) const {
    if (g.three_d) return x.f[(b * g.fresh + j) * (g.kv_heads * size) + h * size + d];
    return x.f[((b * g.kv_heads + h) * g.fresh + j) * size + d];
  }

  RefTensor present(const RefTensor& x, const RefTensor* past, int64_t size) const {
    RefTensor out(x.dtype, {g.batch, g.kv_heads, g.total, size});
    int64_t at = 0;
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t h = 0; h < g.kv_heads; ++h)
        for (int64_t j = 0; j < g.total; ++j)
          for (int64_t d = 0; d < size; ++d, ++at)
            out.f[at] = j < g.past ? past->f[((b * g.kv_heads + h) * g.past + j) * size + d]
                                   : fresh(x, b, h, j - g.past, d, size);
    return out;
  }

  double q_at(int64_t b, int64_t h, int64_t i, int64_t d) const {
    const RefTensor& q = c.input(0);
    if (g.three_d) return q.f[(b * g.q_len + i) * (g.q_heads * g.head) + h * g.head + d];
    return q.f[((b * g.q_heads + h) * g.q_len + i) * g.head + d];
  }

  // The mask's additive value at (b, h, i, j): columns past its last dim are masked.
  double mask_at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!mask) return 0;
    const Shape& m = mask->shape;
    if (j >= m.back()) return kNegInf;
    int64_t coords[4] = {b, h, i, j}, flat = 0;
    for (size_t k = 0; k < m.size(); ++k) {
      int64_t x = coords[4 - m.size() + k];
      flat = flat * m[k] + (m[k] == 1 ? 0 : x);
    }
    if (mask->dtype == DType::boolean) return mask->i[flat] ? 0.0 : kNegInf;
    return mask->f[flat];
  }

  // Where the causal and window masks put this batch's queries: after the cached keys.
  int64_t offset(int64_t b) const { return nonpad ? nonpad->i[b] - g.q_len : g.past; }

  bool allowed(int64_t b, int64_t i, int64_t j) const {
    int64_t diff = i + offset(b) - j;
    bool ok = !a.causal || diff >= 0;
    if (a.left >= 0) ok = ok && diff <= a.left;
    if (a.right >= 0) ok = ok && -diff <= a.right;
    if (nonpad) ok = ok && j < nonpad->i[b];
    return ok;
  }

  // One query row: its scores, biased scores and probabilities over the keys.
  void row(int64_t b, int64_t h, int64_t i, std::vector<double>& s, std::vector<double>& x,
           std::vector<double>& p) const {
    int64_t kh = h / g.reps();
    std::vector<double> bias(g.total);
    for (int64_t j = 0; j < g.total; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < g.head; ++d)
        dot += q_at(b, h, i, d) * key.f[((b * g.kv_heads + kh) * g.total + j) * g.head + d];
      s[j] = w(dot * a.scale);
      if (a.softcap > 0) s[j] = w(a.softcap * std::tanh(s[j] / a.softcap));
      bias[j] = w(mask_at(b, h, i, j) + (allowed(b, i, j) ? 0.0 : kNegInf));
      x[j] = w(s[j] + bias[j]);
    }
    double mx = row_max(x), safe = std::isinf(mx) && mx < 0 ? 0.0 : mx, sum = 0;
    for (int64_t j = 0; j < g.total; ++j) sum += p[j] = std::exp(x[j] - safe);
    double masked = row_max(bias);
    bool none = std::isinf(masked) && masked < 0;
    for (int64_t j = 0; j < g.total; ++j) p[j] = none ? 0.0 : w(p[j] / (sum == 0 ? 1.0 : sum));
  }

  void run() {
    const RefTensor& q = c.input(0);
    RefTensor y(q.dtype, g.three_d ? Shape{g.batch, g.q_len, g.q_heads * g.v_head}
                                   : Shape{g.batch, g.q_heads, g.q_len, g.v_head});
    RefTensor qk(q.dtype, {g.batch, g.q_heads, g.q_len, g.total});
    std::vector<double> s(g.total), x(g.total), p(g.total);
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t h = 0; h < g.q_heads; ++h)
        for (int64_t i = 0; i < g.q_len; ++i) {
          row(b, h, i, s, x, p);
          int64_t kh = h / g.reps();
          for (int64_t e = 0; e < g.v_head; ++e) {
            double acc = 0;
            for (int64_t j = 0; j < g.total; ++j)
              acc += p[j] * val.f[((b * g.kv_heads + kh) * g.total + j) * g.v_head + e];
            int64_t at = g.three_d ? (b * g.q_len + i) * (g.q_heads * g.v_head) + h * g.v_head + e
                                   : ((b * g.q_heads + h) * g.q_len + i) * g.v_head + e;
            y.f[at] = acc;
          }
          const std::vector<double>& shown = a.mode == 3 ? p : a.mode == 2 ? x : s;
          std::copy(shown.begin(), shown.end(), qk.f.begin() + ((b * g.q_heads + h) * g.q_len + i) * g.total);
        }
    c.out[0] = std::move(y);
    if (c.out.size() > 1) c.out[1] = key;
    if (c.out.size() > 2) c.out[2] = val;
    if (c.out.size() > 3) c.out[3] = std::move(qk);
  }
};

void ref_attention(RefCtx& c) {
  auto opt = [&](size_t k) { return k < c.in.size() ? c.in[k] : nullptr; };
  const RefTensor *past_k = opt(4), *past_v = opt(5);
  if (!past_k != !past_v) c.fail("past_key and past_value must be given together");
  const RefTensor &k = c.input(1), &v = c.input(2);
  AttentionGeom g = attention_geom(c, c.input(0).shape, k.shape, v.shape, past_k ? &past_k->shape : nullptr,
                                   past_v ? &past_v->shape : nullptr);
  DType work = c.input(0).dtype == DType::f64 ? DType::f64 : DType::f32;
  RefAttention r{c, g, attention_attrs(c, g.head), opt(3), opt(6), {}, {}, work};
  if (r.mask) check_attention_mask(c, r.mask->shape, g);
  if (r.nonpad && r.nonpad->shape != Shape{g.batch})
    c.fail("nonpad_kv_seqlen must be one length per batch, got " + shape_str(r.nonpad->shape));
  for (int64_t b = 0; r.nonpad && b < g.batch; ++b)
    if (r.nonpad->i[b] < 0 || r.nonpad->i[b] > g.total)
      c.fail("nonpad_kv_seqlen[" + std::to_string(b) + "] = " + std::to_string(r.nonpad->i[b]) +
             " is not a key count in [0, " + std::to_string(g.total) + "]");
  r.key = r.present(k, past_k, g.head);
  r.val = r.present(v, past_v, g.v_head);
  r.run();
}

const OpDef kOps[] = {
    {"Attention",
     3,
     7,
     1,
     4,
     {"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap", "softmax_precision",
      "left_window_size", "right_window_size"},
     infer_attention,
     ref_attention},
};

}  // namespace

std::span<const OpDef> attention_ops() { return kOps; }

}  // namespace lockstep
