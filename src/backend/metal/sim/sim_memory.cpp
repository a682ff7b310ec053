#include "backend/metal/sim/sim_memory.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "core/error.h"

namespace lockstep::metal::sim {

namespace {

constexpr unsigned char kSlack = 0xA5;

thread_local sigjmp_buf* armed = nullptr;
thread_local uintptr_t fault_at = 0;
struct sigaction previous_segv, previous_bus;

// A fault during a trapped run jumps back to it; any other goes to whoever handled it before.
void on_fault(int sig, siginfo_t* info, void* ctx) {
  if (sigjmp_buf* j = armed) {
    armed = nullptr;
    fault_at = reinterpret_cast<uintptr_t>(info->si_addr);
    siglongjmp(*j, 1);
  }
  const struct sigaction& prev = sig == SIGSEGV ? previous_segv : previous_bus;
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) return prev.sa_sigaction(sig, info, ctx);
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) return prev.sa_handler(sig);
  signal(sig, SIG_DFL);  // the faulting instruction runs again and faults as it would have
}

void install_trap() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction a;
    std::memset(&a, 0, sizeof a);
    a.sa_sigaction = on_fault;
    a.sa_flags = SA_SIGINFO;
    sigemptyset(&a.sa_mask);
    sigaction(SIGSEGV, &a, &previous_segv);
    sigaction(SIGBUS, &a, &previous_bus);
  });
}

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

}  // namespace

Guarded::Guarded(size_t bytes, Place p) : page_(page_size()), bytes_(bytes) {
  size_t pages = (std::max<size_t>(bytes, 1) + page_ - 1) / page_ * page_;
  map_bytes_ = pages + 2 * page_;
  void* m = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw Error("metal-sim: cannot map " + std::to_string(bytes) + " bytes");
  map_ = static_cast<unsigned char*>(m);
  mprotect(map_, page_, PROT_NONE);
  mprotect(map_ + page_ + pages, page_, PROT_NONE);
  data_ = p == Place::Start ? map_ + page_ : map_ + page_ + pages - bytes;
  std::memset(map_ + page_, kSlack, static_cast<size_t>(data_ - (map_ + page_)));
  std::memset(data_ + bytes, kSlack, static_cast<size_t>(map_ + page_ + pages - (data_ + bytes)));
}

Guarded::~Guarded() { munmap(map_, map_bytes_); }

bool Guarded::locate(uintptr_t addr, int64_t* at) const {
  auto a = reinterpret_cast<uintptr_t>(data_), lo = reinterpret_cast<uintptr_t>(map_);
  if (addr < lo || addr >= lo + map_bytes_ || (addr >= a && addr < a + bytes_)) return false;
  *at = static_cast<int64_t>(addr - a);  // two's complement: negative below the data
  return true;
}

bool Guarded::slack_written(int64_t* at) const {
  const unsigned char* end = data_ + bytes_;
  for (const unsigned char* p = map_ + page_; p < data_; ++p)
    if (*p != kSlack) return *at = p - data_, true;
  for (const unsigned char* p = end; p < map_ + map_bytes_ - page_; ++p)
    if (*p != kSlack) return *at = p - data_, true;
  return false;
}

bool run_trapped(void (*fn)(void*), void* arg, uintptr_t* addr) {
  install_trap();
  sigjmp_buf here;
  if (sigsetjmp(here, 1) != 0) {
    *addr = fault_at;
    return false;
  }
  armed = &here;
  fn(arg);
  armed = nullptr;
  return true;
}

}  // namespace lockstep::metal::sim
