#include "runtime/target.h"

#include <deque>
#include <mutex>

#include "core/error.h"

namespace lockstep {

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
      adding_builtins = true;
      register_builtin_targets();
      adding_builtins = false;
    });
  return *r;
}

const TargetInfo* find_locked(Registry& r, const std::string& name) {
  for (const TargetInfo& t : r.list)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

void register_target(TargetInfo info) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (info.name.empty() || find_locked(r, info.name)) throw Error("target '" + info.name + "' is already registered");
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

std::string unavailable_reason(const TargetInfo& t) {
  if (t.make_program) return "";
  try {
    std::string why;
    std::unique_ptr<Device> dev = t.make_device(CompileOptions{}, &why);
    if (!dev) return why;
    t.make_compiler(dev.get());
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace lockstep
