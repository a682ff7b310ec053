#include "verify/compile_flags.h"

#include <charconv>
#include <limits>
#include <tuple>

#include "core/error.h"
#include "verify/planted_fault.h"

namespace lockstep {

namespace {

// Every field by reference, in declaration order. One name per field: a field added to
// CompileOptions makes this binding fail to compile until it is named (and given a flag).
auto fields(const CompileOptions& o) {
  const auto& [threads, device, pass_limit, verify_each, dump_ir_dir, use_cache, checked, replay, symbolic,
               verify_constants, reserve, staging_slots, staging_slot_bytes, fault] = o;
  return std::tie(threads, device, pass_limit, verify_each, dump_ir_dir, use_cache, checked, replay, symbolic,
                  verify_constants, reserve, staging_slots, staging_slot_bytes, fault);
}

std::vector<std::string> one(int64_t v) { return {std::to_string(v)}; }
std::vector<std::string> flag(bool on) { return {on ? "1" : "0"}; }

// The largest staging slot: a host block this size is allocated per slot.
constexpr int64_t kMaxSlotBytes = int64_t{1} << 34;
constexpr int64_t kMaxSlots = 1 << 16;

const std::vector<CompileFlag> kFlags = {
    {"threads", "--threads", nullptr, CompileFlag::Value, "N", "Threads for the cpu target (0: all cores)",
     [](const CompileOptions& o) { return one(o.threads); },
     [](CompileOptions& o, const std::string& v) { o.threads = int(parse_int_arg(v, "--threads", 0, kMaxThreads)); },
     [](CompileOptions& o) { o.threads = 3; }, nullptr},
    {"device", "--device", nullptr, CompileFlag::Value, "N",
     "Which device of the target runs the program (lockstep info --targets lists them)",
     [](const CompileOptions& o) { return one(o.device); },
     [](CompileOptions& o, const std::string& v) { o.device = int(parse_int_arg(v, "--device", 0, 1 << 20)); },
     [](CompileOptions& o) { o.device = 1; }, nullptr},
    {"pass_limit", "--pass-limit", nullptr, CompileFlag::Value, "N",
     "Apply only pass applications 1..N and skip the rest (the program stays correct at every N)",
     [](const CompileOptions& o) { return one(o.pass_limit); },
     [](CompileOptions& o, const std::string& v) {
       o.pass_limit = int(parse_int_arg(v, "--pass-limit", 0, std::numeric_limits<int>::max()));
     },
     [](CompileOptions& o) { o.pass_limit = 7; }, nullptr},
    {"verify_each", "--verify-each", nullptr, CompileFlag::Switch, nullptr,
     "Run the IR verifiers after every pass application", [](const CompileOptions& o) { return flag(o.verify_each); },
     [](CompileOptions& o, const std::string& v) { o.verify_each = v == "1"; },
     [](CompileOptions& o) { o.verify_each = true; }, nullptr},
    {"dump_ir_dir", "--dump-ir", nullptr, CompileFlag::Value, "DIR",
     "Write the IR after each pass application into this folder (new or empty)",
     [](const CompileOptions& o) { return std::vector<std::string>{o.dump_ir_dir}; },
     [](CompileOptions& o, const std::string& v) { o.dump_ir_dir = v; },
     [](CompileOptions& o) { o.dump_ir_dir = "ir"; },
     "the first compile fills the folder; another process would find it taken"},
    {"use_cache", "--no-cache", nullptr, CompileFlag::Switch, nullptr,
     "Neither read nor write the on-disk kernel cache", [](const CompileOptions& o) { return flag(!o.use_cache); },
     [](CompileOptions& o, const std::string& v) { o.use_cache = v != "1"; },
     [](CompileOptions& o) { o.use_cache = false; }, nullptr},
    {"checked", "--checked", nullptr, CompileFlag::Switch, nullptr,
     "Sentinels around buffers, NaN-poisoned dead memory and a proof that live buffers never overlap",
     [](const CompileOptions& o) { return flag(o.checked); },
     [](CompileOptions& o, const std::string& v) { o.checked = v == "1"; }, [](CompileOptions& o) { o.checked = true; },
     nullptr},
    {"replay", "--replay", "--no-replay", CompileFlag::Switch, nullptr,
     "Capture the plan once and replay it where the device can (CUDA graphs; default on)",
     [](const CompileOptions& o) { return flag(o.replay); },
     [](CompileOptions& o, const std::string& v) { o.replay = v == "1"; }, [](CompileOptions& o) { o.replay = false; },
     nullptr},
    {"symbolic", "--symbolic", "--specialise", CompileFlag::Switch, nullptr,
     "One compile for every value of the model's named symbolic dims (T) where the plan allows, "
     "or --specialise: one compile per input shape (default: symbolic)",
     [](const CompileOptions& o) { return flag(o.symbolic); },
     [](CompileOptions& o, const std::string& v) { o.symbolic = v == "1"; },
     [](CompileOptions& o) { o.symbolic = false; }, nullptr},
    {"verify_constants", "--verify-constants", nullptr, CompileFlag::Switch, nullptr,
     "Read every constant back after upload and compare its SHA-256 with the host bytes",
     [](const CompileOptions& o) { return flag(o.verify_constants); },
     [](CompileOptions& o, const std::string& v) { o.verify_constants = v == "1"; },
     [](CompileOptions& o) { o.verify_constants = true; }, nullptr},
    {"reserve", "--reserve", nullptr, CompileFlag::List, "SYMBOL=N",
     "SYMBOL=N: a symbolic program sizes its device memory for lengths up to N when first bound, so "
     "no later length up to N allocates (repeatable)",
     [](const CompileOptions& o) {
       std::vector<std::string> a;
       for (const auto& [sym, n] : o.reserve) a.push_back(sym + "=" + std::to_string(n));
       return a;
     },
     [](CompileOptions& o, const std::string& v) {
       size_t eq = v.find('=');
       if (eq == std::string::npos || eq == 0) throw Error("--reserve " + v + ": expected SYMBOL=N");
       std::string sym = v.substr(0, eq);
       o.reserve[sym] = parse_int_arg(v.substr(eq + 1), "--reserve " + sym, 0, int64_t{1} << 40);
     },
     [](CompileOptions& o) {
       o.reserve = {{"T", 1000}, {"U", 5}};
     },
     nullptr},
    {"staging_slots", "--staging-slots", nullptr, CompileFlag::Value, "N",
     "Host staging buffers uploads go through (pinned on GPUs)",
     [](const CompileOptions& o) { return one(o.staging_slots); },
     [](CompileOptions& o, const std::string& v) {
       o.staging_slots = int(parse_int_arg(v, "--staging-slots", 1, kMaxSlots));
     },
     [](CompileOptions& o) { o.staging_slots = 5; }, nullptr},
    {"staging_slot_bytes", "--staging-slot-bytes", nullptr, CompileFlag::Value, "BYTES", "Bytes per staging buffer",
     [](const CompileOptions& o) { return one(static_cast<int64_t>(o.staging_slot_bytes)); },
     [](CompileOptions& o, const std::string& v) {
       o.staging_slot_bytes = static_cast<size_t>(parse_int_arg(v, "--staging-slot-bytes", 1, kMaxSlotBytes));
     },
     [](CompileOptions& o) { o.staging_slot_bytes = 12345; }, nullptr},
    {"fault", "--inject-fault", nullptr, CompileFlag::Value, "KIND[:WHERE]",
     nullptr,  // help: the fault catalogue's (cli)
     [](const CompileOptions& o) { return std::vector<std::string>{fault_spec(o.fault)}; },
     [](CompileOptions& o, const std::string& v) { o.fault = plant_fault(v); },
     [](CompileOptions& o) { o.fault = plant_fault("kernel:Relu#1"); }, nullptr},
};

}  // namespace

const std::vector<CompileFlag>& compile_flags() { return kFlags; }

std::vector<std::string> compile_option_fields() {
  return {"threads", "device",   "pass_limit",       "verify_each", "dump_ir_dir",   "use_cache",          "checked",
          "replay",  "symbolic", "verify_constants", "reserve",     "staging_slots", "staging_slot_bytes", "fault"};
}

std::vector<std::string> compile_args(const CompileOptions& o) {
  static const CompileOptions defaults;
  std::vector<std::string> a;
  for (const CompileFlag& f : kFlags) {
    std::vector<std::string> v = f.show(o);
    if (f.not_passed_on || v == f.show(defaults)) continue;
    if (f.kind == CompileFlag::Switch) a.push_back(v[0] == "1" ? f.name : f.off);
    else
      for (const std::string& x : v) a.push_back(std::string(f.name) + "=" + x);
  }
  return a;
}

bool same_options(const CompileOptions& a, const CompileOptions& b) {
  CompileOptions x = a, y = b;
  x.fault.reset();  // compared by spec: two plantings of one fault are different objects
  y.fault.reset();
  return fields(x) == fields(y) && fault_spec(a.fault) == fault_spec(b.fault);
}

int64_t parse_int_arg(const std::string& text, const std::string& flag, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    throw Error(flag + ": '" + text + "' is not an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

}  // namespace lockstep
