// Conversions with explicit rounding and saturation, as numerics code writes them: the
// __float2int_*/__double2*/__*2float_* intrinsics in every rounding mode, out-of-range and
// NaN inputs to integer conversions, 64-bit integer <-> float/double, half/bf16 rounding
// intrinsics, and rint/nearbyint/lrint family calls.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

//@run {"grid": 1, "block": 128, "args": ["f32*128", "s32*1024"]}
extern "C" __global__ void float_to_int_modes(const float* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x;
  float x = in[t] * 1.0e9f;                  // some beyond the 32-bit range
  if (t == 5) x = __int_as_float(0x7fc00000);  // NaN
  if (t == 6) x = -__int_as_float(0x7f800000);
  out[t * 8 + 0] = __float2int_rn(x);
  out[t * 8 + 1] = __float2int_rz(x);
  out[t * 8 + 2] = __float2int_ru(x);
  out[t * 8 + 3] = __float2int_rd(x);
  out[t * 8 + 4] = (int)__float2uint_rn(x);
  out[t * 8 + 5] = (int)__float2uint_rd(in[t] * 3.5f);
  out[t * 8 + 6] = (int)__float2ll_ru(x * 1000.0f);
  out[t * 8 + 7] = (int)(__float2ull_rz(x * 7.0f) >> 7);
}

//@run {"grid": 1, "block": 128, "args": ["f64*128", "s64*1024"]}
extern "C" __global__ void double_conversions(const double* __restrict__ in, long long* __restrict__ out) {
  int t = threadIdx.x;
  double x = in[t] * 3.0e18;
  out[t * 8 + 0] = __double2ll_rn(x);
  out[t * 8 + 1] = __double2ll_rz(x);
  out[t * 8 + 2] = (long long)__double2ull_ru(x);
  out[t * 8 + 3] = __double2int_rd(in[t] * 1.0e9);
  out[t * 8 + 4] = (long long)__double_as_longlong(__ll2double_rz(out[t * 8 + 0] * 3 + 1));
  out[t * 8 + 5] = (long long)__float_as_int(__ull2float_rn((unsigned long long)out[t * 8 + 1] * 5));
  out[t * 8 + 6] = (long long)__float_as_int(__double2float_rz(x * 1e-20)) ^ __float_as_int(__double2float_ru(in[t]));
  out[t * 8 + 7] = (long long)__double_as_longlong(__int2double_rn((int)(in[t] * 1e9)) + __uint2double_rn(t * 4000000000u));
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "u16*512"]}
extern "C" __global__ void half_rounding(const float* __restrict__ in, unsigned short* __restrict__ out) {
  int t = threadIdx.x;
  float x = in[t] * 1000.0f;
  if (t == 3) x = 70000.0f;
  if (t == 4) x = 1.0e-8f;
  __half h[4] = {__float2half_rn(x), __float2half_rz(x), __float2half_ru(x), __float2half_rd(x)};
  __nv_bfloat16 b[4] = {__float2bfloat16_rn(x), __float2bfloat16_rz(x), __float2bfloat16_ru(x), __float2bfloat16_rd(x)};
  for (int k = 0; k < 4; ++k) {
    out[t * 8 + k] = __half_as_ushort(h[k]);
    out[t * 8 + 4 + k] = __bfloat16_as_ushort(b[k]);
  }
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f64*64", "s64*512"]}
extern "C" __global__ void rint_family(const float* __restrict__ f, const double* __restrict__ d, long long* __restrict__ out) {
  int t = threadIdx.x;
  float x = f[t] * 10.5f;
  double y = d[t] * 1.0e6 + 0.5;
  out[t * 8 + 0] = (long long)rintf(x);
  out[t * 8 + 1] = (long long)nearbyintf(x * 3.0f);
  out[t * 8 + 2] = lrintf(x * 7.0f);
  out[t * 8 + 3] = llrint(y);
  out[t * 8 + 4] = llround(y);
  out[t * 8 + 5] = (long long)truncf(x * 0.3f) + (long long)floor(y) + (long long)ceilf(x);
  out[t * 8 + 6] = (long long)(unsigned short)(int)x + (long long)(signed char)(int)(x * 13.0f);
  out[t * 8 + 7] = (long long)(unsigned long long)fabs(y * 1e9) ^ (long long)roundf(x);
}
