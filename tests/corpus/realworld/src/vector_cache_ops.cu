// Narrow vector types and cache-operator intrinsics as used in image and quantisation code:
// char4/uchar4/short2/ushort4 loads and stores, __ldg/__ldcs/__ldlu/__ldcv/__ldcg and
// __stcs/__stwt/__stcg, float4 streaming, half-width packing with __float2half_rn, and
// misaligned-by-type accesses split into narrow ones.
#include <cuda_fp16.h>

//@run {"grid": 2, "block": 64, "args": ["u8*512", "s8*512", "u8*512"]}
extern "C" __global__ void uchar4_blend(const uchar4* __restrict__ a, const char4* __restrict__ b,
                                        uchar4* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  uchar4 x = __ldg(a + i);
  char4 y = __ldcs(b + i);
  uchar4 r;
  r.x = (unsigned char)min(255, max(0, x.x + y.x));
  r.y = (unsigned char)min(255, max(0, x.y - y.y));
  r.z = (unsigned char)((x.z * (y.z & 15)) >> 2);
  r.w = x.w ^ (unsigned char)y.w;
  __stcs(out + i, r);
}

//@run {"grid": 1, "block": 128, "args": ["s16*256", "u16*512", "u16*512"]}
extern "C" __global__ void short_vectors(const short2* __restrict__ a, const ushort4* __restrict__ b,
                                         ushort4* __restrict__ out) {
  int t = threadIdx.x;
  short2 x = __ldlu(a + t);
  ushort4 y = __ldcv(b + t);
  ushort4 r;
  r.x = y.x + x.x; r.y = y.y - x.y; r.z = (unsigned short)(y.z * x.x); r.w = (unsigned short)(y.w >> (x.y & 7));
  __stwt(out + t, r);
}

//@run {"grid": 2, "block": 64, "args": ["f32*512", "f32*512", "f16*512"]}
extern "C" __global__ void float4_stream_to_half(const float4* __restrict__ a, const float4* __restrict__ b,
                                                 __half2* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 x = __ldcg(a + i), y = __ldcs(b + i);
  __half2 lo = __floats2half2_rn(x.x * y.x, x.y + y.y);
  __half2 hi = __halves2half2(__float2half_rz(x.z - y.z), __float2half_rd(x.w * 3.0f));
  __stcg(out + 2 * i, lo);
  __stcs(out + 2 * i + 1, hi);
}

//@run {"grid": 1, "block": 64, "args": ["u8*1024", "u32*64"]}
extern "C" __global__ void unaligned_words(const unsigned char* __restrict__ bytes, unsigned* __restrict__ out) {
  int t = threadIdx.x;
  const unsigned char* p = bytes + t * 13 + 1;   // no alignment: the compiler must use byte loads
  unsigned w = 0;
  for (int k = 0; k < 4; ++k) w |= (unsigned)p[k] << (8 * k);
  unsigned long long q = 0;
  for (int k = 0; k < 8; ++k) q |= (unsigned long long)p[k + 4] << (8 * k);
  out[t] = w ^ (unsigned)(q >> (t & 31)) ^ (unsigned)(q >> 32);
}

//@run {"grid": 1, "block": 96, "args": ["s8*384", "f32=0.05", "f32*96"]}
extern "C" __global__ void dequant_char4(const char4* __restrict__ q, float scale, float* __restrict__ out) {
  int t = threadIdx.x;
  char4 a = q[t];
  out[t] = scale * ((float)a.x + 2.0f * a.y - 3.0f * a.z + 4.0f * a.w);
}
