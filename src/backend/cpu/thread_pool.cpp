#include "backend/cpu/thread_pool.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <mutex>
#include <thread>

#include "core/process.h"
#include "runtime/program.h"

namespace lockstep::cpu {

namespace {

static_assert(sizeof(std::atomic<uint32_t>) == 4 && std::atomic<uint32_t>::is_always_lock_free);

// Claims are counted in units: the iterations themselves up to this many, else equal shares.
constexpr int64_t kMaxUnits = int64_t(1) << 30;
// The next unit of a job being set up: no claim can succeed against it.
constexpr uint32_t kClosed = UINT32_MAX;

// The first iteration of unit u of n iterations in `units` units.
int64_t iteration(int64_t n, uint32_t units, uint32_t u) {
  return n == units ? u : static_cast<int64_t>(static_cast<__int128>(n) * u / units);
}

// Sleeps while a == expected (spurious returns allowed; callers loop).
void futex_wait(std::atomic<uint32_t>& a, uint32_t expected) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&a), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
#else
  a.wait(expected, std::memory_order_seq_cst);  // elsewhere (macOS): C++20's atomic wait
#endif
}

void futex_wake(std::atomic<uint32_t>& a, int count) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&a), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
#else
  if (count == 1) a.notify_one();
  else a.notify_all();
#endif
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or kSpinNanoseconds have passed; true when done.
template <class Done>
bool spin_until(Done done) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 &&
        std::chrono::steady_clock::now() - start > std::chrono::nanoseconds(kSpinNanoseconds))
      return done();
  }
}

// Each thread of a job owns an equal block of the units, the same block in every job of the same
// size, so consecutive kernels find their data in the caches of the thread that wrote it. A
// thread claims its own block front first, in pieces, and then the others' remaining pieces, so
// a descheduled worker's block is done by the threads that run.
class Pool {
 public:
  void run(RangeFn fn, void* const* bufs, int64_t n, int64_t grain, int threads) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return fn(bufs, 0, n);  // another caller's kernel has the workers
    threads = std::min(threads, kMaxThreads);
    grow(threads - 1);
    uint32_t units = static_cast<uint32_t>(std::min<int64_t>(n, kMaxUnits));
    uint32_t min_take = static_cast<uint32_t>(std::max<int64_t>(1, static_cast<int64_t>(static_cast<__int128>(grain) * units / n)));
    // Set up with every block closed: a thread still looking at the previous job reads the fields
    // only to have its claim refused.
    uint64_t epoch = (slots_[0].word.load(std::memory_order_relaxed) >> 32) + 1;
    for (int t = 0; t < threads_.load(std::memory_order_relaxed) || t < threads; ++t)
      slots_[t].word.store(epoch << 32 | kClosed, std::memory_order_seq_cst);
    fn_.store(fn, std::memory_order_relaxed);
    bufs_.store(bufs, std::memory_order_relaxed);
    n_.store(n, std::memory_order_relaxed);
    units_.store(units, std::memory_order_relaxed);
    threads_.store(threads, std::memory_order_relaxed);
    min_take_.store(min_take, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    for (int t = 0; t < threads; ++t) slots_[t].word.store(epoch << 32 | block_start(units, threads, t), std::memory_order_release);
    posted_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake(posted_, INT_MAX);
    work(0);
    // Wait only for units already claimed: a worker that has not started claims nothing now.
    if (!spin_until([&] { return done_.load(std::memory_order_acquire) == units; })) {
      caller_sleeping_.store(1, std::memory_order_seq_cst);
      for (uint32_t d; (d = done_.load(std::memory_order_seq_cst)) != units;) futex_wait(done_, d);
      caller_sleeping_.store(0, std::memory_order_relaxed);
    }
  }

 private:
  static uint32_t block_start(uint32_t units, int threads, int t) {
    return static_cast<uint32_t>(uint64_t(units) * t / threads);
  }

  // Claims and runs units of the current job, its own block first, until none is left. `self`:
  // 0 for the caller, w for worker w; a worker beyond the job's thread count takes no part.
  void work(int self) {
    for (int k = 0;; ++k) {
      int threads = threads_.load(std::memory_order_acquire);
      if (self >= threads || k >= threads) return;
      int b = (self + k) % threads;
      if (!claim_from(b)) return;  // a job being set up: the next one is posted soon
    }
  }

  // Runs pieces of block b while it has some; false when the block is closed.
  bool claim_from(int b) {
    std::atomic<uint64_t>& word = slots_[b].word;
    for (uint64_t w = word.load(std::memory_order_acquire);;) {
      uint32_t c = static_cast<uint32_t>(w);
      if (c == kClosed) return false;
      // Read after the acquire of the block's word: its job's fields or a later job's. A later
      // job's are written only once every unit of this one has finished and the block closed,
      // after which the claim below fails, so a successful claim runs with its own job's fields.
      RangeFn fn = fn_.load(std::memory_order_relaxed);
      void* const* bufs = bufs_.load(std::memory_order_relaxed);
      int64_t n = n_.load(std::memory_order_relaxed);
      uint32_t units = units_.load(std::memory_order_relaxed);
      int threads = threads_.load(std::memory_order_relaxed);
      if (b >= threads) return true;
      uint32_t end = block_start(units, threads, b + 1);
      if (c >= end) return true;
      // A quarter of what is left, so that pieces remain for a thread that runs out of its own.
      uint32_t take = std::min(end - c, std::max(min_take_.load(std::memory_order_relaxed), (end - c) / 4));
      if (!word.compare_exchange_weak(w, w + take, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      fn(bufs, iteration(n, units, c), iteration(n, units, c + take));
      if (done_.fetch_add(take, std::memory_order_seq_cst) + take == units &&
          caller_sleeping_.load(std::memory_order_seq_cst))
        futex_wake(done_, 1);
      w = word.load(std::memory_order_acquire);
    }
  }

  void worker(int self) {
    uint32_t seen = posted_.load(std::memory_order_acquire);
    for (;;) {
      if (!spin_until([&] { return posted_.load(std::memory_order_acquire) != seen; })) {
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        while (posted_.load(std::memory_order_seq_cst) == seen) futex_wait(posted_, seen);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = posted_.load(std::memory_order_acquire);
      work(self);
    }
  }

  // Workers are started on first need and never stopped (the pool lives as long as the process).
  void grow(int workers) {
    while (started_ < workers) {
      int self = ++started_;
      std::thread([this, self] { worker(self); }).detach();
    }
  }

  struct alignas(64) Slot {
    std::atomic<uint64_t> word{0};  // job epoch << 32 | next unit of this thread's block
  };

  // The blocks, the job (written once per job), the finished count and the workers' futex each
  // on cache lines of their own: a spinning waiter does not slow the claims down.
  std::mutex busy_;
  int started_ = 0;  // under busy_
  Slot slots_[kMaxThreads];
  alignas(64) std::atomic<RangeFn> fn_{nullptr};
  std::atomic<void* const*> bufs_{nullptr};
  std::atomic<int64_t> n_{0};
  std::atomic<uint32_t> units_{0};  // the range in units of n / units iterations
  std::atomic<int> threads_{0};     // the caller and workers 1..threads_-1 take part
  std::atomic<uint32_t> min_take_{1};
  alignas(64) std::atomic<uint32_t> done_{0};  // units finished (the caller's futex)
  std::atomic<uint32_t> caller_sleeping_{0};
  alignas(64) std::atomic<uint32_t> posted_{0};  // jobs posted (the workers' futex)
  std::atomic<int> sleepers_{0};
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: detached workers use it until the process ends
  return *p;
}

}  // namespace

void parallel_for(RangeFn fn, void* const* bufs, int64_t n, int64_t grain, int threads) {
  static const int cores = available_cores();
  if (n <= 0) return;
  if (threads <= 0) threads = cores;
  grain = std::max<int64_t>(1, grain);
  threads = static_cast<int>(std::min<int64_t>(threads, (n + grain - 1) / grain));
  if (threads <= 1) return fn(bufs, 0, n);
  pool().run(fn, bufs, n, grain, threads);
}

}  // namespace lockstep::cpu
