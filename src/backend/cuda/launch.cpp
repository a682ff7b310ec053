#include "backend/cuda/launch.h"

#include <algorithm>

#include "core/error.h"
#include "runtime/device_toolkit.h"

namespace lockstep::cuda {

FunctionLimits function_limits(const Driver& api, CUfunction f) {
  FunctionLimits l;
  check(api.cuFuncGetAttribute(&l.max_threads_per_block, kFuncMaxThreadsPerBlock, f), "cuFuncGetAttribute");
  check(api.cuFuncGetAttribute(&l.shared_bytes, kFuncSharedBytes, f), "cuFuncGetAttribute");
  check(api.cuFuncGetAttribute(&l.registers, kFuncNumRegs, f), "cuFuncGetAttribute");
  check(api.cuFuncGetAttribute(&l.local_bytes, kFuncLocalBytes, f), "cuFuncGetAttribute");
  return l;
}

LaunchShape launch_shape(int64_t elements, int block, const DeviceLimits& d) {
  LaunchShape s;
  s.block = static_cast<unsigned>(block);
  int64_t blocks = (elements + block - 1) / block;
  s.grid = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, std::max(d.max_grid_x, 1)));
  return s;
}

void validate_launch(const kir::Kernel& k, const LaunchShape& s, const FunctionLimits& f, const DeviceLimits& d) {
  std::string why;
  int64_t block = s.block;
  int64_t shared = int64_t{f.shared_bytes} + s.dynamic_shared;
  if (block < 1) why = "an empty block";
  else if (block > d.max_threads_per_block)
    why = std::to_string(block) + " threads per block, the device allows " + std::to_string(d.max_threads_per_block);
  else if (block > f.max_threads_per_block)
    why = std::to_string(block) + " threads per block, the compiled kernel allows " +
          std::to_string(f.max_threads_per_block) + " (" + std::to_string(f.registers) + " registers a thread)";
  else if (block * f.registers > d.max_registers_per_block)
    why = std::to_string(block * f.registers) + " registers per block, the device has " +
          std::to_string(d.max_registers_per_block);
  else if (shared > d.max_shared_per_block)
    why = std::to_string(shared) + " bytes of shared memory per block, the device has " +
          std::to_string(d.max_shared_per_block);
  else if (s.grid < 1 || static_cast<int64_t>(s.grid) > d.max_grid_x)
    why = std::to_string(s.grid) + " blocks, the device allows " + std::to_string(d.max_grid_x);
  refuse_launch("cuda", k, why);
}

}  // namespace lockstep::cuda
