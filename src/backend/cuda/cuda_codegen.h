// The cuda target's code generation: its TargetDesc (limits and schedule parameters) and the
// CUDA translation unit NVRTC compiles from a scheduled plan.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "codegen/program_source.h"
#include "kernel/kernel.h"
#include "kernel/target_desc.h"

namespace lockstep::cuda {

const kir::TargetDesc& target_desc();
// Prelude + every kernel + epilogue (device globals ls_buffer_bytes, ls_buffer_count), for a
// plan whose schedules were chosen for target_desc(). Kernel k is launched with
// k.schedule.threads work items in groups of k.schedule.group, its arguments the buffers
// codegen::kernel_params(k) lists.
codegen::ProgramSource program_source(const kir::Plan& p);
// For --emit-source: the prelude, each kernel in a file of its own (under its own name and
// buffer names, even where the program shares its function with another), the epilogue.
std::vector<std::pair<std::string, std::string>> source_files(const kir::Plan& p);

}  // namespace lockstep::cuda
