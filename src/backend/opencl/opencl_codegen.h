// The opencl target's code generation: its TargetDesc and the OpenCL C 1.2 translation unit
// the device's compiler builds from a scheduled plan. Printing needs no OpenCL platform.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "codegen/program_source.h"
#include "kernel/kernel.h"
#include "kernel/target_desc.h"

namespace lockstep::opencl {

const kir::TargetDesc& target_desc();
// Prelude + every kernel + the ls_plan_info kernel. Kernel k is launched with
// k.schedule.threads work items in groups of k.schedule.group; its arguments are, for each
// buffer codegen::kernel_params(k) lists, the buffer's cl_mem then its byte offset (ulong).
// cl_khr_fp64 is enabled only for a plan that computes in f64.
codegen::ProgramSource program_source(const kir::Plan& p);
// For --emit-source: the prelude, each kernel in a file of its own (under its own name and
// buffer names, even where the program shares its function with another), the epilogue.
std::vector<std::pair<std::string, std::string>> source_files(const kir::Plan& p);
// Build options: no fast-math or mad options ever; correctly rounded division and sqrt
// where the device supports them.
std::string build_options(bool correctly_rounded_divide_sqrt);

}  // namespace lockstep::opencl
