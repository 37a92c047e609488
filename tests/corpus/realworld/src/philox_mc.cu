// Monte Carlo kernels with a counter-based generator written by hand, as simulation codes do
// when they do not link cuRAND: Philox4x32-10 (__umulhi and the low product, a Weyl key
// schedule), uniforms from the top 24 bits, Box-Muller normals (logf, sqrtf, sincospif), a pi
// estimate counted with __reduce_add_sync and atomics, geometric Brownian motion paths with
// expf and a per-block double sum in a fixed order, a lattice random walk histogram, and
// rejection sampling with a lane-dependent trip count. Counters are (thread, step): every
// result is a function of the launch only.

struct Philox4 { unsigned x, y, z, w; };

__device__ __forceinline__ Philox4 philox_round(Philox4 c, unsigned k0, unsigned k1) {
  const unsigned M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  unsigned hi0 = __umulhi(M0, c.x), lo0 = M0 * c.x;
  unsigned hi1 = __umulhi(M1, c.z), lo1 = M1 * c.z;
  return Philox4{hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0};
}

__device__ Philox4 philox4x32_10(Philox4 c, unsigned k0, unsigned k1) {
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    c = philox_round(c, k0, k1);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

__device__ __forceinline__ float u01_open_closed(unsigned r) {   // (0, 1]
  return ((r >> 8) + 1u) * (1.0f / 16777216.0f);
}

__device__ __forceinline__ float u01(unsigned r) { return (r >> 8) * (1.0f / 16777216.0f); }

//@run {"grid": 2, "block": 64, "args": ["u32*512", "f32*512", "u64=81985529216486895"]}
extern "C" __global__ void philox_uniform(unsigned* __restrict__ raw, float* __restrict__ uni,
                                          unsigned long long seed) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  Philox4 r = philox4x32_10(Philox4{t, 0u, 0x1234u, 0u}, (unsigned)seed, (unsigned)(seed >> 32));
  uint4 q = make_uint4(r.x, r.y, r.z, r.w);
  reinterpret_cast<uint4*>(raw)[t] = q;
  reinterpret_cast<float4*>(uni)[t] = make_float4(u01(r.x), u01(r.y), u01(r.z), u01(r.w));
}

//@run {"grid": 2, "block": 64, "args": ["f32*512", "f32=1.5", "f32=0.25"]}
extern "C" __global__ void box_muller_normals(float* __restrict__ out, float mean, float sigma) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  Philox4 r = philox4x32_10(Philox4{t, 1u, 0u, 0u}, 0xA511E9B3u, 0x63D83595u);
  float rad0 = sqrtf(-2.0f * logf(u01_open_closed(r.x))), rad1 = sqrtf(-2.0f * logf(u01_open_closed(r.z)));
  float s0, c0, s1, c1;
  sincospif(2.0f * u01(r.y), &s0, &c0);
  sincospif(2.0f * u01(r.w), &s1, &c1);
  float4 n = make_float4(mean + sigma * rad0 * c0, mean + sigma * rad0 * s0,
                         mean + sigma * rad1 * c1, mean + sigma * rad1 * s1);
  reinterpret_cast<float4*>(out)[t] = n;
}

//@run {"grid": 4, "block": 64, "args": ["u32*4", "s32=24"]}
extern "C" __global__ void mc_pi_counts(unsigned* __restrict__ hits, int rounds) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned inside = 0;
  for (int k = 0; k < rounds; ++k) {
    Philox4 r = philox4x32_10(Philox4{t, (unsigned)k, 2u, 0u}, 0x243F6A88u, 0x85A308D3u);
    float x0 = u01(r.x), y0 = u01(r.y), x1 = u01(r.z), y1 = u01(r.w);
    inside += (x0 * x0 + y0 * y0 <= 1.0f) + (x1 * x1 + y1 * y1 <= 1.0f);
  }
  unsigned warp_total = __reduce_add_sync(0xffffffffu, inside);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&hits[0], warp_total);
    atomicMax(&hits[1], warp_total);
    atomicMin(&hits[2], warp_total);
  }
  if (t == 0) hits[3] = 2u * rounds * gridDim.x * blockDim.x;
}

// Geometric Brownian motion: S' = S exp((mu - sigma^2/2) dt + sigma sqrt(dt) Z); a call payoff
// per path, and the block's mean payoff as a double reduced in shared memory.
//@run {"grid": 2, "block": 128, "args": ["f32*256", "f64*2", "f32=100.0", "f32=105.0", "f32=0.05", "f32=0.2", "s32=16"]}
extern "C" __global__ void gbm_call_paths(float* __restrict__ payoff, double* __restrict__ block_mean, float s0,
                                          float strike, float mu, float sigma, int steps) {
  __shared__ double acc[128];
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  float dt = 1.0f / steps, drift = (mu - 0.5f * sigma * sigma) * dt, vol = sigma * sqrtf(dt);
  float s = s0;
  for (int k = 0; k < steps; k += 2) {
    Philox4 r = philox4x32_10(Philox4{t, (unsigned)k, 3u, 7u}, 0x13198A2Eu, 0x03707344u);
    float rad = sqrtf(-2.0f * logf(u01_open_closed(r.x))), sn, cs;
    sincospif(2.0f * u01(r.y), &sn, &cs);
    s *= expf(drift + vol * rad * cs);
    if (k + 1 < steps) s *= expf(drift + vol * rad * sn);
  }
  float p = fmaxf(s - strike, 0.0f);
  payoff[t] = p;
  acc[threadIdx.x] = (double)p;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) acc[threadIdx.x] += acc[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) block_mean[blockIdx.x] = acc[0] / blockDim.x * exp(-(double)mu);
}

// A +-1 walk of 64 steps per thread from the bits of four draws; end positions binned.
//@run {"grid": 2, "block": 128, "args": ["u32*129", "s32*256"]}
extern "C" __global__ void random_walk_histogram(unsigned* __restrict__ bins, int* __restrict__ ends) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  Philox4 r = philox4x32_10(Philox4{t, 0u, 4u, 0u}, 0xA4093822u, 0x299F31D0u);
  int up = __popc(r.x) + __popc(r.y);                  // 64 steps: position = 2*up - 64
  int pos = 2 * up - 64, lo = pos, hi = pos;
  unsigned bits = r.z;
  for (int k = 0; k < 32; ++k) {                       // and 32 more, tracking the range
    pos += (bits >> k) & 1u ? 1 : -1;
    lo = min(lo, pos);
    hi = max(hi, pos);
  }
  ends[t] = pos * 65536 + (hi - lo);
  atomicAdd(&bins[(pos + 96) >> 1], 1u);                // pos is even, in [-96, 96]
}

// Rejection sampling of the unit disc: draws until one is inside, at most 16 tries.
//@run {"grid": 1, "block": 128, "args": ["f32*256", "s32*128"]}
extern "C" __global__ void reject_in_disc(float* __restrict__ xy, int* __restrict__ tries) {
  unsigned t = threadIdx.x;
  float x = 0.f, y = 0.f;
  int k = 0;
  for (; k < 16; ++k) {
    Philox4 r = philox4x32_10(Philox4{t, (unsigned)k, 5u, 0u}, 0x082EFA98u, 0xEC4E6C89u);
    x = 2.0f * u01(r.x) - 1.0f;
    y = 2.0f * u01(r.y) - 1.0f;
    if (x * x + y * y < 1.0f && (r.z & 3u) != 0u) break;
  }
  xy[2 * t] = x;
  xy[2 * t + 1] = y;
  tries[t] = k;
}
