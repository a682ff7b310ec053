// TODO(helper): ops of this family.
#include "ops/op.h"

namespace lockstep {

std::span<const OpDef> movement_ops() { return {}; }

}  // namespace lockstep
