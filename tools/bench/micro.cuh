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

// A 1-D conv's shape: channels in and out, columns, taps and their dilation; the input is
// already padded (L + D (K - 1) columns a channel).
template <int CI_, int CO_, int L_, int K_, int D_>
struct Shape {
  static constexpr int CI = CI_, CO = CO_, L = L_, K = K_, D = D_, LP = L + D * (K - 1);
};

// lockstep's form: R rows x C columns a work item, the columns spread a row's 1/C apart, the
// row block's weights staged as [term][row]; one sum per output in term order.
template <class S, int R, int C>
__global__ void __launch_bounds__(256, 3) now(float* __restrict__ y, const float* __restrict__ w,
                                              const float* __restrict__ x, const float* __restrict__ b) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;
  constexpr int PER = S::L / C;  // work items of a row block
  const int n = S::CO / R * PER;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int vb = i / PER, vl = i % PER;
    __syncthreads();
    for (int e = threadIdx.x; e < R * S::CI * S::K; e += blockDim.x) {
      int c = e % R, k = e / R % S::K, ci = e / R / S::K;
      ws[e] = w[(vb * R + c) * S::CI * S::K + ci * S::K + k];
    }
    __syncthreads();
    float acc[R * C];
#pragma unroll
    for (int j = 0; j < R * C; ++j) acc[j] = 0.0f;
    for (int ci = 0; ci < S::CI; ++ci)
#pragma unroll
      for (int k = 0; k < S::K; ++k)
#pragma unroll
        for (int c = 0; c < R; ++c)
#pragma unroll
          for (int l = 0; l < C; ++l)
            acc[c * C + l] = fmaf(ws[(k + ci * S::K) * R + c], x[ci * S::LP + l * PER + vl + k * S::D], acc[c * C + l]);
#pragma unroll
    for (int c = 0; c < R; ++c)
#pragma unroll
      for (int l = 0; l < C; ++l) y[(vb * R + c) * S::L + l * PER + vl] = acc[c * C + l] + b[vb * R + c];
  }
}
