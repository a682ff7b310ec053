// Fusion decisions on the lowered plan. Each merges one producer kernel into its reader(s);
// the merged kernel computes exactly the same expression, so only rounding-free
// restructuring happens here.
//
// Cost: a pass looks at each kernel once, in order. Which kernels read each buffer is kept up
// to date across merges (not re-read from the whole plan after each), a merged kernel's
// buffer list is found from the lists already known for the bodies it is made of, and the
// node lists of the pass log share storage, so a chain of n elementwise nodes fusing into one
// kernel costs O(n), not O(n^2). Erased kernels are removed at the end of the pass, or at each
// application when someone watches the plan between applications (--verify-each, --dump-ir).
#include <algorithm>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "passes/passes.h"

namespace lockstep {

using namespace kir;

namespace {

// A value path made only of loads, constants and selects: a pure index remap (a view).
bool is_view(const ExprP& e) {
  if (e->op == Op::Load || e->op == Op::Const) return true;
  if (e->op == Op::Select) return is_view(e->args[1]) && is_view(e->args[2]);
  return false;
}

bool has_select(const ExprP& e) { return e->has & Expr::kSelect; }
// Inlining `prod` into `reader` keeps every expression within kMaxFusedDepth (the result is at
// most as deep as the two stacked).
bool too_deep(const ExprP& prod, const ExprP& reader) { return prod->depth + reader->depth > kMaxFusedDepth; }
bool has_reduce(const ExprP& e) { return e->has & Expr::kReduce; }

// Load at index (v0, v1, ...) of its own shape; a size-1 dim may be indexed by anything (it is 0).
bool is_identity_index(const Expr& ld) {
  if (ld.flat) return false;
  for (size_t k = 0; k < ld.args.size(); ++k) {
    const Expr& a = *ld.args[k];
    if (ld.shape[k] != 1 && !(a.op == Op::Var && a.i == static_cast<int64_t>(k))) return false;
  }
  return true;
}

// Whether e loads `buf` outside every select's branches (where it is loaded whatever the
// condition: in the condition itself, or in no select at all).
bool loads_unguarded(const ExprP& e, int buf) {
  if (!(e->has & Expr::kLoad)) return false;
  if (e->op == Op::Load && e->buf == buf) return true;
  if (e->op == Op::Select) return loads_unguarded(e->args[0], buf);
  for (const ExprP& a : e->args)
    if (loads_unguarded(a, buf)) return true;
  return false;
}

int count_loads(const ExprP& e, int buf) {
  if (!(e->has & Expr::kLoad)) return 0;
  int n = e->op == Op::Load && e->buf == buf;
  for (const ExprP& a : e->args) n += count_loads(a, buf);
  return n;
}

// A producer that copies its source densely in row-major order (a reshape of it).
ExprP dense_source(const Plan& p, const Kernel& k) {
  const Expr& b = *k.body;
  const Shape& s = p.buffers[k.out].shape;
  if (b.op != Op::Load) return nullptr;
  std::vector<ExprP> vars = out_vars(s.size());
  bool dense = b.flat ? same(b.args[0], flatten_index(vars, s)) : b.shape == s && is_identity_index(b);
  return dense ? k.body : nullptr;
}

// The flat index of a kernel's own element over its shape s: the row-major flatten of its vars,
// or of them with a size-1 dim's index 0 (as a broadcast read writes it).
struct OwnFlat {
  ExprP own, zeroed;
  int64_t numel;
  explicit OwnFlat(const Shape& s) : numel(shape_numel(s)) {
    std::vector<ExprP> vars = out_vars(s.size()), zero = vars;
    for (size_t k = 0; k < s.size(); ++k)
      if (s[k] == 1) zero[k] = icst(0);
    own = flatten_index(vars, s);
    zeroed = flatten_index(zero, s);
  }
  // Whether load ld reads, flat, the element at that index of a buffer of as many elements.
  bool read_by(const Expr& ld) const {
    return ld.flat && shape_numel(ld.shape) == numel && (same(ld.args[0], own) || same(ld.args[0], zeroed));
  }
};

// A reader's flat load of a producer (of shape s) unflattens its index into dims, a div and a
// mod each; the producer's loads at its own element (of a buffer of shape s, or a dense view of
// one of as many elements) would only flatten them again. Those are read at the reader's flat
// index instead: marked with a var past any the reader uses (Var(kMarker) once `substitute`
// has shifted it), which then becomes `flat`.
constexpr int kMarker = 62;

ExprP mark_own_elements(const ExprP& body, const Shape& s, int shift) {
  std::vector<const Expr*> loads;
  collect_loads(body, loads);
  std::set<int> bufs;
  for (const Expr* ld : loads) bufs.insert(ld->buf);
  OwnFlat own(s);
  ExprP out = body;
  for (int b : bufs)
    out = replace_loads(out, b, [&](const Expr& ld) {
      bool at_own = ld.flat ? own.read_by(ld) : ld.shape == s && is_identity_index(ld);
      return at_own ? load_flat(ld.buf, ld.shape, ld.type, var(kMarker - shift)) : with_args(ld, ld.args);
    });
  return out;
}

ExprP unmark(const ExprP& e, const ExprP& flat) {
  std::vector<ExprP> vars;
  for (int k = 0; k < kMarker; ++k) vars.push_back(var(k));
  vars.push_back(flat);
  return substitute(e, vars, 0);
}

// The producer's value at the reader's load `ld`. A producer's reduction vars are renumbered to
// follow the reader's output vars (only a reader without a reduction of its own takes one).
ExprP inlined_at(const Plan& p, const Kernel& prod, const Expr& ld, int reader_rank) {
  const Shape& s = p.buffers[prod.out].shape;
  if (ld.flat) {
    if (ExprP src = dense_source(p, prod)) return load_flat(src->buf, src->shape, src->type, ld.args[0]);
    std::vector<ExprP> vars;
    std::vector<int64_t> strides = shape_strides(s);
    for (size_t k = 0; k < s.size(); ++k)
      vars.push_back(s[k] == 1 ? icst(0) : binary(Fn::Mod, binary(Fn::Div, ld.args[0], icst(strides[k])), icst(s[k])));
    int shift = reader_rank - static_cast<int>(s.size());
    if (max_var(ld.args[0]) >= kMarker || kMarker - shift < static_cast<int>(s.size()))
      return substitute(prod.body, vars, shift);
    return unmark(substitute(mark_own_elements(prod.body, s, shift), vars, shift), ld.args[0]);
  }
  return substitute(prod.body, ld.args, reader_rank - static_cast<int>(s.size()));
}

// One kernel pass over the plan: the kernels in order, each offered once as a producer.
class Fuser {
 public:
  Fuser(Plan& p, PassManager& pm) : p_(p), pm_(pm) { rebuild(); }

  // Runs `try_one(k, readers of k's output)` on each kernel in order; try_one merges through
  // request() / merge() / done() and says whether it did.
  template <class F>
  void each_producer(F try_one) {
    for (size_t k = 0; k < p_.kernels.size();) {
      if (dead_[k]) {
        ++k;
        continue;
      }
      compacted_ = false;
      const std::set<int>& rs = readers_[p_.kernels[k].out];
      bool merged = try_one(static_cast<int>(k), std::vector<int>(rs.begin(), rs.end()));
      if (!merged || !compacted_) ++k;  // after a compaction the next kernel has moved into k
    }
    compact();
  }

  // The ONNX nodes of a merge of `prod` into `reader`: prod's, then reader's not among them.
  NodeList merged_names(int prod, int reader) {
    std::vector<std::string> extra = extra_names(prod, reader);
    const Kernel& P = p_.kernels[prod];
    std::shared_ptr<std::vector<std::string>>& list = list_of(prod);
    if (list->size() != P.nodes.size()) {  // someone else's names follow prod's: a copy of its own
      list = std::make_shared<std::vector<std::string>>(list->begin(), list->begin() + P.nodes.size());
    }
    list->insert(list->end(), extra.begin(), extra.end());
    return NodeList(list, list->size());
  }
  NodeList names(int k) {
    std::shared_ptr<std::vector<std::string>>& list = list_of(k);
    return NodeList(list, p_.kernels[k].nodes.size());
  }

  // Inlines `prod` into each of `readers` (the readers of its output) and erases it.
  // `faulty`: the planted bug of --inject-fault pass:N, the reader's index off by one.
  void merge(int prod, const std::vector<int>& readers, bool faulty) {
    Kernel& P = p_.kernels[prod];
    for (size_t i = 0; i < readers.size(); ++i) {
      int r = readers[i];
      Kernel& C = p_.kernels[r];
      int rank = static_cast<int>(p_.buffers[C.out].shape.size());
      C.body = replace_loads(C.body, P.out, [&](const Expr& ld) {
        ExprP moved = faulty ? pm_.fault->corrupt_load(ld) : nullptr;
        return inlined_at(p_, P, moved ? *moved : ld, rank);
      });
      bool last = readers.size() == 1;  // P is gone after this: its lists move on to C
      std::vector<std::string> extra = extra_names(prod, r);
      std::vector<std::string> nodes = last ? std::move(P.nodes) : P.nodes;
      nodes.insert(nodes.end(), extra.begin(), extra.end());
      C.nodes = std::move(nodes);
      if (!last) {
        sets_[r] = nullptr;
        lists_[r] = nullptr;
        continue;
      }
      std::unique_ptr<std::unordered_set<std::string>> set = std::move(sets_[prod]);
      if (set) set->insert(extra.begin(), extra.end());
      sets_[r] = std::move(set);
      lists_[r] = lists_[prod] && lists_[prod]->size() >= C.nodes.size() ? lists_[prod] : nullptr;
      if (lists_[r] && !std::equal(extra.begin(), extra.end(), lists_[r]->begin() + (C.nodes.size() - extra.size())))
        lists_[r] = nullptr;
    }
    erase(prod);
    for (int r : readers) update_inputs(r);
  }

  // Whether inlining `prod` into `reader` would make it load more than kMaxKernelLoads buffers.
  bool too_wide(int prod, int reader) const {
    const std::vector<int>& a = ins_[prod];
    const std::vector<int>& b = ins_[reader];
    std::vector<int> both;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
    size_t n = both.size() - std::count(both.begin(), both.end(), p_.kernels[prod].out);
    return n > static_cast<size_t>(kMaxKernelLoads);
  }

  // Hands the application to the pass manager's observer, with the plan as it now stands.
  void done() {
    if (pm_.after_each) {
      compact();
      compacted_ = true;
    }
    pm_.finished();
  }

 private:
  // Names of reader's nodes that prod does not list, in reader's order, without repeats.
  std::vector<std::string> extra_names(int prod, int reader) {
    const std::vector<std::string>& cn = p_.kernels[reader].nodes;
    std::vector<std::string> out;
    const std::unordered_set<std::string>& in_prod = set_of(prod);
    for (const std::string& x : cn)
      if (!in_prod.count(x) && std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
    return out;
  }

  const std::unordered_set<std::string>& set_of(int k) {
    if (!sets_[k]) {
      const std::vector<std::string>& n = p_.kernels[k].nodes;
      sets_[k] = std::make_unique<std::unordered_set<std::string>>(n.begin(), n.end());
    }
    return *sets_[k];
  }

  // Kernel k's pass-log list: its nodes, possibly followed by names added since (kept so by
  // merge(), which hands a list on only when it starts with the merged kernel's nodes).
  std::shared_ptr<std::vector<std::string>>& list_of(int k) {
    const std::vector<std::string>& n = p_.kernels[k].nodes;
    if (!lists_[k]) lists_[k] = std::make_shared<std::vector<std::string>>(n);
    return lists_[k];
  }

  // Buffers a body loads, sorted; bodies met before (kernel bodies, now parts of larger ones)
  // are looked up instead of walked again.
  void gather(const ExprP& e, std::vector<int>& out) {
    if (!(e->has & Expr::kLoad)) return;
    auto it = known_.find(e.get());
    if (it != known_.end()) {
      out.insert(out.end(), it->second.second.begin(), it->second.second.end());
      return;
    }
    if (e->op == Op::Load) out.push_back(e->buf);
    for (const ExprP& a : e->args) gather(a, out);
  }
  std::vector<int> loads_of(const ExprP& body) {
    auto it = known_.find(body.get());
    if (it != known_.end()) return it->second.second;
    std::vector<int> out;
    gather(body, out);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    known_.emplace(body.get(), std::make_pair(body, out));
    return out;
  }

  void update_inputs(int k) {
    std::vector<int> now = loads_of(p_.kernels[k].body);
    const std::vector<int>& was = ins_[k];
    std::vector<int> gone, added;
    std::set_difference(was.begin(), was.end(), now.begin(), now.end(), std::back_inserter(gone));
    std::set_difference(now.begin(), now.end(), was.begin(), was.end(), std::back_inserter(added));
    for (int b : gone) readers_[b].erase(k);
    for (int b : added) readers_[b].insert(k);
    ins_[k] = std::move(now);
  }

  void erase(int k) {
    dead_[k] = 1;
    for (int b : ins_[k]) readers_[b].erase(k);
    ins_[k].clear();
  }

  void rebuild() {
    size_t n = p_.kernels.size();
    dead_.assign(n, 0);
    ins_.assign(n, {});
    sets_.resize(n);
    lists_.resize(n);
    readers_.assign(p_.buffers.size(), {});
    for (size_t k = 0; k < n; ++k) update_inputs(static_cast<int>(k));
  }

  // Drops erased kernels (keeping the order of the rest) and renumbers the bookkeeping.
  void compact() {
    if (std::find(dead_.begin(), dead_.end(), 1) == dead_.end()) return;
    size_t to = 0;
    for (size_t k = 0; k < p_.kernels.size(); ++k) {
      if (dead_[k]) continue;
      if (to != k) {
        p_.kernels[to] = std::move(p_.kernels[k]);
        sets_[to] = std::move(sets_[k]);
        lists_[to] = std::move(lists_[k]);
      }
      ++to;
    }
    p_.kernels.resize(to);
    sets_.resize(to);
    lists_.resize(to);
    rebuild();
  }

  Plan& p_;
  PassManager& pm_;
  std::vector<char> dead_;
  std::vector<std::vector<int>> ins_;                        // per kernel: buffers read, sorted
  std::vector<std::set<int>> readers_;                       // per buffer: live kernels reading it
  std::unordered_map<const Expr*, std::pair<ExprP, std::vector<int>>> known_;
  std::vector<std::unique_ptr<std::unordered_set<std::string>>> sets_;  // per kernel: its nodes
  std::vector<std::shared_ptr<std::vector<std::string>>> lists_;         // per kernel: pass-log list
  bool compacted_ = false;
};

}  // namespace

void inline_views(Plan& p, PassManager& pm) {
  Fuser f(p, pm);
  f.each_producer([&](int k, const std::vector<int>& rs) {
    const Kernel& P = p.kernels[k];
    if (p.buffers[P.out].kind != Buffer::Temp || rs.empty() || !is_view(P.body) || P.materialise) return false;
    for (int r : rs) {  // padding stays materialised ahead of a reduction: no bounds checks inside it
      if (has_reduce(p.kernels[r].body) && has_select(P.body)) return false;
      if (too_deep(P.body, p.kernels[r].body) || f.too_wide(k, r)) return false;
    }
    if (!pm.request("inline-view", P.name + " read through by " + std::to_string(rs.size()) + " kernel(s)", f.names(k)))
      return false;
    f.merge(k, rs, pm.faulty());
    f.done();
    return true;
  });
}

void fuse_elementwise(Plan& p, PassManager& pm) {
  Fuser f(p, pm);
  f.each_producer([&](int k, const std::vector<int>& rs) {
    const Kernel& P = p.kernels[k];
    if (p.buffers[P.out].kind != Buffer::Temp || rs.size() != 1 || has_reduce(P.body) || P.materialise) return false;
    const Kernel& C = p.kernels[rs[0]];
    bool cheap = !is_transcendental(P.body) && !has_select(P.body);
    if (has_reduce(C.body) && !cheap) return false;  // would recompute per reduction step
    // A reader that loads it only under a select (a pad) computes it lane by lane, unvectorised:
    // exp, tanh or sigmoid stay a vectorised kernel of their own (EfficientNet's SiLU, 5x).
    if (is_transcendental(P.body) && !loads_unguarded(C.body, P.out)) return false;
    if (count_loads(C.body, P.out) > 1 && !cheap) return false;
    if (too_deep(P.body, C.body) || f.too_wide(k, rs[0])) return false;
    if (!pm.request("fuse-elementwise", P.name + " into " + C.name, f.merged_names(k, rs[0]))) return false;
    f.merge(k, rs, pm.faulty());
    f.done();
    return true;
  });
}

// Whether C reads buffer b of shape s (as many elements as C's own) only as a dense view: each
// element at its own flat position. C can then be computed over s instead (relayout()).
bool reads_as_view(const Plan& p, const Kernel& C, int b, const Shape& s) {
  const Buffer &out = p.buffers[C.out], &in = p.buffers[b];
  if (!out.dims.empty() || !in.dims.empty() || shape_numel(out.shape) != shape_numel(s)) return false;
  std::vector<const Expr*> loads;
  collect_loads(C.body, loads);
  OwnFlat own(out.shape);
  for (const Expr* ld : loads)
    if (ld->buf == b && !own.read_by(*ld)) return false;
  return true;
}

// Kernel C computed over shape s instead of its own (as many elements, row-major alike): its
// output buffer takes shape s and every reader's loads of it become flat loads of the same
// elements. A conv summed over flattened positions then takes its epilogue.
void relayout(Plan& p, int c, const Shape& s) {
  Kernel& C = p.kernels[c];
  Buffer& out = p.buffers[C.out];
  Shape was = out.shape;
  std::vector<ExprP> u = out_vars(s.size()), vars;
  ExprP flat = flatten_index(u, s);
  std::vector<int64_t> strides = shape_strides(was);
  for (size_t k = 0; k < was.size(); ++k)
    vars.push_back(was[k] == 1 ? icst(0) : binary(Fn::Mod, binary(Fn::Div, flat, icst(strides[k])), icst(was[k])));
  int shift = static_cast<int>(s.size()) - static_cast<int>(was.size());
  C.body = unmark(substitute(mark_own_elements(C.body, was, shift), vars, shift), flat);
  out.shape = s;
  for (Kernel& R : p.kernels)
    if (&R != &C)
      R.body = replace_loads(R.body, C.out, [&](const Expr& ld) {
        return load_flat(ld.buf, s, ld.type, ld.flat ? ld.args[0] : flatten_index(ld.args, was));
      });
}

// The reader's flat loads of `b` at its own element (after relayout) as loads at its index.
ExprP own_index_loads(const ExprP& body, int b, size_t rank) {
  return replace_loads(body, b, [&](const Expr& ld) { return load(ld.buf, ld.shape, ld.type, out_vars(rank)); });
}

void fuse_epilogues(Plan& p, PassManager& pm) {
  Fuser f(p, pm);
  f.each_producer([&](int k, const std::vector<int>& rs) {
    const Kernel& P = p.kernels[k];
    if (p.buffers[P.out].kind != Buffer::Temp || rs.size() != 1 || !has_reduce(P.body)) return false;
    const Kernel& C = p.kernels[rs[0]];
    const Shape& s = p.buffers[P.out].shape;
    if (has_reduce(C.body) || count_loads(C.body, P.out) != 1) return false;
    bool view = p.buffers[C.out].shape != s;
    if (view && (p.buffers[C.out].kind != Buffer::Temp || !reads_as_view(p, C, P.out, s))) return false;
    if (too_deep(C.body, P.body) || f.too_wide(k, rs[0])) return false;
    std::vector<const Expr*> loads;
    collect_loads(C.body, loads);
    for (const Expr* ld : loads)  // the reader must take element i of P for its element i
      if (ld->buf == P.out && !view && !is_identity_index(*ld)) return false;
    if (!pm.request("fuse-epilogue", C.name + " into " + P.name, f.merged_names(k, rs[0]))) return false;
    if (view) {
      relayout(p, rs[0], s);
      p.kernels[rs[0]].body = own_index_loads(p.kernels[rs[0]].body, P.out, s.size());
    }
    f.merge(k, rs, pm.faulty());
    f.done();
    return true;
  });
}

// A reduction whose output has a size-1 dim just before the last (an exporter's sequence-first
// attention: [L, 1, E]) is computed over its shape without size-1 dims: a host tile blocks rows
// of the dim before the last, and with one row each FMA pair cost a broadcast load.
void squeeze_reduction_rows(Plan& p, PassManager& pm) {
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const Kernel& K = p.kernels[k];
    const Buffer& b = p.buffers[K.out];
    const Shape& s = b.shape;
    if (!has_reduce(K.body) || b.kind != Buffer::Temp || !b.dims.empty() || s.size() < 3 || s[s.size() - 2] != 1)
      continue;
    Shape squeezed;
    for (int64_t d : s)
      if (d != 1) squeezed.push_back(d);
    if (squeezed.size() < 2 || !pm.request("squeeze-rows", K.name + " over " + shape_str(squeezed), K.nodes)) continue;
    relayout(p, static_cast<int>(k), squeezed);
    pm.finished();
  }
}

void remove_dead_kernels(Plan& p) {
  // One sweep from the last kernel back: a kernel's readers all come after it, so by the time
  // it is looked at, every reader that will go has gone.
  std::vector<int> reads(p.buffers.size(), 0);  // live kernels reading each buffer
  std::vector<std::vector<int>> ins(p.kernels.size());
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    ins[k] = kernel_inputs(p.kernels[k]);
    for (int b : ins[k]) ++reads[b];
  }
  std::vector<char> checked(p.buffers.size(), 0);
  for (const Plan::Check& c : p.checks) checked[c.buf] = 1;
  std::vector<char> dead(p.kernels.size(), 0);
  for (size_t k = p.kernels.size(); k-- > 0;) {
    int out = p.kernels[k].out;
    if (p.buffers[out].kind == Buffer::Temp && reads[out] == 0 && !checked[out]) {
      dead[k] = 1;
      for (int b : ins[k]) --reads[b];
    }
  }
  size_t to = 0;
  for (size_t k = 0; k < p.kernels.size(); ++k)
    if (!dead[k]) {
      if (to != k) p.kernels[to] = std::move(p.kernels[k]);
      ++to;
    }
  p.kernels.resize(to);
}

}  // namespace lockstep
