// Cooperative groups: tiled partitions, cg::reduce / cg::inclusive_scan, coalesced groups.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

//@run {"grid": 2, "block": 128, "args": ["f32*256", "f32*2"]}
extern "C" __global__ void tile_reduce_sum(const float* in, float* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ float partial[4];
  float v = in[block.group_index().x * 128 + block.thread_rank()];
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = v;
  block.sync();
  if (block.thread_rank() == 0) out[block.group_index().x] = partial[0] + partial[1] + partial[2] + partial[3];
}

//@run {"grid": 1, "block": 64, "args": ["s32*64", "s32*64"]}
extern "C" __global__ void tile16_scan(const int* in, int* out) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  int r = cg::inclusive_scan(tile, in[threadIdx.x]);
  out[threadIdx.x] = r;
}

//@run {"grid": 1, "block": 64, "args": ["u32*64", "u32*64"]}
extern "C" __global__ void tile_shuffle_ops(const unsigned* in, unsigned* out) {
  auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  unsigned v = in[threadIdx.x];
  unsigned a = tile.shfl_down(v, 1) + tile.shfl_xor(v, 3) * 3u + tile.shfl(v, 0);
  unsigned b = tile.ballot(v & 1) | (tile.any(v > 100u) << 8) | (tile.all(v != 0) << 9);
  out[threadIdx.x] = a ^ (b << 12) ^ cg::reduce(tile, v, cg::bit_xor<unsigned>());
}

//@run {"grid": 1, "block": 64, "args": ["s32*64%8", "u32*64", "u32*64"]}
extern "C" __global__ void coalesced_append(const int* in, unsigned* counter_out, unsigned* rank_out) {
  __shared__ unsigned counter;
  if (threadIdx.x == 0) counter = 0;
  __syncthreads();
  unsigned rank = 0xffffffffu;
  if (in[threadIdx.x] > 3) {
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(&counter, g.size());
    base = g.shfl(base, 0);
    rank = base + g.thread_rank() - base;  // order-independent part of the slot
    rank = g.thread_rank() + 1000u * g.size();
  }
  __syncthreads();
  rank_out[threadIdx.x] = rank;
  counter_out[threadIdx.x] = counter;
}
