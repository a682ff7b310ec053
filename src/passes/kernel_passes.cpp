// Fusion decisions on the lowered plan. Each merges one producer kernel into its reader(s);
// the merged kernel computes exactly the same expression, so only rounding-free
// restructuring happens here.
#include <algorithm>

#include "passes/passes.h"
#include "verify/faults.h"

namespace lockstep {

using namespace kir;

namespace {

std::vector<std::vector<int>> readers_of(const Plan& p) {
  std::vector<std::vector<int>> readers(p.buffers.size());
  for (size_t k = 0; k < p.kernels.size(); ++k)
    for (int b : kernel_inputs(p.kernels[k])) readers[b].push_back(static_cast<int>(k));
  return readers;
}

// A value path made only of loads, constants and selects: a pure index remap (a view).
bool is_view(const ExprP& e) {
  if (e->op == Op::Load || e->op == Op::Const) return true;
  if (e->op == Op::Select) return is_view(e->args[1]) && is_view(e->args[2]);
  return false;
}

bool has_select(const ExprP& e) {
  if (e->op == Op::Select) return true;
  for (const ExprP& a : e->args)
    if (has_select(a)) return true;
  return false;
}

// Load at index (v0, v1, ...) of its own shape; a size-1 dim may be indexed by anything (it is 0).
bool is_identity_index(const Expr& ld) {
  if (ld.flat) return false;
  for (size_t k = 0; k < ld.args.size(); ++k) {
    const Expr& a = *ld.args[k];
    if (ld.shape[k] != 1 && !(a.op == Op::Var && a.i == static_cast<int64_t>(k))) return false;
  }
  return true;
}

int count_loads(const ExprP& e, int buf) {
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
    return substitute(prod.body, vars, reader_rank - static_cast<int>(s.size()));
  }
  return substitute(prod.body, ld.args, reader_rank - static_cast<int>(s.size()));
}

std::vector<std::string> merged_nodes(const Kernel& a, const Kernel& b) {
  std::vector<std::string> n = a.nodes;
  for (const std::string& x : b.nodes)
    if (std::find(n.begin(), n.end(), x) == n.end()) n.push_back(x);
  return n;
}

// `faulty`: the planted bug of --inject-fault pass:N, the reader's index off by one.
void inline_into(Plan& p, int prod, int reader, bool faulty) {
  const Kernel& P = p.kernels[prod];
  Kernel& C = p.kernels[reader];
  int rank = static_cast<int>(p.buffers[C.out].shape.size());
  C.body = replace_loads(C.body, P.out, [&](const Expr& ld) {
    ExprP moved = faulty ? off_by_one(ld) : nullptr;
    return inlined_at(p, P, moved ? *moved : ld, rank);
  });
  C.nodes = merged_nodes(P, C);
}

// Runs `try_one` on each kernel in order, re-reading the plan after every merge.
template <class F>
void each_producer(Plan& p, F try_one) {
  for (size_t k = 0; k < p.kernels.size();) {
    if (!try_one(static_cast<int>(k), readers_of(p))) ++k;
  }
}

void erase_kernel(Plan& p, int k) { p.kernels.erase(p.kernels.begin() + k); }

}  // namespace

void inline_views(Plan& p, PassManager& pm) {
  each_producer(p, [&](int k, const std::vector<std::vector<int>>& readers) {
    const Kernel& P = p.kernels[k];
    const std::vector<int>& rs = readers[P.out];
    if (p.buffers[P.out].kind != Buffer::Temp || rs.empty() || !is_view(P.body)) return false;
    for (int r : rs)  // padding stays materialised ahead of a reduction: no bounds checks inside it
      if (find_reduce(p.kernels[r].body) && has_select(P.body)) return false;
    if (!pm.request("inline-view", P.name + " read through by " + std::to_string(rs.size()) + " kernel(s)", P.nodes))
      return false;
    for (int r : rs) inline_into(p, k, r, pm.faulty());
    erase_kernel(p, k);
    pm.finished();
    return true;
  });
}

void fuse_elementwise(Plan& p, PassManager& pm) {
  each_producer(p, [&](int k, const std::vector<std::vector<int>>& readers) {
    const Kernel& P = p.kernels[k];
    const std::vector<int>& rs = readers[P.out];
    if (p.buffers[P.out].kind != Buffer::Temp || rs.size() != 1 || find_reduce(P.body)) return false;
    const Kernel& C = p.kernels[rs[0]];
    bool cheap = !is_transcendental(P.body) && !has_select(P.body);
    if (find_reduce(C.body) && !cheap) return false;  // would recompute per reduction step
    if (count_loads(C.body, P.out) > 1 && !cheap) return false;
    if (!pm.request("fuse-elementwise", P.name + " into " + C.name, merged_nodes(P, C))) return false;
    inline_into(p, k, rs[0], pm.faulty());
    erase_kernel(p, k);
    pm.finished();
    return true;
  });
}

void fuse_epilogues(Plan& p, PassManager& pm) {
  each_producer(p, [&](int k, const std::vector<std::vector<int>>& readers) {
    const Kernel& P = p.kernels[k];
    const std::vector<int>& rs = readers[P.out];
    if (p.buffers[P.out].kind != Buffer::Temp || rs.size() != 1 || !find_reduce(P.body)) return false;
    const Kernel& C = p.kernels[rs[0]];
    const Shape& s = p.buffers[P.out].shape;
    if (find_reduce(C.body) || p.buffers[C.out].shape != s || count_loads(C.body, P.out) != 1) return false;
    std::vector<const Expr*> loads;
    collect_loads(C.body, loads);
    for (const Expr* ld : loads)  // the reader must take element i of P for its element i
      if (ld->buf == P.out && !is_identity_index(*ld)) return false;
    if (!pm.request("fuse-epilogue", C.name + " into " + P.name, merged_nodes(P, C))) return false;
    inline_into(p, k, rs[0], pm.faulty());
    erase_kernel(p, k);
    pm.finished();
    return true;
  });
}

void remove_dead_kernels(Plan& p) {
  bool changed = true;
  while (changed) {
    changed = false;
    auto readers = readers_of(p);
    for (size_t k = p.kernels.size(); k-- > 0;) {
      int out = p.kernels[k].out;
      bool checked = std::any_of(p.checks.begin(), p.checks.end(), [&](const Plan::Check& c) { return c.buf == out; });
      if (p.buffers[out].kind == Buffer::Temp && readers[out].empty() && !checked) {
        erase_kernel(p, static_cast<int>(k));
        changed = true;
      }
    }
  }
}

}  // namespace lockstep
