// How a kernel's loops are laid out on its target. The schedule pass chooses it from the
// target's TargetDesc; printers only spell it and the runtime launches from it.
#pragma once
#include <cstdint>
#include <string>

namespace lockstep::kir {

struct Schedule {
  enum class Loops : uint8_t {
    Unset,  // not chosen yet: nothing can be printed
    Host,   // nested loops over the output, the last dim in tiles of `lanes`
    Gpu,    // `threads` work items in groups of `group`, each computing rows x cols outputs
  };
  Loops loops = Loops::Unset;
  // Both: consecutive indices of the dim before the last that one host tile or GPU work item
  // computes (each input row loaded serves all of them); 1 unless the kernel reduces.
  int64_t rows = 1;
  // Host: elements of the last dim per tile (a reduction keeps rows x lanes accumulators).
  int64_t lanes = 0;
  // Host: the output dim whose loop the tile loop runs just outside of (a reduction's tiles
  // run outside the dim before the last, so a thread's tiles share their input window).
  int64_t tile_at = 0;
  // GPU: threads per group, and work items launched (output elements / (rows x cols)).
  int64_t group = 0;
  int64_t threads = 0;
  // GPU: consecutive indices of the last dim per work item.
  int64_t cols = 1;
  // GPU: the innermost reduction loop is unrolled when it runs at most this many times (0: never).
  int64_t unroll = 0;
  // GPU, a reduction over a symbolic length: at a length with fewer than this many work items
  // of rows x cols, each work item computes one output instead (the kernel holds both loops
  // and picks at run time; the same bits either way); 0: never.
  int64_t fill = 0;

  bool chosen() const { return loops != Loops::Unset; }
};

// "gpu group=256 threads=4096 rows=4 cols=4 unroll=16", for IR dumps.
std::string describe(const Schedule& s);

}  // namespace lockstep::kir
