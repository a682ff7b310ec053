#include "passes/window.h"

#include <algorithm>
#include <map>

#include "passes/passes.h"

namespace lockstep::kir {

namespace {

uint64_t bit(int64_t v) { return uint64_t{1} << v; }

// e as rest + sum over v of k[v] * Var(v) for the vars in `tracked` (a var_mask), where rest
// names none of them; nullopt where one occurs other than in sums and products by constants.
struct Linear {
  ExprP rest;
  std::map<int, int64_t> k;
};

std::optional<Linear> linear(const ExprP& e, uint64_t tracked) {
  if (!(e->var_mask & tracked)) return Linear{e, {}};
  if (e->op == Op::Var) return Linear{icst(0), {{static_cast<int>(e->i), 1}}};
  if (e->op != Op::Binary || e->type != DType::i64) return std::nullopt;
  if (e->fn == Fn::Add || e->fn == Fn::Sub) {
    std::optional<Linear> a = linear(e->args[0], tracked), b = linear(e->args[1], tracked);
    if (!a || !b) return std::nullopt;
    Linear r{binary(e->fn, a->rest, b->rest), a->k};
    for (auto [v, c] : b->k)
      if (__builtin_add_overflow(r.k[v], e->fn == Fn::Add ? c : -c, &r.k[v])) return std::nullopt;
    return r;
  }
  if (e->fn != Fn::Mul) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const ExprP& c = e->args[side];
    if (c->op != Op::Const) continue;
    std::optional<Linear> a = linear(e->args[1 - side], tracked);
    if (!a) return std::nullopt;
    for (auto& [v, x] : a->k)
      if (__builtin_mul_overflow(x, c->i, &x)) return std::nullopt;
    return Linear{binary(Fn::Mul, a->rest, c), a->k};
  }
  return std::nullopt;
}

// The one load of buffer `buf` in e, or null where e loads it other than once.
const Expr* only_load(const ExprP& e, int buf) {
  std::vector<const Expr*> loads;
  collect_loads(e, loads);
  const Expr* found = nullptr;
  for (const Expr* ld : loads)
    if (ld->buf == buf) {
      if (found) return nullptr;
      found = ld;
    }
  return found;
}

void terms_of(const ExprP& e, std::vector<ExprP>& out) {  // a sum taken apart
  if (e->op == Op::Binary && e->fn == Fn::Add && e->type == DType::i64) {
    terms_of(e->args[0], out);
    terms_of(e->args[1], out);
  } else {
    out.push_back(e);
  }
}

ExprP sum(const std::vector<ExprP>& terms) {
  ExprP s;
  for (const ExprP& t : terms) s = s ? add(s, t) : t;
  return s ? s : icst(0);
}

// A flat index into buffer b as row * (b's last dim) + last, both in range at every point of k's
// loops: b's index, the row unflattened over b's leading dims (fixed at every length).
std::optional<std::vector<ExprP>> split_flat(const Plan& p, const Kernel& k, int b, const ExprP& flat) {
  const Buffer& buf = p.buffers[b];
  size_t rank = buf.shape.size();
  if (rank == 0) return std::nullopt;
  ExprP last_dim = dim_expr(p, b, rank - 1);
  std::vector<ExprP> terms, row, last;
  terms_of(flat, terms);
  for (const ExprP& t : terms) {
    bool scaled = t->op == Op::Binary && t->fn == Fn::Mul && (same(t->args[1], last_dim) || same(t->args[0], last_dim));
    if (!scaled) last.push_back(t);
    else row.push_back(same(t->args[1], last_dim) ? t->args[0] : t->args[1]);
  }
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (dim_expr(p, b, d)->op != Op::Const) return std::nullopt;
    rows *= buf.shape[d];
  }
  ExprP r = sum(row), l = sum(last);
  if (!index_within(p, k, r, icst(rows)) || !index_within(p, k, l, last_dim)) return std::nullopt;
  std::vector<ExprP> index;
  int64_t stride = rows, outer = 1;  // r's stride at dim d; the dims before d
  for (size_t d = 0; d + 1 < rank; ++d) {
    stride /= buf.shape[d];
    ExprP c = stride == 1 ? r : binary(Fn::Div, r, icst(stride));
    index.push_back(buf.shape[d] == 1 ? icst(0) : outer == 1 ? c : binary(Fn::Mod, c, icst(buf.shape[d])));
    outer *= buf.shape[d];
  }
  index.push_back(l);
  return index;
}

}  // namespace

int64_t WindowShape::rows() const {
  int64_t n = 1;
  for (int64_t e : row_extents) n *= e;
  return n;
}

std::optional<WindowShape> window_shape(const Plan& p, const Kernel& k, int buf) {
  const Expr* red = find_reduce(k.body);
  size_t r = p.buffers[k.out].shape.size();
  int first = red ? static_cast<int>(red->i) : 0, vars = red ? first + static_cast<int>(red->shape.size()) : 0;
  if (!red || r < 2 || vars > 62) return std::nullopt;
  const Expr* ld = only_load(k.body, buf);
  if (!ld || only_load(red->args[0], buf) != ld || ld->args.empty()) return std::nullopt;
  uint64_t col = bit(static_cast<int64_t>(r) - 1), row = bit(static_cast<int64_t>(r) - 2), terms = 0;
  for (int v = first; v < vars; ++v) terms |= bit(v);
  if (ld->var_mask & (row | bit(63))) return std::nullopt;
  std::vector<ExprP> index = ld->args;
  if (ld->flat) {
    std::optional<std::vector<ExprP>> split = split_flat(p, k, buf, ld->args[0]);
    if (!split) return std::nullopt;
    index = *split;
  }
  std::optional<Linear> lin = linear(index.back(), col | terms);
  if (!lin) return std::nullopt;
  WindowShape w;
  w.lead.assign(index.begin(), index.end() - 1);
  w.start = lin->rest;
  w.stride = lin->k[static_cast<int>(r) - 1];
  if (w.stride < 1) return std::nullopt;
  for (auto [v, c] : lin->k) {
    if (v == static_cast<int>(r) - 1 || c == 0) continue;
    if (w.tap >= 0 || c < 0) return std::nullopt;  // two taps, or one read backwards
    w.tap = v;
    w.dilation = c;
    w.taps = red->shape[static_cast<size_t>(v - first)];
  }
  uint64_t moving = col | (w.tap >= 0 ? bit(w.tap) : 0);
  for (const ExprP& e : w.lead)
    if (e->var_mask & moving) return std::nullopt;
  for (int v = first; v < vars; ++v)
    if (v != w.tap) {
      w.row_vars.push_back(v);
      w.row_extents.push_back(red->shape[static_cast<size_t>(v - first)]);
    }
  return w;
}

}  // namespace lockstep::kir

// Producers computed inside the conv that reads them, on a target whose host tiles stage their
// input windows (TargetDesc::window_bytes). A conv's input is often a padded copy (of a
// LeakyRelu): a kernel of its own, one pass over memory to write and one to read. Absorbed, the
// copy is made per tile, of the window the tile reads (passes/window.h), and only the conv
// runs. The producer's expression is the same, evaluated once per element of each window, and
// each sum reads the same values in the same order: the bytes do not change.
namespace lockstep {

using namespace kir;

namespace {

// Whether P may run inside C's tiles: elementwise, cheap to compute again for each row block
// that stages it (no exp, log, tanh, ...), computing in float32 and stored as computed.
bool absorbable(const Plan& p, const Kernel& P) {
  const Buffer& b = p.buffers[P.out];
  return b.kind == Buffer::Temp && !find_reduce(P.body) && !P.materialise && !P.window.value &&
         !is_transcendental(P.body) && b.dtype == DType::f32 && P.body->type == DType::f32;
}

std::vector<std::string> merged_nodes(const Kernel& P, const Kernel& C) {
  std::vector<std::string> n = P.nodes;
  for (const std::string& x : C.nodes)
    if (std::find(n.begin(), n.end(), x) == n.end()) n.push_back(x);
  return n;
}

// The planted bug of --inject-fault pass:N: the producer's loads moved one element along.
ExprP corrupted(const ExprP& value, const PassManager& pm) {
  std::vector<const Expr*> loads;
  collect_loads(value, loads);
  for (const Expr* ld : loads)
    if (pm.fault->corrupt_load(*ld))
      return replace_loads(value, ld->buf, [&](const Expr& e) {
        ExprP bad = pm.fault->corrupt_load(e);
        return bad ? bad : std::make_shared<const Expr>(e);
      });
  return value;
}

}  // namespace

void absorb_windows(Plan& p, const TargetDesc& t, PassManager* pm) {
  if (t.gpu || t.window_bytes <= 0) return;
  std::vector<int> writer(p.buffers.size(), -1), readers(p.buffers.size(), 0);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    writer[p.kernels[k].out] = static_cast<int>(k);
    for (int b : kernel_inputs(p.kernels[k])) ++readers[b];
  }
  for (const Plan::Check& c : p.checks) ++readers[c.buf];
  for (size_t c = 0; c < p.kernels.size(); ++c) {
    Kernel& C = p.kernels[c];
    if (C.schedule.loops != Schedule::Loops::Host || C.window.value || !find_reduce(C.body)) continue;
    // A window serves the row blocks of one tile, which must follow each other on a thread.
    if (C.schedule.tile_at != static_cast<int64_t>(p.buffers[C.out].shape.size()) - 2) continue;
    for (int b : kernel_inputs(C)) {
      int w = writer[b];
      if (w < 0 || readers[b] != 1 || !absorbable(p, p.kernels[w])) continue;
      std::optional<WindowShape> ws = window_shape(p, C, b);
      int64_t bytes = ws ? ws->rows() * ws->width(C.schedule.lanes) * 4 : 0;
      if (!ws || bytes > t.window_bytes) continue;
      const Kernel& P = p.kernels[w];
      std::vector<std::string> nodes = merged_nodes(P, C);
      if (pm && !pm->request("absorb-window", P.name + " computed in " + C.name + "'s tiles, " + std::to_string(bytes) +
                                                  " bytes a window", nodes))
        break;  // the first candidate or none, so the applications are numbered alike at every limit
      C.window = {b, pm && pm->faulty() ? corrupted(P.body, *pm) : P.body};
      C.nodes = std::move(nodes);
      // P goes now (the plan is whole at each application, as --verify-each checks it).
      p.kernels.erase(p.kernels.begin() + w);
      for (int& k : writer) k = k > w ? k - 1 : k == w ? -1 : k;
      --c;
      if (pm) pm->finished();
      break;  // one window a kernel
    }
  }
}

}  // namespace lockstep
