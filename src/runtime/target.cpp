#include "runtime/target.h"

#include "core/error.h"

namespace lockstep {

std::string unavailable_reason(const TargetInfo& t) {
  if (t.make_program) return "";
  try {
    std::string why;
    std::unique_ptr<Device> dev = t.make_device(CompileOptions{}, &why);
    if (!dev) return why;
    t.make_compiler(CompileOptions{}, dev.get());
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace lockstep
