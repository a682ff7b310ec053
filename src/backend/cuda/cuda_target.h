// The cuda target's device: one non-blocking stream per program, device memory from
// cuMemAlloc, pinned staging memory, launches checked against the function's and the GPU's
// limits, events as fences and timers, and the queued plan captured as a CUDA graph.
#pragma once
#include <string>

#include "runtime/target.h"

namespace lockstep::cuda {

// The cuda entry of the target registry.
TargetInfo target_info();

}  // namespace lockstep::cuda
