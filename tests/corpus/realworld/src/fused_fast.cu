// Fused inference kernels built with -use_fast_math, as LLM serving code ships them: one-pass
// attention for a query per warp with an online softmax (running max and sum rescaled with
// __expf), a Welford layernorm whose partial (count, mean, M2) triples merge across lanes by
// shuffles, a tanh-approximation GELU with bias into __half, an FP8 (e4m3) weight GEMV with a
// per-row scale (cuda_fp8.h conversions to __half2), and a signed 4-bit weight GEMV that turns
// nibbles into __half2 with the 0x6400 exponent trick and a subtract.
//@nvcc -use_fast_math
#include <cuda_fp16.h>
#include <cuda_fp8.h>

__device__ __forceinline__ float warp_allsum(float v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

// q: [queries][32], k/v: [keys][32]; lane = head dimension.
//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*2048", "f32*2048", "f32*128", "s32=64"]}
extern "C" __global__ void online_softmax_attention(const float* __restrict__ q, const float* __restrict__ k,
                                                   const float* __restrict__ v, float* __restrict__ out, int keys) {
  int query = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  const float scale = 0.17677669f;                                  // 1/sqrt(32)
  float qd = q[query * 32 + lane] * scale;
  float m = -INFINITY, l = 0.0f, acc = 0.0f;
  for (int j = 0; j < keys; ++j) {
    float s = warp_allsum(qd * k[j * 32 + lane]);
    float m_new = fmaxf(m, s);
    float corr = __expf(m - m_new), p = __expf(s - m_new);
    l = l * corr + p;
    acc = acc * corr + p * v[j * 32 + lane];
    m = m_new;
  }
  out[query * 32 + lane] = acc / l;
}

struct Welford { float n, mean, m2; };

__device__ __forceinline__ Welford welford_merge(Welford a, Welford b) {
  float n = a.n + b.n;
  if (n == 0.0f) return a;
  float delta = b.mean - a.mean, wb = b.n / n;
  return Welford{n, a.mean + delta * wb, a.m2 + b.m2 + delta * delta * a.n * wb};
}

// A warp per row of 256: each lane folds 8 values, then the lanes merge by shuffles.
//@run {"grid": 1, "block": 128, "args": ["f32*1024", "f32*256", "f32*256", "f32*1024", "f32*8"]}
extern "C" __global__ void welford_layernorm(const float* __restrict__ x, const float* __restrict__ gamma,
                                             const float* __restrict__ beta, float* __restrict__ y,
                                             float* __restrict__ stats) {
  int row = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float* r = x + row * 256;
  Welford w{0.0f, 0.0f, 0.0f};
  for (int i = lane; i < 256; i += 32) {
    float val = r[i];
    w.n += 1.0f;
    float d = val - w.mean;
    w.mean += d / w.n;
    w.m2 += d * (val - w.mean);
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    Welford o{__shfl_xor_sync(0xffffffffu, w.n, d), __shfl_xor_sync(0xffffffffu, w.mean, d),
              __shfl_xor_sync(0xffffffffu, w.m2, d)};
    w = (lane & d) ? welford_merge(o, w) : welford_merge(w, o);     // the same order on both sides
  }
  float rstd = rsqrtf(w.m2 / 256.0f + 1e-5f);
  for (int i = lane; i < 256; i += 32) y[row * 256 + i] = (r[i] - w.mean) * rstd * gamma[i] + beta[i];
  if (lane == 0) { stats[2 * row] = w.mean; stats[2 * row + 1] = rstd; }
}

//@run {"grid": 2, "block": 128, "args": ["f32*256", "f32*64", "f16*256"]}
extern "C" __global__ void gelu_tanh_bias_half(const float* __restrict__ x, const float* __restrict__ bias,
                                               __half* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i] + bias[i & 63];
  float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
  out[i] = __float2half_rn(0.5f * v * (1.0f + tanhf(inner)));
}

// W: [rows][64] e4m3 bytes, a float scale per row; a warp per row, two weights per lane.
//@run {"grid": 2, "block": 128, "args": ["u8*512", "f32*8", "f32*64", "f32*8"]}
extern "C" __global__ void fp8_e4m3_gemv(const __nv_fp8x2_storage_t* __restrict__ w, const float* __restrict__ row_scale,
                                         const float* __restrict__ x, float* __restrict__ y) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  __half2_raw raw = __nv_cvt_fp8x2_to_halfraw2(w[row * 32 + lane], __NV_E4M3);
  __half2 wh = *reinterpret_cast<__half2*>(&raw);
  float2 wf = __half22float2(wh);
  float p = wf.x * x[2 * lane] + wf.y * x[2 * lane + 1];
  p = warp_allsum(p);
  if (lane == 0) y[row] = p * row_scale[row];
}

// Eight signed nibbles per word (two's complement, stored with +8 bias as llama.cpp's q4_0);
// (w & 0x000f000f) | 0x64006400 is (1024 + nibble) in each half, minus 1032 gives nibble - 8.
//@run {"grid": 2, "block": 128, "args": ["u32*64", "f16*8", "f16*64", "f32*8"]}
extern "C" __global__ void int4_magic_gemv(const unsigned* __restrict__ w, const __half* __restrict__ row_scale,
                                           const __half2* __restrict__ x, float* __restrict__ y) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  float p = 0.0f;
  if (lane < 8) {
    unsigned word = w[row * 8 + lane];
    const __half2 bias = __halves2half2(__ushort_as_half(0x6408), __ushort_as_half(0x6408));   // 1032
    __half2 acc = __float2half2_rn(0.0f);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      unsigned bits = ((word >> (4 * k)) & 0x000f000fu) | 0x64006400u;
      __half2 q = __hsub2(*reinterpret_cast<__half2*>(&bits), bias);
      acc = __hfma2(q, x[lane * 4 + k], acc);
    }
    float2 f = __half22float2(acc);
    p = f.x + f.y;
  }
  p = warp_allsum(p);
  if (lane == 0) y[row] = p * __half2float(row_scale[row]);
}
