// What every device does the same way, written once: addresses over the buffers a driver
// hands out as handles, the check that loaded code was built for the plan, and the errors
// that name a kernel a device cannot launch.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernel/kernel.h"
#include "runtime/device.h"

namespace lockstep {

// Addresses for a driver whose buffers are handles (cl_mem, MTLBuffer): each allocation gets a
// range of its own in a 64-bit space, never touching the next, so an address and a size name
// one allocation and an offset in it. 0 stays "nowhere".
template <class Handle>
class AddressMap {
 public:
  explicit AddressMap(std::string target) : target_(std::move(target)) {}
  DevicePtr add(Handle h, size_t bytes) {
    DevicePtr at = next_;
    size_t span = std::max<size_t>(bytes, 1);
    next_ += (span + kStep - 1) / kStep * kStep + kStep;
    map_[at] = {std::move(h), span};
    return at;
  }
  // The allocation holding [p, p + bytes) and p's offset in it; an InternalError otherwise.
  std::pair<Handle, size_t> resolve(DevicePtr p, size_t bytes) const {
    auto it = map_.upper_bound(p);
    if (it != map_.begin()) {
      --it;
      size_t at = static_cast<size_t>(p - it->first);
      if (at <= it->second.bytes && bytes <= it->second.bytes - at) return {it->second.handle, at};
    }
    throw InternalError("internal: " + target_ + ": address " + std::to_string(p) + " (+" + std::to_string(bytes) +
                        " bytes) is in no allocation");
  }
  // The handle allocated at p, taken out of the map; false when p is no allocation.
  bool take(DevicePtr p, Handle& out) {
    auto it = map_.find(p);
    if (it == map_.end()) return false;
    out = std::move(it->second.handle);
    map_.erase(it);
    return true;
  }
  template <class F>
  void for_each(F f) const {
    for (const auto& [at, e] : map_) f(e.handle);
  }

 private:
  static constexpr DevicePtr kStep = DevicePtr{1} << 20;
  struct Entry {
    Handle handle;
    size_t bytes;
  };
  std::string target_;
  std::map<DevicePtr, Entry> map_;
  DevicePtr next_ = DevicePtr{1} << 32;
};

// What code built for `plan` records of it (the printers' ls_buffer_bytes): the buffer count,
// then each buffer's bytes (-1 for a length-dependent one).
std::vector<int64_t> plan_words(const kir::Plan& plan);
// Throws Error when `got`, read from loaded code, is not plan_words(plan): a stale cache
// entry, whose kernels would index past the buffers.
void check_loaded_plan(const std::string& target, const std::vector<int64_t>& got, const kir::Plan& plan);

// Groups of `group` work items covering `threads` (0: no launch), at most `max_groups`: the
// kernels' grid-stride loops cover the rest.
size_t launch_groups(int64_t threads, int64_t group, size_t max_groups);

// Error "TARGET: kernel k3 (ONNX nodes: a, b) cannot be launched: it needs WHY" unless `why`
// is empty.
void refuse_launch(const std::string& target, const kir::Kernel& k, const std::string& why);

}  // namespace lockstep
