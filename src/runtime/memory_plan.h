// Buffer placement for temporaries: one arena, regions reused once their last reader ran.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel/kernel.h"

namespace lockstep {

struct MemoryPlan {
  std::vector<int64_t> offset;     // per buffer: byte offset in the arena, -1 if not a temp
  std::vector<int> first, last;    // per buffer: kernel writing it, last kernel reading it
  int64_t arena_bytes = 0;
};

// `live`, when given, supplies first/last (a symbolic program's live ranges are the same at
// every length, and walking the kernels for them is most of the cost of a bind).
MemoryPlan plan_memory(const kir::Plan& p, const MemoryPlan* live = nullptr);

// Proves that no two temporaries live at the same time overlap; throws Error otherwise.
void check_memory_plan(const kir::Plan& p, const MemoryPlan& m);

}  // namespace lockstep
