// Data movement. Single-input movement ops are lowered by probing: the op's own reference
// runs on an "iota" input (element j holds kIota + j) with its other inputs at their compiled
// values, so each output element names the input element it copies (below kIota: padding). An affine
// map becomes a strided load; anything else becomes a gather table. The index semantics
// live in one place, the reference.
#include <set>

#include "core/memory.h"
#include "kernel/lower_ctx.h"

namespace lockstep::kir {

// The index at `at` in `ind`, counted back from len when negative, and whether it is in range.
GatherIndex gather_index(Lowering& L, int ind, int64_t len, std::vector<ExprP> at) {
  ExprP i = cast(L.read(ind, std::move(at)), DType::i64);
  i = select(binary(Fn::Lt, i, icst(0)), add(i, icst(len)), i);
  return {i, binary(Fn::And, binary(Fn::Le, icst(0), i), binary(Fn::Lt, i, icst(len)))};
}

GatherIndex gather_index(Lowering& L, int ind, int64_t len, int first_var) {
  std::vector<ExprP> at;
  for (size_t k = 0; k < L.shape(ind).size(); ++k) at.push_back(var(first_var + static_cast<int>(k)));
  return gather_index(L, ind, len, std::move(at));
}

namespace {

const std::set<std::string> kProbed = {"Reshape", "Flatten",      "Squeeze",      "Unsqueeze",     "Transpose",
                                       "Slice",   "Split",        "Tile",         "Expand",        "Pad",
                                       "Gather",  "DepthToSpace", "SpaceToDepth", "CenterCropPad", "Compress"};

// Far above any pad value a model could write, so padding never looks like a source element.
constexpr int64_t kIota = int64_t{1} << 40;

std::vector<RefTensor> probe(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  RefCtx c(L.g, n);
  // The probe holds an int64 per element of its input and of each output: a data-movement bomb
  // (an Expand or Pad to terabytes) is refused here, before any of it is made.
  int64_t bytes = checked_bytes(checked_numel(L.shape(node.inputs[0])), 8);
  for (int v : node.outputs)
    if (int64_t b = v < 0 ? 0 : checked_bytes(checked_numel(L.shape(v)), 8);
        b < 0 || bytes < 0 || __builtin_add_overflow(bytes, b, &bytes))
      bytes = -1;
  try {
    require_memory(bytes, "compiling its index map (the op's reference run on every element)");
  } catch (const MemoryRefused& e) {
    c.fail(e.what());
  }
  RefTensor iota(DType::i64, L.shape(node.inputs[0]));
  for (int64_t j = 0; j < iota.numel(); ++j) iota.i[j] = kIota + j;
  std::vector<RefTensor> held;  // keeps substituted inputs alive
  held.reserve(node.inputs.size());
  c.in.push_back(&iota);
  for (size_t k = 1; k < node.inputs.size(); ++k) {
    int v = node.inputs[k];
    if (v < 0) { c.in.push_back(nullptr); continue; }
    if (node.op_type == "Pad" && k == 2) {  // the pad value: 0 marks padding in the probe
      held.emplace_back(DType::i64, L.shape(v));
      c.in.push_back(&held.back());
      continue;
    }
    const auto& val = L.types.value[v];
    if (!val) c.fail("input " + std::to_string(k) + " ('" + L.g.values[v].name + "') must be known when compiling");
    c.in.push_back(&*val);
  }
  c.out.resize(node.outputs.size());
  find_op(node.domain, node.op_type)->ref(c);
  return std::move(c.out);
}

// Steps through a row-major multi-index.
bool next_index(std::vector<int64_t>& idx, const Shape& s) {
  for (size_t k = idx.size(); k-- > 0;) {
    if (++idx[k] < s[k]) return true;
    idx[k] = 0;
  }
  return false;
}

struct AffineMap {
  bool ok = false;
  int64_t offset = 0;
  std::vector<int64_t> stride, lo, hi;  // valid box [lo, hi)
  bool masked = false;
};

// Fits source = offset + sum(idx_k * stride_k) over a box of valid elements, zero outside.
AffineMap fit_affine(const RefTensor& t) {
  AffineMap m;
  const Shape& s = t.shape;
  size_t r = s.size();
  m.lo.assign(r, INT64_MAX);
  m.hi.assign(r, -1);
  m.stride.assign(r, 0);
  std::vector<int64_t> idx(r, 0);
  int64_t valid = 0;
  for (int64_t e = 0; e < t.numel(); ++e, next_index(idx, s)) {
    if (t.i[e] < kIota) continue;
    ++valid;
    for (size_t k = 0; k < r; ++k) { m.lo[k] = std::min(m.lo[k], idx[k]); m.hi[k] = std::max(m.hi[k], idx[k] + 1); }
  }
  if (valid == 0) return m;
  int64_t box = 1;
  for (size_t k = 0; k < r; ++k) box *= m.hi[k] - m.lo[k];
  if (box != valid) return m;
  m.masked = valid != t.numel();
  std::vector<int64_t> strides = shape_strides(s);
  int64_t corner = 0;
  for (size_t k = 0; k < r; ++k) corner += m.lo[k] * strides[k];
  for (size_t k = 0; k < r; ++k)
    if (m.hi[k] - m.lo[k] > 1) m.stride[k] = t.i[corner + strides[k]] - t.i[corner];
  m.offset = t.i[corner] - kIota;
  for (size_t k = 0; k < r; ++k) m.offset -= m.lo[k] * m.stride[k];
  std::fill(idx.begin(), idx.end(), 0);
  for (int64_t e = 0; e < t.numel(); ++e, next_index(idx, s)) {
    if (t.i[e] < kIota) continue;
    int64_t src = m.offset;
    for (size_t k = 0; k < r; ++k) src += idx[k] * m.stride[k];
    if (src != t.i[e] - kIota) return m;
  }
  m.ok = true;
  return m;
}

ExprP pad_value(Lowering& L, int n, DType t) {
  const Node& node = L.g.nodes[n];
  if (node.op_type == "Pad" && L.g.opset < 11) return cst(OpCtx(L.g, n).attr_float("value", 0), t);
  if (node.op_type == "Pad" && node.inputs.size() > 2 && node.inputs[2] >= 0) {
    int v = node.inputs[2];
    return L.read(v, std::vector<ExprP>(L.shape(v).size(), icst(0)));
  }
  return cst(0, t);
}

ExprP lower_probed_output(Lowering& L, int n, const RefTensor& table) {
  const Node& node = L.g.nodes[n];
  int src = node.inputs[0];
  int sbuf = L.buf[src];
  const Shape& sshape = L.shape(src);
  DType t = L.type(src).dtype;
  size_t r = table.shape.size();
  if (table.numel() == 0) return cst(0, t);
  AffineMap m = fit_affine(table);
  if (m.ok) {
    ExprP flat = icst(m.offset);
    ExprP inside = cst(1, DType::boolean);
    for (size_t k = 0; k < r; ++k) {
      flat = add(flat, mul(var(static_cast<int>(k)), icst(m.stride[k])));
      if (m.masked && (m.lo[k] > 0 || m.hi[k] < table.shape[k]))
        inside = binary(Fn::And, inside, binary(Fn::And, binary(Fn::Le, icst(m.lo[k]), var(static_cast<int>(k))),
                                                 binary(Fn::Lt, var(static_cast<int>(k)), icst(m.hi[k]))));
    }
    ExprP value = load_flat(sbuf, sshape, t, flat);
    return m.masked ? select(inside, value, pad_value(L, n, t)) : value;
  }
  // Not affine (Tile, reflect/edge/wrap Pad, ...): a constant table of source offsets.
  auto tab = std::make_shared<Tensor>(DType::i64, table.shape);
  for (int64_t e = 0; e < table.numel(); ++e)
    tab->data<int64_t>()[e] = table.i[e] >= kIota ? table.i[e] - kIota : -1;
  int tb = L.add_buffer(Buffer::Constant, DType::i64, table.shape, L.g.values[node.outputs[0]].name + ":gather");
  L.plan.buffers[tb].data = tab;
  ExprP at = load(tb, table.shape, DType::i64, out_vars(r));
  return select(binary(Fn::Le, icst(0), at), load_flat(sbuf, sshape, t, at), pad_value(L, n, t));
}

void lower_concat(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int out = node.outputs[0];
  int64_t rank = static_cast<int64_t>(L.shape(out).size());
  int64_t axis = normalize_axis(c.attr_int("axis", 0), rank);
  ExprP body;
  int64_t offset = 0;
  std::vector<std::pair<int64_t, ExprP>> parts;
  for (int v : node.inputs) {
    int64_t len = L.shape(v)[axis];
    std::vector<ExprP> idx = out_vars(rank);
    idx[axis] = binary(Fn::Sub, var(static_cast<int>(axis)), icst(offset));
    offset += len;
    if (len > 0) parts.emplace_back(offset, L.read(v, idx));
  }
  body = parts.empty() ? cst(0, L.type(out).dtype) : parts.back().second;
  for (size_t p = parts.size() - 1; p-- > 0;)
    body = select(binary(Fn::Lt, var(static_cast<int>(axis)), icst(parts[p].first)), parts[p].second, body);
  L.emit(n, out, body);
}

// Gather with indices known only at run time, and every GatherElements. An out-of-range
// index reads nothing (the element is 0) and is counted by a check kernel, which the runtime
// turns into an error.
void lower_runtime_gather(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  bool elements = node.op_type == "GatherElements";  // indices index the output itself
  int data = node.inputs[0], ind = node.inputs[1], out = node.outputs[0];
  int64_t drank = static_cast<int64_t>(L.shape(data).size());
  int64_t axis = normalize_axis(c.attr_int("axis", 0), drank);
  int64_t q = static_cast<int64_t>(L.shape(ind).size()), len = L.shape(data)[axis];
  GatherIndex at = gather_index(L, ind, len, elements ? 0 : static_cast<int>(axis));
  std::vector<ExprP> didx = out_vars(drank);
  for (int64_t k = axis + 1; k < drank && !elements; ++k) didx[k] = var(static_cast<int>(k + q - 1));
  didx[axis] = select(at.ok, at.i, icst(0));
  L.emit(n, out, select(at.ok, L.read(data, didx), cst(0, L.type(data).dtype)));
  // The count of bad indices: a scalar sum in a fixed order (no atomics).
  GatherIndex each = gather_index(L, ind, len, 0);
  L.count_check(n, select(each.ok, icst(0), icst(1)), L.shape(ind),
                node.op_type + " indices out of range [-" + std::to_string(len) + ", " + std::to_string(len) + ")");
}

// GatherND: output vars [batch..., m..., rest...]; the data index is the batch vars, the k index
// values at [batch..., m..., j], then the rest. Out-of-range indices read nothing and are
// counted, as for the other gathers.
void lower_gather_nd(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int data = node.inputs[0], ind = node.inputs[1], out = node.outputs[0];
  const Shape &ds = L.shape(data), &is = L.shape(ind);
  int64_t b = c.attr_int("batch_dims", 0), q = static_cast<int64_t>(is.size()), k = is.back();
  std::vector<ExprP> didx;
  for (int64_t a = 0; a < b; ++a) didx.push_back(var(static_cast<int>(a)));
  ExprP ok, bad;
  for (int64_t j = 0; j < k; ++j) {  // index j of the tuple at index vars 0..q-2
    std::vector<ExprP> at;
    for (int64_t a = 0; a + 1 < q; ++a) at.push_back(var(static_cast<int>(a)));
    at.push_back(icst(j));
    GatherIndex g = gather_index(L, ind, ds[b + j], std::move(at));
    didx.push_back(select(g.ok, g.i, icst(0)));
    ok = ok ? binary(Fn::And, ok, g.ok) : g.ok;
    ExprP miss = select(g.ok, icst(0), icst(1));
    bad = bad ? add(bad, miss) : miss;
  }
  for (int64_t a = b + k; a < static_cast<int64_t>(ds.size()); ++a)
    didx.push_back(var(static_cast<int>(q - 1 + a - b - k)));
  L.emit(n, out, select(ok, L.read(data, didx), cst(0, L.type(data).dtype)));
  Shape tuples(is.begin(), is.end() - 1);
  L.count_check(n, bad, tuples, "GatherND indices out of range");
}

// ReverseSequence: along the time axis, t < len[b] reads len[b] - 1 - t. A length outside
// [0, time] reverses nothing (every read stays in range) and is counted by a check kernel.
void lower_reverse_sequence(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  OpCtx c(L.g, n);
  int x = node.inputs[0], lens = node.inputs[1];
  int ta = static_cast<int>(c.attr_int("time_axis", 0)), ba = static_cast<int>(c.attr_int("batch_axis", 1));
  int64_t time = L.shape(x)[ta];
  auto valid = [&](const ExprP& len) {
    return binary(Fn::And, binary(Fn::Le, icst(0), len), binary(Fn::Le, len, icst(time)));
  };
  ExprP len = L.read(lens, {var(ba)}), t = var(ta);
  std::vector<ExprP> idx = out_vars(static_cast<int64_t>(L.shape(x).size()));
  idx[ta] = select(binary(Fn::And, valid(len), binary(Fn::Lt, t, len)), sub(sub(len, icst(1)), t), t);
  L.emit(n, node.outputs[0], L.read(x, idx));
  L.count_check(n, select(valid(L.read(lens, {var(0)})), icst(0), icst(1)), L.shape(lens),
                "ReverseSequence lengths outside [0, " + std::to_string(time) + "]");
}

}  // namespace

bool lower_movement(Lowering& L, int n) {
  const Node& node = L.g.nodes[n];
  if (node.op_type == "Concat") { lower_concat(L, n); return true; }
  if (node.op_type == "GatherElements") {
    lower_runtime_gather(L, n);
    return true;
  }
  if (node.op_type == "GatherND") {
    lower_gather_nd(L, n);
    return true;
  }
  if (node.op_type == "ReverseSequence") {
    lower_reverse_sequence(L, n);
    return true;
  }
  if (!kProbed.count(node.op_type)) return false;
  if (node.op_type == "Gather" && !L.types.value[node.inputs[1]]) { lower_runtime_gather(L, n); return true; }
  std::vector<RefTensor> tables = probe(L, n);
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (node.outputs[k] >= 0) L.emit(n, node.outputs[k], lower_probed_output(L, n, tables[k]));
  return true;
}

}  // namespace lockstep::kir
