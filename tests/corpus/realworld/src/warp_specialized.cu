// Warp specialisation as pipelined kernels write it without libraries: producer warps fill a
// ring of shared-memory stages and signal "full" mbarriers; consumer warps wait on them by
// phase parity (mbarrier.test_wait.parity in a loop), compute, and release the stage on an
// "empty" mbarrier; named barriers (bar.sync id, count) for subsets of warps.
#include <stdint.h>

__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  unsigned a = (unsigned)__cvta_generic_to_shared(bar);
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  unsigned a = (unsigned)__cvta_generic_to_shared(bar);
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }" :: "r"(a) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  unsigned a = (unsigned)__cvta_generic_to_shared(bar);
  asm volatile("{ .reg .pred p; LAB_WAIT: mbarrier.test_wait.parity.shared::cta.b64 p, [%0], %1; "
               "@!p bra LAB_WAIT; }" :: "r"(a), "r"(parity) : "memory");
}

constexpr int STAGES = 2, TILE = 64, TILES = 6;

//@run {"grid": 1, "block": 96, "args": ["f32*384", "f32*64"]}
extern "C" __global__ void __launch_bounds__(96) producer_consumer(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float ring[STAGES][TILE];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) { mbar_init(&full[s], 32); mbar_init(&empty[s], 64); }
  }
  __syncthreads();
  if (warp == 0) {                         // producer: one warp
    for (int k = 0; k < TILES; ++k) {
      int s = k % STAGES;
      if (k >= STAGES) mbar_wait(&empty[s], ((k / STAGES) - 1) & 1);
      ring[s][lane] = in[k * TILE + lane];
      ring[s][lane + 32] = in[k * TILE + lane + 32] * 0.5f;
      mbar_arrive(&full[s]);
    }
  } else {                                 // consumers: two warps, one column each
    int c = threadIdx.x - 32;              // 0..63
    float acc = 0.0f;
    for (int k = 0; k < TILES; ++k) {
      int s = k % STAGES;
      mbar_wait(&full[s], (k / STAGES) & 1);
      acc += ring[s][c] * (float)(k + 1);
      mbar_arrive(&empty[s]);
    }
    asm volatile("bar.sync 1, 64;" ::: "memory");   // the consumers alone
    out[c] = acc;
  }
}

//@run {"grid": 2, "block": 128, "args": ["s32*256", "s32*256"]}
extern "C" __global__ void named_barrier_groups(const int* __restrict__ in, int* __restrict__ out) {
  __shared__ int stage[128];
  int t = threadIdx.x, group = t / 64, i = blockIdx.x * 128 + t;
  stage[t] = in[i] * 3;
  // each half of the block synchronises on its own barrier (ids 1 and 2, 64 threads)
  if (group == 0) asm volatile("bar.sync 1, 64;" ::: "memory");
  else asm volatile("bar.sync 2, 64;" ::: "memory");
  int partner = group * 64 + ((t + 7) & 63);
  int v = stage[partner];
  asm volatile("bar.arrive 3, 128;" ::: "memory");        // arrive, the last half waits
  if (group == 1) asm volatile("bar.sync 3, 128;" ::: "memory");
  out[i] = v + t;
}
