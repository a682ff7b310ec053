#include "kernel/symbols.h"

#include "core/error.h"

namespace lockstep::kir {

int64_t symbolic_value(const Expr& e, const std::vector<int64_t>& symbols, int symbol_buf) {
  switch (e.op) {
    case Op::Const: return e.i;
    case Op::Load:
      if (e.buf == symbol_buf && e.flat && e.args[0]->op == Op::Const) return symbols.at(static_cast<size_t>(e.args[0]->i));
      break;
    case Op::Cast: return symbolic_value(*e.args[0], symbols, symbol_buf);
    case Op::Binary: {
      int64_t a = symbolic_value(*e.args[0], symbols, symbol_buf), c = symbolic_value(*e.args[1], symbols, symbol_buf);
      if (e.fn == Fn::Add) return a + c;
      if (e.fn == Fn::Sub) return a - c;
      if (e.fn == Fn::Mul) return a * c;
      if (e.fn == Fn::Div && c > 0) return a / c;
      break;
    }
    default: break;
  }
  throw InternalError("internal: a symbolic dim is not an expression of the symbols");
}

std::vector<ExprP> item_dims(const Plan& p, const Kernel& k, const Schedule& t) {
  const Buffer& b = p.buffers[k.out];
  std::vector<ExprP> items;
  for (size_t d = 0; d < b.shape.size(); ++d) items.push_back(dim_expr(p, k.out, d));
  size_t r = items.size();
  if (t.rows * t.cols <= 1 || r < 2) return items;
  if (t.rows > 1) items[r - 2] = icst(b.shape[r - 2] / t.rows);
  if (t.cols > 1)
    items[r - 1] = items[r - 1]->op == Op::Const ? icst(b.shape[r - 1] / t.cols) : binary(Fn::Div, items[r - 1], icst(t.cols));
  return items;
}

int divisor_slot(const Plan& p, const ExprP& d) {
  for (size_t j = 0; j < p.divisors.size(); ++j)
    if (same(p.divisors[j], d)) return static_cast<int>(j);
  return -1;
}

void collect_divisors(Plan& p) {
  if (!p.symbolic()) return;
  auto note = [&](const ExprP& d) {
    if (d->op != Op::Const && divisor_slot(p, d) < 0) p.divisors.push_back(d);
  };
  for (const Kernel& k : p.kernels) {
    if (k.schedule.loops != Schedule::Loops::Gpu || p.buffers[k.out].dims.empty()) continue;
    bool red = find_reduce(k.body) != nullptr;  // an elementwise kernel's one tile is one output per item
    for (const Schedule& t : red ? tile_choices(k.schedule, true) : std::vector<Schedule>{k.schedule}) {
      std::vector<ExprP> dims = item_dims(p, k, t);
      std::vector<ExprP> strides = strides_of(dims);
      for (size_t d = 0; d < dims.size(); ++d) {
        note(strides[d]);
        if (d > 0) note(dims[d]);
      }
    }
  }
  p.buffers[p.symbol_buf].shape = {static_cast<int64_t>(p.symbols.size() + p.divisors.size())};
}

uint64_t divide_multiplier(int64_t d) {
  if (d <= 1) return 0;
  unsigned __int128 m = ((static_cast<unsigned __int128>(1) << 64) / static_cast<uint64_t>(d)) + 1;
  return static_cast<uint64_t>(m);
}

std::vector<int64_t> symbol_words(const Plan& p, const std::vector<int64_t>& values) {
  std::vector<int64_t> words = values;
  for (const ExprP& d : p.divisors)
    words.push_back(static_cast<int64_t>(divide_multiplier(symbolic_value(*d, values, p.symbol_buf))));
  return words;
}

}  // namespace lockstep::kir
