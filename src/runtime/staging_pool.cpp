#include "runtime/staging_pool.h"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

#include "core/error.h"

namespace lockstep {

StagingPool::StagingPool(int slots, size_t slot_bytes) : slot_bytes_(slot_bytes) {
  if (slots < 1 || slot_bytes < 1) throw Error("the staging pool needs at least one slot of at least one byte");
  slots_.resize(static_cast<size_t>(slots));
}

StagingPool::~StagingPool() {
  for (Slot& s : slots_) {
    if (s.done) s.done->wait();
    if (s.host.data && s.host.release) s.host.release(s.host.data);
  }
}

void StagingPool::begin(Device& dev, bool skip_wait, bool weights) {
  std::unique_lock<std::mutex> lock(mu_);
  session_ = std::move(lock);  // written only while the mutex is held
  dev_ = &dev;
  skip_wait_ = skip_wait;
  weights_ = weights;
  ++batch_;
  late_.clear();
}

void StagingPool::upload(DevicePtr dst, const void* src, size_t bytes) {
  if (bytes / slot_bytes_ >= kMaxChunks)
    throw Error("--staging-slot-bytes " + std::to_string(slot_bytes_) + ": a tensor of " + std::to_string(bytes) +
                " bytes would go up in " + std::to_string((bytes + slot_bytes_ - 1) / slot_bytes_) +
                " copies (at most " + std::to_string(kMaxChunks) + "); give at least " +
                std::to_string((bytes + kMaxChunks - 1) / kMaxChunks) + " bytes a slot");
  const auto* from = static_cast<const unsigned char*>(src);
  for (size_t at = 0; at < bytes; at += slot_bytes_) {
    size_t len = std::min(slot_bytes_, bytes - at);
    bool reported = skip_wait_ && weights_;
    Slot& s = reported ? reported_slot() : slots_[next_];
    if (!reported) next_ = (next_ + 1) % slots_.size();
    if (s.used) {
      ++stats_.reuses;
      if (s.done && !(skip_wait_ && s.batch == batch_)) {
        s.done->wait();
        ++stats_.waits;
      }
    }
    if (s.host.bytes < len) fit(s, len);
    dev_->host_write(s.host, from + at, len);
    s.used = true;
    s.batch = batch_;
    ++stats_.chunks;
    if (skip_wait_) {
      late_.push_back({dst + at, static_cast<size_t>(&s - slots_.data()), len});
      continue;
    }
    dev_->upload(dst + at, s.host.data, len);
    s.done = dev_->fence();
  }
}

// Gives a slot host memory for `len` bytes: sized to what it stages, not to the slot's limit,
// since pinning is slow (a 4 MiB slot per small bias pinned 256 MiB to load a decoder). The
// old block is read by no copy in flight: its copy was waited for, or (the fault) not issued.
void StagingPool::fit(Slot& s, size_t len) {
  size_t want = std::min(slot_bytes_, std::max(kMinSlotBytes, std::bit_ceil(len)));
  if (s.host.data) {
    stats_.host_bytes -= static_cast<int64_t>(s.host.bytes);
    if (s.host.release) s.host.release(s.host.data);
    s.host = HostBlock{};
    ++stats_.grown;
  } else {
    ++stats_.allocated;
  }
  s.host = dev_->host_alloc(want);
  stats_.host_bytes += static_cast<int64_t>(s.host.bytes);
}

// The fault hands weights' slots out as the reported runtime did: each one once, and when all
// have been, every further upload goes into slot 0 at once. A program whose weights fit is
// right in a fresh process and wrong after a larger one filled the pool (the A-B-A face).
StagingPool::Slot& StagingPool::reported_slot() {
  for (Slot& s : slots_)
    if (!s.used) return s;
  return slots_[0];
}

void StagingPool::end() {
  try {
    for (const Pending& p : late_) {  // the fault: each copy reads whatever its slot holds now
      dev_->upload(p.dst, slots_[p.slot].host.data, p.bytes);
      slots_[p.slot].done = dev_->fence();
    }
  } catch (...) {  // called from a destructor: the copies that did not start are simply lost
  }
  late_.clear();
  dev_ = nullptr;
  std::unique_lock<std::mutex> held = std::move(session_);  // moved while still locked; unlocks here
}

StagingPool& staging_pool(const std::string& device_key, int slots, size_t slot_bytes) {
  static std::mutex mu;
  // Never destroyed: pinned memory must not be freed after the driver's own teardown.
  static auto* pools = new std::map<std::tuple<std::string, int, size_t>, std::unique_ptr<StagingPool>>;
  std::lock_guard<std::mutex> lock(mu);
  auto& p = (*pools)[{device_key, slots, slot_bytes}];
  if (!p) p = std::make_unique<StagingPool>(slots, slot_bytes);
  return *p;
}

}  // namespace lockstep
