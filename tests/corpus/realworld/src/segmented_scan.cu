// Segmented warp scans and warp-aggregated atomics with __match_any_sync, ballots and
// lane masks, as stream-compaction and group-by code writes them.

__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

//@run {"grid": 2, "block": 128, "args": ["u32*256%3", "s32*256%100", "s32*256"]}
extern "C" __global__ void warp_segmented_scan(const unsigned* __restrict__ keys, const int* __restrict__ vals,
                                               int* __restrict__ out) {
  // inclusive scan of vals within runs of equal consecutive keys
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  unsigned key = keys[i];
  int v = vals[i];
  unsigned prev = __shfl_up_sync(0xffffffffu, key, 1);
  bool head = lane == 0 || prev != key;
  unsigned heads = __ballot_sync(0xffffffffu, head) & (lanemask_lt() | (1u << lane));
  int start = 31 - __clz(heads);
  #pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    int y = __shfl_up_sync(0xffffffffu, v, o);
    if (lane - o >= start) v += y;
  }
  out[i] = v;
}

//@run {"grid": 2, "block": 128, "args": ["u32*256%6", "s32*256%50", "s32*6", "s32*256"]}
extern "C" __global__ void match_any_aggregate(const unsigned* __restrict__ keys, const int* __restrict__ vals,
                                               int* __restrict__ hist, int* __restrict__ rank) {
  // one atomic per distinct key per warp: the leader adds its peers' sum
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned key = keys[i];
  unsigned peers = __match_any_sync(__activemask(), key);
  int leader = __ffs(peers) - 1;
  int sum = __reduce_add_sync(peers, vals[i]);
  rank[i] = __popc(peers & lanemask_lt()) | (leader << 8);
  if ((threadIdx.x & 31) == leader) atomicAdd(&hist[key], sum);
}

//@run {"grid": 1, "block": 128, "args": ["u32*128%2", "u32*128%1000", "u32*128"]}
extern "C" __global__ void match_all_and_compact(const unsigned* __restrict__ flags, const unsigned* __restrict__ vals,
                                                 unsigned* __restrict__ out) {
  // warp-level stream compaction of flagged values; match_all on the warp's flag
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  bool keep = flags[threadIdx.x] != 0;
  unsigned ballot = __ballot_sync(0xffffffffu, keep);
  int all_same;
  unsigned m = __match_all_sync(0xffffffffu, keep ? 1u : 0u, &all_same);
  unsigned* base = out + warp * 32;
  if (keep) base[__popc(ballot & lanemask_lt())] = vals[threadIdx.x];
  if (!keep) base[__popc(ballot) + __popc(~ballot & lanemask_lt())] = 0xffff0000u | lane;
  if (lane == 0 && all_same) base[0] ^= m;
}

//@run {"grid": 1, "block": 256, "args": ["s32*256%2", "s32*256%20", "s32*256"]}
extern "C" __global__ void block_segmented_scan(const int* __restrict__ head_flags, const int* __restrict__ vals,
                                                int* __restrict__ out) {
  // block-wide segmented inclusive scan (Hillis-Steele on (flag, value) pairs in shared memory)
  __shared__ int sv[256], sf[256];
  int t = threadIdx.x;
  sv[t] = vals[t];
  sf[t] = head_flags[t] | (t == 0);
  __syncthreads();
  for (int o = 1; o < 256; o <<= 1) {
    int v = sv[t], f = sf[t];
    if (t >= o && !f) { v += sv[t - o]; f |= sf[t - o]; }
    __syncthreads();
    sv[t] = v; sf[t] = f;
    __syncthreads();
  }
  out[t] = sv[t];
}
