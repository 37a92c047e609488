// Asynchronous copies to shared memory: cuda::memcpy_async with cuda::barrier and
// cuda::pipeline, and the __pipeline primitives.
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128"]}
extern "C" __global__ void barrier_copy_scale(const float* in, float* out) {
  __shared__ float tile[64];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, in + blockIdx.x * 64, sizeof(float) * 64, bar);
  bar.arrive_and_wait();
  out[blockIdx.x * 64 + threadIdx.x] = tile[63 - threadIdx.x] * 0.5f;
}

//@run {"grid": 1, "block": 32, "args": ["s32*256", "s32*32"]}
extern "C" __global__ void pipeline_double_buffer(const int* in, int* out) {
  __shared__ int buf[2][32];
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  int acc = 0;
  pipe.producer_acquire();
  cuda::memcpy_async(&buf[0][threadIdx.x], &in[threadIdx.x], sizeof(int), pipe);
  pipe.producer_commit();
  for (int stage = 0; stage < 8; ++stage) {
    if (stage + 1 < 8) {
      pipe.producer_acquire();
      cuda::memcpy_async(&buf[(stage + 1) & 1][threadIdx.x], &in[(stage + 1) * 32 + threadIdx.x], sizeof(int), pipe);
      pipe.producer_commit();
    }
    if (stage + 1 < 8)
      cuda::pipeline_consumer_wait_prior<1>(pipe);   // the copy just committed may still be in flight
    else
      cuda::pipeline_consumer_wait_prior<0>(pipe);   // the last stage reads the last copy: wait for it
    acc = acc * 3 + buf[stage & 1][threadIdx.x];
    pipe.consumer_release();
  }
  out[threadIdx.x] = acc;
}

//@run {"grid": 1, "block": 32, "args": ["f32*128", "f32*32"]}
extern "C" __global__ void pipeline_primitives(const float* in, float* out) {
  __shared__ float4 s[32];
  __pipeline_memcpy_async(&s[threadIdx.x], &reinterpret_cast<const float4*>(in)[threadIdx.x], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  float4 v = s[(threadIdx.x + 5) % 32];
  out[threadIdx.x] = v.x + v.y * v.z - v.w;
}
