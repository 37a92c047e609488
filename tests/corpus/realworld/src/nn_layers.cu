// Neural-network layers: layer norm, GELU/SiLU activations, fused bias-add, cross entropy.
#include <cuda_fp16.h>
//@run {"grid": 4, "block": 32, "args": ["f32*256", "f32*64", "f32*64", "f32*256", "s32=64", "f32=1e-5"]}
extern "C" __global__ void layer_norm(const float* x, const float* gamma, const float* beta, float* y, int cols, float eps) {
  const float* r = x + blockIdx.x * cols;
  float s = 0.0f, ss = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) { s += r[c]; ss += r[c] * r[c]; }
  for (int o = 16; o > 0; o >>= 1) { s += __shfl_xor_sync(0xffffffffu, s, o); ss += __shfl_xor_sync(0xffffffffu, ss, o); }
  float mean = s / cols, var = ss / cols - mean * mean, inv = rsqrtf(var + eps);
  for (int c = threadIdx.x; c < cols; c += 32) y[blockIdx.x * cols + c] = (r[c] - mean) * inv * gamma[c] + beta[c];
}

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128", "f32*128"]}
extern "C" __global__ void gelu_silu(const float* x, float* gelu, float* silu) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  gelu[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  silu[i] = v / (1.0f + expf(-v));
}

//@run {"grid": 1, "block": 64, "args": ["f16*128", "f16*2", "f16*128"]}
extern "C" __global__ void bias_relu_half2(const __half2* x, const __half2* bias, __half2* y) {
  __half2 v = __hadd2(x[threadIdx.x], bias[0]);
  y[threadIdx.x] = __hmax2(v, __float2half2_rn(0.0f));
}

//@run {"grid": 4, "block": 32, "args": ["f32*512", "s32*4%128", "f32*4"]}
extern "C" __global__ void cross_entropy(const float* logits, const int* labels, float* loss) {
  const float* r = logits + blockIdx.x * 128;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < 128; c += 32) m = fmaxf(m, r[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
  for (int c = threadIdx.x; c < 128; c += 32) s += __expf(r[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x == 0) loss[blockIdx.x] = logf(s) + m - r[labels[blockIdx.x]];
}
