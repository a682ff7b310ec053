// Launch checks: a kernel's block size, shared memory and registers against what the
// compiled function allows (cuFuncGetAttribute) and the device's limits, before it runs.
#pragma once
#include <string>

#include "backend/cuda/cuda_device.h"
#include "kernel/kernel.h"

namespace lockstep::cuda {

struct FunctionLimits {
  int max_threads_per_block = 0;  // what the function can launch with (registers decide)
  int shared_bytes = 0;           // static shared memory
  int registers = 0;              // per thread
  int local_bytes = 0;            // per-thread stack (spills)
};

FunctionLimits function_limits(const Driver& api, CUfunction f);

struct LaunchShape {
  unsigned grid = 1, block = 1;
  unsigned dynamic_shared = 0;
};

// Grid for `elements` outputs of a grid-stride kernel.
LaunchShape launch_shape(int64_t elements, int block, const DeviceLimits& d);

// Throws Error naming the kernel and its ONNX nodes when the launch cannot run as asked.
void validate_launch(const kir::Kernel& k, const LaunchShape& s, const FunctionLimits& f, const DeviceLimits& d);

}  // namespace lockstep::cuda
