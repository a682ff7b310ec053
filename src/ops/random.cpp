// Random generators: RandomNormal, RandomUniform, their Like forms, and Bernoulli. Every target
// and the reference draw the same stream (core/philox.h, docs/random.md): element k of the
// output takes counter k of the node's stream, so the values never depend on a schedule.
#include "ops/random.h"

#include <bit>

#include "core/philox.h"
#include "core/random.h"
#include "ops/elementwise.h"
#include "ops/infer.h"

namespace lockstep {

using namespace ew;

bool is_random_op(const std::string& op_type) {
  return op_type == "RandomNormal" || op_type == "RandomNormalLike" || op_type == "RandomUniform" ||
         op_type == "RandomUniformLike" || op_type == "Bernoulli";
}

// FNV-1a of the node's id: the stream of a node without a seed follows it through every pass.
static uint64_t id_hash(const std::string& id) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : id) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

uint64_t random_key(const Graph& g, int node) {
  const Node& n = g.nodes[node];
  uint64_t state;
  if (n.has("seed")) {  // the same seed, the same stream, in any graph
    float s = static_cast<float>(OpCtx(g, node).attr_float("seed", 0));
    state = 0x5EED000000000000ULL ^ std::bit_cast<uint32_t>(s);
  } else {
    state = g.random_seed ^ id_hash(n.id);
  }
  return splitmix64_next(state) >> 1;  // 63 bits: an int64 constant in every dialect
}

namespace {

bool like(const OpCtx& c) { return c.node.op_type.ends_with("Like"); }
bool normal(const OpCtx& c) { return c.node.op_type.starts_with("RandomNormal"); }

constexpr TypeSet kDrawn = kFloat | kBf16;

// The output dtype: the attribute, else (Like, Bernoulli) the input's, else float32.
DType drawn_dtype(const OpCtx& c, DType input) {
  if (c.has_attr("dtype")) return dtype_attr(c, "dtype", c.node.op_type + " of ");
  return input == DType::undefined ? DType::f32 : input;
}

// bfloat16 outputs from opset 22, as the spec's type lists grew.
void require_drawn_type(const InferCtx& c, DType t, TypeSet allowed) {
  if (c.opset < 22) allowed &= ~kBf16;
  if (!(allowed & types({t})))
    c.fail("output dtype " + std::string(dtype_name(t)) + " is not one of " + type_names(allowed) + " at opset " +
           std::to_string(c.opset));
}

void check_params(const InferCtx& c) {
  c.attr_float("seed", 0);
  if (normal(c)) {
    c.attr_float("mean", 0);
    c.attr_float("scale", 1);
  } else {
    c.attr_float("low", 0);
    c.attr_float("high", 1);
  }
}

Shape attr_shape(const InferCtx& c) {
  c.attr_required("shape");
  Shape s = c.attr_ints("shape");
  for (int64_t d : s)
    if (d < 0) c.fail("attribute 'shape' has a negative dimension " + std::to_string(d));
  return s;
}

void infer_random(InferCtx& c) {
  check_params(c);
  if (!like(c)) {
    DType t = drawn_dtype(c, DType::undefined);
    require_drawn_type(c, t, kDrawn);
    return c.set_output(0, t, attr_shape(c));
  }
  require_present(c, 0);
  DType t = drawn_dtype(c, c.input(0).dtype);
  require_drawn_type(c, t, kDrawn);
  c.out[0] = TypeInfo{t, c.input(0).rank_known, c.input(0).dims};
}

void ref_random(RefCtx& c) {
  Shape shape = like(c) ? c.input(0).shape : Shape(c.attr_ints("shape"));
  DType t = drawn_dtype(c, like(c) ? c.input(0).dtype : DType::undefined);
  uint64_t key = random_key(c.graph, c.node_index);
  bool wide = t == DType::f64, gauss = normal(c);
  // value = offset + span * draw: mean + scale * z, or low + (high - low) * u
  double offset = gauss ? c.attr_float("mean", 0) : c.attr_float("low", 0);
  double span = gauss ? c.attr_float("scale", 1) : c.attr_float("high", 1) - offset;
  RefTensor out(t, shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    uint64_t n = static_cast<uint64_t>(k);
    double draw = gauss ? (wide ? philox::normal_f64(n, key) : philox::normal_f32(n, key))
                        : (wide ? philox::uniform_f64(n, key) : philox::uniform_f32(n, key));
    out.f[k] = offset + span * draw;
  }
  c.out[0] = std::move(out);
}

// Bernoulli: 1 where the element's uniform draw is below the input's probability, else 0.
void infer_bernoulli(InferCtx& c) {
  require_types(c, 0, {{15, kFloat}, {22, kFloat | kBf16}});
  c.attr_float("seed", 0);
  DType t = drawn_dtype(c, c.input(0).dtype);
  require_drawn_type(c, t, kNumeric | kBool);
  c.out[0] = TypeInfo{t, c.input(0).rank_known, c.input(0).dims};
}

void ref_bernoulli(RefCtx& c) {
  const RefTensor& p = c.input(0);
  uint64_t key = random_key(c.graph, c.node_index);
  RefTensor out(drawn_dtype(c, p.dtype), p.shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    uint64_t n = static_cast<uint64_t>(k);
    double u = p.dtype == DType::f64 ? philox::uniform_f64(n, key) : philox::uniform_f32(n, key);
    out.set(k, u < p.f[k] ? 1.0 : 0.0);
  }
  c.out[0] = std::move(out);
}

const OpDef kOps[] = {
    {"RandomNormal", 0, 0, 1, 1, {"dtype", "mean", "scale", "seed", "shape"}, infer_random, ref_random},
    {"RandomNormalLike", 1, 1, 1, 1, {"dtype", "mean", "scale", "seed"}, infer_random, ref_random},
    {"RandomUniform", 0, 0, 1, 1, {"dtype", "high", "low", "seed", "shape"}, infer_random, ref_random},
    {"RandomUniformLike", 1, 1, 1, 1, {"dtype", "high", "low", "seed"}, infer_random, ref_random},
    {"Bernoulli", 1, 1, 1, 1, {"dtype", "seed"}, infer_bernoulli, ref_bernoulli},
};

}  // namespace

std::span<const OpDef> random_ops() { return kOps; }

}  // namespace lockstep
