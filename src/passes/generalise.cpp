#include "passes/generalise.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.h"
#include "kernel/symbols.h"
#include "ops/infer.h"
#include "passes/passes.h"
#include "passes/schedule.h"

namespace lockstep {

using namespace kir;

bool Affine::fixed() const {
  for (int64_t x : k)
    if (x) return false;
  return true;
}

int64_t Affine::at(const std::vector<int64_t>& s) const {
  int64_t v = c;
  for (size_t j = 0; j < k.size(); ++j) v += k[j] * s[j];
  return v;
}

std::string Affine::str(const std::vector<std::string>& names) const {
  std::string s;
  for (size_t j = 0; j < k.size(); ++j) {
    if (!k[j]) continue;
    if (!s.empty()) s += k[j] > 0 ? "+" : "-";
    else if (k[j] < 0) s += "-";
    int64_t m = k[j] < 0 ? -k[j] : k[j];
    s += (m == 1 ? "" : std::to_string(m) + "*") + names[j];
  }
  if (s.empty()) return std::to_string(c);
  if (c) s += (c > 0 ? "+" : "-") + std::to_string(c < 0 ? -c : c);
  return s;
}

std::vector<std::string> graph_symbols(const Graph& g) {
  std::vector<std::string> names;
  for (int v : g.inputs)
    for (const Dim& d : g.values[v].declared)
      if (!d.known() && !d.symbol.empty() && std::find(names.begin(), names.end(), d.symbol) == names.end())
        names.push_back(d.symbol);
  return names;
}

int symbol_index(const Graph& g, size_t k, size_t d, const std::vector<std::string>& symbols) {
  const std::vector<Dim>& declared = g.values[g.inputs[k]].declared;
  if (d >= declared.size() || declared[d].known()) return -1;
  auto it = std::find(symbols.begin(), symbols.end(), declared[d].symbol);
  return it == symbols.end() ? -1 : static_cast<int>(it - symbols.begin());
}

std::vector<int64_t> symbol_values(const Graph& g, const std::vector<TypeInfo>& types,
                                   const std::vector<std::string>& symbols, std::vector<std::string>* where) {
  std::vector<int64_t> values(symbols.size(), -1);
  std::vector<std::string> from(symbols.size());
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Value& val = g.values[g.inputs[k]];
    for (size_t d = 0; d < types[k].dims.size(); ++d) {
      int j = symbol_index(g, k, d, symbols);
      if (j < 0) continue;
      int64_t n = types[k].dims[d];
      auto here = [&] { return "input '" + val.name + "' axis " + std::to_string(d); };
      if (values[j] >= 0 && values[j] != n)
        throw Error("inputs disagree on dimension '" + symbols[j] + "': " + from[j] + " is " +
                    std::to_string(values[j]) + " but " + here() + " is " + std::to_string(n) +
                    " (the model declares both as '" + symbols[j] + "', so they must be equal)");
      if (values[j] < 0) values[j] = n, from[j] = here();
    }
  }
  if (where) *where = from;
  return values;
}

namespace {

// Base probe values: odd primes, past every kernel span of the decoders lockstep serves, and
// no multiple of a tile width, so no schedule can lean on a divisibility that other lengths
// lack. Symbol j moves by kStep in its own probe; the last probe moves them all, to check.
constexpr int64_t kBase = 61, kStep = 6;

std::vector<std::vector<int64_t>> probe_values(size_t n) {
  std::vector<int64_t> base(n);
  for (size_t j = 0; j < n; ++j) base[j] = kBase + 12 * static_cast<int64_t>(j);
  std::vector<std::vector<int64_t>> p = {base};
  for (size_t j = 0; j < n; ++j) {
    p.push_back(base);
    p.back()[j] += kStep;
  }
  p.push_back(base);
  for (size_t j = 0; j < n; ++j) p.back()[j] += 10 + 2 * static_cast<int64_t>(j);
  return p;
}

Specialisation at(const Graph& g, const Specialisation& like, const std::vector<std::string>& symbols,
                  const std::vector<int64_t>& values) {
  Specialisation s = like;
  for (size_t k = 0; k < g.inputs.size(); ++k)
    for (size_t d = 0; d < s.types[k].dims.size(); ++d)
      if (int j = symbol_index(g, k, d, symbols); j >= 0) s.types[k].dims[d] = values[j];
  return s;
}

struct NotAffine {
  std::string what;
};

// Unifies the plans of the probes into one: equal structure, every integer affine.
class Unifier {
 public:
  Unifier(std::vector<std::vector<int64_t>> probes, int symbuf) : probes_(std::move(probes)), symbuf_(symbuf) {}

  Affine fit(const std::vector<int64_t>& v, const std::string& what) const {
    size_t n = probes_[0].size();
    Affine a;
    a.k.assign(n, 0);
    a.c = v[0];
    for (size_t j = 0; j < n; ++j) {
      int64_t dv = v[1 + j] - v[0], ds = probes_[1 + j][j] - probes_[0][j];
      if (dv % ds) throw NotAffine{what};
      a.k[j] = dv / ds;
      a.c -= a.k[j] * probes_[0][j];
    }
    for (size_t p = 0; p < v.size(); ++p)
      if (a.at(probes_[p]) != v[p]) throw NotAffine{what};
    return a;
  }

  ExprP expr(const Affine& a, DType t) const {
    ExprP e = icst(a.c);
    for (size_t j = 0; j < a.k.size(); ++j)
      if (a.k[j]) e = add(mul(symbol(static_cast<int>(j)), icst(a.k[j])), e);
    return t == DType::i64 ? e : cast(e, t);
  }

  ExprP symbol(int j) const {
    return load_flat(symbuf_, {static_cast<int64_t>(probes_[0].size())}, DType::i64, icst(j));
  }

  ExprP unify(const std::vector<const Expr*>& es, const Plan& out) {
    auto memo = memo_.find(es);
    if (memo != memo_.end()) return memo->second;
    const Expr& e = *es[0];
    for (const Expr* o : es)
      if (o->op != e.op || o->fn != e.fn || o->type != e.type || o->args.size() != e.args.size() || o->buf != e.buf ||
          o->flat != e.flat || (e.op != Op::Const && o->i != e.i) || (e.op == Op::Reduce && o->shape != e.shape))
        throw NotAffine{"the kernels differ between lengths"};
    std::vector<ExprP> args;
    for (size_t a = 0; a < e.args.size(); ++a) {
      std::vector<const Expr*> sub;
      for (const Expr* o : es) sub.push_back(o->args[a].get());
      args.push_back(unify(sub, out));
    }
    ExprP r = rebuild(es, out, std::move(args));
    memo_.emplace(es, r);
    return r;
  }

 private:
  ExprP rebuild(const std::vector<const Expr*>& es, const Plan& out, std::vector<ExprP> args) {
    const Expr& e = *es[0];
    if (e.op == Op::Const) {
      if (dtype_is_float(e.type) || e.type == DType::boolean) {  // must be the same at every probe
        for (const Expr* o : es)
          if (std::memcmp(&o->f, &e.f, sizeof e.f) != 0 || o->i != e.i)
            throw NotAffine{"a constant of a kernel depends on the length"};
        return with_args(e, {});
      }
      std::vector<int64_t> v;
      for (const Expr* o : es) v.push_back(o->i);
      Affine a = fit(v, "an index constant is not affine in the symbols");
      return a.fixed() ? with_args(e, {}) : expr(a, e.type);
    }
    if (e.op == Op::Load && !out.buffers[e.buf].dims.empty()) {
      return load_flat(e.buf, e.shape, e.type, e.flat ? args[0] : flat_index(out, e.buf, args));
    }
    return with_args(e, std::move(args));
  }

  std::vector<std::vector<int64_t>> probes_;
  int symbuf_;
  std::map<std::vector<const Expr*>, ExprP> memo_;
};

bool same_bytes(const Buffer& a, const Buffer& b) {
  if (a.data == b.data) return true;
  return a.data && b.data && a.data->bytes == b.data->bytes;
}

// The structure of every plan (buffers, kernels, checks) is the first one's. A constant no
// kernel reads (a folded Shape, kept as a buffer) may differ.
void require_same_structure(const std::vector<const Plan*>& ps) {
  const Plan& p = *ps[0];
  std::vector<bool> read(p.buffers.size(), false);
  for (const Kernel& k : p.kernels)
    for (int b : kernel_inputs(k)) read[b] = true;
  for (const Plan* o : ps) {
    if (o->buffers.size() != p.buffers.size() || o->kernels.size() != p.kernels.size() || o->inputs != p.inputs ||
        o->outputs != p.outputs || o->checks.size() != p.checks.size())
      throw NotAffine{"the plan has a different number of kernels or buffers at different lengths"};
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      const Buffer &x = p.buffers[b], &y = o->buffers[b];
      if (x.kind != y.kind || x.dtype != y.dtype || x.shape.size() != y.shape.size() || x.name != y.name ||
          x.io_index != y.io_index)
        throw NotAffine{"buffer b" + std::to_string(b) + " ('" + x.name + "') differs between lengths"};
      if (x.kind == Buffer::Constant && read[b] && !same_bytes(x, y))
        throw NotAffine{"the constant '" + x.name + "' depends on the length"};
    }
    for (size_t k = 0; k < p.kernels.size(); ++k)
      if (o->kernels[k].name != p.kernels[k].name || o->kernels[k].nodes != p.kernels[k].nodes ||
          o->kernels[k].out != p.kernels[k].out)
        throw NotAffine{"kernel " + p.kernels[k].name + " differs between lengths"};
    for (size_t c = 0; c < p.checks.size(); ++c)
      if (o->checks[c].buf != p.checks[c].buf || o->checks[c].what != p.checks[c].what)
        throw NotAffine{"the run-time check of node '" + p.checks[c].node + "' depends on the length"};
  }
}

std::vector<std::vector<Affine>> fit_values(const Graph& g, const std::vector<GraphTypes>& types, const Unifier& u) {
  std::vector<std::vector<Affine>> dims(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    const TypeInfo& t = types[0].type[v];
    if (!t.rank_known || !t.fully_known()) continue;
    for (size_t d = 0; d < t.dims.size(); ++d) {
      std::vector<int64_t> at;
      for (const GraphTypes& gt : types) {
        if (gt.type[v].dims.size() != t.dims.size()) throw NotAffine{"the rank of '" + g.values[v].name + "' depends on the length"};
        at.push_back(gt.type[v].dims[d]);
      }
      dims[v].push_back(u.fit(at, "the shape of '" + g.values[v].name + "' is not affine in the symbols"));
    }
  }
  return dims;
}

constexpr int64_t kShapeParameters = 64;  // initializers this small may decide shapes

// Small folded values of the graph's own nodes, fitted element by element over the probes.
std::vector<SymbolicPlan::FoldedValue> fit_folded(const Graph& g, const std::vector<GraphTypes>& types, const Unifier& u) {
  std::vector<SymbolicPlan::FoldedValue> out;
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (g.values[v].initializer) continue;
    const auto& first = types[0].value[v];
    if (!first || first->numel() > kShapeParameters) continue;
    SymbolicPlan::FoldedValue fv{static_cast<int>(v), first->dtype, first->shape, {}, {}};
    for (const GraphTypes& gt : types)
      if (!gt.value[v] || gt.value[v]->shape != first->shape)
        throw NotAffine{"the value of '" + g.values[v].name + "' changes its shape with the length"};
    for (int64_t e = 0; e < first->numel(); ++e) {
      if (first->is_float()) {
        for (const GraphTypes& gt : types)
          if (std::memcmp(&gt.value[v]->f[e], &first->f[e], sizeof(double)) != 0)
            throw NotAffine{"the value of '" + g.values[v].name + "' (a float) depends on the length"};
        fv.floats.push_back(first->f[e]);
        continue;
      }
      std::vector<int64_t> at;
      for (const GraphTypes& gt : types) at.push_back(gt.value[v]->i[e]);
      fv.ints.push_back(u.fit(at, "the value of '" + g.values[v].name + "' is not affine in the symbols"));
    }
    out.push_back(std::move(fv));
  }
  return out;
}

}  // namespace

std::optional<SymbolicPlan> generalise(const Graph& g, const Specialisation& like, const PipelineOptions& o,
                                       std::string* why) {
  std::vector<std::string> symbols = graph_symbols(g);
  auto no = [&](const std::string& w) -> std::optional<SymbolicPlan> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (symbols.empty()) return no("the model's inputs have no named symbolic dimension");
  for (const auto& v : like.values)
    if (v) return no("shapes depend on the values of small integer inputs");
  SymbolicPlan s;
  s.probes = probe_values(symbols.size());
  std::vector<PipelineResult> runs;
  std::vector<GraphTypes> types;
  for (size_t p = 0; p < s.probes.size(); ++p) {
    Specialisation sp = at(g, like, symbols, s.probes[p]);
    PipelineOptions po = o;
    if (p) po.dump_ir_dir.clear();  // the first probe's IR is the one shown
    po.probe = true;
    try {
      types.push_back(infer_graph(g, &sp.types));
      runs.push_back(run_pipeline(g, sp, po));
    } catch (const Error& e) {
      return no("at probe length " + std::to_string(s.probes[p][0]) + ": " + e.what());
    }
  }
  std::vector<const Plan*> plans;
  for (const PipelineResult& r : runs) plans.push_back(&r.plan);
  Plan& out = s.plan;
  out = runs[0].plan;
  out.symbols = symbols;
  out.symbol_buf = static_cast<int>(out.buffers.size());
  Unifier u(s.probes, out.symbol_buf);
  try {
    require_same_structure(plans);
    for (const PipelineResult& r : runs)
      if (r.log.size() != runs[0].log.size()) throw NotAffine{"the passes apply differently at different lengths"};
    s.value_dims = fit_values(g, types, u);
    s.folded = fit_folded(g, types, u);
    for (size_t b = 0; b < out.buffers.size(); ++b) {
      Buffer& buf = out.buffers[b];
      std::vector<ExprP> dims;
      std::vector<SymbolicPlan::SymbolicDim> table;
      for (size_t d = 0; d < buf.shape.size(); ++d) {
        std::vector<int64_t> at;
        for (const Plan* p : plans) at.push_back(p->buffers[b].shape[d]);
        Affine a = u.fit(at, "the shape of '" + buf.name + "' is not affine in the symbols");
        if (!a.fixed()) table.push_back({static_cast<int>(b), static_cast<int>(d), a});
        dims.push_back(u.expr(a, DType::i64));
      }
      // A constant no kernel reads may vary (see require_same_structure): it keeps the first
      // probe's shape, so constants never move when a new length is bound.
      if (table.empty() || buf.kind == Buffer::Constant) continue;
      buf.dims = std::move(dims);
      s.buffer_dims.insert(s.buffer_dims.end(), table.begin(), table.end());
    }
    Buffer sym;
    sym.kind = Buffer::Symbols;
    sym.dtype = DType::i64;
    sym.shape = {static_cast<int64_t>(symbols.size())};
    sym.name = "symbols";
    out.buffers.push_back(sym);
    for (size_t k = 0; k < out.kernels.size(); ++k) {
      std::vector<const Expr*> bodies;
      for (const Plan* p : plans) bodies.push_back(p->kernels[k].body.get());
      out.kernels[k].body = u.unify(bodies, out);
      out.kernels[k].symbols = out.symbol_buf;
    }
  } catch (const NotAffine& n) {
    return no(n.what);
  }
  PassManager pm(o.pass_limit, runs[0].log);
  pm.fault = o.fault;
  try {
    simplify_indices(out);  // by the symbols' bounds, valid at every length
    if (o.target) schedule_for_target(out, *o.target, pm);
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    return no(e.what());
  }
  for (size_t k = 0; k < out.kernels.size(); ++k)
    if (out.kernels[k].schedule.loops == Schedule::Loops::Gpu && !out.buffers[out.kernels[k].out].dims.empty())
      s.sized_kernels.push_back(static_cast<int>(k));
  s.log = pm.log();
  verify_plan(out);
  return s;
}

Plan instantiate(const SymbolicPlan& s, const std::vector<int64_t>& values) {
  Plan p = s.plan;
  reinstantiate(s, p, values);
  return p;
}

void reinstantiate(const SymbolicPlan& s, Plan& p, const std::vector<int64_t>& values) {
  for (const SymbolicPlan::SymbolicDim& d : s.buffer_dims) p.buffers[d.buf].shape[d.axis] = d.at.at(values);
  for (int k : s.sized_kernels) {
    Schedule& sc = p.kernels[k].schedule;
    const Buffer& out = p.buffers[p.kernels[k].out];
    int64_t outputs = out.numel(), last = out.shape.empty() ? 1 : out.shape.back();
    for (const Schedule& t : tile_choices(sc, true))  // as the kernel decides (gpu_printer.cpp)
      if (tile_suits(sc, t, outputs, last)) {
        sc.threads = work_items(t, outputs);
        sc.shared = shared_bytes(t);
        break;
      }
  }
}

namespace {

bool covers_with(const Graph& g, const SymbolicPlan& s, const GraphTypes& gt, const std::vector<int64_t>& values,
                 std::string* why) {
  for (size_t v = 0; v < s.value_dims.size(); ++v) {
    const std::vector<Affine>& dims = s.value_dims[v];
    if (dims.empty()) continue;
    const TypeInfo& t = gt.type[v];
    bool same = t.rank_known && t.dims.size() == dims.size();
    for (size_t d = 0; same && d < dims.size(); ++d) same = t.dims[d] == dims[d].at(values);
    if (same) continue;
    if (why) {
      std::string want;
      for (size_t d = 0; d < dims.size(); ++d) want += (d ? "," : "") + std::to_string(dims[d].at(values));
      *why = "value '" + g.values[v].name + "' has shape " + t.str() + " at this length, where the symbolic program has [" +
             want + "]";
    }
    return false;
  }
  for (const SymbolicPlan::FoldedValue& fv : s.folded) {
    const auto& got = gt.value[fv.value];
    bool same = got && got->dtype == fv.dtype && got->shape == fv.shape;
    for (size_t e = 0; same && e < fv.ints.size(); ++e) same = got->i[e] == fv.ints[e].at(values);
    for (size_t e = 0; same && e < fv.floats.size(); ++e) same = std::memcmp(&got->f[e], &fv.floats[e], sizeof(double)) == 0;
    if (same) continue;
    if (why) *why = "value '" + g.values[fv.value].name + "', which the kernels were built with, differs at this length";
    return false;
  }
  return true;
}

}  // namespace

bool covers(const Graph& g, const SymbolicPlan& s, const std::vector<TypeInfo>& types,
            const std::vector<int64_t>& values, std::string* why, GraphTypes* scratch) {
  // Shapes only need the short shape parameters; the weights' values are left out (a shape
  // they would have decided shows as unknown, and the full inference settles it).
  GraphTypes own;
  GraphTypes& short_params = scratch ? *scratch : own;
  if (short_params.type.empty()) short_params = infer_graph(g, &types, nullptr, kShapeParameters);
  else reinfer_graph(g, short_params, types);
  if (covers_with(g, s, short_params, values, nullptr)) return true;
  return covers_with(g, s, infer_graph(g, &types), values, why);
}

}  // namespace lockstep
