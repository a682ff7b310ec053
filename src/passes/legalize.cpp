// What a target lacks refused with a clear Error, naming the node and the type. (Integer Pow,
// once rewritten here for targets without double, is exact everywhere now: lowering makes IPow.)
#include "core/error.h"
#include "passes/schedule.h"

namespace lockstep {

using namespace kir;

namespace {

[[noreturn]] void lacks(const Kernel& k, const TargetDesc& t, const char* type, const std::string& where) {
  throw Error("node '" + node_list(k) + "' " + where + " " + type + ", which target '" + t.name +
              "' does not have");
}

bool is_64bit_int(DType d) { return d == DType::i64 || d == DType::u64; }

}  // namespace

void legalize(Plan& p, const TargetDesc& t) {
  if (t.has_f64 && t.has_i64) return;
  for (Kernel& k : p.kernels) {
    if (!t.has_f64) {
      if (p.buffers[k.out].dtype == DType::f64) lacks(k, t, "f64", "writes");
      if (uses_type(k.body, DType::f64)) lacks(k, t, "f64", "computes in");
    }
    // Index arithmetic is i64 in the IR and a printer's to spell; only values count here.
    if (!t.has_i64) {
      if (is_64bit_int(p.buffers[k.out].dtype)) lacks(k, t, "64-bit integers", "writes");
      for (int b : kernel_inputs(k))
        if (is_64bit_int(p.buffers[b].dtype)) lacks(k, t, "64-bit integers", "reads");
    }
  }
}

}  // namespace lockstep
