#include "backend/cuda/staging_pool.h"

#include <algorithm>
#include <cstring>

#include "backend/cuda/cuda_device.h"
#include "core/error.h"

namespace lockstep::cuda {

StagingPool::StagingPool(const Device& d, int slots, size_t slot_bytes) : dev_(d), slot_bytes_(slot_bytes) {
  if (slots < 1 || slot_bytes < 1) throw Error("cuda: the staging pool needs at least one slot of at least one byte");
  slots_.resize(static_cast<size_t>(slots));
}

StagingPool::~StagingPool() {
  for (Slot& s : slots_) {
    if (s.done) {
      dev_.api().cuEventSynchronize(s.done);
      dev_.api().cuEventDestroy(s.done);
    }
    if (s.host) dev_.api().cuMemFreeHost(s.host);
  }
}

void StagingPool::begin(CUstream stream, bool skip_wait) {
  session_ = std::unique_lock<std::mutex>(mu_);
  stream_ = stream;
  skip_wait_ = skip_wait;
  late_.clear();
}

void StagingPool::upload(CUdeviceptr dst, const void* src, size_t bytes) {
  const Driver& api = dev_.api();
  const auto* from = static_cast<const unsigned char*>(src);
  for (size_t at = 0; at < bytes; at += slot_bytes_) {
    size_t len = std::min(slot_bytes_, bytes - at);
    Slot& s = slots_[next_];
    next_ = (next_ + 1) % slots_.size();
    if (!s.host) {  // slots are pinned on first use: a small model pins little
      check(api.cuMemHostAlloc(&s.host, slot_bytes_, 0), "cuMemHostAlloc");
      check(api.cuEventCreate(&s.done, kEventDisableTiming), "cuEventCreate");
      ++stats_.allocated;
    } else if (s.used) {
      ++stats_.reuses;
      if (!skip_wait_) {
        check(api.cuEventSynchronize(s.done), "cuEventSynchronize(staging slot)");
        ++stats_.waits;
      }
    }
    std::memcpy(s.host, from + at, len);
    s.used = true;
    ++stats_.chunks;
    if (skip_wait_) {
      late_.push_back({dst + at, static_cast<size_t>(&s - slots_.data()), len});
      continue;
    }
    check(api.cuMemcpyHtoDAsync(dst + at, s.host, len, stream_), "cuMemcpyHtoDAsync");
    check(api.cuEventRecord(s.done, stream_), "cuEventRecord");
  }
}

void StagingPool::end() {
  const Driver& api = dev_.api();
  for (const Pending& p : late_) {  // the fault: each copy reads whatever its slot holds now
    api.cuMemcpyHtoDAsync(p.dst, slots_[p.slot].host, p.bytes, stream_);
    api.cuEventRecord(slots_[p.slot].done, stream_);
  }
  late_.clear();
  stream_ = nullptr;
  session_.unlock();
}

}  // namespace lockstep::cuda
