// Pinned host staging buffers for host -> device copies. A slot is written again only after
// the copy that read it has completed (one event per slot), however many tensors go through
// it; a tensor larger than a slot goes in slot-sized chunks. This is the runtime stage whose
// reuse race made the seed's GPU output wrong (docs/why.md); the fault "staging-reuse" skips
// the wait on purpose so that tests can show the race and the checks that catch it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "backend/cuda/cuda_api.h"

namespace lockstep::cuda {

class Device;

class StagingPool {
 public:
  StagingPool(const Device& d, int slots, size_t slot_bytes);
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  int slots() const { return static_cast<int>(slots_.size()); }
  size_t slot_bytes() const { return slot_bytes_; }

  // Everything uploaded between begin() and end() on `stream`. With `skip_wait` (the fault),
  // slots are rewritten without waiting and every copy is issued only at end(), after the
  // ring wrapped: the race is lost every time, not now and then (a stream held back instead
  // would deadlock once its queue fills).
  void begin(CUstream stream, bool skip_wait);
  void upload(CUdeviceptr dst, const void* src, size_t bytes);
  void end();

  struct Stats {
    int64_t chunks = 0;      // copies issued
    int64_t reuses = 0;      // slots written again
    int64_t waits = 0;       // reuses that waited for the slot's previous copy
    int allocated = 0;       // slots with pinned memory so far
  };
  Stats stats() const { return stats_; }

 private:
  struct Slot {
    void* host = nullptr;
    CUevent done = nullptr;  // recorded after the copy that reads `host`
    bool used = false;
  };
  struct Pending {
    CUdeviceptr dst;
    size_t slot, bytes;
  };

  const Device& dev_;
  size_t slot_bytes_;
  std::vector<Slot> slots_;
  size_t next_ = 0;  // the ring position survives programs, as a long-lived runtime's would
  Stats stats_;
  std::mutex mu_;
  std::unique_lock<std::mutex> session_;
  CUstream stream_ = nullptr;
  bool skip_wait_ = false;
  std::vector<Pending> late_;  // the fault's copies, issued at end()
};

}  // namespace lockstep::cuda

namespace lockstep::cuda {

// begin() .. end() for one batch of uploads, ended on every path out.
class UploadBatch {
 public:
  UploadBatch(StagingPool& p, CUstream s, bool skip_wait) : pool_(p) { pool_.begin(s, skip_wait); }
  ~UploadBatch() { pool_.end(); }
  UploadBatch(const UploadBatch&) = delete;
  UploadBatch& operator=(const UploadBatch&) = delete;
  void upload(CUdeviceptr dst, const void* src, size_t bytes) { pool_.upload(dst, src, bytes); }

 private:
  StagingPool& pool_;
};

}  // namespace lockstep::cuda
