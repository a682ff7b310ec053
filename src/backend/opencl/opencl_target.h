// The opencl target: OpenCL C from the shared GPU printer, built by the platform's compiler,
// run through the ICD loader (PoCL on a CPU, NVIDIA's OpenCL on its GPUs).
#pragma once
#include "runtime/target.h"

namespace lockstep::opencl {

// The opencl entry of the target registry.
TargetInfo target_info();

}  // namespace lockstep::opencl
