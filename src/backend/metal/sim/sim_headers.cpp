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
// On x86-64 ELF hosts a switch saves what the ABI asks a callee to keep and nothing else: no
// signal mask, so no system call (swapcontext makes two per switch, most of a barrier kernel's
// time). Elsewhere, or with LS_SIM_PORTABLE_FIBRES defined before this header, ucontext; also
// where the compiler builds for CET (__CET__: a shadow stack would fault on the switch's ret,
// which glibc's swapcontext handles).
#if defined(__x86_64__) && defined(__ELF__) && !defined(__CET__) && !defined(LS_SIM_PORTABLE_FIBRES)
#define LS_SIM_OWN_SWITCH 1
extern "C" void ls_sim_switch(void** save, void* to);
extern "C" void ls_sim_fibre_start(void);
// A saved fibre, from its stack pointer up: MXCSR and the x87 control word, r15, r14, r13, r12,
// rbx, rbp, then the address it resumes at. A new fibre resumes at ls_sim_fibre_start: r12(r13).
asm(".pushsection .text\n"
    ".p2align 4\n"
    ".globl ls_sim_switch\n.hidden ls_sim_switch\n.type ls_sim_switch,@function\n"
    "ls_sim_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size ls_sim_switch, .-ls_sim_switch\n"
    ".globl ls_sim_fibre_start\n.hidden ls_sim_fibre_start\n.type ls_sim_fibre_start,@function\n"
    "ls_sim_fibre_start:\n"
    "  movq %r13, %rdi\n  callq *%r12\n  ud2\n"
    ".size ls_sim_fibre_start, .-ls_sim_fibre_start\n"
    ".popsection\n");
struct Context { void* sp; };
inline void swap(Context& save, const Context& to) { ls_sim_switch(&save.sp, to.sp); }
#else
struct Context { ucontext_t uc; };
inline void swap(Context& save, const Context& to) { swapcontext(&save.uc, &to.uc); }
#endif

struct Fibre {
  Context ctx;
  int state;
};
struct Fibres {
  enum State { Ready, AtBarrier, Done };
  Context main;
  unsigned char* scratch = nullptr;
  size_t each = 0;  // bytes per thread: its Fibre, then its stack
  uint32_t current = 0;
  void (*call)(void*, uint32_t) = nullptr;
  void* closure = nullptr;
  Fibre& at(uint32_t t) { return *(Fibre*)(scratch + each * t); }
};
inline thread_local Fibres* fibres = nullptr;
constexpr size_t kFibreHead = (sizeof(Fibre) + 63) / 64 * 64;

// A fibre never returns: once its thread is done it swaps back to the launcher for good.
inline void fibre_main(void* p) {
  Fibres* f = (Fibres*)p;
  f->call(f->closure, f->current);
  Fibre& me = f->at(f->current);
  me.state = Fibres::Done;
  swap(me.ctx, f->main);
}

#ifdef LS_SIM_OWN_SWITCH
// A saved frame at the top of the stack that resumes in fibre_main(f).
inline void make(Context& c, unsigned char* stack, size_t bytes, Fibres* f) {
  uintptr_t top = ((uintptr_t)(stack + bytes) & ~(uintptr_t)15) - 16;  // 16-aligned where it calls
  uint64_t* frame = (uint64_t*)(top - 64);
  uint32_t mxcsr;
  uint16_t cw;
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(cw));
  frame[0] = mxcsr | (uint64_t)cw << 32;
  frame[1] = frame[2] = 0;                                  // r15, r14
  frame[3] = (uint64_t)f, frame[4] = (uint64_t)&fibre_main;  // r13, r12
  frame[5] = frame[6] = 0;                                  // rbx, rbp
  frame[7] = (uint64_t)&ls_sim_fibre_start;
  c.sp = frame;
}
#else
inline void ucontext_main(unsigned lo, unsigned hi) { fibre_main((void*)(((uintptr_t)hi << 32) | lo)); }
inline void make(Context& c, unsigned char* stack, size_t bytes, Fibres* f) {
  uintptr_t self = (uintptr_t)f;
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, (void (*)())ucontext_main, 2, (unsigned)(self & 0xffffffffu), (unsigned)(self >> 32));
}
#endif

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
  for (uint32_t t = 0; t < threads; ++t) {
    Fibre& fb = f.at(t);
    make(fb.ctx, (unsigned char*)&fb + kFibreHead, f.each - kFibreHead, &f);
    fb.state = Fibres::Ready;
  }
  fibres = &f;
  for (;;) {
    for (uint32_t t = 0; t < threads; ++t)
      if (f.at(t).state == Fibres::Ready) f.current = t, swap(f.main, f.at(t).ctx);
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
  ls_sim::swap(me.ctx, f->main);
}
)msl";
}

}  // namespace lockstep::metal::sim
