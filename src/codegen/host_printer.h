// Host targets: C++ loops over output elements, laid out by each kernel's Host
// schedule; the last dim is processed in tiles of lanes so that reductions keep one
// accumulator per lane and vectorise across lanes.
#pragma once
#include "codegen/c_printer.h"
#include "codegen/program_source.h"
#include "codegen/units.h"

namespace lockstep::codegen {

class HostPrinter : public CPrinter {
 public:
  explicit HostPrinter(CDialect d) : CPrinter(std::move(d)) {}
  // Everything before the kernels: the dialect's header, the thread count, the helpers.
  std::string prelude() const;
  // One kernel with the ONNX nodes it computes in a comment; an InternalError without a
  // Host schedule.
  std::string kernel(const kir::Plan& p, const kir::Kernel& k) const;
  // The kernel table and thread control (ls_set_threads, ls_set_parallel) that the runtime
  // looks up with dlsym.
  std::string epilogue(const kir::Plan& p) const;
  // Prelude + every kernel + epilogue, each after a kUnitBreak: what the system compiler builds.
  ProgramSource program(const kir::Plan& p) const;  // entries: each kernel's own name

 private:
  // `head` { and a pointer for each buffer the kernel reads or writes, from bufs[buffer id] or,
  // `by_position`, from bufs[its place in kernel_params].
  std::string signature(const kir::Plan& p, const kir::Kernel& k, const std::string& head, bool by_position) const;
  std::vector<std::pair<std::string, std::string>> outer_loops(const kir::Plan& p, const kir::Kernel& k) const;
  void check_schedule(const kir::Plan& p, const kir::Kernel& k) const;
  static bool empty(const kir::Plan& p, const kir::Kernel& k);
  std::string range(const kir::Plan& p, const kir::Kernel& k, const std::string& head, bool by_position) const;
  std::string entry(const kir::Plan& p, const kir::Kernel& k, const std::string& fn, bool args) const;
  std::string reduction(const kir::Plan& p, const kir::Kernel& k, const kir::Expr& red, int64_t rows) const;
  struct Window {
    std::string declare, copy;  // before the iterations; at the top of each
  };
  Window window_copy(const kir::Plan& p, const kir::Kernel& k, const kir::Expr& red, const std::string& row_blocks) const;
};

}  // namespace lockstep::codegen
