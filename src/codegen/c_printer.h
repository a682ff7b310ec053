// The C-style printing every target shares: expression trees, loads, stores and the reduction
// step, spelled through the target's CDialect. The host and GPU printers build kernels on it.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include "codegen/dialect.h"
#include "kernel/kernel.h"

namespace lockstep::codegen {

// A user string (an ONNX node name) spelled so that it is inert inside a `//` comment of every
// target: only characters that cannot end the comment, splice a line (backslash), open or
// close a block comment ('/', '*'), form a trigraph ('?') or quote; the rest become %XX
// ('%' too), and text past kCommentTextMax is cut and its length given.
inline constexpr size_t kCommentTextMax = 120;
std::string comment_text(std::string_view user);

class CPrinter {
 public:
  explicit CPrinter(CDialect d) : d_(std::move(d)) {}
  // One element's value; a Reduce stands for the accumulator `acc`. An expression no target
  // can print (a broken IR) is an InternalError naming it.
  std::string expr(const kir::ExprP& e, const std::string& acc = "") const;
  const CDialect& dialect() const { return d_; }

 protected:
  std::string select_chain(const kir::ExprP& e, const std::string& acc) const;
  // Spelling of a dtype in arithmetic (f16/bf16 compute in float) and in memory.
  std::string compute_type(DType t) const;
  std::string storage_type(DType t) const;
  std::string math(const char* base, DType t) const;  // the target's: "sqrtf" for float in C
  // exp, log, tanh, erf, pow: the math library's "ls_exp" for float compute, "exp" for f64.
  std::string transcendental(const char* base, DType t) const;
  // The prelude's helper for compute type t: "ls_min_int32_t" (no target overloads them).
  std::string helper(const std::string& base, DType t) const;
  std::string literal(const kir::Expr& e) const;
  std::string index(const kir::Expr& load) const;
  std::string load_value(const kir::Expr& e) const;
  std::string store(const kir::Plan& p, const kir::Kernel& k, const std::string& flat, const std::string& value) const;
  // Row-major flat index of v0..v{r-1} into buffer b.
  std::string out_index(const kir::Plan& p, int b) const;
  // Dim d of buffer b: a number, or an expression of the symbols in a symbolic plan.
  std::string dim(const kir::Plan& p, int b, size_t d) const;
  // The same for any int64 expression: a number when it is one.
  std::string size(const kir::ExprP& e) const;
  // "// k3: node, node" (with a note: "// k3 (note): ...").
  std::string comment(const kir::Kernel& k, const std::string& note = "") const;
  // A symbolic plan's kernel reads the symbols once, into locals the loops then use:
  // "const int64_t ls_s0 = b12[0];" (empty for a kernel of a concrete plan).
  std::string read_symbols(const kir::Plan& p, const kir::Kernel& k) const;
  // The printer's state for one kernel's function, held while it is printed: the symbols read
  // from its own buffer (as ls_sN), nothing staged and no split tile row left from another.
  // Printers are shared and long-lived: without it, the dims printed before read_symbols
  // depended on the kernel printed before, and the first symbolic program of a process
  // printed (and cached) differently from every later one.
  class KernelScope {
   public:
    KernelScope(const CPrinter& p, const kir::Kernel& k);
    ~KernelScope();
    KernelScope(const KernelScope&) = delete;
    KernelScope& operator=(const KernelScope&) = delete;

   private:
    const CPrinter& p_;
  };
  // "ACC = ..." folding a reduction's next term into its accumulator `acc`.
  std::string reduce_step(const kir::Expr& red, const std::string& acc) const;
  // The accumulator's first value: the identity of the reduction.
  std::string reduce_init(const kir::Expr& red) const;
  std::string int_limit(DType t, bool greatest) const;
  // "b12", or the name set_param_names gave buffer 12.
  std::string buf_name(int b) const;
  static std::string loop(const std::string& v, int64_t extent);  // "for (int64_t v = 0; v < N; ++v)\n"
  // Printed index arithmetic with unit factors folded, so kernels read as the math they do:
  // times("c", 1) is "c", over("i", "1") is "i", mod("e", 1) is "0".
  static std::string times(const std::string& a, int64_t c);            // "a * c"
  static std::string over(const std::string& a, const std::string& d);  // "a / (d)"
  static std::string mod(const std::string& a, int64_t c);              // "a % c"
  // Re-indents one function's printed text by its braces (two spaces a level), so nested
  // loops read as nested. Braces in comments are not counted.
  static std::string indented(const std::string& code);
  static std::string loop(const std::string& v, const std::string& extent);
  // "{16, 4096, ...}": every buffer's bytes, which a runtime checks a loaded module against.
  static std::string buffer_bytes_init(const kir::Plan& p);
  // Inside a tile of `rows` output rows, row var `var` is `block * rows + lane`: its quotient
  // and remainder by `rows` (block_constant_rows indexes constants by them) print as those.
  struct TileRow {
    int var = -1;
    int64_t rows = 0;
    std::string block, lane;
  };
  void set_tile_row(TileRow t) const { tile_ = std::move(t); }
  // Loads of buffer `buf` print as `text` (a group's copy of them in shared memory); -1: none.
  struct Staged {
    int buf = -1;
    std::string text;
  };
  void set_staged(Staged s) const { staged_ = std::move(s); }
  // Buffers printed by position instead of number ("p0" for params[0]): kernels that differ
  // only in which buffers they take then print the same. Empty: by number.
  void set_param_names(const std::vector<int>& params) const { params_ = params; }
  // Each kernel's text from `print` with its buffers named by position (kernel_params), so that
  // kernels differing only in their buffers (a model's repeated blocks) print the same;
  // `first[k]` is the first kernel whose text is kernel k's.
  std::vector<std::string> by_position(const kir::Plan& p, std::vector<size_t>& first,
                                       const std::function<std::string(const kir::Kernel&)>& print) const;

 private:
  std::string unary(const kir::Expr& e, const std::string& a) const;
  std::string wrapped(DType t, const std::string& expr) const;  // "((T)(expr))"
  mutable int symbols_ = -1;  // the kernel being printed reads the symbols from this buffer
  mutable TileRow tile_;      // the tile being printed, if its row var is split
  mutable Staged staged_;     // the reduction term being printed reads this buffer from shared memory
  mutable std::vector<int> params_;  // set_param_names
  std::string tile_part(const kir::Expr& e) const;  // "" unless e is that quotient or remainder
  std::string binary(const kir::Expr& e, const std::string& a, const std::string& b) const;
  CDialect d_;
};

// Buffers a kernel takes, in order: its output, then what it reads (a GPU kernel's parameters,
// a shared host range function's array).
std::vector<int> kernel_params(const kir::Kernel& k);

// A printer's output as the files --emit-source writes: the prelude, one file per kernel
// (named after it, with `kernel_ext`), the epilogue.
template <class Printer>
std::vector<std::pair<std::string, std::string>> source_files(const Printer& printer, const kir::Plan& p,
                                                              const std::string& prelude, const std::string& kernel_ext,
                                                              const std::string& epilogue) {
  std::vector<std::pair<std::string, std::string>> files = {{prelude, printer.prelude()}};
  for (const kir::Kernel& k : p.kernels) files.emplace_back(k.name + kernel_ext, printer.kernel(p, k));
  files.emplace_back(epilogue, printer.epilogue(p));
  return files;
}

}  // namespace lockstep::codegen
