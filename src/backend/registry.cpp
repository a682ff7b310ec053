// The target registry: every list of targets (the CLI's help, `info --targets`, check, bisect,
// bench, the tests' per-target suites) reads it, and compile() finds its target here. The one
// list of built-in targets is register_builtin_targets below; each backend folder fills in its
// own TargetInfo, and nothing else in lockstep names a target.
#include "backend/registry.h"

#include <deque>
#include <mutex>

#include "backend/cpu/cpu_device.h"
#include "backend/cuda/cuda_target.h"
#include "backend/metal/metal_target.h"
#include "backend/opencl/opencl_target.h"
#include "backend/ref/ref_target.h"
#include "core/error.h"
#include "runtime/compiled_program.h"

namespace lockstep {

namespace {

void register_builtin_targets() {
  register_target(ref_target_info());
  register_target(cpu::target_info());
  register_target(cuda::target_info());
  register_target(opencl::target_info());
  register_target(metal::target_info());
  register_target(metal::sim_target_info());
}

}  // namespace

namespace {

struct Registry {
  std::mutex mu;
  std::deque<TargetInfo> list;  // a deque: pointers handed out stay valid as targets are added
};

thread_local bool adding_builtins = false;

// The registry, with the built-in targets first, whoever asks first.
Registry& registry() {
  static auto* r = new Registry;  // never destroyed: programs may outlive static destructors
  static std::once_flag builtins;
  if (!adding_builtins)
    std::call_once(builtins, [] {
      struct Flag {  // reset however registration ends
        Flag() { adding_builtins = true; }
        ~Flag() { adding_builtins = false; }
      } flag;
      register_builtin_targets();
    });
  return *r;
}

const TargetInfo* find_locked(Registry& r, const std::string& name) {
  for (const TargetInfo& t : r.list)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

namespace {

// A name is a --target value and a cache folder's name: lower-case letters, digits, '-', '_'.
void check_target(const TargetInfo& t) {
  bool ok = !t.name.empty() && t.name.size() <= 32;
  for (char c : t.name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_');
  if (!ok) throw Error("target name '" + t.name + "' must be 1 to 32 of a-z, 0-9, '-' and '_'");
  if (t.make_program) return;
  const char* missing = !t.program_source  ? "program_source"
                        : !t.source_files  ? "source_files"
                        : !t.make_compiler ? "make_compiler"
                        : !t.make_device   ? "make_device"
                                           : nullptr;
  if (missing) throw Error("target '" + t.name + "' is compiled but has no " + missing);
}

}  // namespace

void register_target(TargetInfo info) {
  check_target(info);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (find_locked(r, info.name)) throw Error("target '" + info.name + "' is already registered");
  r.list.push_back(std::move(info));
}

const TargetInfo* find_target(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return find_locked(r, name);
}

std::vector<const TargetInfo*> targets() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const TargetInfo*> all;
  for (const TargetInfo& t : r.list) all.push_back(&t);
  return all;
}

std::string target_names() {
  std::string s;
  for (const TargetInfo* t : targets()) s += (s.empty() ? "" : ", ") + t->name;
  return s;
}

std::string default_target() {
  for (const TargetInfo* t : targets())
    if (!t->make_program) return t->name;
  throw InternalError("no compiled target is registered");
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
