// The one list of built-in targets. Each backend folder fills in its own TargetInfo; nothing
// else in lockstep names a target.
#include "backend/cpu/cpu_device.h"
#include "backend/cuda/cuda_target.h"
#include "backend/metal/metal_target.h"
#include "backend/opencl/opencl_target.h"
#include "backend/ref/ref_target.h"
#include "runtime/target.h"

namespace lockstep {

void register_builtin_targets() {
  register_target(ref_target_info());
  register_target(cpu::target_info());
  register_target(cuda::target_info());
  register_target(opencl::target_info());
  register_target(metal::target_info());
  register_target(metal::sim_target_info());
}

}  // namespace lockstep
