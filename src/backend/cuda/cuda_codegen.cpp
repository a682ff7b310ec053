#include "backend/cuda/cuda_codegen.h"

#include "codegen/cuda_printer.h"

namespace lockstep::cuda {

const kir::TargetDesc& target_desc() {
  static const kir::TargetDesc d = [] {
    kir::TargetDesc t;
    t.name = "cuda";
    t.gpu = true;
    t.max_group_threads = 1024;
    t.shared_bytes = 48 * 1024;  // static shared memory per block
    t.max_buffer_args = 512;     // 4 KiB of kernel parameters, 8 bytes a pointer
    t.group_threads = 256;       // every kernel's __launch_bounds__
    t.thread_rows = 4;           // output rows (dim before the last) per thread of a reduction
    t.thread_cols = 4;           // ... times output columns (last dim), where they divide
    t.unroll = 16;               // innermost reduction loops this short are unrolled
    return t;
  }();
  return d;
}

std::string program_source(const kir::Plan& p) { return codegen::cuda_program_source(p); }

std::vector<std::pair<std::string, std::string>> source_files(const kir::Plan& p) {
  codegen::CudaPrinter printer;
  std::vector<std::pair<std::string, std::string>> files = {{"prelude.cuh", printer.prelude()}};
  for (const kir::Kernel& k : p.kernels) files.emplace_back(k.name + ".cu", printer.kernel(p, k));
  files.emplace_back("epilogue.cu", printer.epilogue(p));
  return files;
}

}  // namespace lockstep::cuda
