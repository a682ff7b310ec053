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

bool is_64bit_int(DType d) { return d == DType::i64 || d == DType::u64; }

// Why kernel k cannot run on t, or "" when it can.
std::string lack(const Kernel& k, const Plan& p, const TargetDesc& t) {
  if (!t.has_f64) {
    if (p.buffers[k.out].dtype == DType::f64) return what_kernel(k) + " writes f64";
    if (uses_type(k.body, DType::f64)) return what_kernel(k) + " computes in f64";
  }
  // Index arithmetic is i64 in the IR and a printer's to spell; only values count here.
  if (!t.has_i64) {
    if (is_64bit_int(p.buffers[k.out].dtype)) return what_kernel(k) + " writes 64-bit integers";
    for (int b : kernel_inputs(k))
      if (is_64bit_int(p.buffers[b].dtype)) return what_kernel(k) + " reads 64-bit integers";
  }
  return "";
}

}  // namespace

void legalize(Plan& p, const TargetDesc& t) {
  if (t.has_f64 && t.has_i64) return;
  std::vector<std::string> why;
  for (const Kernel& k : p.kernels)
    if (std::string w = lack(k, p, t); !w.empty()) why.push_back(w);
  if (why.empty()) return;
  // Every such kernel named at once (up to a screenful): a user sees them all in one go, and a
  // caller dropping what a target lacks needs one more compile, not one per node.
  constexpr size_t kNamed = 32;
  std::string also;
  for (size_t i = 1; i < why.size() && i <= kNamed; ++i) also += (i > 1 ? "; " : "") + why[i];
  if (why.size() > kNamed + 1) also += "; and " + std::to_string(why.size() - kNamed - 1) + " more";
  throw Unsupported(why[0] + ", which target '" + t.name + "' does not have" +
                    (also.empty() ? "" : " (also: " + also + ")"));
}

}  // namespace lockstep
