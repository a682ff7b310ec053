#include "runtime/program.h"

#include "core/error.h"
#include "runtime/compiled_program.h"
#include "runtime/target.h"

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

// --device N names a device the target has: one without a device list has one device.
static void check_device(const TargetInfo& t, int device) {
  if (device == 0) return;  // listing devices opens drivers: only when another is named
  std::vector<std::string> list = t.devices ? t.devices() : std::vector<std::string>{"the one device"};
  if (device < 0 || static_cast<size_t>(device) >= list.size())
    throw Error("--device " + std::to_string(device) + ": there is no " + t.name + " device " + std::to_string(device) +
                " here (it has " + std::to_string(list.size()) + ": lockstep info --targets lists them)");
}

std::unique_ptr<Program> compile(const Graph& g, const std::string& target, const CompileOptions& opts) {
  validate_options(opts);
  const TargetInfo* t = find_target(target);
  if (!t) throw Error("unknown target '" + target + "' (known: " + target_names() + ")");
  check_device(*t, opts.device);
  if (t->make_program) return t->make_program(g, opts);
  return std::make_unique<CompiledProgram>(*t, g, opts);
}

}  // namespace lockstep
