// Arithmetic with explicit rounding as interval and reproducible-sum code writes it (the
// __f*_r? and __d*_r? intrinsics: add, mul, fma, div, rcp, sqrt in each IEEE mode), and the
// rarer library functions numerics code reaches for: erfinv, normcdfinv, Bessel, remquo,
// nextafter, frexp/ldexp/scalbn/logb/ilogb, fmod/remainder, erfcx, fdim, copysign.
#include <math.h>

//@run {"grid": 1, "block": 128, "args": ["f32*128", "f32*128", "f32*1536"]}
extern "C" __global__ void f32_rounded_ops(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out) {
  int t = threadIdx.x;
  float x = a[t] * 3.0f - 1.0f, y = b[t] + 0.5f;
  if (t == 7) y = 0.0f;
  if (t == 9) x = -x * 1e30f;
  float* o = out + t * 12;
  o[0] = __fadd_rz(x, y) - __fadd_ru(x, y);
  o[1] = __fadd_rd(x, y);
  o[2] = __fmul_ru(x, y) + __fmul_rd(x, y);
  o[3] = __fmaf_rz(x, y, 1.0f / 3.0f);
  o[4] = __fmaf_ru(x, y, -x) - __fmaf_rd(x, y, -x);
  o[5] = __fdiv_rn(x, y);
  o[6] = __fdiv_rz(x, y) - __fdiv_ru(x, y);
  o[7] = __frcp_rd(y) + __frcp_rz(x);
  o[8] = __fsqrt_ru(fabsf(x)) - __fsqrt_rd(fabsf(y));
  o[9] = __fsub_ru(x, y) * __fsub_rz(y, x);
  o[10] = __fdividef(x, y + 2.0f);
  o[11] = __saturatef(x) + __frsqrt_rn(fabsf(y) + 1.0f);
}

//@run {"grid": 1, "block": 64, "args": ["f64*64", "f64*64", "f64*640"]}
extern "C" __global__ void f64_rounded_ops(const double* __restrict__ a, const double* __restrict__ b, double* __restrict__ out) {
  int t = threadIdx.x;
  double x = a[t] * 7.0 - 3.0, y = b[t] - 0.25;
  if (t == 3) y = -0.0;
  double* o = out + t * 10;
  o[0] = __dadd_rz(x, y) - __dadd_ru(x, y);
  o[1] = __dadd_rd(x, y);
  o[2] = __dmul_ru(x, y) - __dmul_rd(x, y);
  o[3] = __fma_rz(x, y, 1.0 / 3.0);
  o[4] = __fma_ru(x, y, -x) - __fma_rd(x, y, -x);
  o[5] = __ddiv_rn(x, y);
  o[6] = __ddiv_rz(x, y) - __ddiv_ru(x, y);
  o[7] = __drcp_rd(y) + __drcp_rz(x);
  o[8] = __dsqrt_ru(fabs(x)) - __dsqrt_rd(fabs(y));
  o[9] = __dsub_rn(x, y) * __dsub_rz(y, x);
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*1024", "s32*128"]}
extern "C" __global__ void rare_f32_functions(const float* __restrict__ a, float* __restrict__ out, int* __restrict__ iout) {
  int t = threadIdx.x;
  float x = a[t] * 1.98f - 0.99f;          // (-0.99, 0.99)
  float p = a[t] * 0.98f + 0.01f;          // (0.01, 0.99)
  float big = (a[t] - 0.5f) * 200.0f;
  float* o = out + t * 16;
  int q;
  o[0] = erfinvf(x);
  o[1] = normcdfinvf(p);
  o[2] = cyl_bessel_i0f(big * 0.05f);
  o[3] = j0f(big) + y1f(fabsf(big) + 0.5f);
  o[4] = remquof(big, 3.25f, &q);
  o[5] = nextafterf(x, 2.0f) - x;
  int e;
  o[6] = frexpf(big, &e);
  o[7] = ldexpf(x, t - 32) + scalbnf(p, 100 - t);
  o[8] = logbf(big);
  o[9] = fmodf(big, 7.5f) + remainderf(big, 2.5f);
  o[10] = erfcxf(big * 0.1f);
  o[11] = fdimf(big, x) + copysignf(p, big);
  o[12] = erfcinvf(p * 1.5f);
  o[13] = normcdff(big * 0.05f);
  o[14] = rcbrtf(big) + cbrtf(x);
  o[15] = hypotf(big, x) - rhypotf(big, p);
  iout[t * 2] = q * 1000 + e;
  iout[t * 2 + 1] = ilogbf(big);
}

//@run {"grid": 1, "block": 64, "args": ["f64*64", "f64*512"]}
extern "C" __global__ void rare_f64_functions(const double* __restrict__ a, double* __restrict__ out) {
  int t = threadIdx.x;
  double x = a[t] * 1.98 - 0.99, p = a[t] * 0.98 + 0.01, big = (a[t] - 0.5) * 300.0;
  double* o = out + t * 8;
  int q, e;
  o[0] = erfinv(x);
  o[1] = normcdfinv(p);
  o[2] = cyl_bessel_i1(big * 0.03);
  o[3] = remquo(big, 1.75, &q) + q;
  o[4] = nextafter(x, -2.0) - x;
  o[5] = frexp(big, &e) + e;
  o[6] = fmod(big, 0.3) - remainder(big, 0.7);
  o[7] = erfcx(big * 0.05) + fdim(x, p);
}
