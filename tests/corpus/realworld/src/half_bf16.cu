// Half and bfloat16 arithmetic through cuda_fp16.h / cuda_bf16.h.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

//@run {"grid": 1, "block": 64, "args": ["f16*128", "f16*128", "f16*128"]}
extern "C" __global__ void half2_axpy(const __half2* x, const __half2* y, __half2* out) {
  int i = threadIdx.x;
  __half2 a = __float2half2_rn(0.75f);
  out[i] = __hfma2(a, x[i], y[i]) + __hmul2(x[i], __habs2(y[i])) - __hmax2(x[i], y[i]);
}

//@run {"grid": 1, "block": 64, "args": ["f16*64", "f32*64", "u32*64"]}
extern "C" __global__ void half_math(const __half* x, float* out, unsigned* cmp) {
  int i = threadIdx.x;
  __half a = x[i];
  __half e = hexp(a * __float2half(0.25f)) + hsqrt(__habs(a)) + hrcp(a + __float2half(8.0f));
  out[i] = __half2float(e) + __half2float(hfloor(a)) * 2.0f;
  cmp[i] = __hlt(a, __float2half(0.5f)) | (__hisnan(a) << 1) | (__heq(a, hceil(a)) << 2);
}

//@run {"grid": 1, "block": 64, "args": ["bf16*128", "bf16*128", "bf16*128", "f32*64"]}
extern "C" __global__ void bf16_ops(const __nv_bfloat162* x, const __nv_bfloat162* y, __nv_bfloat162* out, float* dot) {
  int i = threadIdx.x;
  __nv_bfloat162 p = __hmul2(x[i], y[i]);
  out[i] = __hfma2(p, x[i], __hneg2(y[i]));
  dot[i] = __bfloat162float(p.x) + __bfloat162float(p.y) + __bfloat162float(__float2bfloat16_rn(__low2float(x[i]) * 3.0f));
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f16*64", "bf16*64", "s32*64"]}
extern "C" __global__ void conversions_16(const float* x, __half* h, __nv_bfloat16* b, int* iv) {
  int i = threadIdx.x;
  float f = x[i] * 300.0f;
  h[i] = __float2half_rz(f);
  b[i] = __float2bfloat16_rd(f);
  iv[i] = __half2int_rn(__float2half(f)) + __bfloat162int_rz(__float2bfloat16(f)) + __half2short_rd(__float2half(f * 0.1f));
}
