// Register pressure the way it shows up in real kernels: launch bounds that cap registers
// below what the code wants (so ptxas spills to local memory), dynamically indexed local
// arrays (a stack frame), many live accumulators in an unrolled loop, and 64-bit/double
// state carried through a loop under a tight bound.

//@run {"grid": 1, "block": 128, "args": ["f32*4096", "f32*128"]}
extern "C" __global__ void __launch_bounds__(1024, 2) many_accumulators(const float* __restrict__ in, float* __restrict__ out) {
  float acc[40];
  int t = threadIdx.x;
#pragma unroll
  for (int k = 0; k < 40; ++k) acc[k] = in[(t * 32 + k) & 4095];
  for (int it = 0; it < 6; ++it) {
#pragma unroll
    for (int k = 0; k < 40; ++k)
      acc[k] = fmaf(acc[k], acc[(k + 7) % 40] * 0.25f, in[(it * 40 + k + t * 3) & 4095]);
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 40; ++k) s += acc[k] * (float)(k + 1);
  out[t] = s;
}

//@run {"grid": 2, "block": 64, "args": ["s32*2048", "s32*256", "s32*128"]}
extern "C" __global__ void local_array_dynamic(const int* __restrict__ idx, const int* __restrict__ vals,
                                               int* __restrict__ out) {
  int buf[64];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < 64; ++i) buf[i] = vals[(t + i * 5) & 255];
  int s = 0;
  for (int i = 0; i < 16; ++i) {
    s += buf[idx[t * 16 + i] & 63];
    buf[(s >> 3) & 63] ^= s;
  }
  out[t] = s + buf[t & 63] - buf[(s ^ t) & 63];
}

//@run {"grid": 1, "block": 128, "args": ["f64*512", "u64*512", "f64*256"]}
extern "C" __global__ void __launch_bounds__(256, 8) wide_state_tight_bound(const double* __restrict__ x, const unsigned long long* __restrict__ h,
                       double* __restrict__ out) {
  int t = threadIdx.x;
  double a0 = x[t], a1 = x[t + 128], a2 = x[(t * 3) & 511], a3 = x[(t * 7) & 511];
  unsigned long long k0 = h[t], k1 = h[t + 128], k2 = h[(t * 5) & 511], k3 = h[(t * 11) & 511];
  for (int i = 0; i < 12; ++i) {
    double b0 = a0 * a1 + a2, b1 = a1 * a2 - a3, b2 = a2 * a3 + a0, b3 = a3 * a0 - a1;
    unsigned long long m0 = k0 * 0x9E3779B97F4A7C15ull ^ k1, m1 = (k1 >> 13) | (k2 << 51);
    unsigned long long m2 = k2 + (k3 ^ (k0 >> 7)), m3 = k3 * k1 + i;
    a0 = b0 * 0.5 + (double)(m0 >> 40) * 1e-6; a1 = b1 * 0.25 - (double)(m1 & 0xffff) * 1e-5;
    a2 = b2 * 0.125 + (double)(m2 >> 50);      a3 = b3 * 0.0625 - (double)(long long)(m3 >> 44) * 1e-3;
    k0 = m0; k1 = m1; k2 = m2; k3 = m3;
  }
  out[t] = a0 + a1 + a2 + a3;
  out[t + 128] = (double)((k0 ^ k1 ^ k2 ^ k3) >> 11);
}

__device__ __noinline__ float sum_frame(const float* v, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s = fmaf(s, 0.5f, v[i]);
  return s;
}

//@run {"grid": 1, "block": 64, "args": ["f32*1024", "f32*64"]}
extern "C" __global__ void frame_passed_to_callee(const float* __restrict__ in, float* __restrict__ out) {
  float v[24];
  int t = threadIdx.x;
  for (int i = 0; i < 24; ++i) v[i] = in[(t * 24 + i) & 1023] * (float)(i - 11);
  v[t % 24] += 1.0f;
  out[t] = sum_frame(v, 8 + t % 16) + sum_frame(v + (t & 7), 12);
}
