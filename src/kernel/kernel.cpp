#include "kernel/kernel.h"

#include "core/error.h"

#include <algorithm>

namespace lockstep::kir {

std::vector<ExprP> out_vars(size_t rank) {
  std::vector<ExprP> v;
  for (size_t k = 0; k < rank; ++k) v.push_back(var(static_cast<int>(k)));
  return v;
}

std::vector<int> kernel_inputs(const Kernel& k) {
  std::vector<const Expr*> loads;
  collect_loads(k.body, loads);
  std::vector<int> bufs;
  for (const Expr* l : loads)
    if (std::find(bufs.begin(), bufs.end(), l->buf) == bufs.end()) bufs.push_back(l->buf);
  return bufs;
}

std::string describe(const Plan& p, const Kernel& k) {
  std::string nodes;
  for (const std::string& n : k.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
  const Buffer& b = p.buffers[k.out];
  return k.name + " [" + nodes + "]: b" + std::to_string(k.out) + dtype_name(b.dtype) +
         shape_str(b.shape) + " = " + to_string(k.body) + (k.schedule.chosen() ? " {" + describe(k.schedule) + "}" : "");
}

std::string describe(const Schedule& s) {
  auto f = [](const char* name, int64_t v) { return std::string(" ") + name + "=" + std::to_string(v); };
  if (s.loops == Schedule::Loops::Host) return "host" + f("lanes", s.lanes) + f("rows", s.rows) + f("tile_at", s.tile_at);
  if (s.loops == Schedule::Loops::Gpu)
    return "gpu" + f("group", s.group) + f("threads", s.threads) + f("rows", s.rows) + f("cols", s.cols) + f("unroll", s.unroll);
  return "unscheduled";
}

std::string describe(const Plan& p) {
  std::string s;
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buf = p.buffers[b];
    static const char* kinds[] = {"input", "output", "constant", "temp"};
    s += "b" + std::to_string(b) + " " + kinds[buf.kind] + " " + dtype_name(buf.dtype) +
         shape_str(buf.shape) + " '" + buf.name + "'\n";
  }
  for (const Kernel& k : p.kernels) s += describe(p, k) + "\n";
  return s;
}

void require_checks_pass(const Plan& p, const std::vector<int64_t>& counts) {
  for (size_t k = 0; k < p.checks.size(); ++k)
    if (counts[k]) throw Error("node '" + p.checks[k].node + "': " + std::to_string(counts[k]) + " " + p.checks[k].what);
}

}  // namespace lockstep::kir
