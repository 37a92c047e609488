// Atomics of every width and scope a CUDA program reaches for: 16-bit atomicCAS (unsigned
// short), __half2 / __nv_bfloat162 atomicAdd, double atomicAdd, 64-bit signed min/max, the
// _block and _system scoped variants, atomicExch of a float, and (sm_90+) the vector float2 /
// float4 atomicAdd. Results are sums, extremes and counts: the same bytes in any order, except
// where a float sum's order could matter: those add small integers to zeroed accumulators.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

__device__ unsigned short cas_add16(unsigned short* p, unsigned short v) {
  unsigned short old = *p, assumed;
  do {
    assumed = old;
    old = atomicCAS(p, assumed, (unsigned short)(assumed + v));
  } while (old != assumed);
  return old;
}

//@run {"grid": 2, "block": 128, "args": ["u32*256%64", "u16*8", "s64*4", "u64*2%1"]}
extern "C" __global__ void scalar_widths(const unsigned* __restrict__ in, unsigned short* counts,
                                         long long* extremes, double* sums) {
  unsigned v = in[blockIdx.x * blockDim.x + threadIdx.x];
  cas_add16(&counts[v & 7], (unsigned short)1);
  long long s = (long long)v * (v & 1 ? -977 : 1013);
  atomicMin(&extremes[0], s);
  atomicMax(&extremes[1], s);
  atomicAdd_block(reinterpret_cast<unsigned long long*>(&extremes[2]), (unsigned long long)v);
  atomicAdd_system(reinterpret_cast<unsigned long long*>(&extremes[3]), 1ull);
  atomicAdd(&sums[0], (double)(v & 15) * 0.5);          // exact in any order
  atomicAdd(&sums[1], 1.0);
}

//@run {"grid": 1, "block": 128, "args": ["u16*256%64", "u32*16%1", "u32*16%1"]}
extern "C" __global__ void half_pairs(const unsigned short* __restrict__ q, __half2* h, __nv_bfloat162* b) {
  int t = threadIdx.x;
  // small integers as halves: sums stay exact whatever the order
  __half2 x = __halves2half2(__ushort2half_rn(q[2 * t] & 7), __ushort2half_rn(q[2 * t + 1] & 3));
  atomicAdd(&h[t & 15], x);
  __nv_bfloat162 y = __floats2bfloat162_rn((float)(q[2 * t] & 3), (float)(q[2 * t + 1] & 1));
  atomicAdd(&b[t & 15], y);
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*4"]}
extern "C" __global__ void exchange_float(const float* __restrict__ in, float* slots) {
  int t = threadIdx.x;
  if (t < 4) atomicExch(&slots[t], in[t] * 2.0f);   // one writer per slot
  __syncthreads();
  if (t == 0) atomicExch(&slots[3], atomicExch(&slots[0], slots[1] + slots[2]));
}

//@run {"grid": 1, "block": 128, "args": ["u32*128%16", "u32*32%1"]}
extern "C" __global__ void vector_float_add(const unsigned* __restrict__ in, float* acc) {
  int t = threadIdx.x;
  float a = (float)(in[t] & 15), b = (float)(in[t] >> 2);
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(acc) + (t & 7), make_float2(a, b));
  atomicAdd(reinterpret_cast<float4*>(acc + 16) + (t & 3), make_float4(a, b, a + b, 1.0f));
#else
  atomicAdd(&acc[2 * (t & 7)], a);
  atomicAdd(&acc[2 * (t & 7) + 1], b);
  float4 v = make_float4(a, b, a + b, 1.0f);
  float* q = acc + 16 + 4 * (t & 3);
  atomicAdd(q, v.x); atomicAdd(q + 1, v.y); atomicAdd(q + 2, v.z); atomicAdd(q + 3, v.w);
#endif
}
