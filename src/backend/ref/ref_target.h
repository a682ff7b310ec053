// The `ref` target: the float64 reference interpreter over the unoptimised graph, outputs
// rounded to the model's dtypes. Not compiled: the oracle every other target is checked against.
#pragma once
#include "runtime/target.h"

namespace lockstep {

TargetInfo ref_target_info();

}  // namespace lockstep
