// The simulated Metal device behind metal_api.h. Buffers are guarded host mappings; libraries
// are the MSL built by the host compiler (sim_compiler.h); each queue runs its committed
// command buffers late, in order, on a thread of its own; a dispatch runs every thread of every
// threadgroup on the CPU with its buffer bindings checked and guarded (sim_dispatch.h).
#pragma once
#include <cstdint>

#include "backend/metal/metal_api.h"

namespace lockstep::metal::sim {

// What the simulator has seen in this process: for tests and reports.
struct Stats {
  int64_t poisoned_writes = 0;  // host writes into a buffer a pending copy still had to read
  int64_t dispatches = 0;
  int64_t guarded_bindings = 0;  // bindings a dispatch ran on a guarded copy of
};
Stats stats();
void count_poisoned_write();
void count_dispatch(int64_t guarded_bindings);

// The simulated device's limits (an Apple GPU's).
constexpr size_t kMaxThreadsPerThreadgroup = 1024;
constexpr size_t kMaxThreadgroupMemory = 32 * 1024;

}  // namespace lockstep::metal::sim
