// The GPU printer (in progress): kernels of one work item per output element or block of them.
#pragma once
#include <vector>

#include "kernel/kernel.h"

namespace lockstep::codegen {

// Buffers a GPU kernel takes as parameters, in order: its output, then what it reads.
std::vector<int> kernel_params(const kir::Kernel& k);

}  // namespace lockstep::codegen
