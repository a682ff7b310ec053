// Microbenchmark for convs with few outputs and long sums (docs/perf.md): the 174-node cut's
// in_layers and res_skip convs (72 -> 144 channels, 1024 columns) and decoder128's 64-channel
// resblock conv (8192 columns, 11 taps, dilation 5) as lockstep prints them today (R x C outputs
// a work item, weights staged, one sum per output in term order), against a sum split into
// parts over the input channels: each part a warp-uniform run of channels summed from 0 by its
// own threads, the parts then added in order (((p0 + p1) + p2) + ...) from shared memory, so
// that more threads share the outputs. A fixed order that a cpu can follow too; the program
// checks each against the host computing that order.
// Build and run on a machine with nvcc: nvcc -O3 -fmad=false -arch=sm_90 split_sum_micro.cu && ./a.out
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "micro.cuh"

// P parts of CI / P channels; a group of 256 threads is 256 / P columns of R rows, part p its
// threads p * 256 / P.. (whole warps). Partial sums meet in shared memory and are added in
// order, the 256 threads sharing the additions.
template <class S, int R, int P>
__global__ void __launch_bounds__(256, 3) split(float* __restrict__ y, const float* __restrict__ w,
                                                const float* __restrict__ x, const float* __restrict__ b) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;             // [term][row]
  float* const ps = ws + R * S::CI * S::K;  // [part][row][column of the group]
  constexpr int PER = 256 / P, PART = S::CI / P;
  const int items = S::CO / R * S::L;  // work items: a column of R rows
  const int t = threadIdx.x, part = t / PER, it = t % PER;
  for (int i0 = blockIdx.x * PER; i0 < items; i0 += gridDim.x * PER) {
    const int i = i0 + it, vb = i / S::L, vl = i % S::L;  // a group's columns lie in one row block
    __syncthreads();
    for (int e = t; e < R * S::CI * S::K; e += blockDim.x) {
      int c = e % R, k = e / R % S::K, ci = e / R / S::K;
      ws[e] = w[(vb * R + c) * S::CI * S::K + ci * S::K + k];
    }
    __syncthreads();
    float acc[R];
#pragma unroll
    for (int c = 0; c < R; ++c) acc[c] = 0.0f;
    for (int ci = part * PART; ci < (part + 1) * PART; ++ci)
#pragma unroll
      for (int k = 0; k < S::K; ++k) {
        float xv = x[ci * S::LP + vl + k * S::D];
#pragma unroll
        for (int c = 0; c < R; ++c) acc[c] = fmaf(ws[(k + ci * S::K) * R + c], xv, acc[c]);
      }
#pragma unroll
    for (int c = 0; c < R; ++c) ps[(part * R + c) * PER + it] = acc[c];
    __syncthreads();
    for (int e = t; e < R * PER; e += blockDim.x) {
      int c = e / PER, j = e % PER;
      float s = ps[c * PER + j];
#pragma unroll
      for (int q = 1; q < P; ++q) s = s + ps[(q * R + c) * PER + j];
      y[(vb * R + c) * S::L + (i0 + j) % S::L] = s + b[vb * R + c];
    }
  }
}

template <class S>
struct Bench {
  ConvData d{size_t{S::CI} * S::LP, size_t{S::CO} * S::CI * S::K, S::CO};
  const std::vector<float> &hx = d.hx, &hw = d.hw, &hb = d.hb;
  std::vector<float> got = std::vector<float>(size_t{S::CO} * S::L);
  float *x = d.x, *w = d.w, *b = d.b, *y = nullptr;
  Bench() { CHECK(cudaMalloc(&y, got.size() * 4)); }
  ~Bench() { CHECK(cudaFree(y)); }
  // The host's sums in `parts` parts over the input channels, added in order (1: term order).
  std::vector<float> host(int parts) const {
    std::vector<float> out(size_t{S::CO} * S::L);
    for (int co = 0; co < S::CO; ++co)
      for (int t = 0; t < S::L; ++t) {
        float total = 0.0f;
        for (int p = 0; p < parts; ++p) {
          float acc = 0.0f;
          for (int ci = p * S::CI / parts; ci < (p + 1) * S::CI / parts; ++ci)
            for (int k = 0; k < S::K; ++k)
              acc = std::fma(hw[(co * S::CI + ci) * S::K + k], hx[ci * S::LP + t + k * S::D], acc);
          total = p ? total + acc : acc;
        }
        out[co * S::L + t] = total + hb[co];
      }
    return out;
  }
  // Times `kernel` on `groups` groups with `bytes` of shared memory; checks it against host(parts).
  template <class Kern>
  void measure(const char* name, Kern kernel, int groups, int bytes, int parts) {
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    CHECK(cudaMemset(y, 0, got.size() * 4));
    float t = time_us([&] { kernel<<<groups, 256, bytes>>>(y, w, x, b); }, 500, 20);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), y, got.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<float> want = host(parts);
    bool same = std::memcmp(want.data(), got.data(), got.size() * 4) == 0;
    std::printf("%s: %.2f us, same as the host's order: %s\n", name, t, same ? "yes" : "NO");
  }
  template <int R, int C>
  void today(const char* name) { measure(name, now<S, R, C>, S::CO / R * (S::L / C) / 256, R * S::CI * S::K * 4, 1); }
  template <int R, int P>
  void parts(const char* name) {
    measure(name, split<S, R, P>, S::CO / R * S::L / (256 / P), (R * S::CI * S::K + P * R * (256 / P)) * 4, P);
  }
};

int main() {
  {
    Bench<Shape<72, 144, 1024, 5, 1>> f;  // the cut's in_layers conv
    f.today<2, 1>("flow 72 -> 144, 5 taps: today's 2 x 1");
    f.parts<4, 2>("  2 parts, 4 x 1 a thread");
    f.parts<4, 4>("  4 parts, 4 x 1 a thread");
    f.parts<8, 4>("  4 parts, 8 x 1 a thread");
    f.parts<8, 8>("  8 parts, 8 x 1 a thread");
  }
  {
    Bench<Shape<72, 144, 1024, 1, 1>> f;  // its res_skip conv
    f.today<2, 1>("flow 72 -> 144, 1 tap: today's 2 x 1");
    f.parts<8, 4>("  4 parts, 8 x 1 a thread");
  }
  {
    Bench<Shape<64, 64, 8192, 11, 5>> d;  // decoder128's stage-1 resblock conv, dilation 5
    d.today<4, 2>("stage 64 x 8192, 11 taps, dilation 5: today's 4 x 2");
    d.parts<4, 2>("  2 parts, 4 x 1 a thread");
    d.parts<8, 2>("  2 parts, 8 x 1 a thread");
    d.parts<8, 4>("  4 parts, 8 x 1 a thread");
    d.parts<16, 4>("  4 parts, 16 x 1 a thread");
  }
  return 0;
}
