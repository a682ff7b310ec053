// Microbenchmark for the flow's WaveNet layer (docs/perf.md): the 174-node cut's in_layers conv
// (72 -> 144 channels, 5 taps, 1024 columns) and the gate after it, tanh(rows 0..71) *
// sigmoid(rows 72..143), as lockstep runs them today (a pad kernel, the conv at 2 x 1 outputs a
// work item with its weights staged, the gate kernel), against one kernel whose work item sums
// rows c and c + 72 and applies the gate (the pad still a kernel, or read inside the sum with a
// bounds check per term). The gate here uses CUDA's tanhf and expf, not lockstep's library, so
// the times are a proxy; every form sums in the same order, and the program compares each
// against the unfused one.
// Build and run on a machine with nvcc: nvcc -O3 -fmad=false -arch=sm_90 gate_fusion_micro.cu && ./a.out
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "micro.cuh"

constexpr int CI = 72, CO = 144, H = CO / 2, K = 5, P = 2, L = 1024, LP = L + 2 * P;

__device__ __forceinline__ float gate(float a, float b) { return tanhf(a) * (1.0f / (1.0f + expf(-b))); }

__global__ void __launch_bounds__(256, 3) pad(float* __restrict__ xp, const float* __restrict__ x) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < CI * LP; i += gridDim.x * blockDim.x) {
    int c = i / LP, t = i % LP - P;
    xp[i] = t >= 0 && t < L ? x[c * L + t] : 0.0f;
  }
}

// Rows r0 and r0 + stride of the staged weights' [term][2] copy, summed over the padded input.
template <bool CHECKED>
__device__ __forceinline__ void pair_sums(float (&acc)[2], const float* ws, const float* x, int vl) {
  for (int ci = 0; ci < CI; ++ci)
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float xv;
      if (CHECKED) {
        int t = vl + k - P;
        xv = t >= 0 && t < L ? x[ci * L + t] : 0.0f;
      } else {
        xv = x[ci * LP + vl + k];
      }
#pragma unroll
      for (int c = 0; c < 2; ++c) acc[c] = fmaf(ws[(k + ci * K) * 2 + c], xv, acc[c]);
    }
}

// A group stages rows r0 and r0 + stride's weights as [term][2].
__device__ __forceinline__ void stage_pair(float* ws, const float* w, int r0, int stride) {
  __syncthreads();
  for (int e = threadIdx.x; e < 2 * CI * K; e += blockDim.x) {
    int c = e % 2, k = e / 2 % K, ci = e / 2 / K;
    ws[e] = w[(r0 + c * stride) * CI * K + ci * K + k];
  }
  __syncthreads();
}

// Today: rows 2 vb and 2 vb + 1 a work item, the conv's output written whole.
__global__ void __launch_bounds__(256, 3) conv(float* __restrict__ y, const float* __restrict__ w,
                                              const float* __restrict__ xp, const float* __restrict__ b) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < CO / 2 * L; i += gridDim.x * blockDim.x) {
    int vb = i / L, vl = i % L;
    stage_pair(ws, w, vb * 2, 1);
    float acc[2] = {0.0f, 0.0f};
    pair_sums<false>(acc, ws, xp, vl);
    for (int c = 0; c < 2; ++c) y[(vb * 2 + c) * L + vl] = acc[c] + b[vb * 2 + c];
  }
}

__global__ void __launch_bounds__(256, 3) gate_kernel(float* __restrict__ g, const float* __restrict__ y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < H * L; i += gridDim.x * blockDim.x)
    g[i] = gate(y[i], y[H * L + i]);
}

// Fused: rows c and c + 72 a work item, the gate applied to the pair.
template <bool CHECKED>
__global__ void __launch_bounds__(256, 3) conv_gate(float* __restrict__ g, const float* __restrict__ w,
                                                   const float* __restrict__ x, const float* __restrict__ b) {
  extern __shared__ __align__(16) unsigned char sh[];
  float* const ws = (float*)sh;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < H * L; i += gridDim.x * blockDim.x) {
    int c = i / L, vl = i % L;
    stage_pair(ws, w, c, H);
    float acc[2] = {0.0f, 0.0f};
    pair_sums<CHECKED>(acc, ws, x, vl);
    g[c * L + vl] = gate(acc[0] + b[c], acc[1] + b[c + H]);
  }
}

int main() {
  ConvData d(CI * L, CO * CI * K, CO);
  std::vector<float> want(H * L), got(H * L);
  float *xp, *y, *g, *x = d.x, *w = d.w, *b = d.b;
  CHECK(cudaMalloc(&xp, CI * LP * 4));
  CHECK(cudaMalloc(&y, CO * L * 4));
  CHECK(cudaMalloc(&g, H * L * 4));
  const int wbytes = 2 * CI * K * 4, groups = H * L / 256;
  auto today = [&] {
    pad<<<(CI * LP + 255) / 256, 256>>>(xp, x);
    conv<<<groups, 256, wbytes>>>(y, w, xp, b);
    gate_kernel<<<groups, 256>>>(g, y);
  };
  float t_pad = time_us([&] { pad<<<(CI * LP + 255) / 256, 256>>>(xp, x); }, 500, 20);
  float t_conv = time_us([&] { conv<<<groups, 256, wbytes>>>(y, w, xp, b); }, 500, 20);
  float t_gate = time_us([&] { gate_kernel<<<groups, 256>>>(g, y); }, 500, 20);
  float t_all = time_us(today, 500, 20);
  CHECK(cudaMemcpy(want.data(), g, want.size() * 4, cudaMemcpyDeviceToHost));
  std::printf("today: pad %.2f + conv %.2f + gate %.2f us; the three back to back %.2f us\n", t_pad, t_conv, t_gate, t_all);
  auto measure = [&](const char* name, auto run) {
    CHECK(cudaMemset(g, 0, got.size() * 4));
    float t = time_us(run, 500, 20);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), g, got.size() * 4, cudaMemcpyDeviceToHost));
    bool same = std::memcmp(want.data(), got.data(), got.size() * 4) == 0;
    std::printf("%s: %.2f us, same bytes: %s\n", name, t, same ? "yes" : "NO");
  };
  measure("pad kernel, then conv with the gate fused", [&] {
    pad<<<(CI * LP + 255) / 256, 256>>>(xp, x);
    conv_gate<false><<<groups, 256, wbytes>>>(g, w, xp, b);
  });
  measure("conv with the pad read inside and the gate fused", [&] { conv_gate<true><<<groups, 256, wbytes>>>(g, w, x, b); });
  return 0;
}
