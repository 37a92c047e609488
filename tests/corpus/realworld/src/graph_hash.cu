// Irregular data structures as GPU graph and hashing code writes them: a level-synchronous
// BFS with a shared-memory frontier (atomicCAS to claim a vertex, atomicAdd for the queue
// tail), connected components by min-label propagation with pointer jumping (atomicMin on
// volatile labels until a fixed point), a shared-memory hash table with 64-bit atomicCAS and
// linear probing, a Bloom filter built with atomicOr, a warp-aggregated histogram grouped by
// __match_any_sync, and the "last block finishes the reduction" pattern with __threadfence and
// atomicInc. Every output is order-independent, so any legal interleaving gives the same bytes.
#include <stdint.h>

//@run {"grid": 1, "block": 128, "args": ["u32*1024%256", "s32*256"]}
extern "C" __global__ void bfs_levels(const unsigned* __restrict__ edges, int* level) {
  const int N = 256;                              // 4 out-edges per vertex: edges[v * 4 + e]
  __shared__ int frontier[2][N];
  __shared__ int count[2];
  for (int v = threadIdx.x; v < N; v += blockDim.x) level[v] = -1;
  __syncthreads();
  if (threadIdx.x == 0) { level[0] = 0; frontier[0][0] = 0; count[0] = 1; count[1] = 0; }
  __syncthreads();
  int cur = 0;
  for (int depth = 1; depth < N; ++depth) {
    int n = count[cur];
    if (n == 0) break;
    for (int i = threadIdx.x; i < n * 4; i += blockDim.x) {
      int u = frontier[cur][i >> 2];
      int w = edges[u * 4 + (i & 3)];
      if (atomicCAS(&level[w], -1, depth) == -1) {
        int slot = atomicAdd(&count[cur ^ 1], 1);
        frontier[cur ^ 1][slot] = w;
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) count[cur] = 0;
    cur ^= 1;
    __syncthreads();
  }
}

//@run {"grid": 1, "block": 256, "args": ["u32*512%256", "s32*256"]}
extern "C" __global__ void label_components(const unsigned* __restrict__ pairs, int* label) {
  __shared__ int changed;
  volatile int* L = label;
  int t = threadIdx.x;
  label[t] = t;
  int a = pairs[2 * t], b = pairs[2 * t + 1];     // one undirected edge per thread
  for (;;) {
    __syncthreads();
    if (t == 0) changed = 0;
    __syncthreads();
    int la = L[a], lb = L[b];
    if (la < lb && atomicMin(&label[b], la) > la) changed = 1;
    if (lb < la && atomicMin(&label[a], lb) > lb) changed = 1;
    __syncthreads();
    int l = L[t], ll = L[l];                      // pointer jumping
    if (ll < l && atomicMin(&label[t], ll) > ll) changed = 1;
    __syncthreads();
    if (changed == 0) break;
  }
}

//@run {"grid": 2, "block": 256, "args": ["u32*512%97", "u32*512"]}
extern "C" __global__ void hash_count(const unsigned* __restrict__ keys, unsigned* out) {
  __shared__ unsigned long long slot_key[256];
  __shared__ unsigned slot_count[256];
  int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  slot_key[t] = 0ull;
  slot_count[t] = 0u;
  __syncthreads();
  unsigned long long key = (keys[g] + 1ull) * 0x9E3779B97F4A7C15ull;
  unsigned h = (unsigned)(key >> 56);
  for (;;) {                                       // linear probing; 0 marks an empty slot
    unsigned long long prev = atomicCAS(&slot_key[h], 0ull, key);
    if (prev == 0ull || prev == key) break;
    h = (h + 1) & 255;
  }
  atomicAdd(&slot_count[h], 1u);
  __syncthreads();
  out[g] = slot_count[h] * 1000u + (unsigned)__popcll(key);
}

__device__ __forceinline__ unsigned mix(unsigned x, unsigned s) {
  x ^= s; x *= 0x85ebca6bu; x ^= x >> 13; x *= 0xc2b2ae35u; return x ^ (x >> 16);
}

//@run {"grid": 1, "block": 128, "args": ["u32*256", "u32*128", "u32*64"]}
extern "C" __global__ void bloom_filter(const unsigned* __restrict__ items, unsigned* bits, unsigned* hits) {
  __shared__ unsigned filter[64];                  // 2048 bits
  int t = threadIdx.x;
  if (t < 64) filter[t] = 0u;
  __syncthreads();
  for (int i = t; i < 256; i += blockDim.x) {
    unsigned x = items[i];
    for (int k = 0; k < 3; ++k) {
      unsigned bit = mix(x, 0x9e3779b9u * (k + 1)) & 2047u;
      atomicOr(&filter[bit >> 5], 1u << (bit & 31));
    }
  }
  __syncthreads();
  unsigned q = items[t] ^ (t & 1 ? 0x5bd1e995u : 0u);   // half present, half probably not
  bool maybe = true;
  for (int k = 0; k < 3; ++k) {
    unsigned bit = mix(q, 0x9e3779b9u * (k + 1)) & 2047u;
    maybe &= (filter[bit >> 5] >> (bit & 31)) & 1u;
  }
  unsigned votes = __ballot_sync(0xffffffffu, maybe);
  if ((t & 31) == 0) hits[t >> 5] = votes;
  bits[t] = filter[t & 63];
}

//@run {"grid": 2, "block": 128, "args": ["u32*256%24", "u32*32"]}
extern "C" __global__ void warp_aggregated_histogram(const unsigned* __restrict__ keys, unsigned* hist) {
  unsigned k = keys[blockIdx.x * blockDim.x + threadIdx.x];
  unsigned peers = __match_any_sync(0xffffffffu, k);
  int leader = __ffs(peers) - 1;
  if ((int)(threadIdx.x & 31) == leader) atomicAdd(&hist[k], (unsigned)__popc(peers));
}

__device__ unsigned blocks_done;                    // zero at module load

//@run {"grid": 6, "block": 64, "args": ["f32*384", "f32*8"]}
extern "C" __global__ void last_block_sum(const float* __restrict__ x, float* partial) {
  __shared__ float s[64];
  __shared__ bool last;
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * 64 + t];
  __syncthreads();
  for (int w = 32; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    unsigned ticket = atomicInc(&blocks_done, gridDim.x);
    last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (last && t == 0) {                             // the last block sums the partials in order
    volatile float* p = partial;
    float total = 0.f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += p[b];
    partial[gridDim.x] = total;
    partial[gridDim.x + 1] = (float)blocks_done;    // gridDim.x: atomicInc wraps only past it
  }
}

__device__ int ledger_lock;
__device__ unsigned long long ledger_total;

//@run {"grid": 4, "block": 64, "args": ["u32*256", "u64*2"]}
extern "C" __global__ void spin_lock_ledger(const unsigned* __restrict__ amounts, unsigned long long* out) {
  __shared__ unsigned block_sum;
  if (threadIdx.x == 0) block_sum = 0u;
  __syncthreads();
  atomicAdd(&block_sum, amounts[blockIdx.x * blockDim.x + threadIdx.x] & 0xffffu);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned ns = 8;
    while (atomicCAS(&ledger_lock, 0, 1) != 0) {   // one block at a time in the critical section
      __nanosleep(ns);
      if (ns < 256) ns *= 2;
    }
    __threadfence();
    volatile unsigned long long* total = &ledger_total;
    *total = *total + block_sum;                   // plain read-modify-write under the lock
    __threadfence();
    atomicExch(&ledger_lock, 0);
    atomicMax(&out[1], (unsigned long long)block_sum);
    atomicAdd(&out[0], (unsigned long long)block_sum);
  }
}
