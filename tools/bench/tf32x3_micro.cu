// Microbenchmark for tensor cores in decoder128's resblock convs (docs/perf.md, issue 14's
// "split-fp32 tensor-core arithmetic"): lockstep's form today (R x C outputs a work item, one
// fp32 fma sum per output in term order) against the conv as an implicit GEMM on mma.sync
// m16n8k8 TF32 (rows: output columns; cols: output channels; depth: input channel x tap),
// once with each operand rounded to TF32 (1xTF32) and once split into a TF32 high part and a
// TF32 rounding of the rest, three products a step (3xTF32: lo*hi + hi*lo + hi*hi). Prints
// each form's time and its output's rel L2 against the host's float64 sums, and whether a
// second run gave the same bytes.
// Build and run on a machine with nvcc: nvcc -O3 -std=c++20 -arch=sm_90 tf32x3_micro.cu && ./a.out
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "micro.cuh"

__device__ __forceinline__ uint32_t to_tf32(float v) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
  return r;
}

// D += A * B for one 16 x 8 x 8 step; a: 4 registers, b: 2, d: 4 (the PTX fragment layouts).
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// A value's TF32 high part and the TF32 rounding of what is left (lo is 0 for 1xTF32).
template <bool THREE>
__device__ __forceinline__ void split(float v, uint32_t& hi, uint32_t& lo) {
  hi = to_tf32(v);
  lo = THREE ? to_tf32(v - __uint_as_float(hi)) : 0u;
}

// How a form runs: three products a step or one; each step's products summed from 0 by the
// tensor core and added to the sum in fp32 (OUTSIDE) or accumulated inside it; operands split
// once when staged (PRESPLIT) or each time a fragment is loaded.
struct Form {
  bool three, outside, presplit;
};

// A group of WM x WN warps, each 16 MT output columns x 8 NT output channels; the depth walked
// CIC input channels at a time, their window of the (padded) input and their weights staged in
// shared memory.
template <class S, int WM, int WN, int MT, int NT, int CIC, Form F>
__global__ void __launch_bounds__(32 * WM * WN) gemm(float* __restrict__ y, const float* __restrict__ w,
                                                     const float* __restrict__ x, const float* __restrict__ b) {
  constexpr int BM = WM * MT * 16, BN = WN * NT * 8, DEPTH = CIC * S::K, WX = BM + S::D * (S::K - 1);
  constexpr int WS = DEPTH + 4;  // a weight row's stride: 8 rows a fragment load fall in distinct banks
  constexpr int PARTS = F.presplit ? 2 : 1;  // staged words an operand
  static_assert(S::CI % CIC == 0 && DEPTH % 8 == 0 && S::L % BM == 0 && S::CO % BN == 0, "tiling");
  extern __shared__ __align__(16) unsigned char sh[];
  float* const xs = (float*)sh;                   // [part][ci of the chunk][WX]
  float* const ws = xs + PARTS * CIC * WX;        // [part][channel of the group][WS]
  int* const off = (int*)(ws + PARTS * BN * WS);  // depth index -> its input's offset in xs
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN, tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wm = warp % WM * MT * 16, wn = warp / WM * NT * 8;
  for (int e = tid; e < DEPTH; e += blockDim.x) off[e] = e / S::K * WX + e % S::K * S::D;
  // Stores v at a[i], or its two TF32 parts at a[i] and a[i + n].
  auto stage = [&](float* a, int i, int n, float v) {
    if (F.presplit) {
      uint32_t hi, lo;
      split<F.three>(v, hi, lo);
      a[i] = __uint_as_float(hi), a[i + n] = __uint_as_float(lo);
    } else {
      a[i] = v;
    }
  };
  auto load = [&](const float* a, int i, int n, uint32_t& hi, uint32_t& lo) {
    if (F.presplit) hi = __float_as_uint(a[i]), lo = __float_as_uint(a[i + n]);
    else split<F.three>(a[i], hi, lo);
  };
  float acc[MT][NT][4] = {};
  for (int c0 = 0; c0 < S::CI; c0 += CIC) {
    __syncthreads();
    for (int e = tid; e < CIC * WX; e += blockDim.x) stage(xs, e, CIC * WX, x[(c0 + e / WX) * S::LP + m0 + e % WX]);
    for (int e = tid; e < BN * DEPTH; e += blockDim.x)
      stage(ws, e / DEPTH * WS + e % DEPTH, BN * WS, w[(n0 + e / DEPTH) * S::CI * S::K + c0 * S::K + e % DEPTH]);
    __syncthreads();
#pragma unroll 2
    for (int k0 = 0; k0 < DEPTH; k0 += 8) {
      uint32_t ah[MT][4], al[MT][4], bh[NT][2], bl[NT][2];
      const int o0 = off[k0 + t], o1 = off[k0 + t + 4];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int m = wm + i * 16 + g;
        load(xs, o0 + m, CIC * WX, ah[i][0], al[i][0]);
        load(xs, o0 + m + 8, CIC * WX, ah[i][1], al[i][1]);
        load(xs, o1 + m, CIC * WX, ah[i][2], al[i][2]);
        load(xs, o1 + m + 8, CIC * WX, ah[i][3], al[i][3]);
      }
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        const int r = (wn + j * 8 + g) * WS + k0 + t;
        load(ws, r, BN * WS, bh[j][0], bl[j][0]);
        load(ws, r + 4, BN * WS, bh[j][1], bl[j][1]);
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
          float step[4] = {};
          float(&d)[4] = F.outside ? step : acc[i][j];
          if (F.three) {
            mma(d, al[i], bh[j]);
            mma(d, ah[i], bl[j]);
          }
          mma(d, ah[i], bh[j]);
          if (F.outside)
            for (int r = 0; r < 4; ++r) acc[i][j][r] += step[r];
        }
    }
  }
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int m = m0 + wm + i * 16 + g + 8 * (r / 2), n = n0 + wn + j * 8 + 2 * t + r % 2;
        y[n * S::L + m] = acc[i][j][r] + b[n];
      }
}

template <class S>
struct Bench {
  ConvData d{size_t{S::CI} * S::LP, size_t{S::CO} * S::CI * S::K, S::CO};
  std::vector<double> want = std::vector<double>(size_t{S::CO} * S::L);
  std::vector<float> got = std::vector<float>(want.size()), again = std::vector<float>(want.size());
  float* y = nullptr;
  double flop = 2.0 * S::CO * S::L * S::CI * S::K;
  Bench() {
    CHECK(cudaMalloc(&y, got.size() * 4));
    for (int co = 0; co < S::CO; ++co)
      for (int t = 0; t < S::L; ++t) {
        double s = d.hb[co];
        for (int ci = 0; ci < S::CI; ++ci)
          for (int k = 0; k < S::K; ++k)
            s += double(d.hw[(co * S::CI + ci) * S::K + k]) * d.hx[ci * S::LP + t + k * S::D];
        want[co * S::L + t] = s;
      }
  }
  ~Bench() { CHECK(cudaFree(y)); }
  double rel_l2() const {
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) num += (got[i] - want[i]) * (got[i] - want[i]), den += want[i] * want[i];
    return std::sqrt(num / den);
  }
  template <class Launch>
  void measure(const char* name, Launch launch) {
    CHECK(cudaMemset(y, 0, got.size() * 4));
    float us = time_us(launch, 500, 20);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), y, got.size() * 4, cudaMemcpyDeviceToHost));
    launch();
    CHECK(cudaMemcpy(again.data(), y, again.size() * 4, cudaMemcpyDeviceToHost));
    bool same = std::memcmp(got.data(), again.data(), got.size() * 4) == 0;
    std::printf("  %-44s %8.2f us %6.1f TFLOP/s  rel L2 %.2e  repeats: %s\n", name, us, flop / us * 1e-6, rel_l2(),
                same ? "yes" : "NO");
  }
  template <int R, int C>
  void today() {
    auto k = now<S, R, C>;
    int bytes = R * S::CI * S::K * 4;
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    char name[64];
    std::snprintf(name, sizeof name, "today's fp32, %d x %d", R, C);
    measure(name, [&] { k<<<S::CO / R * (S::L / C) / 256, 256, bytes>>>(y, d.w, d.x, d.b); });
  }
  template <int WM, int WN, int MT, int NT, int CIC, Form F = Form{true, false, false}>
  void tensor() {
    auto k = gemm<S, WM, WN, MT, NT, CIC, F>;
    constexpr int BM = WM * MT * 16, BN = WN * NT * 8, DEPTH = CIC * S::K, PARTS = F.presplit ? 2 : 1;
    int bytes = (PARTS * (CIC * (BM + S::D * (S::K - 1)) + BN * (DEPTH + 4)) + DEPTH) * 4;
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    char name[80];
    std::snprintf(name, sizeof name, "%s%s%s, %dx%d warps of %dx%d, %d ch", F.three ? "3xTF32" : "1xTF32",
                  F.outside ? " +out" : "", F.presplit ? " pre" : "", WM, WN, 16 * MT, 8 * NT, CIC);
    measure(name, [&] { k<<<dim3(S::L / BM, S::CO / BN), 32 * WM * WN, bytes>>>(y, d.w, d.x, d.b); });
  }
};

int main() {
  constexpr Form one{false, false, false}, three{true, false, false}, out{true, true, false}, pre{true, false, true},
      out_pre{true, true, true};
  {
    std::printf("stage 1: 64 -> 64 channels, 8192 columns, 11 taps, dilation 5\n");
    Bench<Shape<64, 64, 8192, 11, 5>> s;
    s.today<4, 2>();
    s.tensor<2, 2, 1, 4, 8, one>();
    s.tensor<2, 2, 1, 4, 8, three>();
    s.tensor<2, 2, 1, 4, 8, out>();
    s.tensor<2, 2, 1, 4, 8, pre>();
    s.tensor<2, 2, 1, 4, 8, out_pre>();
    s.tensor<2, 1, 1, 4, 8, pre>();
    s.tensor<1, 2, 1, 2, 8, pre>();
    s.tensor<2, 2, 1, 2, 8, pre>();
  }
  {
    std::printf("stage 1: 64 -> 64 channels, 8192 columns, 3 taps, dilation 1\n");
    Bench<Shape<64, 64, 8192, 3, 1>> s;
    s.today<4, 2>();
    s.tensor<2, 2, 1, 4, 8, three>();
    s.tensor<2, 2, 1, 4, 8, out_pre>();
    s.tensor<2, 1, 1, 4, 8, pre>();
  }
  {
    std::printf("stage 2: 32 -> 32 channels, 65536 columns, 11 taps, dilation 1\n");
    Bench<Shape<32, 32, 65536, 11, 1>> s;
    s.today<8, 4>();
    s.tensor<4, 1, 2, 4, 8, one>();
    s.tensor<8, 1, 2, 4, 8, one>();
    s.tensor<8, 1, 2, 4, 8, three>();
    s.tensor<8, 1, 2, 4, 8, out>();
    s.tensor<8, 1, 2, 4, 8, pre>();
    s.tensor<8, 1, 2, 4, 8, out_pre>();
    s.tensor<4, 1, 2, 4, 8, pre>();
    s.tensor<8, 1, 1, 4, 8, pre>();
  }
  {
    std::printf("stage 3: 16 -> 16 channels, 131072 columns, 7 taps, dilation 3\n");
    Bench<Shape<16, 16, 131072, 7, 3>> s;
    s.today<8, 4>();
    s.tensor<4, 1, 2, 2, 8, three>();
    s.tensor<4, 1, 2, 2, 8, pre>();
    s.tensor<4, 1, 2, 2, 8, out_pre>();
  }
  {
    std::printf("stage 4: 8 -> 8 channels, 262144 columns, 11 taps, dilation 5\n");
    Bench<Shape<8, 8, 262144, 11, 5>> s;
    s.today<8, 4>();
    s.tensor<4, 1, 4, 1, 8, three>();
    s.tensor<4, 1, 4, 1, 8, pre>();
    s.tensor<4, 1, 4, 1, 8, out_pre>();
  }
  return 0;
}
