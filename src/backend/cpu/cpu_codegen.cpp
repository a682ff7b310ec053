#include "backend/cpu/cpu_codegen.h"

#include "codegen/cpu_printer.h"

namespace lockstep::cpu {

const kir::TargetDesc& target_desc() {
  static const kir::TargetDesc d = [] {
    kir::TargetDesc t;
    t.name = "cpu";
    t.reduce_lanes = 16;    // accumulators per tile: one AVX-512 / two AVX2 vectors
    t.element_lanes = 256;  // elements per tile of a kernel without a reduction
    t.reduce_rows = 8;      // rows of the dim before the last per reduction tile
    return t;
  }();
  return d;
}

std::string program_source(const kir::Plan& p) { return codegen::cpu_program_source(p); }

std::vector<std::pair<std::string, std::string>> source_files(const kir::Plan& p) {
  codegen::CpuPrinter printer;
  std::vector<std::pair<std::string, std::string>> files = {{"prelude.h", printer.prelude()}};
  for (const kir::Kernel& k : p.kernels) files.emplace_back(k.name + ".cpp", printer.kernel(p, k));
  files.emplace_back("kernels.cpp", printer.epilogue(p));
  return files;
}

}  // namespace lockstep::cpu
