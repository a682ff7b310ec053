// A lowered kernel that loads more buffers than any target takes (a Concat or Sum of many
// inputs) computes part of its body into a temporary first. The part is a subtree over the
// output index only, stored at the output's shape in its own type, so the reader gets the very
// bits it would have computed: nothing is rounded differently.
#include <algorithm>
#include <map>
#include <optional>

#include "core/error.h"
#include "passes/passes.h"

namespace lockstep {

using namespace kir;

namespace {

class Loads {
 public:
  // Distinct buffers the subtree loads, sorted.
  const std::vector<int>& of(const ExprP& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    std::vector<int> out;
    if (e->op == Op::Load) out.push_back(e->buf);
    for (const ExprP& a : e->args) {
      const std::vector<int>& sub = of(a);
      out.insert(out.end(), sub.begin(), sub.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return memo_.emplace(e.get(), std::move(out)).first->second;
  }

 private:
  std::map<const Expr*, std::vector<int>> memo_;
};

// A subtree that may be computed on its own at every output index: only output vars, no
// reduction, a type stored exactly.
bool separable(const Expr& e, size_t rank) {
  bool half = e.type == DType::f16 || e.type == DType::bf16;
  return !(e.has & Expr::kReduce) && (rank >= 63 || (e.var_mask >> rank) == 0) && !half;
}

struct Part {
  const Expr* e = nullptr;
  size_t loads = 0;
};

// The separable subtree loading the most buffers, between 2 and kMaxKernelLoads.
void widest_part(const ExprP& e, size_t rank, Loads& loads, Part& best) {
  size_t n = loads.of(e).size();
  if (n < 2) return;
  if (n <= static_cast<size_t>(kMaxKernelLoads) && separable(*e, rank)) {
    if (n > best.loads) best = {e.get(), n};
    return;
  }
  if (e->op == Op::Reduce) return;
  for (const ExprP& a : e->args) widest_part(a, rank, loads, best);
}

struct Cut {
  ExprP rest;  // the body with the part replaced by a load of the temporary
  ExprP part;  // the temporary's body: the part, under the selects that guard it on the way down
};

// Selects evaluate one side only, so the part keeps their conditions (its other sides 0): a
// Concat's input is never loaded at an index outside it.
std::optional<Cut> cut(const ExprP& e, const Expr* part, const ExprP& by) {
  if (e.get() == part) return Cut{by, e};
  for (size_t a = 0; a < e->args.size(); ++a) {
    std::optional<Cut> c = cut(e->args[a], part, by);
    if (!c) continue;
    std::vector<ExprP> args = e->args;
    args[a] = c->rest;
    if (e->op == Op::Select && a > 0) {
      ExprP zero = cst(0, c->part->type);
      c->part = a == 1 ? select(e->args[0], c->part, zero) : select(e->args[0], zero, c->part);
    }
    c->rest = with_args(*e, std::move(args));
    return c;
  }
  return std::nullopt;
}

[[noreturn]] void too_wide(const Kernel& k, size_t n) {
  throw Error("node '" + node_list(k) + "' reads " + std::to_string(n) + " tensors in one kernel, and no part of it " +
              "can be computed apart: at most " + std::to_string(kMaxKernelLoads) + " are supported");
}

// Splits parts off kernel `k` until it loads few enough buffers; the new kernels go before it.
std::vector<Kernel> split(Plan& p, Kernel k) {
  std::vector<Kernel> out;
  size_t rank = p.buffers[k.out].shape.size();
  for (;;) {
    Loads loads;
    size_t n = loads.of(k.body).size();
    if (n <= static_cast<size_t>(kMaxKernelLoads)) break;
    Part best;
    widest_part(k.body, rank, loads, best);
    const Expr* part = best.e;
    if (!part) too_wide(k, n);
    Buffer b;
    b.dtype = part->type;
    b.shape = p.buffers[k.out].shape;
    b.name = p.buffers[k.out].name + " (part " + std::to_string(out.size() + 1) + ")";
    p.buffers.push_back(b);
    int buf = static_cast<int>(p.buffers.size()) - 1;
    std::optional<Cut> c = cut(k.body, part, load(buf, b.shape, b.dtype, out_vars(rank)));
    if (!c || Loads().of(c->part).size() > static_cast<size_t>(kMaxKernelLoads) || Loads().of(c->rest).size() >= n)
      too_wide(k, n);
    Kernel t;
    t.name = k.name + "p" + std::to_string(out.size() + 1);
    t.nodes = k.nodes;
    t.out = buf;
    t.body = c->part;
    out.push_back(std::move(t));
    k.body = c->rest;
  }
  out.push_back(std::move(k));
  return out;
}

}  // namespace

void split_wide_kernels(Plan& p, PassManager& pm) {
  std::vector<Kernel> kernels;
  size_t parts = 0;
  for (Kernel& k : p.kernels) {
    std::vector<Kernel> s = split(p, std::move(k));
    parts += s.size() - 1;
    for (Kernel& x : s) kernels.push_back(std::move(x));
  }
  p.kernels = std::move(kernels);
  if (parts) pm.required("split-wide-kernels", std::to_string(parts) + " parts computed apart, at most " +
                                                 std::to_string(kMaxKernelLoads) + " loads a kernel");
}

}  // namespace lockstep
