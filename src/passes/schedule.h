// The target-specific end of the pipeline: legalize rewrites what a target cannot compute,
// choose_schedules decides every kernel's loop layout. Both read only the target's TargetDesc.
#pragma once
#include "kernel/kernel.h"
#include "kernel/target_desc.h"
#include "passes/pass_manager.h"

namespace lockstep {

// Name of the schedule's pass record: it always runs (code cannot be printed without a
// schedule), so --pass-limit does not cut it and bisect --by pass does not search it.
inline constexpr const char* kSchedulePass = "schedule";

// Sets every kernel's schedule from `t` and appends one applied record, numbered after the
// others and never skipped by the pass limit.
void choose_schedules(kir::Plan& p, const kir::TargetDesc& t, PassManager& pm);
// The same on a plan of its own, without a log (tests, printing a plan made by hand).
void choose_schedules(kir::Plan& p, const kir::TargetDesc& t);
// The schedule of one kernel on `t`.
kir::Schedule schedule_for(const kir::Plan& p, const kir::Kernel& k, const kir::TargetDesc& t);

// Rewrites what `t` lacks exactly where that can be done (integer Pow, which lowering computes
// through f64, becomes an exact integer power); anything else needing a missing type (f64,
// i64) is an Error naming its node and the type. Changes nothing on a target with both.
void legalize(kir::Plan& p, const kir::TargetDesc& t);

}  // namespace lockstep
