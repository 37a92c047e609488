// Timing and scheduling intrinsics (clock64, %globaltimer, __nanosleep, __syncwarp,
// __threadfence) whose results the kernels only compare, and cooperative groups' reduce with
// other operators, labeled/binary partitions and thread_block_tile<4> shuffles.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128", "u32*128"]}
extern "C" __global__ void timed_backoff(const float* __restrict__ in, float* __restrict__ out, unsigned* __restrict__ flags) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  long long c0 = clock64();
  unsigned long long g0 = globaltimer();
  unsigned ns = 8;
  for (int k = 0; k < 3; ++k) { __nanosleep(ns); ns <<= 1; }
  float v = in[i] * 2.0f + 1.0f;
  __syncwarp();
  long long c1 = clock64();
  unsigned long long g1 = globaltimer();
  unsigned c32 = clock();
  out[i] = v;
  __threadfence();
  flags[i] = (c1 >= c0) | ((g1 >= g0) << 1) | ((c32 != 0xdeadbeefu) << 2) | (ns << 3);
}

//@run {"grid": 1, "block": 128, "args": ["s32*128", "s32*128", "u32*128"]}
extern "C" __global__ void cg_reduce_operators(const int* __restrict__ in, int* __restrict__ out, unsigned* __restrict__ bits) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(block);
  int v = in[block.thread_rank()];
  int mx = cg::reduce(tile, v, cg::greater<int>());
  int mn = cg::reduce(tile, v, cg::less<int>());
  unsigned an = cg::reduce(tile, (unsigned)v, cg::bit_and<unsigned>());
  unsigned orr = cg::reduce(tile, (unsigned)v, cg::bit_or<unsigned>());
  int ex = cg::exclusive_scan(tile, v & 0xff, cg::plus<int>());
  out[block.thread_rank()] = (mx ^ mn) + ex;
  bits[block.thread_rank()] = an ^ (orr >> 1);
}

//@run {"grid": 1, "block": 64, "args": ["u32*64%4", "s32*64%100", "s32*64"]}
extern "C" __global__ void cg_labeled_partitions(const unsigned* __restrict__ labels, const int* __restrict__ vals, int* __restrict__ out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  unsigned lab = labels[threadIdx.x];
  int v = vals[threadIdx.x];
  cg::coalesced_group part = cg::labeled_partition(tile, lab);
  int sum = cg::reduce(part, v, cg::plus<int>());
  cg::coalesced_group halves = cg::binary_partition(tile, v >= 50);
  int mx = cg::reduce(halves, v, cg::greater<int>());
  out[threadIdx.x] = sum * 1000 + mx * 10 + (int)part.thread_rank() + (int)halves.size() * 100000;
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*64"]}
extern "C" __global__ void tile4_shuffles(const float* __restrict__ in, float* __restrict__ out) {
  auto t4 = cg::tiled_partition<4>(cg::this_thread_block());
  float v = in[threadIdx.x];
  float left = t4.shfl_up(v, 1), right = t4.shfl_down(v, 1), first = t4.shfl(v, 0), x = t4.shfl_xor(v, 2);
  t4.sync();
  out[threadIdx.x] = (t4.thread_rank() == 0 ? 0.0f : left) + 2.0f * right + 3.0f * first + 4.0f * x + (float)t4.meta_group_rank();
}
