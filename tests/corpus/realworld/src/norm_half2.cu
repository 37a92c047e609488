// Normalisation layers as inference code writes them: warp-per-row softmax with shuffles,
// layernorm over __half2 rows (f32 statistics), RMSNorm, and the __half math functions.
#include <cuda_fp16.h>

__device__ __forceinline__ float warp_max(float v) {
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

//@run {"grid": 2, "block": 128, "args": ["f32*512", "f32*512", "s32=64"]}
extern "C" __global__ void softmax_warp_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
  // one warp per 64-wide row, two elements per lane
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  const float* xr = x + row * cols;
  float a = xr[lane], b = xr[lane + 32];
  float m = warp_max(fmaxf(a, b));
  float ea = expf(a - m), eb = expf(b - m);
  float inv = 1.0f / warp_sum(ea + eb);
  y[row * cols + lane] = ea * inv;
  y[row * cols + lane + 32] = eb * inv;
}

//@run {"grid": 2, "block": 64, "args": ["f16*1024", "f16*128", "f16*128", "f16*1024", "f32=1e-5"]}
extern "C" __global__ void layernorm_half2(const __half2* __restrict__ x, const __half2* __restrict__ gamma,
                                           const __half2* __restrict__ beta, __half2* __restrict__ y, float eps) {
  // rows of 128 halves (64 __half2), one warp per row, two __half2 per lane
  int row = blockIdx.x * 2 + threadIdx.x / 32, lane = threadIdx.x & 31;
  const __half2* xr = x + row * 64;
  float2 p = __half22float2(xr[lane]), q = __half22float2(xr[lane + 32]);
  float mean = warp_sum(p.x + p.y + q.x + q.y) * (1.0f / 128.0f);
  float dx0 = p.x - mean, dx1 = p.y - mean, dx2 = q.x - mean, dx3 = q.y - mean;
  float var = warp_sum(dx0 * dx0 + dx1 * dx1 + dx2 * dx2 + dx3 * dx3) * (1.0f / 128.0f);
  float r = rsqrtf(var + eps);
  __half2 n0 = __floats2half2_rn(dx0 * r, dx1 * r), n1 = __floats2half2_rn(dx2 * r, dx3 * r);
  y[row * 64 + lane] = __hfma2(n0, gamma[lane], beta[lane]);
  y[row * 64 + lane + 32] = __hfma2(n1, gamma[lane + 32], beta[lane + 32]);
}

//@run {"grid": 4, "block": 128, "args": ["f32*1024", "f32*256", "f32*1024", "s32=256", "f32=1e-6"]}
extern "C" __global__ void rmsnorm_block(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                                         int cols, float eps) {
  __shared__ float partial[4];
  const float* xr = x + blockIdx.x * cols;
  float s = 0.0f;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) s += xr[i] * xr[i];
  s = warp_sum(s);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  float total = partial[0] + partial[1] + partial[2] + partial[3];
  float r = rsqrtf(total / cols + eps);
  for (int i = threadIdx.x; i < cols; i += blockDim.x) y[blockIdx.x * cols + i] = xr[i] * r * w[i];
}

//@run {"grid": 1, "block": 128, "args": ["f16*128", "f16*1024"]}
extern "C" __global__ void half_math_functions(const __half* __restrict__ x, __half* __restrict__ out) {
  int i = threadIdx.x;
  __half v = x[i], a = __habs(v);
  __half* o = out + i * 8;
  o[0] = hexp(v);
  o[1] = hsqrt(a);
  o[2] = hrcp(v);
  o[3] = hrsqrt(__hadd(a, __float2half(0.5f)));
  o[4] = hlog(__hadd(a, __float2half(1.0f)));
  o[5] = __hmax(hsin(v), hcos(v));
  o[6] = hexp2(__hneg(a));
  o[7] = __hdiv(v, __hadd(a, __float2half(0.25f)));
}

//@run {"grid": 1, "block": 64, "args": ["f16*128", "f16*256"]}
extern "C" __global__ void half2_math_functions(const __half2* __restrict__ x, __half2* __restrict__ out) {
  int i = threadIdx.x;
  __half2 v = x[i], a = __habs2(v);
  __half2 e = h2exp(__hmul2(v, __float2half2_rn(0.5f)));
  __half2 s = h2sqrt(a);
  __half2 r = h2rcp(__hadd2(a, __float2half2_rn(1.0f)));
  out[i] = __hfma2_relu(e, s, __hneg2(r));
  out[i + 64] = __hmin2(__h2div(v, __hadd2(a, __float2half2_rn(0.5f))), h2log2(__hadd2(a, __float2half2_rn(2.0f))));
}
