// Double-precision math library.
//@run {"grid": 1, "block": 64, "args": ["f64*64", "f64*64", "f64*64"]}
extern "C" __global__ void transcendental_f64(const double* x, const double* y, double* out) {
  int i = threadIdx.x;
  double a = x[i], b = y[i];
  out[i] = sin(a) + cos(b) * exp(a * 0.5) + log(fabs(b) + 1.0) + tanh(a);
}

//@run {"grid": 1, "block": 64, "args": ["f64*64", "f64*64", "f64*64"]}
extern "C" __global__ void special_f64(const double* x, const double* y, double* out) {
  int i = threadIdx.x;
  double a = x[i], b = y[i];
  out[i] = pow(fabs(a), b) + erf(a) + lgamma(fabs(b) + 0.5) + atan2(a, b);
}

//@run {"grid": 1, "block": 64, "args": ["f64*64", "f64*64", "f64*64"]}
extern "C" __global__ void div_sqrt_f64(const double* x, const double* y, double* out) {
  int i = threadIdx.x;
  double a = x[i], b = y[i];
  out[i] = a / b + sqrt(fabs(a)) + rsqrt(fabs(b) + 1.0) + cbrt(a) + fma(a, b, 0.25) + __drcp_rn(b);
}

//@run {"grid": 1, "block": 64, "args": ["f64*64", "f32*64", "s64*64"]}
extern "C" __global__ void convert_f64(const double* x, float* f, long long* l) {
  int i = threadIdx.x;
  double a = x[i] * 1e6;
  f[i] = (float)a + __double2float_rz(a);
  l[i] = __double2ll_rn(a) + (long long)floor(a) + llrint(a * 0.25);
}
