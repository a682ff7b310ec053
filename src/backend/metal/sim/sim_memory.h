// metal-sim's memory: every mapping has a PROT_NONE guard page on each side, and a touch of a
// guard page (or of any unmapped address) while a dispatch runs becomes that dispatch's error
// instead of a crash. A buffer's data starts against the lower guard; the copy of a binding a
// dispatch runs on ends against the upper one, so the first byte past it faults.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace lockstep::metal::sim {

class Guarded {
 public:
  enum class Place { Start, End };  // data against the lower or the upper guard page
  // `bytes` zeroed bytes; the rest of their pages (the slack) holds a poison pattern.
  Guarded(size_t bytes, Place p);
  ~Guarded();
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  unsigned char* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Whether `addr` lies in this mapping's guards or slack, and then its offset from data()
  // (negative before it, bytes() or more past its end).
  bool locate(uintptr_t addr, int64_t* at) const;
  // Whether the slack lost its pattern (a write outside the data), and the first such offset.
  bool slack_written(int64_t* at) const;

 private:
  unsigned char* map_ = nullptr;
  size_t map_bytes_ = 0, page_ = 0;
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
};

// Runs fn(arg) with memory faults trapped: false, with the faulting address in `addr`, when it
// touched a guard page or unmapped memory (its frames are abandoned: it must own nothing).
bool run_trapped(void (*fn)(void*), void* arg, uintptr_t* addr);

}  // namespace lockstep::metal::sim
