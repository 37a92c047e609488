// Complex arithmetic as signal-processing code writes it: cuda::std::complex<double> and
// <float> math, and a radix-2 FFT over double2 in shared memory with sincospi twiddles.
#include <cuda/std/complex>

using cd = cuda::std::complex<double>;
using cf = cuda::std::complex<float>;

//@run {"grid": 1, "block": 64, "args": ["f64*128", "f64*128", "f64*384"]}
extern "C" __global__ void complex_double_ops(const double2* __restrict__ a, const double2* __restrict__ b,
                                              double2* __restrict__ out) {
  int t = threadIdx.x;
  cd x(a[t].x, a[t].y), y(b[t].x, b[t].y);
  cd p = x * y, q = x / (y + cd(5.0, 0.0));
  cd e = cuda::std::exp(x * 0.25) + cuda::std::sqrt(y);
  out[3 * t + 0] = make_double2(p.real(), p.imag());
  out[3 * t + 1] = make_double2(q.real(), q.imag());
  out[3 * t + 2] = make_double2(e.real() + cuda::std::abs(x), e.imag() + cuda::std::arg(y));
}

//@run {"grid": 1, "block": 64, "args": ["f32*128", "f32*128"]}
extern "C" __global__ void complex_float_polar(const float2* __restrict__ a, float2* __restrict__ out) {
  int t = threadIdx.x;
  cf z(a[t].x, a[t].y);
  cf w = cuda::std::polar(cuda::std::abs(z), cuda::std::arg(z) * 0.5f) * cuda::std::conj(z) + cuda::std::norm(z);
  out[t] = make_float2(w.real(), w.imag());
}

//@run {"grid": 2, "block": 32, "args": ["f64*256", "f64*256"]}
extern "C" __global__ void fft64_radix2(const double2* __restrict__ in, double2* __restrict__ out) {
  // one 64-point forward FFT per block, 32 threads each doing one butterfly per stage
  __shared__ double2 s[64];
  int t = threadIdx.x;
  const double2* x = in + blockIdx.x * 64;
  int r0 = __brev(t) >> 26, r1 = __brev(t + 32) >> 26;   // bit-reversed load
  s[r0] = x[t];
  s[r1] = x[t + 32];
  __syncthreads();
  for (int half = 1; half < 64; half <<= 1) {
    int group = t / half, k = t % half;
    int i = group * 2 * half + k, j = i + half;
    double sn, cs;
    sincospi(-(double)k / half, &sn, &cs);
    double2 u = s[i], v = s[j];
    double2 w = make_double2(v.x * cs - v.y * sn, v.x * sn + v.y * cs);
    __syncthreads();
    s[i] = make_double2(u.x + w.x, u.y + w.y);
    s[j] = make_double2(u.x - w.x, u.y - w.y);
    __syncthreads();
  }
  out[blockIdx.x * 64 + t] = s[t];
  out[blockIdx.x * 64 + t + 32] = s[t + 32];
}
