// The opencl target's device: one in-order command queue per program on a shared context;
// buffers addressed as (cl_mem, offset) behind the runtime's flat addresses; non-blocking
// writes whose host memory the staging pool keeps until their marker event completes;
// launches checked against the kernel's and the device's work-group and local-memory limits.
#pragma once
#include <memory>

#include "backend/opencl/opencl_platform.h"
#include "runtime/device.h"

namespace lockstep::opencl {

std::unique_ptr<Device> make_device(Context& c, int index);

}  // namespace lockstep::opencl
