// The cpu target's code generation: its TargetDesc (limits and schedule parameters) and the
// C++ translation unit the system compiler builds from a scheduled plan.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "codegen/program_source.h"
#include "kernel/kernel.h"
#include "kernel/target_desc.h"

namespace lockstep::cpu {

const kir::TargetDesc& target_desc();
// Prelude + every kernel + epilogue (kernel table ls_kernels, ls_kernel_count, ls_buffer_bytes,
// ls_buffer_count, ls_set_threads), for a plan whose schedules were chosen for target_desc().
codegen::ProgramSource program_source(const kir::Plan& p);
// The same text in files for --emit-source: the prelude, one file per kernel, the epilogue.
std::vector<std::pair<std::string, std::string>> source_files(const kir::Plan& p);

}  // namespace lockstep::cpu
