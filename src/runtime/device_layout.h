// Where each buffer of a plan lives in the program's two device allocations: constants in one
// (uploaded once, kept while a symbolic program binds new lengths), and in the other graph
// inputs, outputs and symbol values in regions of their own and temporaries in one arena
// placed by plan_memory. In checked mode every region has sentinel guards on both sides.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/kernel.h"
#include "runtime/memory_plan.h"

namespace lockstep {

struct DeviceLayout {
  struct Region {
    std::string what;            // "output 'z'", "temporary arena"
    int64_t at = 0, bytes = 0;   // data, guards excluded
    bool constant = false;       // in the constants' allocation
  };
  std::vector<int64_t> offset;   // per buffer: byte offset in its allocation, -1 if none
  std::vector<Region> regions;
  int64_t arena_at = 0, arena_bytes = 0;
  int64_t guard = 0;             // sentinel bytes before and after each region
  int64_t total = 0;             // bytes of the allocation of everything but constants
  int64_t constant_total = 0;    // bytes of the constants' allocation
};

// `align`: every region starts at a multiple of it (TargetDesc::buffer_align).
DeviceLayout layout_device_memory(const kir::Plan& p, const MemoryPlan& m, bool checked, int64_t align);

}  // namespace lockstep
