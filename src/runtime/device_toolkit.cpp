#include "runtime/device_toolkit.h"

#include <algorithm>

namespace lockstep {

std::vector<int64_t> plan_words(const kir::Plan& plan) {
  std::vector<int64_t> w = {static_cast<int64_t>(plan.buffers.size())};
  for (const kir::Buffer& b : plan.buffers) w.push_back(b.module_bytes());
  return w;
}

void check_loaded_plan(const std::string& target, const std::vector<int64_t>& got, const kir::Plan& plan) {
  if (got == plan_words(plan)) return;
  std::string what = got.empty() ? "other kernels" : std::to_string(got[0]) + " buffers";
  throw Error(target + ": the kernel cache returned code built for a different plan (" + what + ", this plan has " +
              std::to_string(plan.buffers.size()) + " buffers): a stale cache entry");
}

size_t launch_groups(int64_t threads, int64_t group, size_t max_groups) {
  if (threads <= 0) return 0;
  size_t g = static_cast<size_t>(std::max<int64_t>(group, 1));
  return std::clamp<size_t>((static_cast<size_t>(threads) + g - 1) / g, 1, max_groups);
}

void refuse_launch(const std::string& target, const kir::Kernel& k, const std::string& why) {
  if (why.empty()) return;
  std::string nodes = kir::node_list(k);
  throw Error(target + ": kernel " + k.name + " (ONNX nodes: " + (nodes.empty() ? "none" : nodes) +
              ") cannot be launched: it needs " + why);
}

}  // namespace lockstep
