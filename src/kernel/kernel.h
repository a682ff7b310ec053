// The kernel representation: a Plan is buffers plus an ordered list of kernels; each kernel
// (a fusion group) writes one buffer, element by element, from one expression tree.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "kernel/expr.h"
#include "kernel/schedule.h"

namespace lockstep::kir {

struct Buffer {
  // Symbols: the int64 values of a symbolic plan's symbols, written by the runtime at bind.
  enum Kind { Input, Output, Constant, Temp, Symbols };
  Kind kind = Temp;
  DType dtype = DType::f32;
  Shape shape;  // in a symbolic plan: the shape at the plan's probe lengths (see `dims`)
  // Symbolic plans only: each dim as an int64 expression of the symbols (loads of the Symbols
  // buffer); empty for a buffer whose shape is the same at every length.
  std::vector<ExprP> dims;
  std::string name;                      // the graph value it holds
  int io_index = -1;                     // position among graph inputs / outputs
  std::shared_ptr<const Tensor> data;    // Constant only
  int64_t numel() const { return shape_numel(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  // The size compiled code records for it: -1 where it depends on the symbols.
  long long module_bytes() const { return dims.empty() ? static_cast<long long>(bytes()) : -1; }
};

// The most buffers one kernel takes (its output, the buffers it loads, the Symbols buffer):
// Metal's argument table, the smallest of any target. Fusion never exceeds it and wider
// lowered kernels are split (split_wide_kernels), so every target prints the same plan.
inline constexpr int kMaxKernelBuffers = 31;
inline constexpr int kMaxKernelLoads = kMaxKernelBuffers - 2;  // besides the output and symbols

// One kernel: out[v0..v{r-1}] = body for every index of `shape` (r = rank). Reduction vars,
// if the body has a Reduce, are numbered from r.
struct Kernel {
  std::string name;                 // "k12"
  std::vector<std::string> nodes;   // ONNX nodes it computes, in graph order
  int out = -1;                     // buffer written
  ExprP body;
  Schedule schedule;                // loop layout on the target, set by choose_schedules
  int symbols = -1;                 // symbolic plans: the Symbols buffer, read for the sizes
  // A layout change worth its own pass over memory (a transposed conv's phases interleaved):
  // fusion never inlines it into its readers, which then read its output in order.
  bool materialise = false;
  // A producer this kernel computes itself (absorb_windows: the schedule's choice on a target
  // that stages windows), instead of a kernel of its own: the buffer it wrote, which this
  // kernel's reduction reads through a window (passes/window.h) that each tile stages, and its
  // value at that buffer's index v0..v{rank-1}. The buffer itself is then never written.
  struct Window {
    int buf = -1;
    ExprP value;
  };
  Window window;
  const Shape& shape(const std::vector<Buffer>& bufs) const { return bufs[out].shape; }
};

struct Plan {
  std::vector<Buffer> buffers;
  std::vector<Kernel> kernels;  // in execution order
  std::vector<int> inputs;      // buffer ids, graph input order
  std::vector<int> outputs;     // buffer ids, graph output order
  // Buffers that must hold 0 after a run: an int64 count of elements a node found invalid
  // (run-time Gather indices out of range), so bad data is an error, never a silent value.
  struct Check {
    int buf = -1;
    std::string node, what;  // the ONNX node, and what the count counts
  };
  std::vector<Check> checks;
  // A symbolic plan serves every value of these symbols ("T"): its kernels read them from
  // buffer `symbol_buf` and instantiate() gives the concrete plan for one set of values.
  std::vector<std::string> symbols;
  int symbol_buf = -1;
  // Run-time divisors of a symbolic plan's GPU kernels (kernel/symbols.h): that buffer holds,
  // after the symbols, a multiplier for each, which the runtime computes at bind.
  std::vector<ExprP> divisors;
  bool symbolic() const { return symbol_buf >= 0; }
};

// Dim d of buffer b as an int64 expression (a constant unless the plan is symbolic).
ExprP dim_expr(const Plan& p, int b, size_t d);
// Row-major strides of buffer b as expressions.
std::vector<ExprP> stride_exprs(const Plan& p, int b);
// Row-major strides of `dims`.
std::vector<ExprP> strides_of(const std::vector<ExprP>& dims);
// Row-major flat index of `index` into buffer b, as an expression (size-1 dims skipped).
ExprP flat_index(const Plan& p, int b, const std::vector<ExprP>& index);
// Elements of buffer b as an expression.
ExprP numel_expr(const Plan& p, int b);

// Throws the error of the first check whose count (in the order of p.checks) is not 0,
// naming its node.
void require_checks_pass(const Plan& p, const std::vector<int64_t>& counts);

// The kernel's ONNX nodes, comma-separated ("a, b, c"), for messages.
std::string node_list(const Kernel& k);

// Readable listing of a kernel / plan ("k3 [conv /flow/..]: b7[1,144,1024] = ...").
std::string describe(const Plan& p, const Kernel& k);
std::string describe(const Plan& p);
// Var(0) .. Var(rank-1): the output index of a kernel.
std::vector<ExprP> out_vars(size_t rank);
// Buffers each kernel reads, without duplicates, in first-use order: a window's producer reads
// in place of its buffer.
std::vector<int> kernel_inputs(const Kernel& k);

}  // namespace lockstep::kir
