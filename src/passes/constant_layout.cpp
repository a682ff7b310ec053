// Constant operands of a reduction stored in the order its tiles read them: a transposed conv's
// weight [Ci, Co, K] read by tiles of R output rows becomes [Ci, Co/R, K, R], so at each step a tile's
// rows read R consecutive weights (one or two vector loads on a GPU) and successive steps read
// on from there (one stream on a CPU). Only the storage order changes: every product and every
// sum is the same, so are the bits. Runs after the schedule, which chooses R.
#include <cstring>
#include <functional>

#include "passes/passes.h"

namespace lockstep {

using namespace kir;

namespace {

// The dim of `ld` indexed by exactly Var(row) and by nothing else that mentions it; -1 if none.
int row_dim(const Expr& ld, int row) {
  int dim = -1;
  for (size_t d = 0; d < ld.args.size(); ++d) {
    const Expr& a = *ld.args[d];
    if (!(a.var_mask & (uint64_t{1} << row))) continue;
    if (dim >= 0 || a.op != Op::Var) return -1;
    dim = static_cast<int>(d);
  }
  return dim;
}

bool same_args(const Expr& a, const Expr& b) {
  if (a.flat != b.flat || a.args.size() != b.args.size()) return false;
  for (size_t j = 0; j < a.args.size(); ++j)
    if (!same(a.args[j], b.args[j])) return false;
  return true;
}

// `t` with dim `d` split into blocks of `rows`: the block index stays at d, the index within
// a block goes last ([.., n, ..] -> [.., n/rows, .., rows]), row-major both.
Tensor blocked(const Tensor& t, size_t d, int64_t rows) {
  Shape s = t.shape;
  int64_t outer = 1, n = s[d], inner = 1;
  for (size_t k = 0; k < d; ++k) outer *= s[k];
  for (size_t k = d + 1; k < s.size(); ++k) inner *= s[k];
  s[d] = n / rows;
  s.push_back(rows);
  Tensor r(t.dtype, s);
  size_t e = dtype_size(t.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(r.bytes.data() + (((o * (n / rows) + j / rows) * inner + i) * rows + j % rows) * e,
                    t.bytes.data() + ((o * n + j) * inner + i) * e, e);
  return r;
}

// Constant `buf` of kernel k holds `data` from now on, which k reads at `index(load)` of each of
// its loads (corrupted by the planted fault of --inject-fault pass:N); one pass application.
void store_reordered(Plan& p, Kernel& k, int buf, Tensor data, PassManager& pm,
                     const std::function<std::vector<ExprP>(const Expr&)>& index) {
  bool faulty = pm.faulty();
  Buffer& b = p.buffers[buf];
  b.data = std::make_shared<const Tensor>(std::move(data));
  b.shape = b.data->shape;
  k.body = replace_loads(k.body, buf, [&](const Expr& e) {
    ExprP r = load(buf, b.shape, e.type, index(e));
    ExprP bad = faulty ? pm.fault->corrupt_load(*r) : nullptr;
    return bad ? bad : r;
  });
  pm.finished();
}

// Loads of each buffer in the whole plan.
std::vector<int> loads_per_buffer(const Plan& p) {
  std::vector<int> n(p.buffers.size(), 0);
  std::vector<const Expr*> loads;
  for (const Kernel& k : p.kernels) {
    loads.clear();
    collect_loads(k.body, loads);
    for (const Expr* ld : loads) ++n[ld->buf];
  }
  return n;
}

}  // namespace

void block_constant_rows(Plan& p, PassManager& pm) {
  std::vector<int> reads = loads_per_buffer(p);
  for (Kernel& k : p.kernels) {
    const Expr* red = find_reduce(k.body);
    size_t rank = p.buffers[k.out].shape.size();
    int64_t rows = k.schedule.rows;
    if (!red || rank < 2 || rows < 2) continue;
    int row = static_cast<int>(rank) - 2;
    std::vector<const Expr*> loads;
    collect_loads(red->args[0], loads);
    for (const Expr* ld : loads) {
      Buffer& b = p.buffers[ld->buf];
      int d = ld->flat || b.kind != Buffer::Constant || !b.data ? -1 : row_dim(*ld, row);
      // A row dim already outermost (a conv's [Co, Ci, K]) keeps each row one contiguous run:
      // blocking those cost the H200's conv kernels 10-25%; interleaved rows (a transposed
      // conv's [Ci, Co, K]) gained 25-35%.
      if (d <= 0 || b.shape[d] % rows) continue;
      // Every load of the buffer must be this one (the same index), or another reader breaks.
      std::vector<const Expr*> all;
      collect_loads(k.body, all);
      int same_index = 0;
      for (const Expr* o : all) same_index += o->buf == ld->buf && same_args(*o, *ld);
      if (same_index != reads[ld->buf]) continue;
      std::string what = "constant b" + std::to_string(ld->buf) + " of " + k.name + ": dim " + std::to_string(d) +
                         " in blocks of " + std::to_string(rows) + ", innermost";
      if (!pm.request("block-constant-rows", what, k.nodes)) continue;
      store_reordered(p, k, ld->buf, blocked(*b.data, static_cast<size_t>(d), rows), pm, [&](const Expr& e) {
        std::vector<ExprP> args = e.args;
        ExprP rv = args[d];
        args[d] = binary(Fn::Div, rv, icst(rows));
        args.push_back(binary(Fn::Mod, rv, icst(rows)));
        return args;
      });
      break;  // the body changed: `loads` point into the old one
    }
  }
}

// A constant matrix that a reduction reads as [column, k] (a Gemm with transB: a classifier's
// weight [N, K]) stored as [k, column], so that a tile's lanes read consecutive elements instead
// of one every K. Only the storage order changes: every product and sum is the same.
void transpose_constant_columns(Plan& p, PassManager& pm) {
  std::vector<int> reads = loads_per_buffer(p);
  for (Kernel& k : p.kernels) {
    const Expr* red = find_reduce(k.body);
    size_t rank = p.buffers[k.out].shape.size();
    if (!red || rank < 1) continue;
    std::vector<const Expr*> loads;
    collect_loads(red->args[0], loads);
    for (const Expr* ld : loads) {
      Buffer& b = p.buffers[ld->buf];
      if (ld->flat || b.kind != Buffer::Constant || !b.data || b.shape.size() != 2 || ld->args.size() != 2) continue;
      const Expr &c = *ld->args[0], &r = *ld->args[1];
      bool column_then_k = c.op == Op::Var && c.i == static_cast<int64_t>(rank) - 1 && r.op == Op::Var &&
                           r.i >= static_cast<int64_t>(rank) && b.shape[0] > 1;
      if (!column_then_k || reads[ld->buf] != 1) continue;
      std::string what = "constant b" + std::to_string(ld->buf) + " of " + k.name + " stored transposed";
      if (!pm.request("transpose-constant", what, k.nodes)) continue;
      // A matrix [N, K] in one block of all its N rows is [1, K, N]: its transpose.
      Tensor tr = blocked(*b.data, 0, b.shape[0]);
      tr.shape = {b.shape[1], b.shape[0]};
      store_reordered(p, k, ld->buf, std::move(tr), pm, [](const Expr& x) {
        return std::vector<ExprP>{x.args[1], x.args[0]};
      });
      break;  // the body changed: `loads` point into the old one
    }
  }
}

}  // namespace lockstep
