#include "runtime/device_layout.h"

#include "runtime/checked.h"

namespace lockstep {

namespace {

int64_t aligned(int64_t n, int64_t align) { return (n + align - 1) / align * align; }

const char* kind_name(kir::Buffer::Kind k) {
  switch (k) {
    case kir::Buffer::Input: return "input";
    case kir::Buffer::Output: return "output";
    case kir::Buffer::Constant: return "constant";
    case kir::Buffer::Symbols: return "symbol values";
    default: return "buffer";
  }
}

}  // namespace

DeviceLayout layout_device_memory(const kir::Plan& p, const MemoryPlan& m, bool checked, int64_t align) {
  DeviceLayout l;
  l.guard = checked ? static_cast<int64_t>(kGuardBytes) : 0;
  l.offset.assign(p.buffers.size(), -1);
  int64_t at = 0, constant_at = 0;
  auto place = [&](const std::string& what, int64_t bytes, bool constant = false) {
    int64_t& end = constant ? constant_at : at;
    end += l.guard;
    l.regions.push_back({what, end, bytes, constant});
    int64_t start = end;
    end = aligned(end + bytes + l.guard, align);
    return start;
  };
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const kir::Buffer& buf = p.buffers[b];
    if (buf.kind == kir::Buffer::Temp) continue;
    l.offset[b] = place(std::string(kind_name(buf.kind)) + " '" + buf.name + "'", static_cast<int64_t>(buf.bytes()),
                        buf.kind == kir::Buffer::Constant);
  }
  l.arena_bytes = m.arena_bytes;
  l.arena_at = place("temporary arena", m.arena_bytes);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind == kir::Buffer::Temp && m.offset[b] >= 0) l.offset[b] = l.arena_at + m.offset[b];
  l.total = std::max<int64_t>(at, 1);
  l.constant_total = std::max<int64_t>(constant_at, 1);
  return l;
}

}  // namespace lockstep
