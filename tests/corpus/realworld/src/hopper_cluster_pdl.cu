// Hopper-generation launch features, with the fallback paths earlier arches compile: a
// compile-time cluster shape (__cluster_dims__) with a distributed-shared-memory histogram whose
// bins are owned by the cluster's CTAs, the cluster barrier split into arrive and wait around
// independent work, a 4-CTA tree reduction reading other CTAs' shared memory, programmatic
// dependent launch (griddepcontrol.wait / launch_dependents, as CUTLASS's kernels issue them),
// and cooperative groups' invoke_one / invoke_one_broadcast (elect.sync on sm_90).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <stdint.h>
namespace cg = cooperative_groups;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define HOPPER 1
#define CLUSTER_OF_2 __cluster_dims__(2, 1, 1)
#else
#define HOPPER 0
#define CLUSTER_OF_2
#endif

// 64 bins, two CTAs per cluster: CTA r owns bins [32r, 32r+32); each CTA counts its 256 bytes
// into the owner's shared bins through map_shared_rank, then the owners write their halves.
//@run {"grid": 4, "block": 128, "args": ["u8*1024%64", "u32*256"]}
extern "C" __global__ void CLUSTER_OF_2 dsmem_histogram(const uint8_t* __restrict__ in, unsigned* __restrict__ hist) {
  __shared__ unsigned bins[64];
  int t = threadIdx.x;
  if (t < 64) bins[t] = 0;
#if HOPPER
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  for (int i = t; i < 256; i += 128) {
    unsigned v = in[blockIdx.x * 256 + i];
    unsigned owner = v / 32;
    unsigned* remote = cluster.map_shared_rank(bins, owner);
    atomicAdd(&remote[v], 1u);
  }
  cluster.sync();
  unsigned rank = cluster.block_rank();
  unsigned cluster_id = blockIdx.x / 2;
  if (t < 32) hist[cluster_id * 64 + rank * 32 + t] = bins[rank * 32 + t];
#else
  __syncthreads();
  for (int i = t; i < 256; i += 128) atomicAdd(&bins[in[blockIdx.x * 256 + i]], 1u);
  __syncthreads();
  if (t < 64) atomicAdd(&hist[(blockIdx.x / 2) * 64 + t], bins[t]);
#endif
}

// Each CTA publishes a tile, arrives at the cluster barrier, does work that needs no one
// else's data (a local prefix sum), then waits and blends its neighbour's tile in.
//@run {"grid": 4, "block": 64, "cluster": [2, 1, 1], "args": ["f32*256", "f32*256"]}
extern "C" __global__ void cluster_split_barrier(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[64];
  __shared__ float scan[64];
  int t = threadIdx.x;
  float v = in[blockIdx.x * 64 + t];
  tile[t] = v;
#if HOPPER
  cg::cluster_group cluster = cg::this_cluster();
  auto token = cluster.barrier_arrive();
#else
  __syncthreads();
#endif
  scan[t] = v;
  __syncthreads();
  for (int off = 1; off < 64; off <<= 1) {
    float add = t >= off ? scan[t - off] : 0.0f;
    __syncthreads();
    scan[t] += add;
    __syncthreads();
  }
#if HOPPER
  cluster.barrier_wait(std::move(token));
  const float* other = cluster.map_shared_rank(tile, cluster.block_rank() ^ 1u);
  float w = other[63 - t];
  cluster.sync();      // no CTA leaves while its tile may still be read
#else
  float w = tile[63 - t];
#endif
  out[blockIdx.x * 64 + t] = scan[t] * 0.125f + w;
}

// A 4-CTA cluster sums 4 x 128 values: every CTA reduces its own, then rank 0 reads the three
// others' partial sums out of their shared memory; 64-bit integer sums (no rounding-order
// differences between CTAs).
//@run {"grid": 8, "block": 128, "cluster": [4, 1, 1], "args": ["s64*1024%100000", "s64*2", "u32*8"]}
extern "C" __global__ void cluster_tree_reduce(const long long* __restrict__ in, long long* __restrict__ out,
                                               unsigned* __restrict__ ranks) {
  __shared__ long long partial[4];
  __shared__ long long total;
  int t = threadIdx.x, warp = t >> 5;
  long long v = in[blockIdx.x * 128 + t];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((t & 31) == 0) partial[warp] = v;
  __syncthreads();
  if (t == 0) total = partial[0] + partial[1] + partial[2] + partial[3];
#if HOPPER
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  unsigned rank = cluster.block_rank();
  if (rank == 0 && t < 32) {
    long long s = t < (int)cluster.num_blocks() ? *cluster.map_shared_rank(&total, (unsigned)t) : 0;
    for (int off = 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (t == 0) out[blockIdx.x / 4] = s;
  }
  if (t == 0) ranks[blockIdx.x] = rank | (cluster.dim_blocks().x << 8) | (cluster.block_index().x << 16);
  cluster.sync();
#else
  __syncthreads();
  if (t == 0) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&out[blockIdx.x / 4]), (unsigned long long)total);
    ranks[blockIdx.x] = (blockIdx.x & 3) | (4u << 8) | ((blockIdx.x & 3) << 16);
  }
#endif
}

// Programmatic dependent launch: the prologue (loading this kernel's own parameters) runs
// before griddepcontrol.wait, the reads of the previous kernel's output after it, and the
// dependents are released once this kernel's stores are issued.
//@run {"grid": 2, "block": 128, "args": ["f32*256", "f32*256", "f32*256", "f32=0.5"]}
extern "C" __global__ void pdl_scale_add(const float* __restrict__ weights, const float* __restrict__ prev,
                                         float* __restrict__ out, float alpha) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float w = weights[i] * alpha;
#if HOPPER
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  float p = prev[i];
  out[i] = fmaf(w, p, p * p);
#if HOPPER
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// invoke_one: one elected lane of each warp bumps a per-block counter and everyone gets the
// returned ticket (invoke_one_broadcast); then one thread of the block writes a summary.
//@run {"grid": 2, "block": 128, "args": ["s32*256", "u32*8", "s32*256"]}
extern "C" __global__ void elected_tickets(const int* __restrict__ in, unsigned* __restrict__ summary,
                                           int* __restrict__ out) {
  __shared__ unsigned counter;
  __shared__ int warp_sums[4];
  cg::thread_block block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  if (block.thread_rank() == 0) counter = 0;
  block.sync();
  int v = in[blockIdx.x * 128 + threadIdx.x];
  int s = cg::reduce(warp, v, cg::plus<int>());
  unsigned ticket = cg::invoke_one_broadcast(warp, [&] { return atomicAdd(&counter, 1u); });
  cg::invoke_one(warp, [&] { warp_sums[ticket] = s; });
  block.sync();
  out[blockIdx.x * 128 + threadIdx.x] = v - warp_sums[ticket] / 32;
  cg::invoke_one(block, [&] {
    summary[blockIdx.x * 4] = counter;
    summary[blockIdx.x * 4 + 1] = (unsigned)(warp_sums[0] + warp_sums[1] + warp_sums[2] + warp_sums[3]);
    summary[blockIdx.x * 4 + 2] = (unsigned)max(max(warp_sums[0], warp_sums[1]), max(warp_sums[2], warp_sums[3]));
    summary[blockIdx.x * 4 + 3] = (unsigned)min(min(warp_sums[0], warp_sums[1]), min(warp_sums[2], warp_sums[3]));
  });
}
