// Privatised histograms: per-block shared-memory bins with shared atomics on bytes read as
// uchar4, per-warp sub-histograms merged with a block reduction, and 16-bit bins.

//@run {"grid": 2, "block": 128, "args": ["u8*4096", "u32*256"]}
extern "C" __global__ void byte_histogram_smem(const uchar4* __restrict__ data, unsigned* __restrict__ bins) {
  __shared__ unsigned local[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
  __syncthreads();
  const uchar4* d = data + blockIdx.x * 512;
  for (int i = threadIdx.x; i < 512; i += blockDim.x) {
    uchar4 v = d[i];
    atomicAdd(&local[v.x], 1u); atomicAdd(&local[v.y], 1u);
    atomicAdd(&local[v.z], 1u); atomicAdd(&local[v.w], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (local[i]) atomicAdd(&bins[i], local[i]);
}

//@run {"grid": 1, "block": 128, "args": ["u32*1024%64", "u32*64"]}
extern "C" __global__ void warp_private_histogram(const unsigned* __restrict__ keys, unsigned* __restrict__ bins) {
  __shared__ unsigned short sub[4][64];     // one 64-bin sub-histogram per warp, 16-bit counters
  int warp = threadIdx.x >> 5;
  for (int i = threadIdx.x & 31; i < 64; i += 32) sub[warp][i] = 0;
  __syncwarp();
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) {
    unsigned k = keys[i];
    unsigned peers = __match_any_sync(0xffffffffu, k);
    if ((threadIdx.x & 31) == __ffs(peers) - 1) sub[warp][k] += (unsigned short)__popc(peers);
    __syncwarp();
  }
  __syncthreads();
  if (threadIdx.x < 64)
    bins[threadIdx.x] = (unsigned)sub[0][threadIdx.x] + sub[1][threadIdx.x] + sub[2][threadIdx.x] + sub[3][threadIdx.x];
}
