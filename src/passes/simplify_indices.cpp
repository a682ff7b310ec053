// Index arithmetic folded by the ranges of the loop variables. Views composed by fusion (a
// channel flip read through a Split and a Slice) unflatten a flat index with / and %, which
// cost a division per element and keep the host compiler from vectorising a conv's inner loop:
// with v2 in [0, 1024), ((v3 * 1024 + v2) / 1024) % 128 is v3 % 128, and that is v3 where v3 <
// 128. Each rewrite gives the same value at every point of the kernel's loops, so the bytes
// are unchanged; a rewrite is kept only where an operation goes away.
#include <optional>
#include <unordered_map>

#include "passes/passes.h"

namespace lockstep {

using namespace kir;

namespace {

// [lo, hi]; unbounded above or below where a variable's extent is not known.
struct Range {
  std::optional<int64_t> lo, hi;
};

std::optional<int64_t> mul_checked(std::optional<int64_t> a, int64_t k) {
  int64_t r;
  if (!a || __builtin_mul_overflow(*a, k, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> add_checked(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t r;
  if (!a || !b || __builtin_add_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

// Structural equality that gives up (false: kept apart, which is always safe) after `budget`
// nodes: a fused index tree held as a DAG can be exponentially large as a tree.
bool equal(const ExprP& a, const ExprP& b, int& budget) {
  if (a == b) return true;
  if (--budget < 0 || a->op != b->op || a->fn != b->fn || a->type != b->type || a->i != b->i || a->f != b->f ||
      a->buf != b->buf || a->flat != b->flat || a->shape != b->shape || a->args.size() != b->args.size())
    return false;
  for (size_t k = 0; k < a->args.size(); ++k)
    if (!equal(a->args[k], b->args[k], budget)) return false;
  return true;
}

// c + sum of k * atom, atoms being the subtrees that are not sums or constant multiples.
struct Linear {
  int64_t c = 0;
  std::vector<std::pair<ExprP, int64_t>> terms;
  void add(const ExprP& atom, int64_t k) {
    for (auto& [a, m] : terms)
      if (int budget = 64; equal(a, atom, budget)) {
        m += k;
        return;
      }
    terms.emplace_back(atom, k);
  }
};

bool is_index(const ExprP& e) { return e->type == DType::i64; }
bool int_const(const ExprP& e) { return e->op == Op::Const && is_index(e); }

class Simplifier {
 public:
  explicit Simplifier(std::vector<Range> vars) : vars_(std::move(vars)) {}

  // `decide`: comparisons may become constants. Not in the condition of a select between
  // floats, whose removal would change the arithmetic printed (a masked term summed by a plain
  // add would become a product stepped by fma), and might at one length and not another.
  ExprP run(const ExprP& e, bool decide = true) {
    if (e->op == Op::Const || e->op == Op::Var) return e;
    auto& done = done_[decide];
    auto it = done.find(e.get());
    if (it != done.end()) return it->second;
    std::vector<ExprP> args;
    bool changed = false;
    for (size_t k = 0; k < e->args.size(); ++k) {
      bool float_choice = e->op == Op::Select && k == 0 && !is_index(e);
      args.push_back(run(e->args[k], decide && !float_choice));
      changed |= args.back() != e->args[k];
    }
    ExprP out = changed ? with_args(*e, args) : e;
    if (out->op == Op::Binary && is_index(out->args[0]) && is_index(out->args[1])) {
      if (ExprP r = fold(*out, decide)) out = r;
    }
    done.emplace(e.get(), out);
    return out;
  }

 private:
  // x / c, x % c (c > 0, x never negative, so C's truncation is the floor), x < y, x <= y.
  ExprP fold(const Expr& e, bool decide) {
    const ExprP &a = e.args[0], &b = e.args[1];
    if ((e.fn == Fn::Div || e.fn == Fn::Mod) && int_const(b) && b->i > 0) {
      const Linear& x = linear(a);
      Range rx = range(x);
      if (!rx.lo || *rx.lo < 0) return nullptr;
      int64_t c = b->i;
      Linear q, r;  // x = c * q + r with r in [0, c) at every point: x / c = q, x % c = r
      q.c = x.c / c - (x.c % c < 0), r.c = x.c - q.c * c;  // floor: r.c in [0, c)
      for (const auto& [atom, k] : x.terms) (k % c == 0 ? q.add(atom, k / c) : r.add(atom, k));
      Range rr = range(r);
      if (!rr.lo || !rr.hi || *rr.lo < 0 || *rr.hi >= c) return nullptr;
      return build(e.fn == Fn::Div ? q : r);
    }
    if (decide && (e.fn == Fn::Lt || e.fn == Fn::Le)) {  // decided where a - b keeps one sign
      Linear d = linear(a);
      if (!add_scaled(d, linear(b), -1)) return nullptr;
      Range rd = range(d);
      bool lt = e.fn == Fn::Lt;
      if (rd.hi && (lt ? *rd.hi < 0 : *rd.hi <= 0)) return cst(1, DType::boolean);
      if (rd.lo && (lt ? *rd.lo >= 0 : *rd.lo > 0)) return cst(0, DType::boolean);
    }
    return nullptr;
  }

  // Memoised by node, the node held so that its address is not reused while the pass runs.
  const Linear& linear(const ExprP& e) {
    auto it = linear_.find(e.get());
    if (it != linear_.end()) return it->second.second;
    Linear l;
    if (!expand(e, l)) l = Linear{}, l.add(e, 1);
    return linear_.emplace(e.get(), std::make_pair(e, std::move(l))).first->second.second;
  }

  // e as a Linear over smaller atoms; false where it is an atom itself or a sum overflows.
  bool expand(const ExprP& e, Linear& l) {
    if (int_const(e)) return l.c = e->i, true;
    if (e->op != Op::Binary || !is_index(e)) return false;
    if (e->fn == Fn::Add || e->fn == Fn::Sub) {
      l = linear(e->args[0]);
      return add_scaled(l, linear(e->args[1]), e->fn == Fn::Sub ? -1 : 1);
    }
    for (int side = 0; side < 2 && e->fn == Fn::Mul; ++side)
      if (int_const(e->args[side])) return add_scaled(l, linear(e->args[1 - side]), e->args[side]->i);
    return false;
  }

  static bool add_scaled(Linear& l, const Linear& x, int64_t k) {
    int64_t v;
    if (__builtin_mul_overflow(x.c, k, &v) || __builtin_add_overflow(l.c, v, &l.c)) return false;
    for (const auto& [atom, m] : x.terms) {
      if (__builtin_mul_overflow(m, k, &v)) return false;
      l.add(atom, v);
    }
    return true;
  }

  Range range(const Linear& l) {
    Range r{l.c, l.c};
    for (const auto& [atom, k] : l.terms) {
      Range a = range(atom);
      std::optional<int64_t> lo = k >= 0 ? a.lo : a.hi, hi = k >= 0 ? a.hi : a.lo;
      r.lo = add_checked(r.lo, mul_checked(lo, k));
      r.hi = add_checked(r.hi, mul_checked(hi, k));
    }
    return r;
  }

  // An atom's range: a var's extent, x / c and x % c from x's; anything else unknown.
  Range range(const ExprP& e) {
    if (e->op == Op::Var) return e->i < static_cast<int64_t>(vars_.size()) ? vars_[e->i] : Range{};
    auto it = range_.find(e.get());
    if (it != range_.end()) return it->second.second;
    Range r;
    if (e->op == Op::Binary && is_index(e) && (e->fn == Fn::Div || e->fn == Fn::Mod) && int_const(e->args[1]) &&
        e->args[1]->i > 0) {
      Range x = range(linear(e->args[0]));
      int64_t c = e->args[1]->i;
      if (x.lo && *x.lo >= 0)
        r = e->fn == Fn::Mod ? Range{0, x.hi && *x.hi < c ? *x.hi : c - 1}
                             : Range{*x.lo / c, x.hi ? std::optional<int64_t>(*x.hi / c) : std::nullopt};
    } else if (const Linear& l = linear(e); l.terms.size() != 1 || l.terms[0].first != e) {
      r = range(l);  // a sum or a constant multiple, over smaller atoms
    }
    range_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  // The sum in term order, the constant last (as lowering writes offsets).
  static ExprP build(const Linear& l) {
    ExprP s;
    for (const auto& [atom, k] : l.terms) {
      if (k == 0) continue;
      ExprP t = k == 1 ? atom : mul(atom, icst(k));
      s = s ? add(s, t) : t;
    }
    if (!s) return icst(l.c);
    return l.c ? add(s, icst(l.c)) : s;
  }

  std::vector<Range> vars_;
  std::unordered_map<const Expr*, ExprP> done_[2];  // by `decide`
  std::unordered_map<const Expr*, std::pair<ExprP, Linear>> linear_;
  std::unordered_map<const Expr*, std::pair<ExprP, Range>> range_;
};

// Output vars over the output's dims (unbounded above where a dim follows a symbol), then the
// reduction's vars over its extents.
std::vector<Range> var_ranges(const Plan& p, const Kernel& k) {
  const Buffer& out = p.buffers[k.out];
  std::vector<Range> r;
  for (size_t d = 0; d < out.shape.size(); ++d) {
    bool fixed = out.dims.empty() || out.dims[d]->op == Op::Const;
    r.push_back({0, fixed ? std::optional<int64_t>(out.shape[d] - 1) : std::nullopt});
  }
  const Expr* red = find_reduce(k.body);
  if (red && red->i == static_cast<int64_t>(r.size()))
    for (int64_t extent : red->shape) r.push_back({0, extent - 1});
  return r;
}

}  // namespace

void simplify_indices(Plan& p) {
  for (Kernel& k : p.kernels) {
    Simplifier s(var_ranges(p, k));
    k.body = s.run(k.body);
  }
}

}  // namespace lockstep
