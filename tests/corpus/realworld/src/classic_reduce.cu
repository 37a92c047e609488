// Classic hand-written reductions: shared-memory tree, warp-unrolled, templated block size.
template <unsigned BS>
__device__ void warp_reduce(volatile float* s, unsigned t) {
  if (BS >= 64) s[t] += s[t + 32];
  s[t] += s[t + 16]; s[t] += s[t + 8]; s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];
}

template <unsigned BS>
__device__ void reduce_block(const float* in, float* out, unsigned n) {
  __shared__ float s[BS];
  unsigned t = threadIdx.x, i = blockIdx.x * BS * 2 + t;
  float v = 0.0f;
  if (i < n) v = in[i];
  if (i + BS < n) v += in[i + BS];
  s[t] = v;
  __syncthreads();
  for (unsigned k = BS / 2; k > 32; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t < 32) warp_reduce<BS>(s, t);
  if (t == 0) out[blockIdx.x] = s[0];
}

//@run {"grid": 2, "block": 128, "args": ["f32*500", "f32*2", "u32=500"]}
extern "C" __global__ void reduce6_128(const float* in, float* out, unsigned n) { reduce_block<128>(in, out, n); }

//@run {"grid": 1, "block": 64, "args": ["f32*128", "f32*1", "u32=128"]}
extern "C" __global__ void reduce6_64(const float* in, float* out, unsigned n) { reduce_block<64>(in, out, n); }

//@run {"grid": 2, "block": 64, "args": ["s64*128", "s64*2"]}
extern "C" __global__ void reduce_i64_shfl(const long long* in, long long* out) {
  __shared__ long long warp_sums[2];
  long long v = in[blockIdx.x * 64 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = warp_sums[0] + warp_sums[1];
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "s32*1"]}
extern "C" __global__ void argmax_block(const float* in, int* idx) {
  __shared__ float sv[64]; __shared__ int si[64];
  sv[threadIdx.x] = in[threadIdx.x]; si[threadIdx.x] = threadIdx.x;
  __syncthreads();
  for (int k = 32; k > 0; k >>= 1) {
    if (threadIdx.x < k && sv[threadIdx.x + k] > sv[threadIdx.x]) {
      sv[threadIdx.x] = sv[threadIdx.x + k]; si[threadIdx.x] = si[threadIdx.x + k];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) idx[0] = si[0];
}
