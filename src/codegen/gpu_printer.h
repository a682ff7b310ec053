// GPU targets, spelled by a GpuDialect: each kernel's Gpu schedule launches `threads` work
// items in groups of `group`; a work item computes one output element (a grid-stride loop
// over the flat index) or, for a reduction, rows x cols of them, each with its own
// accumulator. Every sum runs inside its work item in the same fixed order as on the host, so
// the sums are the same float32 operations in the same order.
#pragma once
#include <map>
#include <vector>

#include "codegen/c_printer.h"
#include "codegen/program_source.h"
#include "codegen/units.h"

namespace lockstep::codegen {

class GpuPrinter : public CPrinter {
 public:
  explicit GpuPrinter(GpuDialect d) : CPrinter(d), g_(std::move(d)) {}
  // Everything before the kernels: the dialect's header and the helpers.
  std::string prelude() const;
  // One kernel with the ONNX nodes it computes in a comment; an InternalError without a Gpu
  // schedule.
  std::string kernel(const kir::Plan& p, const kir::Kernel& k) const;
  // After the kernels: the buffer sizes the program was built for, as globals the runtime reads,
  // or, for a dialect without device globals, a kernel ls_plan_info(out, room) that writes count then sizes.
  std::string epilogue(const kir::Plan& p) const;
  std::string plan_info_stores(const kir::Plan& p, const std::string& params) const;
  // Prelude + every kernel + epilogue, each after a kUnitBreak: what the target's compiler
  // builds. Kernels whose code is the same but for their buffers share one function (compiled
  // once): each kernel's entry is its own name or that of the first kernel whose code it shares.
  ProgramSource program(const kir::Plan& p) const;

 private:
  enum class Narrow { No, Yes, AtRunTime };  // whether a kernel's work items number under 2^32
  static constexpr int64_t kMax32 = 0xffffffffLL;
  // v0..v{r-1} from the flat index named `i` (kernel k of p: its run-time divisors).
  std::string unflatten(const kir::Plan& p, const kir::Kernel& k, const std::vector<kir::ExprP>& dims, Narrow narrow,
                        const std::map<size_t, std::string>& renamed = {}, const std::string& i = "i") const;
  static std::vector<kir::ExprP> dims(const kir::Plan& p, int b);
  static std::string column(const kir::Schedule& sc, const std::string& per_item);
  static constexpr const char* kEntry = "ls_entry";  // a kernel's function before it is named
  std::string code(const kir::Plan& p, const kir::Kernel& k, const std::string& entry) const;
  std::vector<std::string> same_code(const kir::Plan& p, std::vector<size_t>& first) const;
  std::string signature(const kir::Plan& p, const kir::Kernel& k, const std::string& entry) const;
  // A run-time divisor's multiplier as kernel k reads it, and index x / d by it where it can.
  std::string multiplier(const kir::Plan& p, const kir::Kernel& k, const kir::ExprP& d) const;
  std::string quotient(const kir::Plan& p, const kir::Kernel& k, const std::string& x, const kir::ExprP& d,
                       Narrow narrow) const;
  // Work items of one row block of tile t.
  static kir::ExprP row_block_items(const kir::Plan& p, const kir::Kernel& k, const kir::Schedule& t);
  // The loop of a kernel without a reduction, and one of its rounds (see gpu_printer.cpp).
  std::string elements(const kir::Plan& p, const kir::Kernel& k, Narrow narrow) const;
  std::string element_rounds(const kir::Plan& p, const kir::Kernel& k, Narrow narrow, const std::string& loop,
                             const std::string& at) const;
  // One work item's outputs under tile `sc` (one of tile_choices), without the loop around it.
  std::string reduction(const kir::Plan& p, const kir::Kernel& k, const kir::Schedule& sc, const kir::Expr& red,
                        Narrow narrow) const;
  std::string tile_body(const kir::Plan& p, const kir::Kernel& k, const kir::Schedule& t, const kir::Expr& red,
                        Narrow narrow, bool whole) const;
  // Copies the schedule's staged operand into the group's shared array ([slot][term][row]).
  std::string stage_operand(const kir::Plan& p, const kir::Kernel& k, const kir::Schedule& sc, const kir::Expr& red,
                            Narrow narrow) const;
  static std::string staged_index(const kir::Schedule& sc, const kir::Expr& red);
  GpuDialect g_;
};

}  // namespace lockstep::codegen
