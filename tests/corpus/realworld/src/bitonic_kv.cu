// Bitonic sorts in shared memory: 64-bit keys with 32-bit values, descending floats in dynamic
// shared memory, and a register-only warp sort through __shfl_xor_sync.

//@run {"grid": 2, "block": 128, "args": ["u64*512", "u32*512", "u64*512"]}
extern "C" __global__ void bitonic_kv_u64(const unsigned long long* __restrict__ keys_in, unsigned* __restrict__ vals,
                                          unsigned long long* __restrict__ keys_out) {
  // 256 (key, value) pairs per block, 128 threads, ascending by key; value = original index
  __shared__ unsigned long long sk[256];
  __shared__ unsigned sv[256];
  int t = threadIdx.x, base = blockIdx.x * 256;
  sk[t] = keys_in[base + t];           sv[t] = t;
  sk[t + 128] = keys_in[base + t + 128]; sv[t + 128] = t + 128;
  __syncthreads();
  for (int size = 2; size <= 256; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      int i = 2 * t - (t & (stride - 1));
      int j = i + stride;
      bool up = (i & size) == 0;
      unsigned long long a = sk[i], b = sk[j];
      if ((a > b) == up) {
        sk[i] = b; sk[j] = a;
        unsigned x = sv[i]; sv[i] = sv[j]; sv[j] = x;
      }
      __syncthreads();
    }
  }
  keys_out[base + t] = sk[t];             vals[base + t] = sv[t];
  keys_out[base + t + 128] = sk[t + 128]; vals[base + t + 128] = sv[t + 128];
}

//@run {"grid": 1, "block": 256, "smem": 2048, "args": ["f32*512", "f32*512"]}
extern "C" __global__ void bitonic_desc_dynamic(const float* __restrict__ in, float* __restrict__ out) {
  extern __shared__ float s[];
  int n = 2 * blockDim.x, t = threadIdx.x;
  s[t] = in[t];
  s[t + blockDim.x] = in[t + blockDim.x];
  __syncthreads();
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      int i = 2 * t - (t & (stride - 1)), j = i + stride;
      bool desc = (i & size) == 0;
      float a = s[i], b = s[j];
      if ((a < b) == desc) { s[i] = b; s[j] = a; }
      __syncthreads();
    }
  }
  out[t] = s[t];
  out[t + blockDim.x] = s[t + blockDim.x];
}

//@run {"grid": 2, "block": 64, "args": ["s32*128", "s32*128"]}
extern "C" __global__ void warp_bitonic_shfl(const int* __restrict__ in, int* __restrict__ out) {
  // each warp sorts its 32 values in registers
  int lane = threadIdx.x & 31, i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  #pragma unroll
  for (int k = 2; k <= 32; k <<= 1) {
    #pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      int other = __shfl_xor_sync(0xffffffffu, v, j);
      bool lower = (lane & j) == 0;
      bool ascending = (lane & k) == 0;
      v = (lower == ascending) ? min(v, other) : max(v, other);
    }
  }
  out[i] = v;
}
