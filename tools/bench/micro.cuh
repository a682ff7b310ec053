// What the CUDA microbenchmarks here share: a checked CUDA call and a kernel launch's time.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

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

// A conv's input, weights and bias as every microbenchmark here fills them (one generator:
// input and bias in [-0.5, 0.5), weights a fifth of that), on the host and on the device.
struct ConvData {
  std::vector<float> hx, hw, hb;
  float *x = nullptr, *w = nullptr, *b = nullptr;
  ConvData(size_t nx, size_t nw, size_t nb) : hx(nx), hw(nw), hb(nb) {
    uint32_t s = 12345;
    auto rnd = [&] { s = s * 1664525u + 1013904223u; return (int)(s >> 9) / float(1 << 23) - 0.5f; };
    for (float& v : hx) v = rnd();
    for (float& v : hw) v = rnd() * 0.2f;
    for (float& v : hb) v = rnd();
    x = upload(hx), w = upload(hw), b = upload(hb);
  }
  ~ConvData() {
    CHECK(cudaFree(x));
    CHECK(cudaFree(w));
    CHECK(cudaFree(b));
  }
  static float* upload(const std::vector<float>& h) {
    float* d = nullptr;
    CHECK(cudaMalloc(&d, h.size() * 4));
    CHECK(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    return d;
  }
};
