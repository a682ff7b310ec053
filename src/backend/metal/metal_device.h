// The metal targets' runtime: lockstep's Device over metal_api.h, the same code on a real Metal
// device and on metal-sim. One MTLBuffer per allocation, addressed as (buffer, offset) behind
// the runtime's flat addresses; uploads blitted from shared staging buffers, each fence a
// committed command buffer; downloads blitted into buffers the host reads after they complete;
// pipelines cached by content; launches checked against the pipeline's and device's limits.
#pragma once
#include <memory>
#include <string>

#include "backend/metal/metal_api.h"
#include "runtime/device.h"

namespace lockstep::metal {

// The device of target `target` (its name, for messages) on `d`.
std::unique_ptr<Device> make_device(MetalDriver& d, const std::string& target);

// The compiler of MSL on `d`; with no driver, the code is the MSL source itself, unbuilt (a
// Metal device builds it when it loads it), so the metal target still compiles and emits source.
std::unique_ptr<CodeCompiler> make_compiler(MetalDriver* d);

}  // namespace lockstep::metal
