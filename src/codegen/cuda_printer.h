// The CUDA target: one thread per output element (a grid-stride loop over the flat index), or
// for a reduction a few consecutive elements of the dim before the last, each with its own
// accumulator; every sum runs inside its thread in the same fixed order as on the CPU, so the
// sums are the same float32 operations in the same order.
#pragma once
#include <vector>

#include "codegen/c_printer.h"

namespace lockstep::codegen {

constexpr int kCudaBlock = 256;  // threads per block of every kernel (__launch_bounds__)
constexpr int64_t kCudaCoarsen = 4;   // output rows (dim before the last) per thread of a reduction
constexpr int64_t kCudaColumns = 4;   // ... times output columns (last dim), where they divide
constexpr int64_t kCudaUnroll = 16;   // innermost reduction loops this short are unrolled

class CudaPrinter : public CPrinter {
 public:
  std::string kernel(const kir::Plan& p, const kir::Kernel& k) const override;
  std::string prelude() const override;
  // After the kernels: the buffer sizes the module was built for, as device globals.
  std::string epilogue(const kir::Plan& p) const;
};

// Threads a kernel is launched with: one per output element, fewer for reductions that
// compute several elements per thread.
int64_t cuda_kernel_threads(const kir::Plan& p, const kir::Kernel& k);

// Buffers a kernel takes as parameters, in order: its output, then what it reads.
std::vector<int> cuda_kernel_params(const kir::Kernel& k);

// Prelude + every kernel + epilogue: the translation unit NVRTC compiles.
std::string cuda_program_source(const kir::Plan& p);

}  // namespace lockstep::codegen
