// What a target tells the compiler about itself: plain data, so passes and printers decide
// from it without knowing any target by name.
#pragma once
#include <cstdint>
#include <string>

namespace lockstep::kir {

struct TargetDesc {
  std::string name;
  bool gpu = false;  // kernels are launched as work items in groups, not run as host loops
  // Types the target computes in: lowering rewrites (or refuses) what it lacks.
  bool has_f64 = true;
  bool has_i64 = true;
  // Limits of one kernel; 0: none.
  int64_t max_group_threads = 0;  // threads per group
  int64_t shared_bytes = 0;       // shared / threadgroup memory per group
  int64_t max_buffer_args = 0;    // buffers one kernel may take as arguments
  // Every buffer region of a program's device memory starts at a multiple of this: a cache
  // line on the host, the drivers' own allocation alignment on GPUs.
  int64_t buffer_align = 256;
  // Host loop schedules: elements of the last dim per tile with and without a reduction, and
  // at most this many rows of the dim before the last per reduction tile.
  int64_t reduce_lanes = 0;
  int64_t element_lanes = 0;
  int64_t reduce_rows = 0;
  // Host reductions: a cheap elementwise producer of a conv's input (its pad, a LeakyRelu) is
  // computed inside the conv, each tile copying the window of input it reads once
  // (absorb_windows), where that copy takes at most this many bytes; 0: never.
  int64_t window_bytes = 0;
  // GPU schedules: threads per group; at most this many rows (dim before the last) and columns
  // (last dim) of outputs per work item of a reduction; innermost reduction loops this short
  // are unrolled when a work item computes several columns.
  int64_t group_threads = 0;
  int64_t thread_rows = 0;
  int64_t thread_cols = 0;
  bool spread_cols = false;  // a work item's columns lie 1/thread_cols of a row apart
  int64_t unroll = 0;
  // A reduction of fixed shape with fewer work items than this computes fewer outputs per
  // item, down to one, so that a small conv still fills the device; 0: no such rule.
  int64_t fill_threads = 0;
  // The same rule for a reduction over a symbolic length, chosen at run time among its three
  // tiles (not every halving): a quarter tile with staged weights beats one output per item down
  // to fewer work items than a fixed shape's next halving would; 0: fill_threads.
  int64_t symbolic_fill_threads = 0;
  // Elements each work item of a kernel without a reduction computes (their loads in flight
  // together; 0 or 1: one), fewer while the items would number under element_fill (a kernel
  // of one partial wave is latency-bound: more items, each shorter, finish it sooner).
  int64_t element_items = 0;
  int64_t element_fill = 0;
};

}  // namespace lockstep::kir
