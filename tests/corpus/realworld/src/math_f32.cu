// Single-precision math library calls and intrinsics (default flags: IEEE div/sqrt).
//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128", "f32*128"]}
extern "C" __global__ void transcendental_f32(const float* x, const float* y, float* out) {
  int i = blockIdx.x * 64 + threadIdx.x;
  float a = x[i], b = y[i];
  out[i] = sinf(a) + cosf(b) * expf(a * 0.5f) + logf(fabsf(b) + 1.0f) + tanhf(a);
}

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128", "f32*128"]}
extern "C" __global__ void special_f32(const float* x, const float* y, float* out) {
  int i = blockIdx.x * 64 + threadIdx.x;
  float a = x[i], b = y[i];
  out[i] = powf(fabsf(a), b) + erff(a) - lgammaf(fabsf(b) + 0.5f) + atan2f(a, b);
}

//@run {"grid": 1, "block": 128, "args": ["f32*128", "f32*128", "f32*128"]}
extern "C" __global__ void intrinsics_f32(const float* x, const float* y, float* out) {
  int i = threadIdx.x;
  float a = x[i], b = y[i];
  out[i] = __fdividef(a, b + 8.0f) + __expf(a) + __sinf(b) + __logf(fabsf(a) + 2.0f)
         + __fmul_rn(a, b) + __fadd_rz(a, b) + __frcp_rn(b + 5.0f) + rsqrtf(fabsf(a) + 1.0f);
}

//@run {"grid": 1, "block": 128, "args": ["f32*128", "f32*128", "f32*128"]}
extern "C" __global__ void div_sqrt_mod_f32(const float* x, const float* y, float* out) {
  int i = threadIdx.x;
  float a = x[i], b = y[i];
  out[i] = a / b + sqrtf(fabsf(a)) + fmodf(a, b) + cbrtf(b) + hypotf(a, b) + remainderf(a, b);
}

//@run {"grid": 1, "block": 128, "args": ["f32*128", "s32*128", "f32*128"]}
extern "C" __global__ void rounding_f32(const float* x, int* iout, float* out) {
  int i = threadIdx.x;
  float a = x[i] * 1000.0f;
  iout[i] = __float2int_rn(a) ^ lrintf(a * 0.5f) ^ (int)truncf(a);
  out[i] = floorf(a) + ceilf(a) * 2.0f + roundf(a) * 3.0f + rintf(a) * 4.0f + copysignf(1.0f, a) + fmaf(a, a, 1.0f);
}
