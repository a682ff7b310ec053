// What a target lacks refused as Unsupported, naming the node and the type. (Integer Pow,
// once rewritten here for targets without double, is exact everywhere now: lowering makes IPow.)
#include "core/error.h"
#include "passes/schedule.h"

namespace lockstep {

using namespace kir;

namespace {

// A kernel that only copies a value to a graph output carries "output:NAME" for its node.
std::string what_kernel(const Kernel& k) {
  std::string nodes = node_list(k);
  if (nodes.rfind("output:", 0) == 0) return "the copy to graph output '" + nodes.substr(7) + "'";
  return "node '" + nodes + "'";
}

[[noreturn]] void lacks(const Kernel& k, const TargetDesc& t, const char* type, const std::string& where) {
  throw Unsupported(what_kernel(k) + " " + where + " " + type + ", which target '" + t.name + "' does not have");
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
