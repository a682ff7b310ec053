// The old cuda code generation API, kept until the runtime calls cuda::program_source,
// cuda::source_files (backend/cuda/cuda_codegen.h) and launches from kernel schedules;
// defined there. Plans without schedules are scheduled for cuda on the fly.
#pragma once
#include <string>
#include <vector>

#include "kernel/kernel.h"

namespace lockstep::codegen {

constexpr int kCudaBlock = 256;  // cuda::target_desc().group_threads

class CudaPrinter {
 public:
  std::string kernel(const kir::Plan& p, const kir::Kernel& k) const;
  std::string prelude() const;
  std::string epilogue(const kir::Plan& p) const;
};

int64_t cuda_kernel_threads(const kir::Plan& p, const kir::Kernel& k);
std::vector<int> cuda_kernel_params(const kir::Kernel& k);
std::string cuda_program_source(const kir::Plan& p);

}  // namespace lockstep::codegen
