// Asynchronous copy rings without the tensor memory accelerator: cp.async copies whose
// completion is tracked by an mbarrier (cp.async.mbarrier.arrive.noinc), consumers waiting by
// phase parity (mbarrier.try_wait with a suspend-time hint on sm_90, test_wait before), the
// empty side released per warp; libcu++'s partitioned cuda::pipeline with producer and
// consumer roles; cuda_pipeline.h's __pipeline_arrive_on; and an mbarrier's pending count
// read back (mbarrier.pending_count) with arrivals that drop expectations
// (mbarrier.arrive_drop).
#include <cuda/pipeline>
#include <cuda_pipeline.h>
#include <cooperative_groups.h>
#include <stdint.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" ::"r"(smem(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
#if __CUDA_ARCH__ >= 900
  asm volatile("{ .reg .pred p; WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1, 1000000; "
               "@!p bra WAIT_%=; }" ::"r"(smem(bar)), "r"(parity) : "memory");
#else
  asm volatile("{ .reg .pred p; WAIT_%=: mbarrier.test_wait.parity.shared::cta.b64 p, [%0], %1; "
               "@!p bra WAIT_%=; }" ::"r"(smem(bar)), "r"(parity) : "memory");
#endif
}

// One producer warp copies 8 tiles of 64 floats (16 bytes per lane... two chunks per lane)
// into a 4-stage ring; each lane's copies complete the stage's "full" barrier through
// cp.async.mbarrier.arrive.noinc (32 expected arrivals). Three consumer warps read every tile
// (sum, max and a weighted sum) and release the stage on "empty" (one arrival per warp).
//@run {"grid": 2, "block": 128, "args": ["f32*1024", "f32*192"]}
extern "C" __global__ void __launch_bounds__(128) cp_async_mbarrier_ring(const float* __restrict__ in, float* __restrict__ out) {
  constexpr int STAGES = 4, TILES = 8, TILE = 64;
  __shared__ __align__(16) float ring[STAGES][TILE];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float* src = in + blockIdx.x * TILES * TILE;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 32);
      mbar_init(&empty[s], 3);
    }
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
  }
  __syncthreads();
  if (warp == 0) {
    for (int k = 0; k < TILES; ++k) {
      int s = k % STAGES;
      if (k >= STAGES) mbar_wait(&empty[s], ((k / STAGES) - 1) & 1);
      if (lane < 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem(&ring[s][lane * 4])),
                     "l"(src + k * TILE + lane * 4) : "memory");
      }
      asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem(&full[s])) : "memory");
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
  } else {
    float acc = 0.0f;
    for (int k = 0; k < TILES; ++k) {
      int s = k % STAGES;
      mbar_wait(&full[s], (k / STAGES) & 1);
      float a = ring[s][lane], b = ring[s][lane + 32];
      if (warp == 1) acc += a + b;
      else if (warp == 2) acc = fmaxf(acc, fmaxf(a, b));
      else acc = fmaf((float)(k + 1), a - b, acc);
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[s]);
    }
    out[blockIdx.x * 96 + (warp - 1) * 32 + lane] = acc;
  }
}

// cuda::pipeline partitioned by role: warp 0 produces (memcpy_async of 32 ints per stage),
// warps 1-2 consume; 3 stages over 9 tiles.
//@run {"grid": 1, "block": 96, "args": ["s32*288", "s32*64"]}
extern "C" __global__ void pipeline_roles(const int* __restrict__ in, int* __restrict__ out) {
  constexpr int STAGES = 3, TILES = 9, TILE = 32;
  __shared__ __align__(16) int buf[STAGES][TILE];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
  auto block = cg::this_thread_block();
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  auto role = warp == 0 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
  auto pipe = cuda::make_pipeline(block, &state, role);
  if (role == cuda::pipeline_role::producer) {
    for (int k = 0; k < TILES; ++k) {
      pipe.producer_acquire();
      cuda::memcpy_async(&buf[k % STAGES][lane], &in[k * TILE + lane], sizeof(int), pipe);
      pipe.producer_commit();
    }
  } else {
    int acc = 0;
    for (int k = 0; k < TILES; ++k) {
      pipe.consumer_wait();
      int v = buf[k % STAGES][(lane + warp) & 31];
      acc = warp == 1 ? acc + v : acc ^ (v * (k + 1));
      pipe.consumer_release();
    }
    out[(warp - 1) * 32 + lane] = acc;
  }
}

// cuda_pipeline.h primitives: each warp copies its own rows with __pipeline_memcpy_async and
// makes an mbarrier track them (__pipeline_arrive_on), other warps wait on it.
//@run {"grid": 2, "block": 64, "args": ["f32*256", "f32*256"]}
extern "C" __global__ void pipeline_arrive_on(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ __align__(16) float tile[128];
  __shared__ uint64_t bar;
  int t = threadIdx.x;
  if (t == 0) mbar_init(&bar, 64);
  __syncthreads();
  __pipeline_memcpy_async(&tile[2 * t], &in[blockIdx.x * 128 + 2 * t], 8);
  __pipeline_arrive_on(&bar);
  mbar_arrive(&bar);
  mbar_wait(&bar, 0);
  out[blockIdx.x * 128 + t] = tile[127 - t] - tile[t];
  out[blockIdx.x * 128 + 64 + t] = tile[(t * 5) & 127];
}

// An mbarrier for 64 threads: the upper warp leaves early with arrive_drop (the next phase
// expects 32 fewer arrivals), the lower one goes through two phases; a second barrier for 5
// arrivals that thread 0 arrives at alone, its state's pending count read back.
//@run {"grid": 1, "block": 64, "args": ["s32*64", "u32*2", "s32*64"]}
extern "C" __global__ void mbarrier_drop_and_count(const int* __restrict__ in, unsigned* __restrict__ counts,
                                                   int* __restrict__ out) {
  __shared__ uint64_t bar, lone;
  __shared__ int cells[64];
  int t = threadIdx.x;
  if (t == 0) {
    mbar_init(&bar, 64);
    mbar_init(&lone, 5);
  }
  __syncthreads();
  cells[t] = in[t] * 2;
  if (t >= 32) {
    asm volatile("{ .reg .b64 st; mbarrier.arrive_drop.shared::cta.b64 st, [%0]; }" ::"r"(smem(&bar)) : "memory");
    out[t] = -t;
    return;
  }
  mbar_arrive(&bar);
  mbar_wait(&bar, 0);
  int v = cells[63 - t] + cells[t];
  __syncwarp();
  cells[t] = v;
  mbar_arrive(&bar);
  mbar_wait(&bar, 1);
  out[t] = cells[(t + 1) & 31] - v;
  if (t == 0) {
    uint64_t state;
    unsigned pending;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(smem(&lone)) : "memory");
    asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(state));
    counts[0] = pending;
    asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(pending) : "r"(smem(&lone)), "l"(state) : "memory");
    counts[1] = pending;
  }
}
