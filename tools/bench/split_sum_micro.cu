// Microbenchmark for the flow's convs (docs/perf.md): the 174-node cut's in_layers conv
// (72 -> 144 channels, 1024 columns, K taps on a padded input) as lockstep prints it today
// (2 x 1 outputs a work item, weights staged, one sum per output in term order), against a sum
// split into S parts over the input channels: each part a warp-uniform run of channels summed
// from 0 by its own threads, the parts then added in order (((p0 + p1) + p2) + ...) from shared
// memory, so that more threads share the few outputs. A fixed order that a cpu can follow too;
// the program checks each against the host computing that order.
// Build and run on a machine with nvcc: nvcc -O3 -fmad=false -arch=sm_90 split_sum_micro.cu && ./a.out
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "micro.cuh"

constexpr int CI = 72, CO = 144, L = 1024;

// lockstep's k64: 2 rows a work item, the row block's weights staged as [term][row].
template <int K>
__global__ void __launch_bounds__(256, 3) now(float* __restrict__ y, const float* __restrict__ w,
                                              const float* __restrict__ x, const float* __restrict__ b) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;
  constexpr int LP = L + K - 1;
  const int64_t n = CO / 2 * L;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t vb = (uint32_t)i / 1024u % 72u, vl = (uint32_t)i % 1024u;
    __syncthreads();
    for (int e = threadIdx.x; e < 2 * CI * K; e += blockDim.x) {
      int c = e % 2, k = e / 2 % K, ci = e / 2 / K;
      ws[e] = w[(vb * 2 + c) * CI * K + ci * K + k];
    }
    __syncthreads();
    float acc[2] = {0.0f, 0.0f};
    for (int ci = 0; ci < CI; ++ci)
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int c = 0; c < 2; ++c) acc[c] = fmaf(ws[(k + ci * K) * 2 + c], x[ci * LP + vl + k], acc[c]);
#pragma unroll
    for (int c = 0; c < 2; ++c) y[(vb * 2 + c) * L + vl] = acc[c] + b[vb * 2 + c];
  }
}

// S parts of CI / S channels; a group of 256 threads is 256 / S columns of R rows, part p its
// threads p * 256 / S.. (whole warps). Partial sums meet in shared memory, part 0 adds them.
template <int K, int R, int S>
__global__ void __launch_bounds__(256, 3) split(float* __restrict__ y, const float* __restrict__ w,
                                                const float* __restrict__ x, const float* __restrict__ b) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;             // [term][row]
  float* const ps = ws + R * CI * K;        // [part][row][column of the group]
  constexpr int LP = L + K - 1, PER = 256 / S, PART = CI / S;
  const int cols = L, items = CO / R * cols;  // work items: a column of R rows
  const int t = threadIdx.x, part = t / PER, it = t % PER;
  for (int i0 = blockIdx.x * PER; i0 < items; i0 += gridDim.x * PER) {
    const int i = i0 + it, vb = i / cols, vl = i % cols;  // a group's columns lie in one row block
    __syncthreads();
    for (int e = t; e < R * CI * K; e += blockDim.x) {
      int c = e % R, k = e / R % K, ci = e / R / K;
      ws[e] = w[(vb * R + c) * CI * K + ci * K + k];
    }
    __syncthreads();
    float acc[R];
#pragma unroll
    for (int c = 0; c < R; ++c) acc[c] = 0.0f;
    for (int ci = part * PART; ci < (part + 1) * PART; ++ci)
#pragma unroll
      for (int k = 0; k < K; ++k) {
        float xv = x[ci * LP + vl + k];
#pragma unroll
        for (int c = 0; c < R; ++c) acc[c] = fmaf(ws[(k + ci * K) * R + c], xv, acc[c]);
      }
#pragma unroll
    for (int c = 0; c < R; ++c) ps[(part * R + c) * PER + it] = acc[c];
    __syncthreads();
    // The R x PER sums, each of S parts in order, spread over all 256 threads.
    for (int e = t; e < R * PER; e += blockDim.x) {
      int c = e / PER, j = e % PER;
      float s = ps[c * PER + j];
#pragma unroll
      for (int q = 1; q < S; ++q) s = s + ps[(q * R + c) * PER + j];
      y[(vb * R + c) * L + (i0 + j) % cols] = s + b[vb * R + c];
    }
  }
}

template <int K>
void run() {
  constexpr int LP = L + K - 1;
  std::vector<float> hx(size_t{CI} * LP), hw(CO * CI * K), hb(CO), got(size_t{CO} * L);
  uint32_t s = 12345;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return (int)(s >> 9) / float(1 << 23) - 0.5f; };
  for (float& v : hx) v = rnd();
  for (float& v : hw) v = rnd() * 0.2f;
  for (float& v : hb) v = rnd();
  // The host's sums: in term order, and in S parts added in order.
  auto host = [&](int parts) {
    std::vector<float> y(size_t{CO} * L);
    for (int co = 0; co < CO; ++co)
      for (int t = 0; t < L; ++t) {
        float total = 0.0f;
        for (int p = 0; p < parts; ++p) {
          float acc = 0.0f;
          for (int ci = p * CI / parts; ci < (p + 1) * CI / parts; ++ci)
            for (int k = 0; k < K; ++k) acc = std::fma(hw[(co * CI + ci) * K + k], hx[ci * LP + t + k], acc);
          total = p ? total + acc : acc;
        }
        y[co * L + t] = total + hb[co];
      }
    return y;
  };
  float *x, *w, *b, *y;
  CHECK(cudaMalloc(&x, hx.size() * 4));
  CHECK(cudaMalloc(&w, hw.size() * 4));
  CHECK(cudaMalloc(&b, hb.size() * 4));
  CHECK(cudaMalloc(&y, got.size() * 4));
  CHECK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(w, hw.data(), hw.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
  auto check = [&](int parts) {
    CHECK(cudaMemcpy(got.data(), y, got.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<float> want = host(parts);
    return std::memcmp(want.data(), got.data(), got.size() * 4) == 0;
  };
  float t0 = time_us([&] { now<K><<<288, 256, 2 * CI * K * 4>>>(y, w, x, b); }, 500, 20);
  std::printf("K=%d now (2 x 1, one sum): %.2f us, same as the host: %s\n", K, t0, check(1) ? "yes" : "NO");
  auto measure = [&](auto kernel, int R, int S) {
    int bytes = (R * CI * K + S * R * (256 / S)) * 4, groups = CO / R * L / (256 / S);
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    CHECK(cudaMemset(y, 0, got.size() * 4));
    float t = time_us([&] { kernel<<<groups, 256, bytes>>>(y, w, x, b); }, 500, 20);
    CHECK(cudaGetLastError());
    std::printf("K=%d split %d parts, %d x 1 a thread, %d groups: %.2f us, same as the host: %s\n", K, S, R, groups, t,
                check(S) ? "yes" : "NO");
  };
  measure(split<K, 2, 1>, 2, 1);
  measure(split<K, 8, 1>, 8, 1);
  measure(split<K, 4, 2>, 4, 2);
  measure(split<K, 8, 2>, 8, 2);
  measure(split<K, 4, 4>, 4, 4);
  measure(split<K, 8, 4>, 8, 4);
  measure(split<K, 16, 4>, 16, 4);
  measure(split<K, 8, 8>, 8, 8);
  CHECK(cudaFree(x));
  CHECK(cudaFree(w));
  CHECK(cudaFree(b));
  CHECK(cudaFree(y));
}

int main() {
  run<5>();
  run<1>();
  return 0;
}
