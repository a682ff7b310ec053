#include "codegen/gpu_printer.h"

#include <algorithm>
#include <map>

#include "codegen/prelude.h"
#include "core/error.h"
#include "kernel/symbols.h"

namespace lockstep::codegen {

using namespace kir;

namespace {

// `text` with every `key` replaced by `value`.
std::string filled(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

}  // namespace

// v0..v{r-1} from the flat index i (row-major) over `dims`; size-1 dims are 0. Dims in
// `renamed` are declared under the name given instead. Where the work items number under
// 2^32 (`narrow`: known when printing; else the kernel's `n32`), the divisions are 32-bit:
// by a constant a multiply there, by a run-time divisor of the plan (kernel/symbols.h) two
// multiplies by its multiplier (ls_udiv32), a long sequence in 64 bits. The values are the same.
std::string GpuPrinter::unflatten(const Plan& p, const Kernel& k, const std::vector<ExprP>& dims, Narrow narrow,
                                  const std::map<size_t, std::string>& renamed, const std::string& i) const {
  std::vector<ExprP> strides = strides_of(dims);
  std::string src, u32 = storage_type(DType::u32);
  auto split = [](const std::string& idx, const std::string& stride, const std::string& dim) {
    std::string e = stride.empty() ? idx : "(" + idx + " / " + stride + ")";
    return dim.empty() ? e : e + " % " + dim;
  };
  for (size_t d = 0; d < dims.size(); ++d) {
    auto it = renamed.find(d);
    std::string v = it != renamed.end() ? it->second : "v" + std::to_string(d), e;
    bool unit = strides[d]->op == Op::Const && strides[d]->i == 1;
    std::string stride = unit ? "" : size(strides[d]), dim = d == 0 ? "" : size(dims[d]);
    std::string wide = split(i, stride, dim);
    std::string thin = "(" + u32 + ")" + i, by = unit ? "" : multiplier(p, k, strides[d]),
                mod = d == 0 ? "" : multiplier(p, k, dims[d]);
    if (!unit) thin = by.empty() ? "(" + thin + " / (" + u32 + ")" + stride + ")" : "ls_udiv32(" + thin + ", " + by + ")";
    if (d > 0) thin = mod.empty() ? thin + " % (" + u32 + ")" + dim : "ls_umod32(" + thin + ", (" + u32 + ")" + dim + ", " + mod + ")";
    thin = "(int64_t)(" + thin + ")";
    if (dims[d]->op == Op::Const && dims[d]->i == 1) e = "0";
    else if (unit && dim.empty()) e = i;
    else e = narrow == Narrow::Yes ? thin : narrow == Narrow::No ? wide : "(n32 ? " + thin + " : " + wide + ")";
    src += "    const int64_t " + v + " = " + e + "; (void)" + v + ";\n";
  }
  return src;
}

// The multiplier of run-time divisor d as kernel k reads it from the Symbols buffer; "" where
// d is a constant or not one of the plan's divisors.
std::string GpuPrinter::multiplier(const Plan& p, const Kernel& k, const ExprP& d) const {
  int j = d->op == Op::Const || k.symbols < 0 ? -1 : divisor_slot(p, d);
  return j < 0 ? "" : "(" + storage_type(DType::u64) + ")" + buf_name(k.symbols) + "[" +
                          std::to_string(p.symbols.size() + static_cast<size_t>(j)) + "]";
}

// x / d for an index x in [0, n]: where the work items number under 2^32 and d is a run-time
// divisor of the plan, by its multiplier (two multiplies); else a 64-bit division, a long
// sequence when d is not a constant.
std::string GpuPrinter::quotient(const Plan& p, const Kernel& k, const std::string& x, const ExprP& d, Narrow narrow) const {
  std::string wide = "(" + x + " / " + size(d) + ")", m = narrow == Narrow::No ? "" : multiplier(p, k, d);
  if (m.empty()) return wide;
  std::string thin = "(int64_t)ls_udiv32((" + storage_type(DType::u32) + ")" + x + ", " + m + ")";
  return narrow == Narrow::Yes ? thin : "(n32 ? " + thin + " : " + wide + ")";
}

std::vector<ExprP> GpuPrinter::dims(const Plan& p, int b) {
  std::vector<ExprP> d;
  for (size_t k = 0; k < p.buffers[b].shape.size(); ++k) d.push_back(dim_expr(p, b, k));
  return d;
}

std::string GpuPrinter::prelude() const { return g_.header + helper_functions(g_); }

std::string GpuPrinter::signature(const Plan& p, const Kernel& k, const std::string& entry) const {
  std::string bounds = filled(g_.launch_bounds, "{group}", std::to_string(k.schedule.group));
  std::string src = g_.kernel_qualifier + " " + (bounds.empty() ? "" : bounds + " ") + entry + "(";
  std::string based;  // with offset parameters: "bN = base + at" for each buffer
  std::vector<int> params = kernel_params(k);
  for (size_t a = 0; a < params.size(); ++a) {
    std::string type = (a ? g_.read_space : g_.written_space) + storage_type(p.buffers[params[a]].dtype) + "*";
    std::string name = buf_name(params[a]);
    src += std::string(a ? ", " : "") + type + " " + g_.restrict_kw + " " + name + (g_.offset_params ? "_base" : "") +
           filled(g_.param_suffix, "{n}", std::to_string(a));
    if (!g_.offset_params) continue;
    src += ", const uint64_t " + name + "_at";
    std::string bytes = (a ? g_.read_space : g_.written_space) + "char*";
    based += "  " + type + " " + g_.restrict_kw + " " + name + " = (" + type + ")((" + bytes + ")" + name + "_base + " +
             name + "_at);\n";
  }
  return src + (g_.extra_params.empty() ? "" : ", " + g_.extra_params) + ") {\n" + based;
}

std::string GpuPrinter::kernel(const Plan& p, const Kernel& k) const {
  return comment(k) + indented(code(p, k, k.name));
}

std::string GpuPrinter::code(const Plan& p, const Kernel& k, const std::string& entry) const {
  if (k.schedule.loops != Schedule::Loops::Gpu) throw InternalError("internal: " + k.name + " has no GPU schedule");
  if (k.window.value) throw InternalError("internal: " + k.name + " computes a window, which no GPU schedule stages");
  KernelScope scope(*this, k);
  std::string src = signature(p, k, entry) + read_symbols(p, k);
  const Schedule& sc = k.schedule;
  bool fixed = p.buffers[k.out].dims.empty();
  if (fixed && sc.threads == 0) return src + "}\n";
  const Expr* red = find_reduce(k.body);
  std::vector<Schedule> tiles = red ? tile_choices(sc, !fixed) : std::vector<Schedule>{sc};
  int64_t shared = 0;
  for (const Schedule& t : tiles)
    if (t.stage >= 0) shared = std::max(shared, t.stage_slots * t.rows * shape_numel(red->shape));
  if (shared)
    src += "  " + filled(filled(g_.shared_array, "{type}", compute_type(red->type)), "{n}", std::to_string(shared)) + "\n";
  int64_t items = p.buffers[k.out].numel() / (sc.rows * sc.cols);  // of a fixed plan: work items of one output each
  std::string n = fixed ? std::to_string(items) : size(kir::binary(Fn::Div, numel_expr(p, k.out), icst(sc.rows * sc.cols)));
  if (tiles.size() > 1) {  // the first tile that suits this length (tile_suits), the same rule as the runtime's
    size_t r = p.buffers[k.out].shape.size();
    src += "  const int64_t outputs = " + size(numel_expr(p, k.out)) + ";\n";
    src += "  const int64_t last = " + size(dim_expr(p, k.out, r - 1)) + ";\n  const int tile = ";
    n.clear();
    for (size_t t = 0; t < tiles.size(); ++t) {
      std::string per = std::to_string(tiles[t].rows * tiles[t].cols), cond;
      if (sc.fill && per != "1") cond = "outputs / " + per + " >= " + std::to_string(sc.fill);
      if (tiles[t].stage >= 0) cond += (cond.empty() ? "" : " && ") + ("last / " + std::to_string(tiles[t].cols) + " >= " + std::to_string(sc.group));
      bool final = t + 1 == tiles.size();
      src += final ? std::to_string(t) + ";\n" : "(" + cond + ") ? " + std::to_string(t) + " : ";
      n += final ? "outputs" : "tile == " + std::to_string(t) + " ? outputs / " + per + " : ";
    }
  }
  src += "  const int64_t n = " + n + ";\n";
  Narrow narrow = !fixed ? Narrow::AtRunTime : items <= kMax32 ? Narrow::Yes : Narrow::No;
  if (narrow == Narrow::AtRunTime) src += "  const bool n32 = n <= " + std::to_string(kMax32) + g_.int_suffix + ";\n";
  if (!red) return src + elements(p, k, narrow) + "}\n";
  // A kernel that copies two row blocks between barriers runs whole groups round its loop
  // (those past the end only help copy); the rest stop at the end.
  bool whole = std::any_of(tiles.begin(), tiles.end(), [](const Schedule& t) { return t.stage >= 0 && t.stage_slots > 1; });
  std::string group = "(int64_t)" + g_.group_index + " * " + g_.group_size, step = "(int64_t)" + g_.group_count + " * " + g_.group_size;
  std::string loop = whole ? "  for (int64_t i0 = " + group + "; i0 < n; i0 += " + step + ") {\n    const int64_t i = i0 + " + g_.thread_index + ";\n"
                           : "  for (int64_t i = " + group + " + " + g_.thread_index + "; i < n; i += " + step + ") {\n";
  std::vector<std::string> bodies;
  for (const Schedule& t : tiles) bodies.push_back(tile_body(p, k, t, *red, narrow, whole));
  if (bodies.size() == 1) return src + loop + bodies[0] + "  }\n}\n";
  // A loop per tile, the branch outside it: a staging tile's barriers then lie in no branch
  // inside a loop, which PoCL 3.1 ran wrong (sums differing run to run where the last group lay
  // partly past the end, though every work item takes the same branch).
  for (size_t t = 0; t < bodies.size(); ++t)
    src += std::string(t ? " else " : "  ") + (t + 1 < bodies.size() ? "if (tile == " + std::to_string(t) + ") " : "") + "{\n" +
           loop + bodies[t] + "  }\n  }";
  return src + "\n}\n";
}

// The loop of a kernel without a reduction over its n elements, per_item of them a round per
// work item. Where the plan is symbolic, a loop for each index width, so that the one most
// lengths take counts in 32 bits and holds no 64-bit path (the select of the two per element,
// and 64-bit counting, cost the symbolic decoder 0.3 ms on the H200). It is taken where no
// index a round reaches, nor the next round's first, reaches 2^32.
std::string GpuPrinter::elements(const Plan& p, const Kernel& k, Narrow narrow) const {
  std::string u32 = storage_type(DType::u32), per = std::to_string(k.schedule.per_item);
  std::string src = "  const int64_t step = (int64_t)" + g_.group_count + " * " + g_.group_size + ";\n";
  std::string first = "(int64_t)" + g_.group_index + " * " + g_.group_size + " + " + g_.thread_index;
  bool one = k.schedule.per_item <= 1;
  std::string wide = "  for (int64_t i0 = " + first + "; i0 < n; i0 += " + (one ? "step" : per + " * step") + ") {\n";
  std::string wide_at = one ? "i0" : "i0 + {u} * step";
  if (narrow != Narrow::AtRunTime) return src + element_rounds(p, k, narrow, wide, wide_at);
  std::string thin = "  for (" + u32 + " i32 = (" + u32 + ")(" + first + "); i32 < (" + u32 +
                     ")n; i32 += " + (one ? "s32" : per + "u * s32") + ") {\n";
  return src + "  if (n32 && n + " + (one ? "step" : per + " * step") + " <= " + std::to_string(kMax32 + 1) +
         g_.int_suffix + ") {\n  const " + u32 + " s32 = (" + u32 + ")step;\n" +
         element_rounds(p, k, Narrow::Yes, thin, one ? "(int64_t)i32" : "(int64_t)(i32 + (" + u32 + "){u} * s32)") +
         "  } else {\n" + element_rounds(p, k, Narrow::No, wide, wide_at) + "  }\n";
}

// The rounds of `loop`: element u of a round is `at` with {u} for u. A whole round computes
// every value before it stores one, so that their loads are in flight together; a partial
// last round goes element by element.
std::string GpuPrinter::element_rounds(const Plan& p, const Kernel& k, Narrow narrow, const std::string& loop,
                                       const std::string& at) const {
  std::string dims = unflatten(p, k, GpuPrinter::dims(p, k.out), narrow), value = expr(k.body);
  int64_t per = k.schedule.per_item;
  if (per == 1) return loop + "    const int64_t i = " + filled(at, "{u}", "0") + ";\n" + dims + "    " + store(p, k, "i", value) + "\n  }\n";
  std::string each = "for (int u = 0; u < " + std::to_string(per) + "; ++u) {\n    const int64_t i = " + filled(at, "{u}", "u") + ";\n";
  return loop + "    " + compute_type(k.body->type) + " ls_e[" + std::to_string(per) + "];\n    if (" +
         filled(at, "{u}", std::to_string(per - 1)) + " < n) {\n    " + g_.unroll_pragma + "\n    " + each + dims +
         "    ls_e[u] = " + value + ";\n    }\n    " + g_.unroll_pragma + "\n    " + each + "    " + store(p, k, "i", "ls_e[u]") +
         "\n    }\n    } else {\n    " + each + "    if (i >= n) break;\n" + dims + "    " + store(p, k, "i", value) +
         "\n    }\n    }\n  }\n";
}

// Work items of one row block of tile t: the output's last dim / t.cols.
ExprP GpuPrinter::row_block_items(const Plan& p, const Kernel& k, const Schedule& t) {
  return kir::binary(Fn::Div, dim_expr(p, k.out, p.buffers[k.out].shape.size() - 1), icst(t.cols));
}

// One tile's work: in a loop of whole groups, the copy of two row blocks where it stages them
// (a group's items straddle at most two while a row block holds a group of them) and the item's
// outputs if it is not past the end; else the outputs, staging in place where it stages.
std::string GpuPrinter::tile_body(const Plan& p, const Kernel& k, const Schedule& t, const Expr& red, Narrow narrow,
                                  bool whole) const {
  if (!whole) return reduction(p, k, t, red, narrow);
  std::string src;
  if (t.stage >= 0) {
    ExprP per_block = row_block_items(p, k, t);
    src = "    const int64_t per_block = " + size(per_block) + ";  // work items of one row block\n";
    if (t.stage_slots > 1)  // the row block of the group's first item, and how many there are
      src += "    const int64_t first_block = " + quotient(p, k, "i0", per_block, narrow) + ";\n    const int64_t blocks = " +
             quotient(p, k, "n", per_block, narrow) + ";\n";
    src += stage_operand(p, k, t, red, narrow);  // before the reduction that reads it
  }
  return src + "    if (i < n) {\n" + reduction(p, k, t, red, narrow) + "    }\n";
}

// Column l of work item vl: adjacent, or spread a row's 1/cols apart (a warp's items then read
// and write each row in order). `per_item`: the row's length / cols.
std::string GpuPrinter::column(const Schedule& sc, const std::string& per_item) {
  if (sc.cols == 1) return "vl";
  if (!sc.spread_cols) return "vl * " + std::to_string(sc.cols) + " + l";
  return "l * " + per_item + " + vl";
}

// The work item's rows x cols outputs: row c and column l of its block, each with its own
// accumulator, the innermost reduction loop unrolled where the schedule says.
std::string GpuPrinter::reduction(const Plan& p, const Kernel& k, const Schedule& sc, const Expr& red,
                                  Narrow narrow) const {
  const Shape& s = p.buffers[k.out].shape;
  size_t r = s.size();
  bool block = sc.rows * sc.cols > 1;
  if (block && (r < 2 || s[r - 2] % sc.rows || s[r - 1] % sc.cols))
    throw InternalError("internal: " + k.name + "'s schedule of " + std::to_string(sc.rows) + " x " +
                        std::to_string(sc.cols) + " outputs per work item does not tile " + shape_str(s));
  std::string at = compute_type(red.type), src;
  std::string acc = sc.rows == 1 ? (sc.cols == 1 ? "acc[0]" : "acc[l]")
                                 : "acc[" + times("c", sc.cols) + (sc.cols == 1 ? "" : " + l") + "]";
  std::string each = "{ ";
  if (block) {
    // Rows block a dim that is the same at every length; columns may block one that is a
    // multiple of them at every length (8*T).
    std::vector<ExprP> items = item_dims(p, k, sc);
    src += unflatten(p, k, items, narrow, {{r - 2, "vb"}, {r - 1, "vl"}});
    std::string rv = "v" + std::to_string(r - 2), cv = "v" + std::to_string(r - 1);
    if (sc.rows > 1) set_tile_row({static_cast<int>(r) - 2, sc.rows, "vb", "c"});
    // A row or column loop of one iteration is a block of its own.
    each = (sc.rows == 1 ? "{ const int64_t " + rv + " = vb; (void)" + rv + ";\n    "
                         : g_.unroll_pragma + "\n    for (int c = 0; c < " + std::to_string(sc.rows) +
                               "; ++c) { const int64_t " + rv + " = vb * " + std::to_string(sc.rows) + " + c; (void)" +
                               rv + ";\n    ") +
           (sc.cols == 1 ? "{ "
                         : g_.unroll_pragma + "\n    for (int l = 0; l < " + std::to_string(sc.cols) + "; ++l) { ") +
           "const int64_t " + cv + " = " + column(sc, size(items[r - 1])) + "; (void)" + cv + "; ";
  } else {
    src += unflatten(p, k, dims(p, k.out), narrow);
  }
  std::string close = block ? " } }" : " }", n = std::to_string(sc.rows * sc.cols);
  if (sc.stage >= 0 && sc.stage_slots == 1) {
    src += stage_operand(p, k, sc, red, narrow);
    set_staged({sc.stage, "ls_stage[" + staged_index(sc, red) + "]"});
  } else if (sc.stage >= 0) {  // tile_body copied both blocks the group's items lie in
    src += "    const int64_t slot = " + quotient(p, k, "i", row_block_items(p, k, sc), narrow) + " - first_block;\n";
    set_staged({sc.stage, "ls_stage[slot * " + std::to_string(sc.rows * shape_numel(red.shape)) + " + " + staged_index(sc, red) + "]"});
  }
  src += "    " + at + " acc[" + n + "];\n";
  src += "    for (int j = 0; j < " + n + "; ++j) acc[j] = (" + at + ")" + reduce_init(red) + ";\n";
  for (size_t d = 0; d < red.shape.size(); ++d) {
    bool unrolled = d + 1 == red.shape.size() && sc.unroll > 0 && red.shape[d] <= sc.unroll;
    src += (unrolled ? "    " + g_.unroll_pragma + "\n" : "") + "    " + loop("v" + std::to_string(red.i + d), red.shape[d]);
  }
  src += "    {\n    " + each + reduce_step(red, acc) + close + "\n    }\n";
  set_staged({});
  std::string flat = block ? out_index(p, k.out) : "i";
  src += "    " + each + store(p, k, flat, expr(k.body, acc)) + close + "\n";
  set_tile_row({});
  return src;
}

// The group's copy of the staged operand, [slot][term][row]: each thread copies some, between
// barriers that keep the previous items' reads before the overwrite and the copy before any
// read. One slot: the group's items share the row block `vb` (their own). Two: the blocks of
// the group's first item and the next (inside the loop of whole groups, where i0 is that item).
std::string GpuPrinter::stage_operand(const Plan& p, const Kernel& k, const Schedule& sc, const Expr& red,
                                      Narrow narrow) const {
  std::vector<const Expr*> loads;
  collect_loads(red.args[0], loads);
  auto it = std::find_if(loads.begin(), loads.end(), [&](const Expr* e) { return e->buf == sc.stage; });
  if (it == loads.end()) throw InternalError("internal: " + k.name + " stages b" + std::to_string(sc.stage) + ", which its sum does not load");
  size_t r = p.buffers[k.out].shape.size();
  int64_t block = sc.rows * shape_numel(red.shape);
  std::string rows = std::to_string(sc.rows), rv = "v" + std::to_string(r - 2), copy = "e";
  std::string src = "    " + g_.barrier + ";\n    for (int e = (int)" + g_.thread_index + "; e < " +
                    std::to_string(sc.stage_slots * block) + "; e += (int)" + g_.group_size + ") {\n";
  if (sc.stage_slots > 1) {
    // The slot's row block: its index q among them, unflattened into the outer vars and vb
    // (dims that do not vary in the decoder; collect_divisors does not list these, so a
    // symbolic one would be divided by the plain 32-bit sequence).
    std::vector<ExprP> blocks = dims(p, k.out);
    blocks.pop_back();
    blocks[r - 2] = icst(p.buffers[k.out].shape[r - 2] / sc.rows);
    src += "    const int64_t q = first_block + e / " + std::to_string(block) + ";\n    if (q < blocks) {\n" +
           unflatten(p, k, blocks, narrow, {{r - 2, "vb"}}, "q") + "      const int t = e % " + std::to_string(block) + ";\n";
    copy = "t";
  }
  src += sc.rows == 1 ? "      const int64_t " + rv + " = vb; (void)" + rv + ";\n"
                      : "      const int c = " + copy + " % " + rows + "; const int64_t " + rv + " = vb * " + rows +
                            " + c; (void)" + rv + ";\n";
  int64_t stride = 1;
  for (size_t d = red.shape.size(); d-- > 0;) {
    std::string v = "v" + std::to_string(red.i + static_cast<int64_t>(d));
    std::string at = sc.rows == 1 ? copy : copy + " / " + rows;
    src += "      const int64_t " + v + " = (int64_t)(" +
           mod(stride > 1 ? at + " / " + std::to_string(stride) : at, red.shape[d]) + "); (void)" + v + ";\n";
    stride *= red.shape[d];
  }
  return src + "      ls_stage[e] = " + load_value(**it) + ";\n" + (sc.stage_slots > 1 ? "    }\n" : "") + "    }\n    " +
         g_.barrier + ";\n";
}

// Where term (the reduction vars, row-major) of tile row c lies within a slot of the copy.
std::string GpuPrinter::staged_index(const Schedule& sc, const Expr& red) {
  std::string term;
  int64_t stride = 1;
  for (size_t d = red.shape.size(); d-- > 0; stride *= red.shape[d])
    term = (term.empty() ? "" : term + " + ") + "v" + std::to_string(red.i + static_cast<int64_t>(d)) +
           (stride > 1 ? " * " + std::to_string(stride) : "");
  return sc.rows == 1 ? term : "(" + term + ") * " + std::to_string(sc.rows) + " + c";
}

// A plan of more buffers reports their sizes as stores: a table in program-scope constant
// memory would count against the device's limit (64 KiB on NVIDIA's OpenCL).
constexpr size_t kTableEntries = 1024;

std::string GpuPrinter::plan_info_stores(const Plan& p, const std::string& params) const {
  std::string s =
      g_.kernel_qualifier + " ls_plan_info(" + params + ") {\n  out[0] = " + std::to_string(p.buffers.size()) + ";\n";
  for (size_t b = 0; b < p.buffers.size(); ++b)
    s += "  if (" + std::to_string(b + 1) + " < room) out[" + std::to_string(b + 1) +
         "] = " + std::to_string(p.buffers[b].module_bytes()) + ";\n";
  return s + "}\n";
}

std::string GpuPrinter::epilogue(const Plan& p) const {
  size_t n = p.buffers.empty() ? 1 : p.buffers.size();
  std::string count = std::to_string(p.buffers.size());
  std::string head = "// Buffer sizes the kernels were built for: the runtime refuses a module built for another plan.\n";
  if (!g_.device_global.empty())
    return head + g_.device_global + " long long ls_buffer_bytes[" + std::to_string(n) + "] = " + buffer_bytes_init(p) +
           ";\n" + g_.device_global + " int ls_buffer_count = " + count + ";\n";
  // No program-scope globals the host can read: one work item copies them out, count first,
  // never past the `room` the runtime gives (a stale program may list more buffers).
  std::string params =
      g_.plan_info_params.empty() ? g_.written_space + "int64_t* out, const int64_t room" : g_.plan_info_params;
  if (p.buffers.size() > kTableEntries) return head + plan_info_stores(p, params);
  return head + g_.constant_space + " int64_t ls_buffer_bytes[" + std::to_string(n) + "] = " + buffer_bytes_init(p) +
         ";\n" + g_.kernel_qualifier + " ls_plan_info(" + params + ") {\n  out[0] = " + count +
         ";\n  for (int64_t i = 0; i < " + count + " && 1 + i < room; ++i) out[1 + i] = ls_buffer_bytes[i];\n}\n";
}

// Each kernel's code as by_position prints it, the entry named kEntry in every one.
std::vector<std::string> GpuPrinter::same_code(const Plan& p, std::vector<size_t>& first) const {
  return by_position(p, first, [&](const Kernel& k) { return indented(code(p, k, kEntry)); });
}

ProgramSource GpuPrinter::program(const Plan& p) const {
  std::vector<size_t> first;
  std::vector<std::string> codes = same_code(p, first);
  ProgramSource out;
  for (size_t k : first) out.entries.push_back(p.kernels[k].name);
  std::vector<std::string> notes(p.kernels.size());  // the comments of the kernels sharing each function
  for (size_t k = 0; k < p.kernels.size(); ++k)
    notes[first[k]] += comment(p.kernels[k], first[k] == k ? "" : "runs " + p.kernels[first[k]].name);
  std::string src = prelude();
  for (size_t k = 0; k < p.kernels.size(); ++k)
    if (first[k] == k)
      src += "\n" + std::string(kUnitBreak) + notes[k] + filled(codes[k], std::string(kEntry) + "(", p.kernels[k].name + "(");
  out.text = src + "\n" + kUnitBreak + epilogue(p);
  return out;
}

}  // namespace lockstep::codegen
