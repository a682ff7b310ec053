#include "codegen/host_printer.h"

#include <algorithm>

#include "codegen/prelude.h"
#include "core/error.h"
#include "passes/window.h"

namespace lockstep::codegen {

using namespace kir;

namespace {
// Element steps below which a kernel's iterations are not split further between threads.
constexpr int64_t kGrainWork = 32768;
}  // namespace

// Kernels run their outer iterations through the runtime's ls_parallel (ls_set_parallel), which
// hands ranges of them to its threads; without one they run in order on the caller's thread.
std::string HostPrinter::prelude() const {
  // One thread count and ls_parallel for the whole shared object (the epilogue defines them),
  // hidden from every other module of the process.
  return dialect().header + R"(typedef void (*ls_range_fn)(void* const*, int64_t, int64_t);
typedef void (*ls_parallel_fn)(ls_range_fn, void* const*, int64_t, int64_t, int);
extern "C" __attribute__((visibility("hidden"))) int ls_threads;
extern "C" __attribute__((visibility("hidden"))) ls_parallel_fn ls_parallel;
static inline void ls_run(ls_range_fn f, void* const* bufs, int64_t n, int64_t grain) {
  if (n <= 0) return;
  if (ls_parallel && ls_threads != 1 && n > grain) ls_parallel(f, bufs, n, grain, ls_threads);
  else f(bufs, 0, n);
}
)" + helper_functions(dialect());
}

std::string HostPrinter::signature(const Plan& p, const Kernel& k, const std::string& head, bool by_position) const {
  const std::string& rs = dialect().restrict_kw;
  std::vector<int> params = kernel_params(k);
  std::string src = head + " {\n";
  for (size_t a = 0; a < params.size(); ++a) {
    int b = params[a];
    std::string t = storage_type(p.buffers[b].dtype), c = a ? "const " : "";
    src += "  " + c + t + "* " + rs + " " + buf_name(b) + " = (" + c + t + "*)bufs[" + std::to_string(by_position ? a : b) + "];\n";
  }
  return src;
}

// The outer loops of kernel k, outermost first: the dims before the last, the tile loop at
// tile_at, a reduction's dim before the last in blocks of rows (the last may hold fewer). They
// are flattened into one range of iterations that the runtime splits between threads; each
// iteration is the same block of work whichever thread runs it.
std::vector<std::pair<std::string, std::string>> HostPrinter::outer_loops(const Plan& p, const Kernel& k) const {
  const Schedule& sc = k.schedule;
  const Shape& s = p.buffers[k.out].shape;
  size_t r = s.size(), tile_at = static_cast<size_t>(sc.tile_at);
  std::string tiles = r ? size(kir::binary(Fn::Div, add(dim_expr(p, k.out, r - 1), icst(sc.lanes - 1)), icst(sc.lanes))) : "1";
  std::vector<std::pair<std::string, std::string>> loops;
  for (size_t d = 0; d + 1 < r || (d == tile_at && d < r); ++d) {
    if (d == tile_at) loops.push_back({"vt", tiles});
    bool blocked = sc.rows > 1 && d == r - 2;
    if (d + 1 < r)
      loops.push_back(blocked ? std::pair<std::string, std::string>{"vrow", std::to_string((s[d] + sc.rows - 1) / sc.rows)}
                              : std::pair<std::string, std::string>{"v" + std::to_string(d), dim(p, k.out, d)});
  }
  if (r == 0) loops.push_back({"vt", tiles});
  return loops;
}

void HostPrinter::check_schedule(const Plan& p, const Kernel& k) const {
  const Schedule& sc = k.schedule;
  if (sc.loops != Schedule::Loops::Host) throw InternalError("internal: " + k.name + " has no host schedule");
  const Shape& s = p.buffers[k.out].shape;
  size_t r = s.size();
  if (sc.lanes < 1 || sc.rows < 1 || (sc.rows > 1 && (r < 2 || s[r - 2] < sc.rows)))
    throw InternalError("internal: " + k.name + "'s schedule of " + std::to_string(sc.rows) + " rows x " +
                        std::to_string(sc.lanes) + " lanes does not tile " + shape_str(s));
}

// A kernel of no elements (at its fixed shape) has no range function: its entry does nothing.
bool HostPrinter::empty(const Plan& p, const Kernel& k) {
  return p.buffers[k.out].dims.empty() && shape_numel(p.buffers[k.out].shape) == 0;
}

// The range function `head` { ... }: iterations [ls_begin, ls_end) of the outer loops, each a
// tile of the output. `by_position`: it reads its buffers from an array of the kernel's own
// (kernel_params order), so kernels that differ only in their buffers print the same.
std::string HostPrinter::range(const Plan& p, const Kernel& k, const std::string& head, bool by_position) const {
  KernelScope scope(*this, k);
  const Schedule& sc = k.schedule;
  const Shape& s = p.buffers[k.out].shape;
  size_t r = s.size();
  std::string L = std::to_string(sc.lanes), N = r ? dim(p, k.out, r - 1) : "1";
  std::vector<std::pair<std::string, std::string>> loops = outer_loops(p, k);
  std::string src = signature(p, k, head, by_position) + read_symbols(p, k);
  // The first iteration's loop indices by division, each later one's by counting on (a loop of
  // one iteration stays 0).
  src += "  int64_t ls_q = ls_begin;\n";
  std::string next;
  size_t counted = 0;
  for (size_t i = loops.size(); i-- > 1;) {
    const auto& [v, extent] = loops[i];
    if (extent == "1") {
      src += "  const int64_t " + v + " = 0;\n";
      continue;
    }
    src += "  int64_t " + v + " = ls_q % (" + extent + "); ls_q /= (" + extent + ");\n";
    next += "if (++" + v + " == (" + extent + ")) { " + v + " = 0; ";
    ++counted;
  }
  src += "  int64_t " + loops[0].first + " = ls_q;\n";
  next += "++" + loops[0].first + ";" + std::string(counted, '}');
  const Expr* red = find_reduce(k.body);
  Window window = red && k.window.value ? window_copy(p, k, *red, loops.back().second) : Window{};
  src += window.declare + "  for (int64_t ls_i = ls_begin; ls_i < ls_end; ++ls_i) {\n";
  src += "  {\n";
  src += "    const int64_t lo = vt * " + L + ";\n";
  src += "    const int64_t n = " + N + " - lo < " + L + " ? " + N + " - lo : " + L + ";\n" + window.copy;
  std::string tail = "    " + next + "\n  }\n}\n";
  if (red) {
    // The last row block of a dim the rows do not divide: its own copy, with fewer rows.
    int64_t rest = sc.rows > 1 ? s[r - 2] % sc.rows : 0;
    std::string body = !rest ? reduction(p, k, *red, sc.rows)
                             : "    if (vrow < " + std::to_string(s[r - 2] / sc.rows) + ") {\n" + reduction(p, k, *red, sc.rows) +
                                   "    } else {\n" + reduction(p, k, *red, rest) + "    }\n";
    set_staged({});
    return indented(src + body + "  }\n" + tail);
  }
  std::string lv = r ? "v" + std::to_string(r - 1) : "v_unused";
  src += "    for (int64_t j = 0; j < n; ++j) {\n      const int64_t " + lv + " = lo + j; (void)" + lv + ";\n";
  return indented(src + "      " + store(p, k, out_index(p, k.out), expr(k.body)) + "\n    }\n  }\n" + tail);
}

// Kernel k computes its window's producer (passes/window.h) itself: the range function declares
// the window array, and a tile copies its window where its columns or outer indices differ from
// the last iteration's (a thread's consecutive iterations are the row blocks of one tile,
// `row_blocks` of them). The reduction's term then reads the copy (set_staged, until the caller
// clears it).
HostPrinter::Window HostPrinter::window_copy(const Plan& p, const Kernel& k, const Expr& red, const std::string& row_blocks) const {
  std::optional<WindowShape> w = window_shape(p, k, k.window.buf);
  if (!w) throw InternalError("internal: " + k.name + " reads b" + std::to_string(k.window.buf) + " as no window");
  auto times = [](int64_t c, const std::string& x) { return c == 1 ? x : std::to_string(c) + " * " + x; };
  std::string W = std::to_string(w->width(k.schedule.lanes)), type = compute_type(k.window.value->type);
  // Window row of the reduction's vars but the tap: their row-major index.
  std::string row;
  for (size_t i = 0; i < w->row_vars.size(); ++i)
    row = (i ? "(" + row + ") * " + std::to_string(w->row_extents[i]) + " + " : "") + "v" + std::to_string(w->row_vars[i]);
  if (row.empty()) row = "0";
  // The producer at the load's index, the last at window position ls_p of the tile's window.
  int pos = static_cast<int>(red.i + red.shape.size());  // a var of its own
  std::vector<ExprP> at_load = w->lead;
  at_load.push_back(var(pos));
  std::string start = size(w->start);
  Window out;
  out.declare = "  alignas(64) " + type + " ls_win[" + std::to_string(w->rows() * w->width(k.schedule.lanes)) +
                "];  // a tile's window of b" + std::to_string(k.window.buf) + ", computed here\n  int64_t ls_win_at = -1;\n";
  out.copy = "    if (" + over("ls_i", row_blocks) +
             " != ls_win_at) {  // another tile: copy its window\n      ls_win_at = " + over("ls_i", row_blocks) +
             ";\n";
  std::string close;
  for (size_t i = 0; i < w->row_vars.size(); ++i) {
    out.copy += "      " + loop("v" + std::to_string(w->row_vars[i]), w->row_extents[i]) + "      {\n";
    close += "      }\n";
  }
  out.copy += "      const int64_t ls_row = " + row + ";\n      const int64_t ls_n = " + times(w->stride, "(n - 1)") + " + " +
              std::to_string(w->dilation * (w->taps - 1) + 1) + ";\n";
  out.copy += "      for (int64_t ls_p = 0; ls_p < ls_n; ++ls_p) {\n        const int64_t v" + std::to_string(pos) + " = " +
              (start == "0" ? "" : start + " + ") + times(w->stride, "lo") + " + ls_p;\n";
  out.copy += "        ls_win[ls_row * " + W + " + ls_p] = " + expr(substitute(k.window.value, at_load, 0)) + ";\n      }\n" + close + "    }\n";
  // Read through a restrict pointer: else GCC keeps the accumulators in memory (36 against
  // 16 ms for the flow cut on one thread), as the stores to the array might reach them.
  out.copy += "    const " + type + "* __restrict ls_w = ls_win;\n";
  std::string tap = w->tap >= 0 ? " + " + times(w->dilation, "v" + std::to_string(w->tap)) : "";
  set_staged({k.window.buf, "ls_w[(" + row + ") * " + W + " + " + times(w->stride, "j") + tap + "]"});
  return out;
}

// The kernel's entry: it runs range function `fn` over the outer loops' iterations. `args`:
// `fn` reads the kernel's buffers from an array of its own, in kernel_params order.
std::string HostPrinter::entry(const Plan& p, const Kernel& k, const std::string& fn, bool args) const {
  KernelScope scope(*this, k);
  std::string src = signature(p, k, "extern \"C\" void " + k.name + "(void* const* bufs)", false) + read_symbols(p, k);
  if (empty(p, k)) return indented(src + "}\n");
  std::string count;
  for (const auto& l : outer_loops(p, k))
    if (l.second != "1") count += (count.empty() ? "" : " * ") + std::string("(int64_t)(") + l.second + ")";
  if (count.empty()) count = "1";
  // Grain: the iterations a thread takes at the least, about kGrainWork element steps (an
  // element's reduction steps, else the element), so that a small kernel runs on one thread.
  const Expr* red = find_reduce(k.body);
  const Schedule& sc = k.schedule;
  int64_t work = sc.lanes * (red ? sc.rows * shape_numel(red->shape) : 1);
  int64_t grain = std::max<int64_t>(1, kGrainWork / std::max<int64_t>(1, work));
  std::string bufs = "bufs";
  if (args) {
    src += "  void* const ls_args[] = {";
    std::vector<int> params = kernel_params(k);
    for (size_t a = 0; a < params.size(); ++a) src += (a ? ", " : "") + std::string("(void*)") + buf_name(params[a]);
    src += "};\n";
    bufs = "ls_args";
  }
  return indented(src + "  ls_run(" + fn + ", " + bufs + ", " + count + ", " + std::to_string(grain) + ");\n}\n");
}

std::string HostPrinter::kernel(const Plan& p, const Kernel& k) const {
  check_schedule(p, k);
  if (empty(p, k)) return comment(k) + entry(p, k, "", false);
  // Never inlined into the entry: one thread or many, every iteration runs the same machine code.
  std::string fn = k.name + "_range";
  return comment(k) + range(p, k, "static __attribute__((noinline)) void " + fn + "(void* const* bufs, int64_t ls_begin, int64_t ls_end)", false) +
         entry(p, k, fn, false);
}

// `rows` x lanes accumulators (the schedule's rows, or fewer in the last block): each input row
// loaded serves `rows` outputs of the dim before the last, and the full-tile lane loop vectorises.
std::string HostPrinter::reduction(const Plan& p, const Kernel& k, const Expr& red, int64_t rows) const {
  const Schedule& sc = k.schedule;
  const Shape& s = p.buffers[k.out].shape;
  size_t r = s.size();
  std::string lv = r ? "v" + std::to_string(r - 1) : "v_unused", cv = r >= 2 ? "v" + std::to_string(r - 2) : "";
  std::string at = compute_type(red.type), L = std::to_string(sc.lanes), R = std::to_string(sc.rows);
  std::string RL = std::to_string(rows * sc.lanes), acc = sc.rows > 1 ? "acc[c * " + L + " + j]" : "acc[j]";
  if (sc.rows > 1) set_tile_row({static_cast<int>(r) - 2, sc.rows, "vrow", "c"});
  std::string step = reduce_step(red, acc);
  // Row c of the block: the blocked dim's index, then the lane loop.
  std::string row = sc.rows > 1 ? "for (int c = 0; c < " + std::to_string(rows) + "; ++c) { const int64_t " + cv + " = vrow * " + R +
                                      " + c; (void)" + cv + ";\n"
                                : "{ const int c = 0;\n";
  std::string lane = "const int64_t " + lv + " = lo + j; (void)" + lv + ";";
  std::string src = "    " + at + " acc[" + RL + "];\n";
  src += "    for (int j = 0; j < " + RL + "; ++j) acc[j] = (" + at + ")" + reduce_init(red) + ";\n";
  // Full tiles and the last, partial one take separate copies of the reduction loops, so the
  // full tiles' lane loop has a fixed trip count whatever the compiler knows of the length.
  std::string loops;
  for (size_t d = 0; d < red.shape.size(); ++d) loops += "    " + loop("v" + std::to_string(red.i + d), red.shape[d]);
  src += "    if (n == " + L + ") {\n" + loops + "    {\n";
  src += "        " + row + "        #pragma omp simd\n        for (int j = 0; j < " + L + "; ++j) { " + lane + " " + step + " }\n        }\n";
  src += "    }\n    } else {\n" + loops + "    {\n";
  src += "        " + row + "        for (int j = 0; j < n; ++j) { " + lane + " " + step + " }\n        }\n    }\n    }\n";
  src += "    " + row + "    for (int64_t j = 0; j < n; ++j) {\n      " + lane + "\n";
  src += "      " + store(p, k, out_index(p, k.out), expr(k.body, acc)) + "\n    }\n    }\n";
  set_tile_row({});
  return src;
}

std::string HostPrinter::epilogue(const Plan& p) const {
  // Explicit extern: a const object at namespace scope would otherwise be internal.
  std::string s = "extern \"C\" {\nint ls_threads = 0;\nls_parallel_fn ls_parallel = 0;\n";
  for (const Kernel& k : p.kernels) s += "void " + k.name + "(void* const* bufs);\n";  // maybe in other units
  s += "typedef void (*ls_kernel_fn)(void* const*);\n";
  s += "extern const ls_kernel_fn ls_kernels[];\nconst ls_kernel_fn ls_kernels[] = {";
  for (size_t k = 0; k < p.kernels.size(); ++k) s += (k ? ", " : "") + p.kernels[k].name;
  if (p.kernels.empty()) s += "nullptr";
  s += "};\nextern const int ls_kernel_count;\nconst int ls_kernel_count = " + std::to_string(p.kernels.size()) + ";\n";
  // Buffer sizes the kernels were built for: the runtime refuses a module built for another plan.
  s += "extern const long long ls_buffer_bytes[];\nconst long long ls_buffer_bytes[] = " + buffer_bytes_init(p);
  s += ";\nextern const int ls_buffer_count;\nconst int ls_buffer_count = " + std::to_string(p.buffers.size()) + ";\n";
  s += "void ls_set_threads(int n) { ls_threads = n; }\n";
  s += "void ls_set_parallel(ls_parallel_fn f) { ls_parallel = f; }\n}\n";
  return s;
}

// Kernels whose range functions are the same but for their buffers (a model's repeated blocks)
// share the first one's, compiled once: the decoder's 247 kernels hold 120 distinct codes. A
// shared function is visible to the whole shared object, since its callers may lie in other
// translation units, each of which declares it.
ProgramSource HostPrinter::program(const Plan& p) const {
  const std::string placeholder = "ls_range_fn_";
  for (const Kernel& k : p.kernels) check_schedule(p, k);
  std::vector<size_t> first;
  std::vector<std::string> codes = by_position(p, first, [&](const Kernel& k) {
    return empty(p, k) ? std::string() : range(p, k, placeholder + "(void* const* bufs, int64_t ls_begin, int64_t ls_end)", true);
  });
  std::vector<std::string> notes(p.kernels.size());  // the comments of the kernels sharing each function
  for (size_t k = 0; k < p.kernels.size(); ++k)
    if (!empty(p, p.kernels[k])) notes[first[k]] += comment(p.kernels[k], first[k] == k ? "" : "runs " + p.kernels[first[k]].name + "_range");
  std::string src = prelude(), linkage = "__attribute__((noinline, visibility(\"hidden\"))) void ";
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const Kernel& kk = p.kernels[k];
    src += "\n" + std::string(kUnitBreak);
    if (empty(p, kk)) {
      src += comment(kk) + entry(p, kk, "", false);
      continue;
    }
    std::string fn = p.kernels[first[k]].name + "_range";
    if (first[k] == k) src += notes[k] + linkage + fn + codes[k].substr(placeholder.size());
    else src += linkage + fn + "(void* const*, int64_t, int64_t);\n";
    src += entry(p, kk, fn, true);
  }
  ProgramSource out{src + "\n" + kUnitBreak + epilogue(p), {}};
  for (const Kernel& k : p.kernels) out.entries.push_back(k.name);
  return out;
}

}  // namespace lockstep::codegen
