#include "ops/elementwise.h"

namespace lockstep::ew {

std::string input_label(const OpCtx& c, size_t k) {
  std::string name = c.has_input(k) ? c.graph.values[c.node.inputs[k]].name : "";
  return "input " + std::to_string(k) + " ('" + name + "')";
}

void require_same_dim(const OpCtx& c, int64_t a, int64_t b, const std::string& what) {
  if (a >= 0 && b >= 0 && a != b) c.fail(what + " differ: " + std::to_string(a) + " and " + std::to_string(b));
}

std::string type_names(TypeSet s) {
  std::string r;
  for (int t = 0; t < 32; ++t)
    if (s & (1u << t)) r += (r.empty() ? "" : ", ") + std::string(dtype_name(static_cast<DType>(t)));
  return r;
}

TypeSet types_at(TypeHistory h, int opset) {
  TypeSet allowed = 0;
  for (const TypesSince& t : h)
    if (t.since <= opset) allowed = t.types;
  return allowed;
}

void require_op_exists(const InferCtx& c, TypeHistory h) {
  int since = h.begin()->since;
  if (c.opset < since)
    c.fail("operator " + c.node.op_type + " exists from opset " + std::to_string(since) +
           ", the model imports opset " + std::to_string(c.opset));
}

void require_present(const InferCtx& c, size_t k) {
  if (!c.has_input(k)) c.fail("input " + std::to_string(k) + " is required but omitted");
}

void require_types(const InferCtx& c, size_t k, TypeHistory h) {
  require_op_exists(c, h);
  require_present(c, k);
  TypeSet allowed = types_at(h, c.opset);
  DType d = c.input(k).dtype;
  if (!(allowed & types({d})))
    c.fail(input_label(c, k) + " has dtype " + dtype_name(d) + ", which " + c.node.op_type +
           " does not accept at opset " + std::to_string(c.opset) + " (allowed: " +
           type_names(allowed) + ")");
}

static std::string shapes_text(const OpCtx& c, const std::vector<size_t>& inputs, const std::vector<Shape>& shapes) {
  std::string r;
  size_t j = 0;
  for (size_t k : inputs) {
    r += (j ? ", " : "") + input_label(c, k) + " " + shape_str(shapes[j]);
    ++j;
  }
  return r;
}

static bool broadcast_all(const std::vector<Shape>& shapes, Shape& out) {
  out = {};
  for (const Shape& s : shapes) {
    Shape next;
    if (!broadcast_shapes(out, s, next)) return false;
    out = std::move(next);
  }
  return true;
}

TypeInfo infer_broadcast(const InferCtx& c, const std::vector<size_t>& inputs, DType out) {
  std::vector<Shape> shapes;
  for (size_t k : inputs) {
    if (!c.input(k).rank_known) return TypeInfo{out, false, {}};
    shapes.push_back(c.input(k).dims);
  }
  TypeInfo t{out, true, {}};
  if (!broadcast_all(shapes, t.dims))
    c.fail("cannot broadcast " + shapes_text(c, inputs, shapes) + " (numpy broadcasting)");
  return t;
}

Shape ref_broadcast(const RefCtx& c, const std::vector<size_t>& inputs) {
  std::vector<Shape> shapes;
  for (size_t k : inputs) shapes.push_back(c.input(k).shape);
  Shape out;
  if (!broadcast_all(shapes, out))
    c.fail("cannot broadcast " + shapes_text(c, inputs, shapes) + " (numpy broadcasting)");
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  std::vector<int64_t> own = shape_strides(in);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) st[lead + d] = in[d] == 1 ? 0 : own[d];
  return st;
}

}  // namespace lockstep::ew
