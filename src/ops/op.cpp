#include "ops/op.h"

namespace lockstep {

OpCtx::OpCtx(const Graph& g, int idx)
    : graph(g), node_index(idx), node(g.nodes[idx]), opset(g.opset) {}

void OpCtx::fail(const std::string& msg) const { throw Error(graph.label(node_index) + ": " + msg); }

static const char* kind_name(Attr::Kind k) {
  switch (k) {
    case Attr::Int: return "int";
    case Attr::Float: return "float";
    case Attr::String: return "string";
    case Attr::Ints: return "ints";
    case Attr::Floats: return "floats";
    case Attr::Strings: return "strings";
    case Attr::TensorK: return "tensor";
    default: return "unsupported";
  }
}

static const Attr* typed(const OpCtx& c, const char* key, Attr::Kind want) {
  const Attr* a = c.node.attr(key);
  if (a && a->kind != want)
    c.fail(std::string("attribute '") + key + "' must be " + kind_name(want) + ", got " +
           kind_name(a->kind));
  return a;
}

int64_t OpCtx::attr_int(const char* key, int64_t def) const {
  const Attr* a = typed(*this, key, Attr::Int);
  return a ? a->i : def;
}
double OpCtx::attr_float(const char* key, double def) const {
  const Attr* a = typed(*this, key, Attr::Float);
  return a ? a->f : def;
}
std::string OpCtx::attr_string(const char* key, const std::string& def) const {
  const Attr* a = typed(*this, key, Attr::String);
  return a ? a->s : def;
}
std::vector<int64_t> OpCtx::attr_ints(const char* key, std::vector<int64_t> def) const {
  const Attr* a = typed(*this, key, Attr::Ints);
  return a ? a->ints : def;
}
std::vector<double> OpCtx::attr_floats(const char* key, std::vector<double> def) const {
  const Attr* a = typed(*this, key, Attr::Floats);
  return a ? a->floats : def;
}
const Attr& OpCtx::attr_required(const char* key) const {
  const Attr* a = node.attr(key);
  if (!a) fail(std::string("required attribute '") + key + "' is missing");
  return *a;
}

static std::string input_name(const OpCtx& c, size_t k) {
  if (!c.has_input(k)) return "input " + std::to_string(k) + " (omitted)";
  return "input " + std::to_string(k) + " ('" + c.graph.values[c.node.inputs[k]].name + "')";
}

void InferCtx::require_float(size_t k) const {
  if (!dtype_is_float(input(k).dtype))
    fail(input_name(*this, k) + " must be a floating type, got " + dtype_name(input(k).dtype));
}
void InferCtx::require_same_dtype(size_t a, size_t b) const {
  if (input(a).dtype != input(b).dtype)
    fail(input_name(*this, a) + " is " + dtype_name(input(a).dtype) + " but " +
         input_name(*this, b) + " is " + dtype_name(input(b).dtype));
}
void InferCtx::require_rank(size_t k, int64_t rank) const {
  if (input(k).rank_known && static_cast<int64_t>(input(k).dims.size()) != rank)
    fail(input_name(*this, k) + " must have rank " + std::to_string(rank) + ", got " +
         input(k).str());
}

const RefTensor& RefCtx::input(size_t k) const {
  if (k >= in.size() || !in[k]) fail("input " + std::to_string(k) + " is required");
  return *in[k];
}

}  // namespace lockstep
