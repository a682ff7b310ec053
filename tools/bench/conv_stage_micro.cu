// Microbenchmark for the next conv step (docs/perf.md): decoder128's stage-2 conv
// /dec/resblocks.5/convs1.0 (32 -> 32 channels, 11 taps, pad 5, 65536 columns) as lockstep
// prints it today (a pad kernel, then the conv reading the padded copy, weights staged), against
// hand-written forms without the pad kernel: the pad (with or without a LeakyRelu) read inside
// the conv per term, and the group's input window staged in shared memory with the pad applied
// while copying. All sum every output in the same order (ci outer, tap inner, fmaf), so the
// outputs must be the same bytes; the program says whether they are.
// Build and run on a machine with nvcc: nvcc -O3 -fmad=false -arch=sm_90 [-DDIL=3] conv_stage_micro.cu && ./a.out
// (DIL: the taps' dilation, 1 by default; the adjacent-column forms run only at 1).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "micro.cuh"

#ifndef DIL
#define DIL 1  // the decoder's resblocks use 1, 3 and 5
#endif
constexpr int C = 32, K = 11, D = DIL, P = D * (K - 1) / 2, L = 65536, LP = L + 2 * P;

// LeakyRelu(0.1) as lockstep prints it, or nothing.
template <bool LEAKY>
__device__ __forceinline__ float act(float v) { return LEAKY ? (v < 0.0f ? v * 0x1.99999ap-4f : v) : v; }

// lockstep's pad kernel (four elements per work item), as printed for k349; LEAKY: with the
// LeakyRelu before it fused in, as 65 of the decoder's 94 pads are.
template <bool LEAKY>
__global__ void __launch_bounds__(256, 3) pad(float* __restrict__ out, const float* __restrict__ x) {
  const int64_t n = int64_t{C} * LP, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i0 < n; i0 += 4 * step) {
    float e[4];
    if (i0 + 3 * step < n) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        int64_t i = i0 + u * step, c = (uint32_t)i / (uint32_t)LP, t = (uint32_t)i % (uint32_t)LP;
        e[u] = (t - P >= 0 && t - P < L) ? act<LEAKY>(x[c * L + t - P]) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) out[i0 + u * step] = e[u];
    } else {
      for (int u = 0; u < 4; ++u) {
        int64_t i = i0 + u * step;
        if (i >= n) break;
        int64_t c = (uint32_t)i / (uint32_t)LP, t = (uint32_t)i % (uint32_t)LP;
        out[i] = (t - P >= 0 && t - P < L) ? act<LEAKY>(x[c * L + t - P]) : 0.0f;
      }
    }
  }
}

// The group's copy of its 8 rows' weights, [ci][k][row], as lockstep stages them.
__device__ __forceinline__ void stage_weights(float* ws, const float* w, int64_t vb) {
  for (int e = threadIdx.x; e < 8 * K * C; e += blockDim.x) {
    int c = e % 8, k = e / 8 % K, ci = e / 8 / K % C;
    ws[e] = w[(vb * 8 + c) * C * K + ci * K + k];
  }
}

// The sums of 8 rows x 4 columns over input channels ci0 <= ci < ci1 (outer) and taps (inner),
// the term of column l and tap k reading `in(ci, l, k)`.
template <class In>
__device__ __forceinline__ void spread_sums(float* acc, const float* ws, int ci0, int ci1, In in) {
  for (int ci = ci0; ci < ci1; ++ci)
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int c = 0; c < 8; ++c)
#pragma unroll
        for (int l = 0; l < 4; ++l) acc[c * 4 + l] = fmaf(ws[(k + ci * K) * 8 + c], in(ci, l, k), acc[c * 4 + l]);
}

// How a spread conv reads its input: the padded copy (lockstep today), or the unpadded input
// under the pad's bounds check per term (Checked), or that with a copy of the loop without the
// check for a work item whose columns and taps all lie inside (Fast: the check is an interval
// test on an index that grows with column and tap, so its two ends decide it).
enum class Read { Padded, Checked, Fast };

// lockstep's conv as printed for k350 (Read::Padded): 8 x 4 outputs a work item, weights staged.
template <Read R, bool LEAKY = false>
__global__ void __launch_bounds__(256, 3) conv_spread(float* __restrict__ y, const float* __restrict__ w,
                                                      const float* __restrict__ x, const float* __restrict__ bias) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;
  const int64_t n = 65536;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t vb = (uint32_t)i / 16384u % 4u, vl = (uint32_t)i % 16384u;
    __syncthreads();
    stage_weights(ws, w, vb);
    __syncthreads();
    float acc[32];
    for (int j = 0; j < 32; ++j) acc[j] = 0.0f;
    auto padded = [&](int64_t ci, int l, int k) { return x[ci * LP + l * 16384 + vl + k * D]; };
    auto inside = [&](int64_t ci, int l, int k) { return act<LEAKY>(x[ci * L + l * 16384 + vl + k * D - P]); };
    auto checked = [&](int64_t ci, int l, int k) {
      const int64_t t = l * 16384 + vl + k * D - P;
      return t >= 0 && t < L ? act<LEAKY>(x[ci * L + t]) : 0.0f;
    };
    if (R == Read::Padded) spread_sums(acc, ws, 0, C, padded);
    else if (R == Read::Fast && vl - P >= 0 && 3 * 16384 + vl + (K - 1) * D - P < L) spread_sums(acc, ws, 0, C, inside);
    else spread_sums(acc, ws, 0, C, checked);
#pragma unroll
    for (int c = 0; c < 8; ++c)
#pragma unroll
      for (int l = 0; l < 4; ++l) y[(vb * 8 + c) * L + l * 16384 + vl] = acc[c * 4 + l] + bias[vb * 8 + c];
  }
}

// The same sums with the group's input window staged: for CI input channels at a time, each of
// the 4 column runs of 256 + K - 1 inputs, padded while copied (no pad kernel).
template <int CI>
__global__ void __launch_bounds__(256, 2) conv_staged(float* __restrict__ y, const float* __restrict__ w,
                                                      const float* __restrict__ x, const float* __restrict__ bias) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;                  // [ci][k][row]
  float* const xs = ws + 8 * K * C;              // [ci of the chunk][l][256 + K - 1]
  constexpr int W = 256 + D * (K - 1);
  const int64_t i0 = (int64_t)blockIdx.x * blockDim.x, i = i0 + threadIdx.x;
  const int64_t vb = (uint32_t)i0 / 16384u % 4u, vl0 = (uint32_t)i0 % 16384u, vl = vl0 + threadIdx.x;
  stage_weights(ws, w, vb);
  float acc[32];
  for (int j = 0; j < 32; ++j) acc[j] = 0.0f;
  for (int c0 = 0; c0 < C; c0 += CI) {
    __syncthreads();
    for (int e = threadIdx.x; e < CI * 4 * W; e += blockDim.x) {
      int t = e % W, l = e / W % 4, ci = e / W / 4;
      int64_t col = l * 16384 + vl0 + t - P;
      xs[e] = (col >= 0 && col < L) ? x[(c0 + ci) * L + col] : 0.0f;
    }
    __syncthreads();
    spread_sums(acc, ws, c0, c0 + CI, [&](int ci, int l, int k) { return xs[((ci - c0) * 4 + l) * W + threadIdx.x + k * D]; });
  }
  if (i >= 65536) return;
#pragma unroll
  for (int c = 0; c < 8; ++c)
#pragma unroll
    for (int l = 0; l < 4; ++l) y[(vb * 8 + c) * L + l * 16384 + vl] = acc[c * 4 + l] + bias[vb * 8 + c];
}

// One chunk's sums of the adjacent-column forms: per input channel, the item's 4 + K - 1
// window inputs read from shared memory into registers once, each tap's 8 weights as float4.
// The item's 8 x 4 adjacent outputs from column `col`, bias added, as float4 stores.
__device__ __forceinline__ void store_adjacent(float* y, const float (&acc)[32], const float* bias, int vb, int col) {
#pragma unroll
  for (int c = 0; c < 8; ++c) {
    float bb = bias[vb * 8 + c];
    float4 o = {acc[c * 4] + bb, acc[c * 4 + 1] + bb, acc[c * 4 + 2] + bb, acc[c * 4 + 3] + bb};
    *(float4*)&y[(vb * 8 + c) * L + col] = o;
  }
}

template <int CI, int W>
__device__ __forceinline__ void window_sums(float (&acc)[32], const float* ws, const float* cur, int t, int c0) {
  for (int ci = 0; ci < CI; ++ci) {
    float xr[16];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      float4 v = *(const float4*)&cur[ci * W + t * 4 + q * 4];
      xr[q * 4] = v.x, xr[q * 4 + 1] = v.y, xr[q * 4 + 2] = v.z, xr[q * 4 + 3] = v.w;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float4 wa = *(const float4*)&ws[(k + (c0 + ci) * K) * 8], wb = *(const float4*)&ws[(k + (c0 + ci) * K) * 8 + 4];
      float wr[8] = {wa.x, wa.y, wa.z, wa.w, wb.x, wb.y, wb.z, wb.w};
#pragma unroll
      for (int c = 0; c < 8; ++c)
#pragma unroll
        for (int l = 0; l < 4; ++l) acc[c * 4 + l] = fmaf(wr[c], xr[l + k], acc[c * 4 + l]);
    }
  }
}

// Adjacent columns instead: a group covers 1024 consecutive columns of a block of 8 rows, a
// work item 4 of them; per input channel it reads its 4 + K - 1 inputs from the staged window
// into registers once (each serves up to 4 taps) and each tap's 8 weights as two float4.
template <int CI>
__global__ void __launch_bounds__(256, 2) conv_regs(float* __restrict__ y, const float* __restrict__ w,
                                                   const float* __restrict__ x, const float* __restrict__ bias) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;      // [ci][k][row]
  float* const xs = ws + 8 * K * C;  // [ci of the chunk][1024 + 16]: the window, padded to a multiple of 4
  constexpr int W = 1024 + 16;
  const int vb = blockIdx.x / 64, col0 = blockIdx.x % 64 * 1024, t = threadIdx.x;
  stage_weights(ws, w, vb);
  float acc[32];
  for (int j = 0; j < 32; ++j) acc[j] = 0.0f;
  for (int c0 = 0; c0 < C; c0 += CI) {
    __syncthreads();
    for (int e = t; e < CI * W; e += blockDim.x) {
      int i = e % W, ci = e / W;
      int col = col0 + i - P;
      xs[e] = (i < 1024 + K - 1 && col >= 0 && col < L) ? x[(c0 + ci) * L + col] : 0.0f;
    }
    __syncthreads();
    window_sums<CI, W>(acc, ws, xs, t, c0);
  }
  store_adjacent(y, acc, bias, vb, col0 + t * 4);
}

// Chunks of CI input channels through two shared buffers of N floats at xs, element e of chunk
// c0 being input(c0, e): each thread loads its elements of the next chunk into registers before
// the current chunk's sums (sums(buffer, c0)) and stores them into the other buffer after them
// (one barrier a chunk).
template <int CI, int N, class Input, class Sums>
__device__ __forceinline__ void prefetched_chunks(float* xs, Input input, Sums sums) {
  constexpr int PER = (N + 255) / 256;  // elements each thread copies
  const int t = threadIdx.x;
  float next[PER];
  auto load = [&](int c0) {
#pragma unroll
    for (int j = 0; j < PER; ++j) next[j] = t + j * 256 < N ? input(c0, t + j * 256) : 0.0f;
  };
  auto store = [&](float* buf) {
#pragma unroll
    for (int j = 0; j < PER; ++j)
      if (t + j * 256 < N) buf[t + j * 256] = next[j];
  };
  load(0);
  store(xs);
  __syncthreads();
  for (int c0 = 0, b = 0; c0 < C; c0 += CI, b ^= 1) {
    if (c0 + CI < C) load(c0 + CI);
    sums(xs + b * N, c0);
    if (c0 + CI < C) store(xs + (b ^ 1) * N);
    __syncthreads();
  }
}

// conv_regs with the copy overlapped (prefetched_chunks).
template <int CI>
__global__ void __launch_bounds__(256, 2) conv_pipe(float* __restrict__ y, const float* __restrict__ w,
                                                   const float* __restrict__ x, const float* __restrict__ bias) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;
  constexpr int W = 1024 + 16;
  float* const xs = ws + 8 * K * C;  // two buffers of [CI][W]
  const int vb = blockIdx.x / 64, col0 = blockIdx.x % 64 * 1024, t = threadIdx.x;
  stage_weights(ws, w, vb);
  float acc[32];
  for (int j = 0; j < 32; ++j) acc[j] = 0.0f;
  auto input = [&](int c0, int e) {
    int i = e % W, ci = e / W, col = col0 + i - P;
    return (i < 1024 + K - 1 && col >= 0 && col < L) ? x[(c0 + ci) * L + col] : 0.0f;
  };
  prefetched_chunks<CI, CI * W>(xs, input, [&](const float* cur, int c0) { window_sums<CI, W>(acc, ws, cur, t, c0); });
  store_adjacent(y, acc, bias, vb, col0 + t * 4);
}

// conv_staged's spread tile with the copy overlapped (prefetched_chunks).
template <int CI>
__global__ void __launch_bounds__(256, 2) conv_spread_pipe(float* __restrict__ y, const float* __restrict__ w,
                                                           const float* __restrict__ x, const float* __restrict__ bias) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;
  constexpr int W = 256 + D * (K - 1);
  float* const xs = ws + 8 * K * C;  // two buffers of [CI][4][W]
  const int64_t i0 = (int64_t)blockIdx.x * blockDim.x, i = i0 + threadIdx.x;
  const int64_t vb = (uint32_t)i0 / 16384u % 4u, vl0 = (uint32_t)i0 % 16384u, vl = vl0 + threadIdx.x;
  const int t0 = threadIdx.x;
  stage_weights(ws, w, vb);
  float acc[32];
  for (int j = 0; j < 32; ++j) acc[j] = 0.0f;
  auto input = [&](int c0, int e) {
    int t = e % W, l = e / W % 4, ci = e / W / 4;
    int64_t col = l * 16384 + vl0 + t - P;
    return (col >= 0 && col < L) ? x[(c0 + ci) * L + col] : 0.0f;
  };
  prefetched_chunks<CI, CI * 4 * W>(xs, input, [&](const float* cur, int c0) {
    spread_sums(acc, ws, c0, c0 + CI, [&](int ci, int l, int k) { return cur[((ci - c0) * 4 + l) * W + t0 + k * D]; });
  });
  if (i >= 65536) return;
#pragma unroll
  for (int c = 0; c < 8; ++c)
#pragma unroll
    for (int l = 0; l < 4; ++l) y[(vb * 8 + c) * L + l * 16384 + vl] = acc[c * 4 + l] + bias[vb * 8 + c];
}

int main() {
  ConvData d(size_t{C} * L, C * C * K, C);
  const std::vector<float>& hx = d.hx;
  float *xp, *y1, *y2, *x = d.x, *w = d.w, *b = d.b;
  CHECK(cudaMalloc(&xp, size_t{C} * LP * 4));
  CHECK(cudaMalloc(&y1, hx.size() * 4));
  CHECK(cudaMalloc(&y2, hx.size() * 4));
  const int wbytes = 8 * K * C * 4;
  int pad_groups = (C * LP / 4 + 255) / 256;
  float t_pad = time_us([&] { pad<false><<<pad_groups, 256>>>(xp, x); }, 200, 10);
  float t_now = time_us([&] { conv_spread<Read::Padded><<<256, 256, wbytes>>>(y1, w, xp, b); }, 200, 10);
  std::vector<float> r1(hx.size()), r2(hx.size()), r1l(hx.size());
  CHECK(cudaMemcpy(r1.data(), y1, r1.size() * 4, cudaMemcpyDeviceToHost));
  std::printf("now: pad %.1f us + conv %.1f us = %.1f us\n", t_pad, t_now, t_pad + t_now);
  float t_padl = time_us([&] { pad<true><<<pad_groups, 256>>>(xp, x); }, 200, 10);
  conv_spread<Read::Padded><<<256, 256, wbytes>>>(y1, w, xp, b);
  CHECK(cudaMemcpy(r1l.data(), y1, r1l.size() * 4, cudaMemcpyDeviceToHost));
  std::printf("now, LeakyRelu in the pad: pad %.1f us + conv %.1f us = %.1f us\n", t_padl, t_now, t_padl + t_now);
  // Times `kernel` with `bytes` of dynamic shared memory and compares its output with `want`.
  auto measure = [&](auto kernel, int bytes, const char* name, const std::vector<float>& want = {}) {
    const std::vector<float>& ref = want.empty() ? r1 : want;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    CHECK(cudaMemset(y2, 0, r2.size() * 4));
    float t = time_us([&] { kernel<<<256, 256, bytes>>>(y2, w, x, b); }, 200, 10);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(r2.data(), y2, r2.size() * 4, cudaMemcpyDeviceToHost));
    bool same = std::memcmp(ref.data(), r2.data(), ref.size() * 4) == 0;
    std::printf("%s: conv %.1f us (%d bytes shared), same bytes: %s\n", name, t, bytes, same ? "yes" : "NO");
  };
  measure(conv_spread<Read::Checked>, wbytes, "pad read inside the conv, checked per term (no pad kernel)");
  measure(conv_spread<Read::Fast>, wbytes, "the same, unchecked where the work item lies inside (no pad kernel)");
  measure(conv_spread<Read::Checked, true>, wbytes, "LeakyRelu and pad read inside the conv, checked per term", r1l);
  measure(conv_spread<Read::Fast, true>, wbytes, "the same, unchecked where the work item lies inside", r1l);
  const int run = 256 + D * (K - 1), window = 1024 + 16;
  measure(conv_spread_pipe<1>, wbytes + 2 * 1 * 4 * run * 4, "spread, window staged, next loaded during the sums, 1 channel a chunk");
  measure(conv_spread_pipe<2>, wbytes + 2 * 2 * 4 * run * 4, "spread, window staged, next loaded during the sums, 2 channels a chunk");
  measure(conv_spread_pipe<4>, wbytes + 2 * 4 * 4 * run * 4, "spread, window staged, next loaded during the sums, 4 channels a chunk");
  if (D != 1) return 0;  // the adjacent forms below hold a window of 4 + K - 1 inputs  // the staged forms' floats per channel and column run
  measure(conv_staged<1>, wbytes + 1 * 4 * run * 4, "staged 1 channel a copy");
  measure(conv_staged<4>, wbytes + 4 * 4 * run * 4, "staged 4 channels a copy");
  measure(conv_staged<8>, wbytes + 8 * 4 * run * 4, "staged 8 channels a copy");
  measure(conv_regs<2>, wbytes + 2 * window * 4, "adjacent columns, inputs in registers, 2 channels a copy");
  measure(conv_regs<8>, wbytes + 8 * window * 4, "adjacent columns, inputs in registers, 8 channels a copy");
  measure(conv_pipe<1>, wbytes + 2 * 1 * window * 4, "the same, next window loaded during the sums, 1 channel a chunk");
  measure(conv_pipe<2>, wbytes + 2 * 2 * window * 4, "the same, next window loaded during the sums, 2 channels a chunk");
  measure(conv_pipe<4>, wbytes + 2 * 4 * window * 4, "the same, next window loaded during the sums, 4 channels a chunk");
  return 0;
}
