#include "backend/metal/sim/sim_headers.h"

namespace lockstep::metal::sim {

// Only what Metal has: no erf, no double maths. precise:: is correctly rounded (the host's IEEE
// operations); fast:: flushes subnormal arguments and results to zero, as Metal's fast math
// does; metal:: is precise::, as in a library built with fast math off.
const char* metal_stdlib_text() {
  return R"msl(// metal-sim's <metal_stdlib>: Metal's language on a C++17 host compiler, enough for the MSL
// lockstep prints, compiled byte for byte. Unknown [[attributes]] are ignored (-Wno-attributes).
#pragma once
#include <stdint.h>

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef _Float16 half;

#define kernel static
#define device
#define constant const
#define thread
// Threadgroup memory: one array per launcher thread, which runs a dispatch's threadgroups one
// after another, each group's threads as fibres of that thread (so they share it).
#define threadgroup static thread_local
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define MAXFLOAT 0x1.fffffep+127f
#define HUGE_VALF __builtin_huge_valf()

extern "C" void ls_sim_barrier(void);

namespace metal {

enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
inline mem_flags operator|(mem_flags a, mem_flags b) { return (mem_flags)((int)a | (int)b); }
// Every thread of the threadgroup reaches it before any goes on (the launcher's fibres).
inline void threadgroup_barrier(mem_flags) { ls_sim_barrier(); }

template <class T, class F>
inline T as_type(F from) {
  static_assert(sizeof(T) == sizeof(F), "as_type needs two types of one size");
  T to;
  __builtin_memcpy(&to, &from, sizeof to);
  return to;
}

namespace precise {
inline float sqrt(float x) { return __builtin_sqrtf(x); }
inline float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
inline float fabs(float x) { return __builtin_fabsf(x); }
inline float abs(float x) { return __builtin_fabsf(x); }
inline float floor(float x) { return __builtin_floorf(x); }
inline float ceil(float x) { return __builtin_ceilf(x); }
inline float trunc(float x) { return __builtin_truncf(x); }
inline float round(float x) { return __builtin_roundf(x); }
inline float rint(float x) { return __builtin_rintf(x); }
inline float fmod(float x, float y) { return __builtin_fmodf(x, y); }
inline float fmin(float x, float y) { return __builtin_fminf(x, y); }
inline float fmax(float x, float y) { return __builtin_fmaxf(x, y); }
inline float copysign(float x, float y) { return __builtin_copysignf(x, y); }
inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline float exp(float x) { return __builtin_expf(x); }
inline float exp2(float x) { return __builtin_exp2f(x); }
inline float log(float x) { return __builtin_logf(x); }
inline float log2(float x) { return __builtin_log2f(x); }
inline float pow(float x, float y) { return __builtin_powf(x, y); }
inline float powr(float x, float y) { return __builtin_powf(x, y); }
inline float tanh(float x) { return __builtin_tanhf(x); }
inline float sin(float x) { return __builtin_sinf(x); }
inline float cos(float x) { return __builtin_cosf(x); }
}  // namespace precise

namespace fast {
inline float ftz(float x) { return __builtin_fabsf(x) < 0x1p-126f ? __builtin_copysignf(0.0f, x) : x; }
inline float sqrt(float x) { return ftz(precise::sqrt(ftz(x))); }
inline float rsqrt(float x) { return ftz(precise::rsqrt(ftz(x))); }
inline float fabs(float x) { return ftz(precise::fabs(ftz(x))); }
inline float abs(float x) { return ftz(precise::abs(ftz(x))); }
inline float floor(float x) { return ftz(precise::floor(ftz(x))); }
inline float ceil(float x) { return ftz(precise::ceil(ftz(x))); }
inline float trunc(float x) { return ftz(precise::trunc(ftz(x))); }
inline float round(float x) { return ftz(precise::round(ftz(x))); }
inline float rint(float x) { return ftz(precise::rint(ftz(x))); }
inline float fmod(float x, float y) { return ftz(precise::fmod(ftz(x), ftz(y))); }
inline float fmin(float x, float y) { return ftz(precise::fmin(ftz(x), ftz(y))); }
inline float fmax(float x, float y) { return ftz(precise::fmax(ftz(x), ftz(y))); }
inline float copysign(float x, float y) { return ftz(precise::copysign(ftz(x), y)); }
inline float fma(float a, float b, float c) { return ftz(precise::fma(ftz(a), ftz(b), ftz(c))); }
inline float exp(float x) { return ftz(precise::exp(ftz(x))); }
inline float exp2(float x) { return ftz(precise::exp2(ftz(x))); }
inline float log(float x) { return ftz(precise::log(ftz(x))); }
inline float log2(float x) { return ftz(precise::log2(ftz(x))); }
inline float pow(float x, float y) { return ftz(precise::pow(ftz(x), ftz(y))); }
inline float powr(float x, float y) { return ftz(precise::powr(ftz(x), ftz(y))); }
inline float tanh(float x) { return ftz(precise::tanh(ftz(x))); }
inline float sin(float x) { return ftz(precise::sin(ftz(x))); }
inline float cos(float x) { return ftz(precise::cos(ftz(x))); }
}  // namespace fast

using precise::sqrt; using precise::rsqrt; using precise::fabs; using precise::abs; using precise::floor;
using precise::ceil; using precise::trunc; using precise::round; using precise::rint; using precise::fmod;
using precise::fmin; using precise::fmax; using precise::copysign; using precise::fma; using precise::exp;
using precise::exp2; using precise::log; using precise::log2; using precise::pow; using precise::powr;
using precise::tanh; using precise::sin; using precise::cos;

inline bool isnan(float x) { return __builtin_isnan(x); }
inline bool isinf(float x) { return __builtin_isinf(x); }

}  // namespace metal
)msl";
}

// The launcher: every thread of every threadgroup calls the kernel with its position; a library
// that calls threadgroup_barrier runs each threadgroup's threads as fibres that all reach a
// barrier before any passes it.
const char* launch_header_text() {
  return R"msl(// metal-sim's launcher runtime, included by the generated launcher after the MSL file.
#pragma once
#undef kernel
#undef device
#undef constant
#undef thread
#undef threadgroup
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <type_traits>
#include <ucontext.h>

struct LsSimDispatch {
  void* const* buffers;      // by [[buffer(i)]] index
  uint32_t groups, threads;  // threadgroups, threads per threadgroup
  char* error;               // 256 bytes for why, when the run returns non-zero
  // For a kernel with barriers: `fibre_bytes` per thread (its context, then its stack), owned
  // by the caller, so that nothing is left allocated when a fault abandons the run.
  unsigned char* scratch;
  size_t fibre_bytes;
};
struct LsSimKernel {
  const char* name;
  int (*run)(const LsSimDispatch*);
  // out[i]: 'w' for a buffer the kernel may write, 'r' read only, '-' unused (32 entries).
  void (*access)(char* out);
  int barriers;  // its threads run as fibres and need scratch
};

namespace ls_sim {

struct Buf { int index; };
struct Tid {};
struct Gid {};
struct Tpg {};
struct Groups {};
struct GridPos {};
struct GridSize {};
struct At { uint32_t tid, gid, tpg, groups; };

template <class P> P arg(Buf b, const LsSimDispatch* d, const At&) {
  if constexpr (std::is_pointer_v<P>) return reinterpret_cast<P>(d->buffers[b.index]);
  else return *reinterpret_cast<std::remove_reference_t<P>*>(d->buffers[b.index]);
}
template <class P> P arg(Tid, const LsSimDispatch*, const At& a) { return a.tid; }
template <class P> P arg(Gid, const LsSimDispatch*, const At& a) { return a.gid; }
template <class P> P arg(Tpg, const LsSimDispatch*, const At& a) { return a.tpg; }
template <class P> P arg(Groups, const LsSimDispatch*, const At& a) { return a.groups; }
template <class P> P arg(GridPos, const LsSimDispatch*, const At& a) { return a.gid * a.tpg + a.tid; }
template <class P> P arg(GridSize, const LsSimDispatch*, const At& a) { return a.groups * a.tpg; }

template <class P> void mark(Buf b, char* out) {
  using T = std::remove_reference_t<std::remove_pointer_t<P>>;
  out[b.index] = std::is_const_v<T> ? 'r' : 'w';
}
template <class P, class S> void mark(S, char*) {}

template <class... P, class... S>
void access(void (*)(P...), char* out, S... src) {
  (mark<P>(src, out), ...);
}

// The threads of one threadgroup as fibres: each runs until it finishes or reaches a barrier.
struct Fibre {
  ucontext_t ctx;
  int state;
};
struct Fibres {
  enum State { Ready, AtBarrier, Done };
  ucontext_t main;
  unsigned char* scratch = nullptr;
  size_t each = 0;  // bytes per thread: its Fibre, then its stack
  uint32_t current = 0;
  void (*call)(void*, uint32_t) = nullptr;
  void* closure = nullptr;
  Fibre& at(uint32_t t) { return *(Fibre*)(scratch + each * t); }
};
inline thread_local Fibres* fibres = nullptr;
constexpr size_t kFibreHead = (sizeof(Fibre) + 63) / 64 * 64;

inline void fibre_main(unsigned lo, unsigned hi) {
  Fibres* f = (Fibres*)(((uintptr_t)hi << 32) | lo);
  f->call(f->closure, f->current);
  f->at(f->current).state = Fibres::Done;
}

template <class F> struct Closure {
  F f;
  static void call(void* c, uint32_t t) { static_cast<Closure*>(c)->f(t); }
};

// Runs every thread of one group to its end; non-zero, with the reason, when a thread finished
// while others wait at a barrier (they would wait forever on a GPU).
template <class F>
int run_fibres(F&& each, const LsSimDispatch* d, uint32_t group) {
  uint32_t threads = d->threads;
  if (!d->scratch || d->fibre_bytes < kFibreHead + 16384) {
    snprintf(d->error, 256, "no fibre stacks for threadgroup_barrier were given");
    return 1;
  }
  Fibres f;
  Closure<F> closure{each};
  f.scratch = d->scratch, f.each = d->fibre_bytes, f.call = &Closure<F>::call, f.closure = &closure;
  uintptr_t self = (uintptr_t)&f;
  for (uint32_t t = 0; t < threads; ++t) {
    Fibre& fb = f.at(t);
    getcontext(&fb.ctx);
    fb.ctx.uc_stack.ss_sp = (unsigned char*)&fb + kFibreHead;
    fb.ctx.uc_stack.ss_size = f.each - kFibreHead;
    fb.ctx.uc_link = &f.main;
    makecontext(&fb.ctx, (void (*)())fibre_main, 2, (unsigned)(self & 0xffffffffu), (unsigned)(self >> 32));
    fb.state = Fibres::Ready;
  }
  fibres = &f;
  for (;;) {
    for (uint32_t t = 0; t < threads; ++t)
      if (f.at(t).state == Fibres::Ready) f.current = t, swapcontext(&f.main, &f.at(t).ctx);
    uint32_t done = 0;
    for (uint32_t t = 0; t < threads; ++t) done += f.at(t).state == Fibres::Done;
    if (done == threads) break;
    if (done) {
      snprintf(d->error, 256, "threadgroup %u: %u threads finished while %u wait at a threadgroup_barrier", group,
               done, threads - done);
      fibres = nullptr;
      return 1;
    }
    for (uint32_t t = 0; t < threads; ++t) f.at(t).state = Fibres::Ready;
  }
  fibres = nullptr;
  return 0;
}

template <class... P, class... S>
int run(const LsSimDispatch* d, bool barriers, void (*fn)(P...), S... src) {
  At at{0, 0, d->threads, d->groups};
  for (uint32_t g = 0; g < d->groups; ++g) {
    at.gid = g;
    if (!barriers) {
      for (uint32_t t = 0; t < d->threads; ++t) at.tid = t, fn(arg<P>(src, d, at)...);
      continue;
    }
    auto each = [&](uint32_t t) { At mine = at; mine.tid = t; fn(arg<P>(src, d, mine)...); };
    if (int rc = run_fibres(each, d, g)) return rc;
  }
  return 0;
}

}  // namespace ls_sim

extern "C" void ls_sim_barrier(void) {
  ls_sim::Fibres* f = ls_sim::fibres;
  if (!f) {  // the launcher runs fibres for every library that names threadgroup_barrier
    fprintf(stderr, "metal-sim: threadgroup_barrier outside a fibre dispatch\n");
    abort();
  }
  ls_sim::Fibre& me = f->at(f->current);
  me.state = ls_sim::Fibres::AtBarrier;
  swapcontext(&me.ctx, &f->main);
}
)msl";
}

}  // namespace lockstep::metal::sim
