// Int8 inference kernels: __dp4a/__dp2a dot products on packed bytes, quantisation with
// round-to-nearest and saturation, and SIMD-in-a-word byte arithmetic.

//@run {"grid": 1, "block": 64, "args": ["s8*4096", "s8*64", "s32*64", "f32*64", "f32=0.0125"]}
extern "C" __global__ void gemv_dp4a(const char4* __restrict__ w, const char4* __restrict__ x, int* __restrict__ acc_out,
                                     float* __restrict__ y, float scale) {
  // 64 rows of 64 int8 weights (16 char4), one row per thread
  int r = threadIdx.x;
  int acc = 0;
  #pragma unroll 4
  for (int k = 0; k < 16; ++k) {
    char4 a = w[r * 16 + k], b = x[k];
    acc = __dp4a(*reinterpret_cast<int*>(&a), *reinterpret_cast<int*>(&b), acc);
  }
  acc_out[r] = acc;
  y[r] = acc * scale;
}

//@run {"grid": 1, "block": 64, "args": ["u32*256", "u32*64", "u32*64", "s32*64"]}
extern "C" __global__ void dp4a_unsigned_dp2a(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
                                              unsigned* __restrict__ u4, int* __restrict__ d2) {
  int t = threadIdx.x;
  unsigned s = 0;
  for (int k = 0; k < 4; ++k) s = __dp4a(a[t * 4 + k], b[t], s);
  u4[t] = s;
  int lo = __dp2a_lo((int)a[t], (int)b[t], 7);
  int hi = __dp2a_hi((int)a[t + 64], (int)b[t], -3);
  d2[t] = lo ^ hi;
}

//@run {"grid": 2, "block": 128, "args": ["f32*256", "s8*256", "f32*2"]}
extern "C" __global__ void quantize_int8(const float* __restrict__ x, signed char* __restrict__ q, float* __restrict__ absmax) {
  // per-block symmetric quantisation: amax by a warp/shared reduction, then round and clamp
  __shared__ float part[4];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i] * 40.0f;
  float m = fabsf(v);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = m;
  __syncthreads();
  float amax = fmaxf(fmaxf(part[0], part[1]), fmaxf(part[2], part[3]));
  float s = 127.0f / amax;
  int qi = __float2int_rn(v * s * 1.5f);         // deliberately out of range for the large ones
  q[i] = (signed char)max(-128, min(127, qi));
  if (threadIdx.x == 0) absmax[blockIdx.x] = amax;
}

//@run {"grid": 1, "block": 64, "args": ["u32*64", "u32*64", "u32*384"]}
extern "C" __global__ void simd_bytes(const unsigned* __restrict__ a, const unsigned* __restrict__ b, unsigned* __restrict__ out) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t];
  out[t * 6 + 0] = __vadd4(x, y);
  out[t * 6 + 1] = __vsubss4(x, y);
  out[t * 6 + 2] = __vmaxs4(x, y);
  out[t * 6 + 3] = __vabsdiffs4(x, y);
  out[t * 6 + 4] = __vcmpgtu4(x, y) ^ __vavgu4(x, y);
  out[t * 6 + 5] = __vsads4(x, y) + __vhaddu2(x, y);
}
