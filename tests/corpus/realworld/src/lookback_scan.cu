// Single-pass prefix scans across blocks as CUB-style and hand-written libraries write them:
// decoupled look-back (each tile publishes its aggregate, then its inclusive prefix, in a
// 64-bit status word: flag in the high bits, value in the low; a warp reads a window of 32
// predecessors, spins while any is unpublished, finds the nearest prefix with a ballot and
// __clz and adds the aggregates after it), tile ids taken in launch order from an atomic
// counter (so a waiting tile's predecessors have started), a stream compaction on the same
// scheme with cuda::atomic_ref acquire/release, and a chained scan of 64-bit sums with a
// __nanosleep back-off. Inputs are small integers: the sums are exact in any order.
#include <cuda/atomic>

#define FLAG_AGG 1ull
#define FLAG_PREFIX 2ull

__device__ __forceinline__ unsigned long long pack_status(unsigned long long flag, unsigned value) {
  return (flag << 62) | value;
}

__device__ __forceinline__ int warp_inclusive_sum(int v) {
  unsigned lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    int u = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += u;
  }
  return v;
}

__device__ __forceinline__ int warp_sum(int v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

// Block-wide inclusive scan of one value per thread (blockDim.x a multiple of 32, <= 1024).
__device__ int block_inclusive_sum(int v, int* warp_totals, int* total) {
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int s = warp_inclusive_sum(v);
  if (lane == 31) warp_totals[warp] = s;
  __syncthreads();
  if (warp == 0) {
    int t = lane < warps ? warp_totals[lane] : 0;
    int ts = warp_inclusive_sum(t);
    if (lane < warps) warp_totals[lane] = ts - t;        // exclusive prefix of the warps
    if (lane == warps - 1) *total = ts;
  }
  __syncthreads();
  return s + warp_totals[warp];
}

// The look-back itself, by warp 0 of a tile: the sum of every item before tile `tile`.
__device__ unsigned look_back(volatile unsigned long long* status, int tile) {
  unsigned lane = threadIdx.x & 31;
  unsigned exclusive = 0;
  int window_end = tile;                                  // predecessors [window_end - 32, window_end)
  while (window_end > 0) {
    int pred = window_end - 32 + (int)lane;
    unsigned long long s;
    do {
      s = pred >= 0 ? status[pred] : pack_status(FLAG_PREFIX, 0u);
    } while (__any_sync(0xffffffffu, (s >> 62) == 0));
    unsigned prefix_lanes = __ballot_sync(0xffffffffu, (s >> 62) == FLAG_PREFIX);
    // the highest lane holding a prefix stops the walk; lanes above it contribute aggregates
    int stop = prefix_lanes ? 31 - __clz(prefix_lanes) : -1;
    int mine = (int)lane >= stop ? (int)(unsigned)s : 0;
    exclusive += (unsigned)warp_sum(mine);
    if (stop >= 0) break;
    window_end -= 32;
  }
  return exclusive;
}

__device__ unsigned scan_tile_counter;
__device__ unsigned long long scan_status[64];

//@run {"grid": 12, "block": 128, "args": ["s32*6144%100", "s32*6144"]}
extern "C" __global__ void lookback_inclusive_scan(const int* __restrict__ in, int* __restrict__ out) {
  constexpr int ITEMS = 4;
  __shared__ int tile_id, warp_totals[32], total;
  __shared__ unsigned tile_prefix;
  if (threadIdx.x == 0) tile_id = (int)atomicAdd(&scan_tile_counter, 1u);
  __syncthreads();
  int tile = tile_id;
  int base = (tile * blockDim.x + threadIdx.x) * ITEMS;
  int4 v = *reinterpret_cast<const int4*>(in + base);
  int local = v.x + v.y + v.z + v.w;
  int incl = block_inclusive_sum(local, warp_totals, &total);
  volatile unsigned long long* status = scan_status;
  if (threadIdx.x == 0) {
    status[tile] = pack_status(tile == 0 ? FLAG_PREFIX : FLAG_AGG, (unsigned)total);
    __threadfence();
  }
  if (threadIdx.x < 32) {
    unsigned ex = tile == 0 ? 0u : look_back(status, tile);
    if (threadIdx.x == 0) {
      tile_prefix = ex;
      if (tile != 0) {
        __threadfence();
        status[tile] = pack_status(FLAG_PREFIX, ex + (unsigned)total);
      }
    }
  }
  __syncthreads();
  int run = (int)tile_prefix + incl - local;
  int4 r;
  r.x = run += v.x; r.y = run += v.y; r.z = run += v.z; r.w = run += v.w;
  *reinterpret_cast<int4*>(out + base) = r;
}

__device__ unsigned compact_tile_counter;
__device__ unsigned long long compact_status[32];

// Keep the items whose low bits say so, in order; the last tile writes the total count.
//@run {"grid": 8, "block": 64, "args": ["u32*512", "u32*512", "u32*2"]}
extern "C" __global__ void lookback_compact(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                            unsigned* __restrict__ count) {
  __shared__ int tile_id, warp_totals[32], total;
  __shared__ unsigned tile_prefix;
  if (threadIdx.x == 0) tile_id = (int)atomicAdd(&compact_tile_counter, 1u);
  __syncthreads();
  int tile = tile_id;
  unsigned x = in[tile * blockDim.x + threadIdx.x];
  int keep = (x % 3u) == 1u;
  int incl = block_inclusive_sum(keep, warp_totals, &total);
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> st(compact_status[tile]);
    st.store(pack_status(tile == 0 ? FLAG_PREFIX : FLAG_AGG, (unsigned)total), cuda::std::memory_order_release);
    unsigned ex = 0;
    for (int p = tile - 1; p >= 0; --p) {                 // one thread, one predecessor at a time
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> ps(compact_status[p]);
      unsigned long long s;
      while (((s = ps.load(cuda::std::memory_order_acquire)) >> 62) == 0) {
      }
      ex += (unsigned)s;
      if ((s >> 62) == FLAG_PREFIX) break;
    }
    if (tile != 0) st.store(pack_status(FLAG_PREFIX, ex + (unsigned)total), cuda::std::memory_order_release);
    tile_prefix = ex;
    if (tile == (int)gridDim.x - 1) { count[0] = ex + (unsigned)total; count[1] = gridDim.x; }
  }
  __syncthreads();
  if (keep) out[tile_prefix + incl - 1] = x;
}

__device__ unsigned chain_tile_counter;
__device__ unsigned long long chain_prefix[16];
__device__ unsigned chain_ready[16];

// A chained scan: each tile waits for its predecessor's inclusive prefix only.
//@run {"grid": 6, "block": 96, "args": ["u32*576", "u64*576"]}
extern "C" __global__ void chained_scan_u64(const unsigned* __restrict__ in, unsigned long long* __restrict__ out) {
  __shared__ int tile_id;
  __shared__ unsigned long long part[96], carry;
  if (threadIdx.x == 0) tile_id = (int)atomicAdd(&chain_tile_counter, 1u);
  __syncthreads();
  int tile = tile_id;
  unsigned long long v = in[tile * blockDim.x + threadIdx.x] >> 4;     // 28-bit values
  part[threadIdx.x] = v;
  __syncthreads();
  for (unsigned d = 1; d < blockDim.x; d <<= 1) {                    // Hillis-Steele in shared memory
    unsigned long long add = threadIdx.x >= d ? part[threadIdx.x - d] : 0ull;
    __syncthreads();
    part[threadIdx.x] += add;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    unsigned long long c = 0;
    if (tile > 0) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> ready(chain_ready[tile - 1]);
      unsigned ns = 32;
      while (ready.load(cuda::std::memory_order_acquire) == 0u) {
        __nanosleep(ns);
        ns = ns < 1024 ? ns * 2 : ns;
      }
      c = chain_prefix[tile - 1];
    }
    chain_prefix[tile] = c + part[blockDim.x - 1];
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(chain_ready[tile]).store(1u, cuda::std::memory_order_release);
    carry = c;
  }
  __syncthreads();
  out[tile * blockDim.x + threadIdx.x] = carry + part[threadIdx.x];
}
