#include "runtime/program.h"

#include "core/error.h"

namespace lockstep {

std::vector<Program::GroupValue> Program::run_capture(const TensorMap&) {
  throw Unsupported("target '" + target() + "' cannot capture intermediate values");
}

std::vector<Program::ConstantCheck> Program::check_constants() {
  throw Unsupported("target '" + target() + "' cannot read its constants back");
}

std::vector<Program::KernelTime> Program::profile(const TensorMap&) {
  throw Unsupported("target '" + target() + "' cannot time its kernels");
}

void validate_options(const CompileOptions& o) {
  if (o.threads < 0 || o.threads > kMaxThreads)
    throw Error("--threads " + std::to_string(o.threads) + " is out of range (0 for all cores, or 1 to " +
                std::to_string(kMaxThreads) + ")");
  if (o.pass_limit < -1) throw Error("--pass-limit " + std::to_string(o.pass_limit) + " is negative");
}

}  // namespace lockstep
