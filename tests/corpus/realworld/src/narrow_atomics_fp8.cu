// Newer-library features: 16-bit atomicCAS, half2/bfloat162 atomicAdd, 64-bit atomicMax/Min,
// block- and system-scope atomics, __reduce_*_sync and __match_all_sync, FP8 (e4m3/e5m2)
// conversions from cuda_fp8.h, and bf16 math from cuda_bf16.h.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

//@run {"grid": 2, "block": 64, "args": ["u16*16", "u32*128%8", "u16*128"]}
extern "C" __global__ void cas16(unsigned short* __restrict__ slots, const unsigned* __restrict__ idx,
                                 unsigned short* __restrict__ seen) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned short* p = &slots[idx[i]];
  unsigned short old = *p, assumed;
  do {
    assumed = old;
    old = atomicCAS(p, assumed, (unsigned short)(assumed + 3));
  } while (old != assumed);
  seen[i] = (unsigned short)(old == assumed) + (assumed % 3 == slots[8 + (i & 7)] % 3);   // order-free
}

//@run {"grid": 1, "block": 128, "args": ["f16*256", "bf16*256", "f16*8", "bf16*8"]}
extern "C" __global__ void packed_float_atomics(const __half2* __restrict__ h, const __nv_bfloat162* __restrict__ b,
                                                __half2* __restrict__ hs, __nv_bfloat162* __restrict__ bs) {
  int t = threadIdx.x;
  // one writer per slot per value, so the result does not depend on the order
  if ((t & 31) == 0) {
    atomicAdd(&hs[t >> 5], h[t]);
    atomicAdd(&bs[t >> 5], b[t]);
  }
}

//@run {"grid": 2, "block": 64, "args": ["u64*128", "s64*128", "u64*4", "s64*4", "u32*4"]}
extern "C" __global__ void wide_minmax_scopes(const unsigned long long* __restrict__ u, const long long* __restrict__ s,
                                              unsigned long long* __restrict__ umax, long long* __restrict__ smin,
                                              unsigned* __restrict__ count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicMax(&umax[i & 3], u[i]);
  atomicMin(&smin[i & 3], s[i]);
  atomicAdd_block(&count[0], 1u);
  atomicAdd_system(&count[1], 2u);
  atomicOr_block(&count[2], 1u << (i & 31));
  atomicXor_system(&count[3], (unsigned)u[i]);
}

//@run {"grid": 1, "block": 128, "args": ["u32*128", "s32*128", "u32*512"]}
extern "C" __global__ void warp_reduce_match(const unsigned* __restrict__ a, const int* __restrict__ b,
                                             unsigned* __restrict__ out) {
  int t = threadIdx.x;
  unsigned m = __activemask();
  out[t * 4 + 0] = __reduce_add_sync(m, a[t]) ^ __reduce_or_sync(m, a[t] >> 3);
  out[t * 4 + 1] = (unsigned)__reduce_min_sync(m, b[t]) + __reduce_max_sync(m, a[t]);
  int pred;
  unsigned all = __match_all_sync(m, a[t] & 1, &pred);
  out[t * 4 + 2] = all + pred + __reduce_and_sync(m, a[t] | 0xff00ff00u) + __reduce_xor_sync(m, a[t]);
  if (a[t] & 1) {
    unsigned sub = __activemask();
    out[t * 4 + 3] = __reduce_add_sync(sub, (unsigned)b[t]);
  } else {
    out[t * 4 + 3] = __match_any_sync(m, b[t] & 7);
  }
}

//@run {"grid": 1, "block": 128, "args": ["f32*256", "f16*128", "u8*256", "f32*512"]}
extern "C" __global__ void fp8_convert(const float* __restrict__ x, const __half* __restrict__ h,
                                       const unsigned char* __restrict__ raw, float* __restrict__ out) {
  int t = threadIdx.x;
  __nv_fp8_e4m3 a(x[t] * 8.0f);
  __nv_fp8_e5m2 b(x[t + 128] * 1000.0f);
  __nv_fp8x2_e4m3 pair(float2{x[t], x[t + 128]});
  __nv_fp8_e4m3 c(h[t]);
  float2 back = float2(pair);
  __nv_fp8_e5m2 r;
  r.__x = raw[t];
  out[t * 4 + 0] = float(a) + float(b);
  out[t * 4 + 1] = back.x - back.y;
  out[t * 4 + 2] = float(c) * 2.0f;
  out[t * 4 + 3] = float(r) + (float)__nv_cvt_fp8_to_halfraw(raw[t + 128], __NV_E4M3).x;
}

//@run {"grid": 1, "block": 64, "args": ["bf16*64", "bf16*64", "bf16*256"]}
extern "C" __global__ void bf16_math(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                                     __nv_bfloat16* __restrict__ out) {
  int t = threadIdx.x;
  __nv_bfloat16 x = a[t], y = b[t];
  out[t * 4 + 0] = hexp2(__hmul(x, __float2bfloat16(0.25f)));
  out[t * 4 + 1] = __hfma_relu(x, y, __float2bfloat16(-0.5f));
  out[t * 4 + 2] = __hmax_nan(x, y) + hrint(__hmul(y, __float2bfloat16(3.0f)));
  out[t * 4 + 3] = hsqrt(__habs(x)) - __hmin(x, __hneg(y));
}
