// The cpu target's threads. A generated kernel hands its flattened outer iterations to
// parallel_for. Each thread of a job owns an equal block of them (the same block in every job of
// that size, so a kernel finds its input in the caches of the thread that wrote it) and claims it
// in pieces; a thread that runs out takes the pieces left in the others' blocks, so a worker the
// OS has descheduled never holds the kernel up: the caller waits only for a piece a worker has
// already started. Waits spin for a short, fixed time (back-to-back kernels on an idle machine
// never sleep) and then sleep on a futex (on a busy machine a waiting thread gives its core
// away). Every iteration runs exactly once, on one thread, whatever the thread count or timing,
// and a kernel's iteration computes whole output elements (reductions are never split), so
// results do not depend on either.
#pragma once
#include <cstdint>

namespace lockstep::cpu {

// What a kernel gives: its buffers and a half-open range of its outer iterations.
using RangeFn = void (*)(void* const* bufs, int64_t begin, int64_t end);

// Runs fn over [0, n) on up to `threads` threads (the caller is one of them; <= 0: the cores
// this process may run on), no thread taking fewer than `grain` iterations at a time but the
// last: a kernel of at most one grain runs on the caller alone, as does any kernel while the
// pool is busy with another caller's. The signature is the generated code's ls_parallel_fn.
void parallel_for(RangeFn fn, void* const* bufs, int64_t n, int64_t grain, int threads);

// How long a waiting thread spins before it sleeps.
constexpr int64_t kSpinNanoseconds = 50'000;

}  // namespace lockstep::cpu
