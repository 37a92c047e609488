// Atomics of every kind: global/shared, int/float/double/half, CAS loops, scoped atomics.
#include <cuda_fp16.h>
#include <cuda/atomic>

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*4", "f64*4"]}
extern "C" __global__ void atomic_float_sums(const float* x, float* fs, double* ds) {
  int i = blockIdx.x * 64 + threadIdx.x;
  float v = x[i];
  atomicAdd(&fs[0], v > 0 ? 1.0f : 0.0f);
  atomicAdd(&ds[0], v > 0 ? 1.0 : 2.0);
  atomicMax((int*)&fs[1], (int)(v * 100.0f));
  atomicMin((unsigned*)&fs[2], __float_as_uint(fabsf(v)));
}

//@run {"grid": 2, "block": 64, "args": ["u32*128", "u32*16", "u64*4"]}
extern "C" __global__ void atomic_int_all(const unsigned* x, unsigned* c, unsigned long long* w) {
  int i = blockIdx.x * 64 + threadIdx.x;
  unsigned v = x[i];
  atomicAdd(&c[0], v & 15);
  atomicSub(&c[1], v & 3);
  atomicMax(&c[2], v);
  atomicMin(&c[3], v);
  atomicAnd(&c[4], v | 0x10000u);
  atomicOr(&c[5], v & 0x00ff00ffu);
  atomicXor(&c[6], v);
  atomicInc(&c[7], 100u);
  atomicDec(&c[8], 50u);
  atomicAdd(&w[0], (unsigned long long)v);
  atomicMax(&w[1], (unsigned long long)v << 20);
  atomicAnd(&w[2], ~(1ull << (v & 63)));
  atomicCAS(&c[9], 0u, v);   // the winner is timing-dependent only if c[9] starts at 0
}

//@run {"grid": 1, "block": 64, "args": ["u32*64%32", "u32*32"]}
extern "C" __global__ void shared_histogram(const unsigned* keys, unsigned* hist) {
  __shared__ unsigned h[32];
  if (threadIdx.x < 32) h[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&h[keys[threadIdx.x] & 31], 1u);
  atomicMax(&h[(keys[threadIdx.x] + 1) & 31], 2u);
  __syncthreads();
  if (threadIdx.x < 32) hist[threadIdx.x] = h[threadIdx.x];
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*2"]}
extern "C" __global__ void cas_loop_float_mul(const float* x, float* prod) {
  float v = 1.0f + (x[threadIdx.x] > 0 ? 1.0f : 0.0f);  // powers of two: order-independent
  unsigned* p = (unsigned*)&prod[0];
  unsigned old = *p, assumed;
  do {
    assumed = old;
    old = atomicCAS(p, assumed, __float_as_uint(__uint_as_float(assumed) * v));
  } while (old != assumed);
  atomicExch(&prod[1], 3.0f);
}

//@run {"grid": 1, "block": 64, "args": ["f16*64", "f16*2", "u32*2"]}
extern "C" __global__ void atomic_half_and_scoped(const __half* x, __half* hs, unsigned* c) {
  atomicAdd(&hs[0], __float2half(1.0f));
  atomicAdd_block(&c[0], 1u);
  atomicAdd_system(&c[1], 2u);
}

//@run {"grid": 1, "block": 64, "args": ["s32*64", "s32*4"]}
extern "C" __global__ void atomic_ref_libcu(const int* x, int* out) {
  cuda::atomic_ref<int, cuda::thread_scope_device> a(out[0]);
  a.fetch_add(x[threadIdx.x] & 7, cuda::std::memory_order_relaxed);
  cuda::atomic_ref<int, cuda::thread_scope_block> b(out[1]);
  b.fetch_max(x[threadIdx.x], cuda::std::memory_order_acq_rel);
  cuda::atomic_ref<int, cuda::thread_scope_system> s(out[2]);
  s.fetch_or(1 << (threadIdx.x & 31));
}
