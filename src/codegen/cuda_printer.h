// The CUDA target: one thread per output element (a grid-stride loop over the flat index);
// a reduction runs inside its thread in the same fixed order as on the CPU, so the sums are
// the same float32 operations in the same order.
#pragma once
#include <vector>

#include "codegen/c_printer.h"

namespace lockstep::codegen {

constexpr int kCudaBlock = 256;  // threads per block of every kernel (__launch_bounds__)

class CudaPrinter : public CPrinter {
 public:
  std::string kernel(const kir::Plan& p, const kir::Kernel& k) const override;
  std::string prelude() const override;
  // After the kernels: the buffer sizes the module was built for, as device globals.
  std::string epilogue(const kir::Plan& p) const;
};

// Buffers a kernel takes as parameters, in order: its output, then what it reads.
std::vector<int> cuda_kernel_params(const kir::Kernel& k);

// Prelude + every kernel + epilogue: the translation unit NVRTC compiles.
std::string cuda_program_source(const kir::Plan& p);

}  // namespace lockstep::codegen
