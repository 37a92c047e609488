// Thread-block clusters (sm_90+): distributed shared memory through cooperative_groups'
// cluster API (this_cluster, map_shared_rank, sync, an atomic on another CTA's counter),
// launched as 2x1x1 / 2x2x1 clusters ("cluster" in the run annotation). Earlier archs
// have no clusters: there each block works on its own shared memory.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

//@run {"grid": 4, "block": 128, "cluster": [2, 1, 1], "args": ["f32*512", "f32*512", "u32*4"]}
extern "C" __global__ void cluster_pair_blend(const float* in, float* out, unsigned* counts) {
  __shared__ float tile[128];
  __shared__ unsigned hits;
  unsigned t = threadIdx.x;
  if (t == 0) hits = 0;
  tile[t] = in[blockIdx.x * 128 + t];
#if __CUDA_ARCH__ >= 900
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  unsigned partner = cluster.block_rank() ^ 1u;
  const float* other = cluster.map_shared_rank(tile, partner);
  float v = 0.75f * tile[t] + 0.25f * other[127 - t];
  if (v > 0.0f) atomicAdd(cluster.map_shared_rank(&hits, partner), 1u);
  cluster.sync();
#else
  __syncthreads();
  float v = 0.75f * tile[t] + 0.25f * tile[127 - t];
  if (v > 0.0f) atomicAdd(&hits, 1u);
  __syncthreads();
#endif
  out[blockIdx.x * 128 + t] = v;
  if (t == 0) counts[blockIdx.x] = hits;
}

//@run {"grid": [4, 2], "block": 64, "cluster": [2, 2, 1], "args": ["s32*512%100", "s32*512"]}
extern "C" __global__ void cluster_quad_sum(const int* in, int* out) {
  __shared__ int tile[64];
  unsigned t = threadIdx.x;
  unsigned cta = blockIdx.y * gridDim.x + blockIdx.x;
  tile[t] = in[cta * 64 + t];
#if __CUDA_ARCH__ >= 900
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  int s = 0;
  for (unsigned r = 0; r < cluster.num_blocks(); ++r)
    s += cluster.map_shared_rank(tile, r)[(t + r) % 64] << r;
  cluster.sync();
#else
  __syncthreads();
  int s = tile[t] * 15;
#endif
  out[cta * 64 + t] = s;
}
