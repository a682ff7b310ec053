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
  const char* missing = !t.program_source ? "program_source" : !t.source_files ? "source_files"
                        : !t.make_compiler ? "make_compiler" : !t.make_device ? "make_device" : nullptr;
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
