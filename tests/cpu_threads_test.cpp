// The cpu target's threads (backend/cpu/thread_pool.h): every iteration of a kernel runs exactly
// once whatever the thread count, back-to-back jobs and concurrent callers; generated kernels
// hand their outer loops to it instead of opening OpenMP parallel regions; and a program's
// bytes do not depend on the thread count.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_compiler.h"
#include "backend/cpu/thread_pool.h"
#include "backend/registry.h"
#include "core/process.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/parity.h"
#include "vits.h"

namespace lockstep {
namespace {

// bufs[0]: one counter per iteration; bufs[1]: a counter of calls.
void count_range(void* const* bufs, int64_t begin, int64_t end) {
  auto* hits = static_cast<std::atomic<int>*>(bufs[0]);
  for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
  static_cast<std::atomic<int>*>(bufs[1])->fetch_add(1, std::memory_order_relaxed);
}

// Runs parallel_for over n iterations `jobs` times; every iteration must have run `jobs` times.
void expect_each_iteration_once_per_job(int64_t n, int threads, int jobs, int64_t grain = 1) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::atomic<int> calls{0};
  void* bufs[2] = {hits.data(), &calls};
  for (int j = 0; j < jobs; ++j) cpu::parallel_for(count_range, bufs, n, grain, threads);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[static_cast<size_t>(i)].load(), jobs) << "iteration " << i << " of " << n << ", " << threads << " threads";
  if (threads == 1 || n <= grain) EXPECT_EQ(calls.load(), n > 0 ? jobs : 0) << "one thread runs the whole range in one call";
}

TEST(CpuThreads, EveryIterationRunsExactlyOnce) {
  for (int threads : {0, 1, 2, 3, 8})
    for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 100003})
      for (int64_t grain : {1, 5, 1000}) expect_each_iteration_once_per_job(n, threads, 3, grain);
}

// Back-to-back jobs of different sizes and thread counts: a worker still on a finished job never
// takes part in the next one with the old one's function or range.
TEST(CpuThreads, BackToBackJobsOfDifferentShapes) {
  for (int round = 0; round < 300; ++round) {
    int threads = 2 + round % 3;
    expect_each_iteration_once_per_job(1 + (round * 37) % 500, threads, 2, 1 + round % 7);
  }
}

// Two callers at once (two programs run from two threads): one has the pool, the other runs its
// range on its own thread; both complete every iteration.
TEST(CpuThreads, ConcurrentCallersBothComplete) {
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&, c] {
      int64_t n = 5000 + c;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      void* bufs[2] = {hits.data(), &calls};
      for (int j = 0; j < 200; ++j) cpu::parallel_for(count_range, bufs, n, 1, 2);
      for (auto& h : hits)
        if (h.load() != 200) failures.fetch_add(1);
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(CpuThreads, AvailableCoresIsAtLeastOne) { EXPECT_GE(available_cores(), 1); }

// Each kernel is one range function over its flattened outer loops, handed to the runtime; the
// module has no OpenMP parallel region and does not link an OpenMP runtime.
TEST(CpuThreads, KernelsHandTheirOuterLoopsToTheRuntime) {
  vits::Config c;
  c.T = 64;
  Graph g = vits::build_cut(c, {"/flow/flows.0/enc/in_layers.1/Conv"});
  auto prog = compile(g, "cpu");
  prog->run(vits::seed_inputs(g, 64));
  std::string src;
  for (const auto& [name, text] : prog->sources()) src += text;
  ASSERT_FALSE(src.empty());
  EXPECT_EQ(src.find("omp parallel"), std::string::npos);
  EXPECT_EQ(src.find("omp.h"), std::string::npos);
  EXPECT_NE(src.find("ls_set_parallel"), std::string::npos);
  EXPECT_NE(src.find("_range(void* const* bufs, int64_t ls_begin, int64_t ls_end)"), std::string::npos);
  EXPECT_NE(src.find("ls_run(k"), std::string::npos);
  std::string id = cpu::SystemCompiler().identity();
  EXPECT_NE(id.find("-fopenmp-simd"), std::string::npos) << id;
  EXPECT_EQ(id.find("-fopenmp "), std::string::npos) << id;
}

// The same bytes with 1, 2, 3 and 7 threads (more threads than this machine has cores included).
TEST(CpuThreads, OutputBytesDoNotDependOnTheThreadCount) {
  vits::Config c;
  c.T = 173;
  Graph g = vits::build_cut(c, {"/flow/flows.0/enc/in_layers.1/Conv"});
  TensorMap in = vits::seed_inputs(g, 173);
  std::string want;
  for (int threads : {1, 2, 3, 7, 0}) {
    CompileOptions o;
    o.threads = threads;
    std::vector<Tensor> out = compile(g, "cpu", o)->run(in);
    std::string got = tensor_sha256(out.at(0));
    if (want.empty()) want = got;
    EXPECT_EQ(got, want) << threads << " threads";
  }
}

}  // namespace
}  // namespace lockstep
