// Host staging buffers for host -> device copies, for every device. A slot is written again
// only after the copy that read it has completed (a fence per slot), however many tensors go
// through it; a tensor larger than a slot goes in slot-sized chunks. A slot's host block is
// sized to the largest chunk it has staged (at most the slot size). This is the runtime
// stage whose reuse race made the seed's GPU output wrong (docs/why.md); a planted fault
// (staging-reuse) skips the wait on purpose so that tests can show the race and the checks
// that catch it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace lockstep {

class StagingPool {
 public:
  // A tensor goes up in at most this many copies: slots too small for that (--staging-slot-bytes
  // 1 cut a model's weights into millions) are an error naming the option.
  static constexpr size_t kMaxChunks = size_t{1} << 16;

  StagingPool(int slots, size_t slot_bytes);
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  int slots() const { return static_cast<int>(slots_.size()); }
  size_t slot_bytes() const { return slot_bytes_; }

  // Everything uploaded between begin() and end() goes to `dev`, one batch at a time (the pool
  // is locked from begin() to end()). `weights`: the batch uploads a program's constants, which
  // the reported pool staged. With `skip_wait` (the fault), a batch of weights takes slots as
  // the reported pool gave them (reported_slot), slots this batch wrote are rewritten without
  // waiting and every copy is issued only at end(): the race is lost every time, not now and
  // then (a queue held back instead would deadlock once it fills). Copies of earlier batches
  // are still waited for, so what is corrupted does not depend on timing.
  void begin(Device& dev, bool skip_wait, bool weights = false);
  void upload(DevicePtr dst, const void* src, size_t bytes);
  void end();

  struct Stats {
    int64_t chunks = 0;      // copies issued
    int64_t reuses = 0;      // slots written again
    int64_t waits = 0;       // reuses that waited for the slot's previous copy
    int allocated = 0;       // slots with host memory so far
    int64_t grown = 0;       // slots given a larger block for a larger chunk
    int64_t host_bytes = 0;  // host memory the slots hold now
  };
  Stats stats() const { return stats_; }

 private:
  struct Slot {
    HostBlock host;
    std::shared_ptr<Fence> done;  // recorded after the copy that reads `host`
    bool used = false;
    uint64_t batch = 0;           // the batch that last wrote it
  };
  struct Pending {
    DevicePtr dst;
    size_t slot, bytes;
  };

  Slot& reported_slot();
  void fit(Slot& s, size_t len);

  static constexpr size_t kMinSlotBytes = size_t{64} << 10;  // so that small chunks in turn do not grow a block each time

  size_t slot_bytes_;
  std::vector<Slot> slots_;
  size_t next_ = 0;  // the ring position survives programs, as a long-lived runtime's would
  Stats stats_;
  std::mutex mu_;
  std::unique_lock<std::mutex> session_;
  Device* dev_ = nullptr;
  bool skip_wait_ = false;
  bool weights_ = false;
  uint64_t batch_ = 0;  // batches so far: the fault skips only waits within one batch
  std::vector<Pending> late_;  // the fault's copies, issued at end()
};

// The process-wide pool of this geometry for devices of `device_key`: its host memory and
// ring outlive programs.
StagingPool& staging_pool(const std::string& device_key, int slots, size_t slot_bytes);

// begin() .. end() for one batch of uploads, ended on every path out.
class UploadBatch {
 public:
  UploadBatch(StagingPool& p, Device& d, bool skip_wait, bool weights = false) : pool_(p) {
    pool_.begin(d, skip_wait, weights);
  }
  ~UploadBatch() { pool_.end(); }
  UploadBatch(const UploadBatch&) = delete;
  UploadBatch& operator=(const UploadBatch&) = delete;
  void upload(DevicePtr dst, const void* src, size_t bytes) { pool_.upload(dst, src, bytes); }

 private:
  StagingPool& pool_;
};

}  // namespace lockstep
