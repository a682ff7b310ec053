// One C-style printer for every target. It prints expression trees, loads and stores; a
// target subclass supplies data (type names, qualifiers, math spellings) and the shape of a
// kernel around the per-element code (loops on the CPU, thread indices on GPUs).
#pragma once
#include <string>
#include <string_view>

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
  virtual ~CPrinter() = default;
  // Source of one kernel, with the ONNX nodes it computes in a comment.
  virtual std::string kernel(const kir::Plan& p, const kir::Kernel& k) const = 0;
  // Everything before the kernels: includes and the helper functions the kernels call.
  virtual std::string prelude() const = 0;
  // Rows of the dim before the last that one reduction tile (or GPU thread) computes: the
  // largest power of two up to `most` dividing it; 1 for rank < 2.
  static int64_t reduce_rows(const Shape& s, int64_t most);

 protected:
  // Spelling of a dtype in arithmetic (f16/bf16 compute in float) and in memory.
  virtual std::string compute_type(DType t) const;
  virtual std::string storage_type(DType t) const;
  // Math function for a float type: "tanhf" on C, "tanh" on Metal...
  virtual std::string math(const char* base, DType t) const;
  virtual std::string literal(const kir::Expr& e) const;

  // Shared printing.
  std::string expr(const kir::ExprP& e, const std::string& acc = "") const;
  std::string index(const kir::Expr& load) const;
  std::string load_value(const kir::Expr& e) const;
  std::string store(const kir::Plan& p, const kir::Kernel& k, const std::string& flat, const std::string& value) const;
  std::string out_index(const Shape& s) const;  // row-major flat index of v0..v{r-1}
  std::string comment(const kir::Kernel& k) const;
  // "ACC = ..." folding a reduction's next term into its accumulator `acc`.
  std::string reduce_step(const kir::Expr& red, const std::string& acc) const;
  static std::string buf_name(int b) { return "b" + std::to_string(b); }
  // "{16, 4096, ...}": every buffer's bytes, which a runtime checks a loaded module against.
  static std::string buffer_bytes_init(const kir::Plan& p);
};

}  // namespace lockstep::codegen
