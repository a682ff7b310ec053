// What the CUDA microbenchmarks here share: a checked CUDA call and a kernel launch's time.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));      \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

// Microseconds per call of f (a launch), over `reps` calls back to back after `warm` more.
template <class F>
float time_us(F f, int reps, int warm) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int r = 0; r < warm; ++r) f();
  CHECK(cudaEventRecord(a));
  for (int r = 0; r < reps; ++r) f();
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms * 1000 / reps;
}
