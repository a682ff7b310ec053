// How a kernel's loops are laid out on its target. The schedule pass chooses it from the
// target's TargetDesc; printers only spell it and the runtime launches from it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::kir {

struct Schedule {
  enum class Loops : uint8_t {
    Unset,  // not chosen yet: nothing can be printed
    Host,   // nested loops over the output, the last dim in tiles of `lanes`
    Gpu,    // `threads` work items in groups of `group`, each computing rows x cols outputs
  };
  Loops loops = Loops::Unset;
  // Both: consecutive indices of the dim before the last that one host tile or GPU work item
  // computes (each input row loaded serves all of them); 1 unless the kernel reduces. They
  // divide the dim on a GPU; a host dim they do not divide ends in a tile of the rest.
  int64_t rows = 1;
  // Host: elements of the last dim per tile (a reduction keeps rows x lanes accumulators).
  int64_t lanes = 0;
  // Host: the output dim whose loop the tile loop runs just outside of (a reduction's tiles
  // run outside the dim before the last, so a thread's tiles share their input window).
  int64_t tile_at = 0;
  // GPU: threads per group, and work items launched (output elements / (rows x cols)).
  int64_t group = 0;
  int64_t threads = 0;
  // GPU: indices of the last dim per work item: adjacent, or with `spread_cols` a row's
  // 1/cols apart (column l of item vl is l * last / cols + vl), so that the work items of a
  // warp read each input row and write each output row in one contiguous run (adjacent
  // columns would read every cols-th element per load).
  int64_t cols = 1;
  bool spread_cols = false;
  // GPU, no reduction: elements per work item, `threads` work items apart, all loaded before
  // any is stored (one element per item keeps too few loads in flight to cover memory latency);
  // halved, down to one, while the work items would number under `fill` (a symbolic length's
  // at bind: the kernel's loop serves any launch size).
  int64_t per_item = 1;
  // GPU: the innermost reduction loop is unrolled when it runs at most this many times (0: never).
  int64_t unroll = 0;
  // GPU, a kernel over a symbolic length: at a length with fewer than this many work items
  // of rows x cols, a work item of a reduction computes fewer outputs (the kernel holds every
  // tile of tile_choices and picks at run time; the same bits either way), one of an
  // elementwise kernel fewer elements (per_item); 0: never.
  int64_t fill = 0;
  // ... first a smaller tile of fill_rows x fill_cols (0: none), then one output per item.
  int64_t fill_rows = 0;
  int64_t fill_cols = 0;
  // GPU, a reduction: the buffer whose loads in each term a group first copies into shared
  // memory, as [term][row of the tile] (every work item of the group reads the same ones: a
  // conv's weights); -1: none.
  int stage = -1;
  // Row blocks the copy holds: 1 where each row block of the output holds whole groups; 2
  // where a group may straddle two (the kernel stages only while a row block holds at least a
  // group, which a symbolic length decides at run time).
  int64_t stage_slots = 1;
  int64_t stage_row_bytes = 0;  // of one row's copy: the sum's terms x the compute type's bytes
  // GPU: bytes of shared memory a group uses at the bound length (the tile chosen there);
  // targets that size it at launch (CUDA's dynamic shared memory) ask for this much.
  int64_t shared = 0;

  bool chosen() const { return loops != Loops::Unset; }
};

// "gpu group=256 threads=4096 rows=4 cols=4 unroll=16", for IR dumps.
std::string describe(const Schedule& s);

// The tiles a GPU reduction over a symbolic length holds, the first that suits a length
// taken: its own; its fill_rows x fill_cols one; one output per item (staging nothing). A
// tile suits a length where its work items number at least `fill` and, if it stages, a row
// block holds a group of them. A fixed-shape kernel, or one with a single tile, holds {s}.
std::vector<Schedule> tile_choices(const Schedule& s, bool symbolic);
// t.per_item halved, down to one, while `outputs` would take fewer than t.fill work items.
int64_t elements_per_item(const Schedule& t, int64_t outputs);
// Work items tile t launches for `outputs` outputs (the last takes fewer where they do not
// divide), with elements_per_item elements each.
int64_t work_items(const Schedule& t, int64_t outputs);
// Bytes of shared memory tile t's groups use.
int64_t shared_bytes(const Schedule& t);
// Whether tile t of the choices suits a length with `outputs` outputs and `last` columns.
bool tile_suits(const Schedule& s, const Schedule& t, int64_t outputs, int64_t last);

}  // namespace lockstep::kir
