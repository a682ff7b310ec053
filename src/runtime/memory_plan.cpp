#include "runtime/memory_plan.h"

#include <algorithm>

#include "core/error.h"

namespace lockstep {

using namespace kir;

namespace {

constexpr int64_t kAlign = 64;  // cache line, and wide enough for any vector load

int64_t aligned(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return a0 < b1 && b0 < a1; }

void live_ranges(const Plan& p, MemoryPlan& m) {
  m.first.assign(p.buffers.size(), -1);
  m.last.assign(p.buffers.size(), -1);
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    m.first[p.kernels[k].out] = static_cast<int>(k);
    m.last[p.kernels[k].out] = std::max(m.last[p.kernels[k].out], static_cast<int>(k));
    for (int b : kernel_inputs(p.kernels[k])) m.last[b] = static_cast<int>(k);
  }
  for (const Plan::Check& c : p.checks) m.last[c.buf] = static_cast<int>(p.kernels.size());  // read after the run
}

}  // namespace

MemoryPlan plan_memory(const Plan& p) {
  MemoryPlan m;
  live_ranges(p, m);
  m.offset.assign(p.buffers.size(), -1);
  std::vector<int> placed;
  for (const Kernel& k : p.kernels) {  // place in order of definition, first fit
    int b = k.out;
    if (p.buffers[b].kind != Buffer::Temp) continue;
    int64_t size = aligned(std::max<int64_t>(static_cast<int64_t>(p.buffers[b].bytes()), 1));
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (int o : placed)
      if (m.first[o] <= m.last[b] && m.first[b] <= m.last[o])
        busy.emplace_back(m.offset[o], m.offset[o] + aligned(std::max<int64_t>(static_cast<int64_t>(p.buffers[o].bytes()), 1)));
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (auto [s, e] : busy) {
      if (overlaps(at, at + size, s, e)) at = std::max(at, e);
    }
    m.offset[b] = at;
    m.arena_bytes = std::max(m.arena_bytes, at + size);
    placed.push_back(b);
  }
  return m;
}

void check_memory_plan(const Plan& p, const MemoryPlan& m) {
  for (size_t a = 0; a < p.buffers.size(); ++a) {
    if (m.offset[a] < 0) continue;
    if (m.offset[a] + static_cast<int64_t>(p.buffers[a].bytes()) > m.arena_bytes)
      throw Error("internal: memory plan puts b" + std::to_string(a) + " past the arena");
    for (size_t b = a + 1; b < p.buffers.size(); ++b) {
      if (m.offset[b] < 0) continue;
      bool live_together = m.first[a] <= m.last[b] && m.first[b] <= m.last[a];
      if (live_together && overlaps(m.offset[a], m.offset[a] + p.buffers[a].bytes(), m.offset[b],
                                    m.offset[b] + p.buffers[b].bytes()))
        throw Error("internal: memory plan overlaps live buffers b" + std::to_string(a) + " and b" + std::to_string(b));
    }
  }
}

}  // namespace lockstep
