// Index arithmetic folded by the ranges of the loop variables. Views composed by fusion (a
// channel flip read through a Split and a Slice) unflatten a flat index with / and %, which
// cost a division per element and keep the host compiler from vectorising a conv's inner loop:
// with v2 in [0, 1024), ((v3 * 1024 + v2) / 1024) % 128 is v3 % 128, and that is v3 where v3 <
// 128. In a symbolic plan the bounds are affine in the symbols (v2 over a dim T lies in
// [0, T - 1]), so (v3 * T + v2) / T is v3 at every length. Each rewrite gives the same value at
// every point of the kernel's loops, so the bytes are unchanged; a rewrite is kept only where
// an operation goes away.
#include <map>
#include <optional>
#include <unordered_map>

#include "passes/generalise.h"
#include "passes/passes.h"

namespace lockstep {

using namespace kir;

namespace {

bool is_index(const ExprP& e) { return e->type == DType::i64; }
bool int_const(const ExprP& e) { return e->op == Op::Const && is_index(e); }

// A bound affine in the plan's symbols (generalise's Affine: c + sum over j of k[j] * symbol
// j, missing entries 0; a number in a fixed plan). Symbols are lengths, never negative.
using OptBound = std::optional<Affine>;

OptBound number(int64_t c) { return Affine{c, {}}; }

OptBound unit(size_t j, int64_t m) {
  Affine b;
  b.k.assign(j + 1, 0);
  b.k[j] = m;
  return b;
}

OptBound plus(const OptBound& a, const OptBound& b) {
  if (!a || !b) return std::nullopt;
  Affine r = *a;
  if (__builtin_add_overflow(r.c, b->c, &r.c)) return std::nullopt;
  if (r.k.size() < b->k.size()) r.k.resize(b->k.size(), 0);
  for (size_t j = 0; j < b->k.size(); ++j)
    if (__builtin_add_overflow(r.k[j], b->k[j], &r.k[j])) return std::nullopt;
  return r;
}

OptBound times(const OptBound& a, int64_t m) {
  if (!a) return std::nullopt;
  Affine r = *a;
  if (__builtin_mul_overflow(r.c, m, &r.c)) return std::nullopt;
  for (int64_t& k : r.k)
    if (__builtin_mul_overflow(k, m, &k)) return std::nullopt;
  return r;
}

// The bound's value where it has no symbol part.
std::optional<int64_t> value(const OptBound& a) {
  if (!a || !a->fixed()) return std::nullopt;
  return a->c;
}

// Whether the bound is >= 0 at every value of the symbols (each >= 0).
bool nonneg(const OptBound& a) {
  if (!a || a->c < 0) return false;
  for (int64_t k : a->k)
    if (k < 0) return false;
  return true;
}

// [lo, hi]; unbounded below or above where not known.
struct Range {
  OptBound lo, hi;
};

Range scaled(const Range& a, int64_t m) {
  return m >= 0 ? Range{times(a.lo, m), times(a.hi, m)} : Range{times(a.hi, m), times(a.lo, m)};
}

// Whether every value of r lies in [0, d).
bool below(const Range& r, const OptBound& d) { return nonneg(r.lo) && nonneg(plus(plus(d, number(-1)), times(r.hi, -1))); }

// k * atom, times symbol `sym` where sym >= 0 (a symbolic plan's strides: v1 * T).
struct Term {
  ExprP atom;
  int64_t k;
  int sym;
};

// c + sum of terms, atoms being the subtrees that are not sums or multiples by a constant or
// a symbol.
struct Linear {
  int64_t c = 0;
  std::vector<Term> terms;
  bool overflowed = false;  // a coefficient left int64: the sum is not to be used
  void add(const ExprP& atom, int64_t k, int sym) {
    for (Term& t : terms)
      if (t.sym == sym && same(t.atom, atom, 64)) {
        overflowed |= __builtin_add_overflow(t.k, k, &t.k);
        return;
      }
    terms.push_back({atom, k, sym});
  }
};

class Simplifier {
 public:
  Simplifier(const Plan& p, const Kernel& k) : symbol_buf_(p.symbol_buf), symbols_(p.symbols.size()) { var_ranges(p, k); }

  // Whether index e lies in [0, d) at every point of the kernel's loops.
  bool within(const ExprP& e, const ExprP& d) { return below(range(linear(e)), affine(d)); }

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
  // Output vars over the output's dims (up to an affine dim's value less one in a symbolic
  // plan, unbounded above where a dim is not affine), then the reduction's vars over its extents.
  void var_ranges(const Plan& p, const Kernel& k) {
    const Buffer& out = p.buffers[k.out];
    for (size_t d = 0; d < out.shape.size(); ++d) {
      bool fixed = out.dims.empty() || out.dims[d]->op == Op::Const;
      vars_.push_back({number(0), fixed ? number(out.shape[d] - 1) : plus(affine(out.dims[d]), number(-1))});
    }
    const Expr* red = find_reduce(k.body);
    if (red && red->i == static_cast<int64_t>(vars_.size()))
      for (int64_t extent : red->shape) vars_.push_back({number(0), number(extent - 1)});
  }

  // Symbol j where e is the plan's load of it, else -1.
  int symbol(const ExprP& e) {
    if (e->op != Op::Load || symbol_buf_ < 0 || e->buf != symbol_buf_ || e->args.size() != 1 || !int_const(e->args[0]))
      return -1;
    int64_t j = e->args[0]->i;
    if (j < 0 || static_cast<size_t>(j) >= symbols_) return -1;
    if (!symbol_expr_.count(j)) symbol_expr_.emplace(j, e);
    return static_cast<int>(j);
  }

  // e as a bound in the symbols where it is affine in them.
  OptBound affine(const ExprP& e) {
    const Linear& l = linear(e);
    OptBound b = number(l.c);
    for (const Term& t : l.terms) {
      int j = t.sym < 0 ? symbol(t.atom) : -1;
      if (j < 0) return std::nullopt;
      b = plus(b, unit(static_cast<size_t>(j), t.k));
    }
    return b;
  }

  // x / d, x % d (d a positive constant or a symbol, x never negative, so C's truncation is
  // the floor), x < y, x <= y.
  ExprP fold(const Expr& e, bool decide) {
    const ExprP &a = e.args[0], &b = e.args[1];
    if (e.fn == Fn::Div || e.fn == Fn::Mod) {
      bool by_const = int_const(b) && b->i > 0;
      int j = by_const ? -1 : symbol(b);
      if (!by_const && j < 0) return nullptr;
      const Linear& x = linear(a);
      if (!nonneg(range(x).lo)) return nullptr;
      Linear q, r;  // x = d * q + r with r in [0, d) at every point: x / d = q, x % d = r
      if (by_const) {
        int64_t c = b->i;
        q.c = x.c / c - (x.c % c < 0), r.c = x.c - q.c * c;  // floor: r.c in [0, c)
        for (const Term& t : x.terms) (t.k % c == 0 ? q.add(t.atom, t.k / c, t.sym) : r.add(t.atom, t.k, t.sym));
      } else {
        r.c = x.c;
        for (const Term& t : x.terms) {
          if (t.sym == j) q.add(t.atom, t.k, -1);
          else if (t.sym < 0 && symbol(t.atom) == j) {
            if (__builtin_add_overflow(q.c, t.k, &q.c)) return nullptr;
          } else {
            r.add(t.atom, t.k, t.sym);
          }
        }
      }
      if (q.overflowed || r.overflowed || !below(range(r), by_const ? number(b->i) : unit(static_cast<size_t>(j), 1)))
        return nullptr;
      return build(e.fn == Fn::Div ? q : r);
    }
    if (decide && (e.fn == Fn::Lt || e.fn == Fn::Le)) {  // decided where a - b keeps one sign
      Linear d = linear(a);
      if (!add_scaled(d, linear(b), -1)) return nullptr;
      Range rd = range(d);
      bool lt = e.fn == Fn::Lt;
      if (nonneg(plus(times(rd.hi, -1), number(lt ? -1 : 0)))) return cst(1, DType::boolean);
      if (nonneg(plus(rd.lo, number(lt ? 0 : -1)))) return cst(0, DType::boolean);
    }
    return nullptr;
  }

  // Memoised by node, the node held so that its address is not reused while the pass runs.
  const Linear& linear(const ExprP& e) {
    auto it = linear_.find(e.get());
    if (it != linear_.end()) return it->second.second;
    Linear l;
    if (!expand(e, l)) l = Linear{}, l.add(e, 1, -1);
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
    if (e->fn != Fn::Mul) return false;
    for (int side = 0; side < 2; ++side)
      if (int_const(e->args[side])) return add_scaled(l, linear(e->args[1 - side]), e->args[side]->i);
    for (int side = 0; side < 2; ++side) {  // a multiple of a symbol: m * S
      const Linear& s = linear(e->args[side]);
      if (s.c == 0 && s.terms.size() == 1 && s.terms[0].sym < 0 && symbol(s.terms[0].atom) >= 0)
        return times_symbol(l, linear(e->args[1 - side]), s.terms[0].k, symbol(s.terms[0].atom));
    }
    return false;
  }

  static bool add_scaled(Linear& l, const Linear& x, int64_t k) {
    int64_t v;
    if (__builtin_mul_overflow(x.c, k, &v) || __builtin_add_overflow(l.c, v, &l.c)) return false;
    for (const Term& t : x.terms) {
      if (__builtin_mul_overflow(t.k, k, &v)) return false;
      l.add(t.atom, v, t.sym);
    }
    return !l.overflowed;
  }

  // l = x * m * symbol j, where no term of x has a symbol factor already.
  bool times_symbol(Linear& l, const Linear& x, int64_t m, int j) {
    int64_t v;
    if (__builtin_mul_overflow(x.c, m, &v)) return false;
    if (v) l.add(symbol_expr_.at(j), v, -1);
    for (const Term& t : x.terms) {
      if (t.sym >= 0 || __builtin_mul_overflow(t.k, m, &v)) return false;
      l.add(t.atom, v, j);
    }
    return !l.overflowed;
  }

  Range range(const Linear& l) {
    Range r{number(l.c), number(l.c)};
    for (const Term& t : l.terms) {
      Range a = range(t.atom);
      if (t.sym >= 0) {  // atom * S, S >= 0: needs the atom's numeric range, never negative
        std::optional<int64_t> lo = value(a.lo), hi = value(a.hi);
        if (!lo || *lo < 0) return {};
        a = {unit(static_cast<size_t>(t.sym), *lo), hi ? unit(static_cast<size_t>(t.sym), *hi) : std::nullopt};
      }
      a = scaled(a, t.k);
      r = {plus(r.lo, a.lo), plus(r.hi, a.hi)};
    }
    return r;
  }

  // An atom's range: a var's extent, a symbol itself, x / d and x % d from x's; anything else
  // unknown.
  Range range(const ExprP& e) {
    if (e->op == Op::Var) return e->i < static_cast<int64_t>(vars_.size()) ? vars_[e->i] : Range{};
    if (int j = symbol(e); j >= 0) return {unit(static_cast<size_t>(j), 1), unit(static_cast<size_t>(j), 1)};
    auto it = range_.find(e.get());
    if (it != range_.end()) return it->second.second;
    Range r;
    bool divides = e->op == Op::Binary && is_index(e) && (e->fn == Fn::Div || e->fn == Fn::Mod);
    bool by_const = divides && int_const(e->args[1]) && e->args[1]->i > 0;
    int j = divides && !by_const ? symbol(e->args[1]) : -1;
    Range x = by_const || j >= 0 ? range(linear(e->args[0])) : Range{};
    std::optional<int64_t> lo = value(x.lo), hi = value(x.hi);
    if ((by_const || j >= 0) && !nonneg(x.lo)) {
      r = {};  // a dividend that may be negative
    } else if (by_const) {
      int64_t c = e->args[1]->i;
      r = e->fn == Fn::Mod ? Range{number(0), number(hi && *hi < c ? *hi : c - 1)}
                           : Range{number(lo ? *lo / c : 0), hi ? number(*hi / c) : std::nullopt};
    } else if (j >= 0 && e->fn == Fn::Mod) {
      r = {number(0), plus(unit(static_cast<size_t>(j), 1), number(-1))};
    } else if (j >= 0) {  // x / S: at most k where x <= k * S + c with c <= 0 (S >= 1 where it divides)
      r.lo = number(0);
      size_t at = static_cast<size_t>(j);
      int64_t kj = x.hi && at < x.hi->k.size() ? x.hi->k[at] : 0;
      std::optional<int64_t> rest = value(plus(x.hi, unit(at, -kj)));  // x's bound less k * S
      if (hi) r.hi = number(*hi);
      else if (kj >= 0 && rest && *rest <= 0) r.hi = number(kj);
    } else if (const Linear& l = linear(e); l.terms.size() != 1 || l.terms[0].atom != e) {
      r = range(l);  // a sum or a multiple, over smaller atoms
    }
    range_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  // The sum in term order, the constant last (as lowering writes offsets).
  ExprP build(const Linear& l) const {
    ExprP s;
    for (const Term& t : l.terms) {
      if (t.k == 0) continue;
      ExprP u = t.sym < 0 ? t.atom : mul(t.atom, symbol_expr_.at(t.sym));
      if (t.k != 1) u = mul(u, icst(t.k));
      s = s ? add(s, u) : u;
    }
    if (!s) return icst(l.c);
    return l.c ? add(s, icst(l.c)) : s;
  }

  int symbol_buf_;
  size_t symbols_;
  std::vector<Range> vars_;
  std::map<int64_t, ExprP> symbol_expr_;  // each symbol's load as the kernel writes it
  std::unordered_map<const Expr*, ExprP> done_[2];  // by `decide`
  std::unordered_map<const Expr*, std::pair<ExprP, Linear>> linear_;
  std::unordered_map<const Expr*, std::pair<ExprP, Range>> range_;
};

}  // namespace

bool index_within(const Plan& p, const Kernel& k, const ExprP& e, const ExprP& d) { return Simplifier(p, k).within(e, d); }

void simplify_indices(Plan& p) {
  for (Kernel& k : p.kernels) {
    Simplifier s(p, k);
    k.body = s.run(k.body);
  }
}

}  // namespace lockstep
