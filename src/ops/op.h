// The operator contract: each supported ONNX op is one OpDef with a shape rule (infer) and a
// float64 reference implementation (ref). Both see the node through OpCtx.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "graph/graph.h"

namespace lockstep {

// Opsets of the default domain lockstep reads. Ops whose semantics changed inside this range
// branch on ctx.opset (e.g. Split's sizes: attribute before 13, input from 13).
constexpr int kMinOpset = 7;
constexpr int kMaxOpset = 28;

class OpCtx {
 public:
  OpCtx(const Graph& g, int node_index);
  const Graph& graph;
  const int node_index;
  const Node& node;
  const int opset;

  // Throws Error("node 'name' (Op): msg").
  [[noreturn]] void fail(const std::string& msg) const;

  size_t num_inputs() const { return node.inputs.size(); }
  size_t num_outputs() const { return node.outputs.size(); }
  bool has_input(size_t k) const { return k < node.inputs.size() && node.inputs[k] >= 0; }
  bool has_output(size_t k) const { return k < node.outputs.size() && node.outputs[k] >= 0; }

  // Attribute access with defaults; a present attribute of the wrong kind is an error.
  bool has_attr(const char* key) const { return node.has(key); }
  int64_t attr_int(const char* key, int64_t def) const;
  double attr_float(const char* key, double def) const;
  std::string attr_string(const char* key, const std::string& def) const;
  std::vector<int64_t> attr_ints(const char* key, std::vector<int64_t> def = {}) const;
  std::vector<double> attr_floats(const char* key, std::vector<double> def = {}) const;
  const Attr& attr_required(const char* key) const;  // error when absent
};

// Shape and dtype inference. `in` holds the static type of each input (dtype undefined for an
// omitted optional input); `in_value` the input's value when it is known before running
// (initializers, Constant, folded shape arithmetic) or nullptr. The rule fills `out` for every
// output; it may also fill `out_value` when it can compute a value without the data (Shape).
// Any inconsistency the rule can see is an error through fail(): wrong rank, incompatible
// dims, wrong dtype, bad attribute value. Unknown dims are -1 and must be tolerated.
class InferCtx : public OpCtx {
 public:
  using OpCtx::OpCtx;
  std::vector<const TypeInfo*> in;  // into the graph's types (never null: an omitted input's is untyped)
  std::vector<const RefTensor*> in_value;
  std::vector<TypeInfo> out;
  std::vector<std::optional<RefTensor>> out_value;

  // An input past those given reads as omitted (untyped): a rule that reads one an older opset
  // or a malformed node lacks then fails on its type instead of reading past the list.
  const TypeInfo& input(size_t k) const {
    static const TypeInfo omitted;
    return k < in.size() ? *in[k] : omitted;
  }
  const RefTensor* value(size_t k) const { return k < in_value.size() ? in_value[k] : nullptr; }
  void set_output(size_t k, DType t, Shape dims) { out[k] = TypeInfo{t, true, std::move(dims)}; }
  void set_output_unknown_rank(size_t k, DType t) { out[k] = TypeInfo{t, false, {}}; }
  // Common checks, each failing with a message naming the node and the input.
  void require_float(size_t k) const;
  void require_same_dtype(size_t a, size_t b) const;
  void require_rank(size_t k, int64_t rank) const;  // only when the rank is known
};

// Reference execution in float64 (floats) / int64 (integers): exact, obviously correct, slow.
// `in[k]` is nullptr for an omitted optional input. Every present output must be assigned.
class RefCtx : public OpCtx {
 public:
  using OpCtx::OpCtx;
  std::vector<const RefTensor*> in;
  std::vector<RefTensor> out;
  const RefTensor& input(size_t k) const;  // error when omitted
};

struct OpDef {
  const char* name;
  int min_inputs, max_inputs;   // arity, counting omitted optional inputs
  int min_outputs, max_outputs;
  std::vector<std::string> attrs;  // every attribute the op understands; others are errors
  void (*infer)(InferCtx&);
  void (*ref)(RefCtx&);
};

// Ops of the default ONNX domain, or nullptr when lockstep does not support it.
const OpDef* find_op(const std::string& domain, const std::string& op_type);

// Every supported op of the default domain, family by family (tests derive cases from it).
std::vector<const OpDef*> registered_ops();

// Each op family exports its table; registry.cpp joins them.
std::span<const OpDef> elementwise_ops();
std::span<const OpDef> elementwise_variadic_ops();
std::span<const OpDef> movement_ops();
std::span<const OpDef> generator_ops();
std::span<const OpDef> conv_ops();
std::span<const OpDef> linalg_ops();
std::span<const OpDef> reduce_ops();
std::span<const OpDef> softmax_ops();
std::span<const OpDef> masking_ops();
std::span<const OpDef> activation_ops();
std::span<const OpDef> cumulative_ops();
std::span<const OpDef> normalization_ops();
std::span<const OpDef> pool_ops();
std::span<const OpDef> loss_ops();
std::span<const OpDef> resize_ops();
std::span<const OpDef> attention_ops();
std::span<const OpDef> rotary_ops();
std::span<const OpDef> scatter_ops();
std::span<const OpDef> topk_ops();
std::span<const OpDef> causal_conv_ops();
std::span<const OpDef> random_ops();
std::span<const OpDef> selection_ops();
std::span<const OpDef> einsum_ops();
std::span<const OpDef> grid_sample_ops();
// CausalConvWithState's taps k, after checking input [B, C, L] and weight [C, 1, k].
int64_t causal_conv_taps(const OpCtx& c, const Shape& x, const Shape& w);

}  // namespace lockstep
