#include "backend/metal/sim/sim_dispatch.h"

#include <cstdio>
#include <cstring>

#include "backend/metal/sim/sim_driver.h"
#include "core/error.h"

namespace lockstep::metal::sim {

namespace {

constexpr size_t kIndices = 31;  // a compute function's buffer argument table
constexpr size_t kFibreBytes = 128 * 1024;  // a fibre's context and stack

const SimBuffer* sim_buffer(const Binding& b) { return dynamic_cast<const SimBuffer*>(b.buffer.get()); }

std::string where(const std::string& kernel, size_t i) { return "kernel " + kernel + ": buffer(" + std::to_string(i) + ")"; }

// Two bindings of one buffer that overlap while either may be written: a guarded copy of each
// would not see the other's writes, so such a dispatch runs on the buffers themselves.
bool aliased(const SimPipeline& p, const std::vector<Binding>& b) {
  for (size_t i = 0; i < b.size() && i < kIndices; ++i)
    for (size_t j = i + 1; j < b.size() && j < kIndices; ++j) {
      if (p.access()[i] == '-' || p.access()[j] == '-' || b[i].buffer != b[j].buffer) continue;
      bool overlap = b[i].offset < b[j].offset + b[j].bytes && b[j].offset < b[i].offset + b[i].bytes;
      if (overlap && (p.access()[i] == 'w' || p.access()[j] == 'w')) return true;
    }
  return false;
}

struct Run {
  RunFn fn;
  DispatchArgs args;
  int rc = 0;
  static void call(void* self) {
    auto* r = static_cast<Run*>(self);
    r->rc = r->fn(&r->args);
  }
};

// "at byte 16 of buffer(0), which has 16 bytes bound": the copy or buffer an address lies against.
std::string locate(const SimPipeline& p, const std::vector<Binding>& b,
                   const std::vector<std::unique_ptr<Guarded>>& copies, uintptr_t addr) {
  int64_t at = 0;
  for (size_t i = 0; i < copies.size(); ++i)
    if (copies[i] && copies[i]->locate(addr, &at))
      return "at byte " + std::to_string(at) + " of buffer(" + std::to_string(i) + "), which has " +
             std::to_string(b[i].bytes) + " bytes bound";
  for (size_t i = 0; i < b.size() && i < kIndices; ++i)
    if (const SimBuffer* s = p.access()[i] == '-' ? nullptr : sim_buffer(b[i]))
      if (s->memory().locate(addr, &at))
        return "at byte " + std::to_string(at) + " of the MTLBuffer bound at buffer(" + std::to_string(i) +
               "), which has " + std::to_string(s->length()) + " bytes";
  char hex[32];
  std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(addr));
  return std::string("at address ") + hex + ", in no buffer bound to it";
}

}  // namespace

size_t SimPipeline::max_total_threads_per_threadgroup() const { return kMaxThreadsPerThreadgroup; }

void SimBuffer::write(size_t at, const void* src, size_t bytes) {
  if (at > length_ || bytes > length_ - at)
    throw InternalError("internal: metal-sim: a host write of " + std::to_string(bytes) + " bytes at " +
                        std::to_string(at) + " overruns its buffer of " + std::to_string(length_));
  if (readers.load() > 0) {  // a copy still has to read it: it will read poison, not stale bytes
    std::memset(contents(), 0xFF, length_);
    count_poisoned_write();
  }
  if (bytes) std::memcpy(contents() + at, src, bytes);
}

void check_dispatch(const SimPipeline& p, const std::vector<Binding>& b, size_t groups, size_t threads) {
  if (threads < 1 || threads > p.max_total_threads_per_threadgroup())
    throw Error("metal-sim: kernel " + p.name() + ": " + std::to_string(threads) +
                " threads per threadgroup, the pipeline allows 1 to " + std::to_string(p.max_total_threads_per_threadgroup()));
  if (groups > UINT32_MAX) throw Error("metal-sim: kernel " + p.name() + ": " + std::to_string(groups) + " threadgroups");
  for (size_t i = 0; i < kIndices; ++i) {
    if (p.access()[i] == '-') continue;
    if (i >= b.size() || !b[i].buffer) throw Error("metal-sim: " + where(p.name(), i) + " is not bound");
    if (!sim_buffer(b[i])) throw InternalError("internal: metal-sim: " + where(p.name(), i) + " is not a metal-sim buffer");
    size_t length = b[i].buffer->length();
    if (b[i].offset > length || b[i].bytes > length - b[i].offset)
      throw Error("metal-sim: " + where(p.name(), i) + " is bound at offset " + std::to_string(b[i].offset) + " with " +
                  std::to_string(b[i].bytes) + " bytes, outside its MTLBuffer of " + std::to_string(length) + " bytes");
  }
}

std::string run_dispatch(const SimPipeline& p, const std::vector<Binding>& b, size_t groups, size_t threads) {
  bool guard = !aliased(p, b);
  std::vector<void*> at(kIndices + 1, nullptr);
  std::vector<std::unique_ptr<Guarded>> copies(kIndices);
  int64_t guarded = 0;
  for (size_t i = 0; i < kIndices; ++i) {
    if (p.access()[i] == '-') continue;
    unsigned char* in = b[i].buffer->contents() + b[i].offset;
    at[i] = in;
    if (!guard || !b[i].bytes) continue;
    copies[i] = std::make_unique<Guarded>(b[i].bytes, Guarded::Place::End);
    std::memcpy(copies[i]->data(), in, b[i].bytes);
    at[i] = copies[i]->data();
    ++guarded;
  }
  count_dispatch(guarded);
  char error[256] = "";
  std::unique_ptr<unsigned char[]> fibres(p.barriers() ? new unsigned char[threads * kFibreBytes] : nullptr);
  Run r{p.run(), {at.data(), static_cast<uint32_t>(groups), static_cast<uint32_t>(threads), error, fibres.get(), kFibreBytes}};
  uintptr_t fault = 0;
  if (!run_trapped(&Run::call, &r, &fault)) return "kernel " + p.name() + ": an access " + locate(p, b, copies, fault);
  if (r.rc) return "kernel " + p.name() + ": " + error;
  for (size_t i = 0; i < kIndices; ++i) {
    if (!copies[i]) continue;
    if (int64_t at = 0; copies[i]->slack_written(&at))
      return "kernel " + p.name() + ": a write at byte " + std::to_string(at) + " of buffer(" + std::to_string(i) +
             "), which has " + std::to_string(b[i].bytes) + " bytes bound";
    if (p.access()[i] == 'w') std::memcpy(b[i].buffer->contents() + b[i].offset, copies[i]->data(), b[i].bytes);
  }
  return "";
}

}  // namespace lockstep::metal::sim
