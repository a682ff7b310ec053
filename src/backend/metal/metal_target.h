// The metal targets: MSL from the shared GPU printer, run by metal_device.cpp over a Metal
// driver: the machine's (macOS builds only) for `metal`, the simulated one for `metal-sim`.
#pragma once
#include "runtime/target.h"

namespace lockstep::metal {

TargetInfo target_info();      // metal: Apple GPUs
TargetInfo sim_target_info();  // metal-sim: the same MSL and runtime over the simulated device

}  // namespace lockstep::metal
