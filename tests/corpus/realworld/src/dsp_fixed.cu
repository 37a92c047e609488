// Fixed-point signal processing as audio and radio codes write it: a Q15 FIR filter with
// saturation, a Q31 biquad cascade with 64-bit accumulators, integer division and modulo by
// run-time divisors (resampling ratios), a Q16.16 Newton square root, float <-> fixed
// conversions with __float2int_rn/__saturatef, and 64-bit division of sample counters.
#include <stdint.h>

__device__ __forceinline__ short sat16(int v) {
  return (short)max(-32768, min(32767, v));
}

//@run {"grid": 2, "block": 64, "args": ["s16*160", "s16*16", "s16*128"]}
extern "C" __global__ void fir_q15(const short* x, const short* taps, short* y) {
  __shared__ short h[16];
  if (threadIdx.x < 16) h[threadIdx.x] = taps[threadIdx.x] >> 2;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 1 << 14;
#pragma unroll
  for (int k = 0; k < 16; ++k) acc += (int)x[i + k] * h[k];
  y[i] = sat16(acc >> 15);
}

// Two cascaded biquads per channel in Q31 (coefficients scaled to |c| < 1), state carried
// across 16 samples.
//@run {"grid": 1, "block": 64, "args": ["s32*1024", "s32*640", "s32*1024"]}
extern "C" __global__ void biquad_q31(const int* in, const int* coef, int* out) {
  int ch = threadIdx.x;
  const int* c = coef + 10 * ch;
  long long s1a = 0, s2a = 0, s1b = 0, s2b = 0;
  for (int n = 0; n < 16; ++n) {
    long long x = in[16 * ch + n] >> 4;
    long long y = (((long long)(c[0] >> 2) * x) >> 31) + s1a;
    s1a = (((long long)(c[1] >> 2) * x) >> 31) - (((long long)(c[3] >> 3) * y) >> 31) + s2a;
    s2a = (((long long)(c[2] >> 2) * x) >> 31) - (((long long)(c[4] >> 3) * y) >> 31);
    long long z = (((long long)(c[5] >> 2) * y) >> 31) + s1b;
    s1b = (((long long)(c[6] >> 2) * y) >> 31) - (((long long)(c[8] >> 3) * z) >> 31) + s2b;
    s2b = (((long long)(c[7] >> 2) * y) >> 31) - (((long long)(c[9] >> 3) * z) >> 31);
    out[16 * ch + n] = (int)max(-2147483648LL, min(2147483647LL, z));
  }
}

// Linear resampling by a run-time ratio num/den: integer division and modulo by values the
// compiler cannot see.
//@run {"grid": 2, "block": 64, "args": ["s16*512", "s16*128", "s32=147", "s32=160"]}
extern "C" __global__ void resample_ratio(const short* x, short* y, int num, int den) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int pos = i * den;
  int idx = pos / num, frac = pos % num;
  int a = x[idx], b = x[idx + 1];
  y[i] = (short)(a + (b - a) * frac / num);
}

// Q16.16 square root by Newton steps from a count-leading-zeros estimate.
//@run {"grid": 2, "block": 64, "args": ["u32*128", "u32*128"]}
extern "C" __global__ void sqrt_q16(const unsigned* v, unsigned* r) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long x = (unsigned long long)(v[i] >> (i & 7)) << 16;
  if (x == 0) { r[i] = 0; return; }
  int bits = 64 - __clzll(x);
  unsigned long long g = 1ull << ((bits + 1) / 2);
  for (int k = 0; k < 6; ++k) g = (g + x / g) >> 1;
  while (g * g > x) --g;
  r[i] = (unsigned)g;
}

//@run {"grid": 2, "block": 64, "args": ["f32*128", "s16*128", "s32*128", "f32*128"]}
extern "C" __global__ void float_fixed(const float* f, short* q15, int* q24, float* back) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = f[i] * 0.3f;
  q15[i] = (short)__float2int_rn(__saturatef(s * 0.5f + 0.5f) * 65535.f - 32768.f);
  int q = __float2int_rz(s * 16777216.f);
  q24[i] = q;
  back[i] = __int2float_rn(q) * (1.0f / 16777216.f) + __uint2float_rd((unsigned)q15[i] & 0xffff) * 1e-6f;
}

// Sample-clock arithmetic in 64 bits: frames = samples / rate, remainder, and a
// ppm-corrected rate, per stream.
//@run {"grid": 1, "block": 64, "args": ["u64*64", "u32*64%48000", "u64*128", "s64*64"]}
extern "C" __global__ void clock_math(const unsigned long long* samples, const unsigned* rate,
                                      unsigned long long* out, long long* drift) {
  int i = threadIdx.x;
  unsigned long long s = samples[i] >> 8;
  unsigned long long r = rate[i] + 8000;
  out[2 * i] = s / r;
  out[2 * i + 1] = s % r;
  long long ppm = (long long)(i - 32) * 37;
  drift[i] = ((long long)s * ppm) / 1000000LL;
}
