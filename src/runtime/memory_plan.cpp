#include "runtime/memory_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

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

MemoryPlan plan_memory(const Plan& p, const MemoryPlan* ranges) {
  MemoryPlan m;
  if (ranges) {
    m.first = ranges->first;
    m.last = ranges->last;
  } else {
    live_ranges(p, m);
  }
  m.offset.assign(p.buffers.size(), -1);
  // Buffers are placed in order of definition, so one placed earlier is live together with
  // the next one exactly when its last reader runs at or after that one's kernel: the
  // regions still live are kept sorted by (offset, end), and those whose last reader has run
  // drop out for good.
  std::set<std::tuple<int64_t, int64_t, int>> live;  // (offset, end, buffer)
  std::multimap<int, std::tuple<int64_t, int64_t, int>> by_last;
  for (const Kernel& k : p.kernels) {  // place in order of definition, first fit
    int b = k.out;
    if (p.buffers[b].kind != Buffer::Temp) continue;
    while (!by_last.empty() && by_last.begin()->first < m.first[b]) {
      live.erase(by_last.begin()->second);
      by_last.erase(by_last.begin());
    }
    int64_t size = aligned(std::max<int64_t>(static_cast<int64_t>(p.buffers[b].bytes()), 1));
    int64_t at = 0;
    for (const auto& [s, e, o] : live) {
      if (overlaps(at, at + size, s, e)) at = std::max(at, e);
    }
    m.offset[b] = at;
    m.arena_bytes = std::max(m.arena_bytes, at + size);
    std::tuple<int64_t, int64_t, int> region{at, at + size, b};
    live.insert(region);
    by_last.emplace(m.last[b], region);
  }
  return m;
}

namespace {

// The proof itself, pair by pair: quadratic, so run only to name the first bad pair once the
// sweep below has found that there is one.
void check_pairwise(const Plan& p, const MemoryPlan& m) {
  for (size_t a = 0; a < p.buffers.size(); ++a) {
    if (m.offset[a] < 0) continue;
    if (m.offset[a] + static_cast<int64_t>(p.buffers[a].bytes()) > m.arena_bytes)
      throw InternalError("internal: memory plan puts b" + std::to_string(a) + " past the arena");
    for (size_t b = a + 1; b < p.buffers.size(); ++b) {
      if (m.offset[b] < 0) continue;
      bool live_together = m.first[a] <= m.last[b] && m.first[b] <= m.last[a];
      if (live_together && overlaps(m.offset[a], m.offset[a] + p.buffers[a].bytes(), m.offset[b],
                                    m.offset[b] + p.buffers[b].bytes()))
        throw InternalError("internal: memory plan overlaps live buffers b" + std::to_string(a) + " and b" + std::to_string(b));
    }
  }
}

// Whether the plan is sound, in O(n log n): a sweep over time (buffers start being live in
// order of `first`), holding the byte ranges live at the moment in an ordered map. While they
// are disjoint, a new range overlaps one of them exactly when it overlaps a neighbour.
bool sound(const Plan& p, const MemoryPlan& m) {
  std::vector<int> order;
  for (size_t a = 0; a < p.buffers.size(); ++a) {
    if (m.offset[a] < 0) continue;
    if (m.offset[a] + static_cast<int64_t>(p.buffers[a].bytes()) > m.arena_bytes) return false;
    if (m.first[a] > m.last[a] || p.buffers[a].bytes() == 0) return false;  // left to the pairwise proof
    order.push_back(static_cast<int>(a));
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return m.first[a] < m.first[b]; });
  std::map<int64_t, std::pair<int64_t, int>> ranges;  // start -> (end, buffer)
  std::multimap<int, int64_t> ends;                   // last -> start
  for (int a : order) {
    while (!ends.empty() && ends.begin()->first < m.first[a]) {
      ranges.erase(ends.begin()->second);
      ends.erase(ends.begin());
    }
    int64_t s = m.offset[a], e = s + static_cast<int64_t>(p.buffers[a].bytes());
    auto next = ranges.lower_bound(s);
    if (next != ranges.end() && next->first < e) return false;
    if (next != ranges.begin() && std::prev(next)->second.first > s) return false;
    ranges.emplace(s, std::make_pair(e, a));
    ends.emplace(m.last[a], s);
  }
  return true;
}

}  // namespace

void check_memory_plan(const Plan& p, const MemoryPlan& m) {
  if (!sound(p, m)) check_pairwise(p, m);
}

}  // namespace lockstep
