// Hopper-style bulk copies through libcu++: cuda::memcpy_async into shared memory completed on
// a cuda::barrier (on sm_90 a cp.async.bulk with mbarrier expect_tx; earlier targets fall back
// to per-thread copies), a two-stage double-buffered loop over tiles, cuda::aligned_size_t
// sizes, and an arrive/wait split with work between.
#include <cuda/barrier>
#include <cuda/std/utility>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;
using barrier_t = cuda::barrier<cuda::thread_scope_block>;

//@run {"grid": 2, "block": 64, "args": ["f32*256", "f32*256"]}
extern "C" __global__ void bulk_tile_scale(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ alignas(128) float tile[128];
  __shared__ barrier_t bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  const float* src = in + blockIdx.x * 128;
  if (block.thread_rank() == 0)
    cuda::memcpy_async(tile, src, cuda::aligned_size_t<16>(sizeof(float) * 128), bar);
  bar.arrive_and_wait();
  int t = threadIdx.x;
  out[blockIdx.x * 128 + t] = tile[t] * 2.0f + tile[127 - t];
  out[blockIdx.x * 128 + 64 + t] = tile[64 + t] - tile[t];
}

//@run {"grid": 1, "block": 32, "args": ["s32*1024", "s32*32"]}
extern "C" __global__ void double_buffered_sum(const int* __restrict__ in, int* __restrict__ out) {
  __shared__ alignas(128) int buf[2][128];
  __shared__ barrier_t bars[2];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) { init(&bars[0], block.size()); init(&bars[1], block.size()); }
  block.sync();
  int acc = 0;
  const int tiles = 8;
  if (block.thread_rank() == 0)
    cuda::memcpy_async(buf[0], in, cuda::aligned_size_t<16>(sizeof(int) * 128), bars[0]);
  for (int k = 0; k < tiles; ++k) {
    int cur = k & 1;
    if (k + 1 < tiles && block.thread_rank() == 0)
      cuda::memcpy_async(buf[cur ^ 1], in + (k + 1) * 128, cuda::aligned_size_t<16>(sizeof(int) * 128), bars[cur ^ 1]);
    bars[cur].arrive_and_wait();
    for (int j = threadIdx.x; j < 128; j += 32) acc += buf[cur][j] * (k + 1);
    block.sync();           // the buffer is refilled next round
  }
  out[threadIdx.x] = acc;
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*64"]}
extern "C" __global__ void split_arrive_wait(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ barrier_t bar;
  __shared__ float partial[64];
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  int t = threadIdx.x;
  partial[t] = in[t] * in[t];
  auto token = bar.arrive();
  float local = sqrtf(fabsf(in[t])) + 1.0f;    // work between arrive and wait
  bar.wait(cuda::std::move(token));
  out[t] = partial[(t + 1) & 63] + local;
}
