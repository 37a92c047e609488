// Persistent-thread and queue patterns as graph, ray-tracing and task runtimes write them: a
// persistent kernel whose warps take variable-cost work items from a global atomic counter
// until it runs dry (per-item results, so any schedule writes the same bytes), a
// warp-aggregated append under divergence (__activemask, __ffs, __popc of the lower lanes) whose
// slot order is made canonical by a per-item count, a single-producer/multi-consumer ring in
// global memory with per-slot sequence numbers between the warps of a block, and a
// ticket lock that serialises blocks in arrival order to build an order-free checksum.

__device__ unsigned work_next;

// Work item i iterates a Collatz-like map (item-dependent trip count) and records the steps.
//@run {"grid": 2, "block": 64, "args": ["u32*300", "u32*300", "u32*2", "s32=300"]}
extern "C" __global__ void persistent_collatz(const unsigned* __restrict__ seeds, unsigned* __restrict__ steps,
                                              unsigned* __restrict__ per_block, int items) {
  unsigned lane = threadIdx.x & 31, done = 0;
  while (true) {
    unsigned base = 0;
    if (lane == 0) base = atomicAdd(&work_next, 32u);     // a warp takes 32 items at a time
    base = __shfl_sync(0xffffffffu, base, 0);
    if (base >= (unsigned)items) break;
    unsigned i = base + lane;
    if (i < (unsigned)items) {
      unsigned x = (seeds[i] & 0xffffu) | 1u, n = 0;
      while (x != 1u && n < 200u) {
        x = (x & 1u) ? 3u * x + 1u : x >> 1;
        ++n;
      }
      steps[i] = n;
      ++done;
    }
  }
  unsigned warp_done = __reduce_add_sync(0xffffffffu, done);
  if (lane == 0) atomicAdd(&per_block[0], warp_done);
  if (threadIdx.x == 0) atomicMax(&per_block[1], blockIdx.x + 1);
}

__device__ unsigned append_tail;          // low 16 bits: items appended; high: blocks finished
__device__ unsigned append_queue[256];

// Items whose value passes a filter are appended with one atomic per warp to a queue in a
// module variable; the last block counts the queue's values per bucket (the slots' order
// depends on the schedule, the counts do not), and each block writes how many it appended.
//@run {"grid": 4, "block": 64, "args": ["u32*256", "u32*16", "u32*4"]}
extern "C" __global__ void warp_aggregated_append(const unsigned* __restrict__ in, unsigned* __restrict__ bucket_counts,
                                                  unsigned* __restrict__ appended) {
  unsigned* queue = append_queue;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, x = in[i];
  __shared__ unsigned block_count;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  if (x % 5u < 2u) {                                     // a divergent subset of each warp
    unsigned active = __activemask();
    unsigned leader = __ffs(active) - 1;
    unsigned lane = threadIdx.x & 31;
    unsigned rank = __popc(active & ((1u << lane) - 1u));
    unsigned slot = 0;
    if (lane == leader) {
      slot = atomicAdd(&append_tail, (unsigned)__popc(active)) & 0xffffu;
      atomicAdd(&block_count, (unsigned)__popc(active));
    }
    slot = __shfl_sync(active, slot, leader) + rank;
    queue[slot] = x;
  }
  __syncthreads();
  __threadfence();
  if (threadIdx.x == 0) appended[blockIdx.x] = block_count;
  __syncthreads();
  __shared__ bool last;
  __shared__ unsigned total;
  if (threadIdx.x == 0) {
    __threadfence();
    unsigned ticket = atomicAdd(&append_tail, 0x10000u) >> 16;
    last = ticket == gridDim.x - 1;
    total = atomicAdd(&append_tail, 0u) & 0xffffu;
  }
  __syncthreads();
  if (last) {
    for (unsigned k = threadIdx.x; k < total; k += blockDim.x) atomicAdd(&bucket_counts[queue[k] & 15u], 1u);
  }
}

#define RING 8
__device__ unsigned ring_seq[2][RING];
__device__ unsigned ring_data[2][RING];
__device__ unsigned ring_claim[2];

// Inside each block (warps of one CTA are resident together; CTAs need not be), lane 0 of
// warp 0 produces 64 items into an 8-slot ring in global memory; lane 0 of the other warps
// consume (each item claimed once by an atomic ticket) and write results by item index.
//@run {"grid": 2, "block": 96, "args": ["u32*128", "u32*128", "u32*8"]}
extern "C" __global__ void ring_producer_consumer(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                                  unsigned* __restrict__ stats) {
  unsigned warp = threadIdx.x >> 5, b = blockIdx.x;
  volatile unsigned* seq = ring_seq[b];
  volatile unsigned* data = ring_data[b];
  const unsigned items = 64;
  if ((threadIdx.x & 31) != 0) return;
  if (warp == 0) {
    for (unsigned k = 0; k < items; ++k) {
      unsigned s = k % RING;
      while (seq[s] != 2u * (k / RING)) {               // slot free: consumed for the last round
      }
      data[s] = in[b * items + k] * 2654435761u;
      __threadfence();
      seq[s] = 2u * (k / RING) + 1u;                    // full for round k / RING
    }
    stats[4 * b] = items;
    return;
  }
  unsigned mine = 0;
  while (true) {
    unsigned k = atomicAdd(&ring_claim[b], 1u);
    if (k >= items) break;
    unsigned s = k % RING;
    while (seq[s] != 2u * (k / RING) + 1u) {
    }
    __threadfence();
    out[b * items + k] = data[s] ^ k;
    __threadfence();
    seq[s] = 2u * (k / RING) + 2u;                      // free for the next round
    ++mine;
  }
  atomicAdd(&stats[4 * b + 1], mine);
  atomicMax(&stats[4 * b + 2], warp);
}

__device__ unsigned ticket_next, ticket_serving;
__device__ unsigned long long chain_hash;

// Blocks enter a critical section in ticket order (a hash chained in a module variable); the
// outputs are order-free combinations of the block sums (a sum and an xor).
//@run {"grid": 4, "block": 64, "args": ["u32*256", "u64*2"]}
extern "C" __global__ void ticket_lock_fold(const unsigned* __restrict__ in, unsigned long long* __restrict__ out) {
  __shared__ unsigned s[64];
  s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x] >> 8;
  __syncthreads();
  for (unsigned h = 32; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    unsigned my = atomicAdd(&ticket_next, 1u);
    volatile unsigned* serving = &ticket_serving;
    while (*serving != my) __nanosleep(64);
    __threadfence();
    volatile unsigned long long* h = &chain_hash;
    *h = (*h + s[0]) ^ ((unsigned long long)s[0] << 32);
    __threadfence();
    *serving = my + 1;
    atomicAdd(&out[0], (unsigned long long)s[0]);
    atomicXor(&out[1], (unsigned long long)s[0] * 0x9E3779B97F4A7C15ull);
  }
}
