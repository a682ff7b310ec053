// The metal targets' code generation: their TargetDesc and the Metal Shading Language
// translation unit built from a scheduled plan. The same text for the real device and for
// metal-sim, which compiles it on the CPU. Printing needs no Metal.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "codegen/program_source.h"
#include "kernel/kernel.h"
#include "kernel/target_desc.h"

namespace lockstep::metal {

const kir::TargetDesc& target_desc();
// Prelude + every kernel + the ls_plan_info kernel. Kernel k is dispatched as threadgroups of
// k.schedule.group threads covering k.schedule.threads; buffer i of codegen::kernel_params(k)
// is bound at [[buffer(i)]]. ls_plan_info(out [[buffer(0)]], room [[buffer(1)]]) writes the
// buffer count, then each buffer's bytes (-1: depends on the length). Never double.
codegen::ProgramSource program_source(const kir::Plan& p);
// For --emit-source: the prelude, each kernel in a file of its own (under its own name and
// buffer names, even where the program shares its function with another), the epilogue.
std::vector<std::pair<std::string, std::string>> source_files(const kir::Plan& p);

}  // namespace lockstep::metal
