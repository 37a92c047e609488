// Thrust algorithms run sequentially inside a kernel (thrust::seq), one per thread.
#include <thrust/sort.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>

//@run {"grid": 1, "block": 16, "args": ["s32*128", "s32*128"]}
extern "C" __global__ void per_thread_sort(const int* in, int* out) {
  int v[8];
  for (int i = 0; i < 8; ++i) v[i] = in[threadIdx.x * 8 + i];
  thrust::sort(thrust::seq, v, v + 8);
  for (int i = 0; i < 8; ++i) out[threadIdx.x * 8 + i] = v[i];
}

//@run {"grid": 1, "block": 16, "args": ["f32*128", "f32*128", "f32*16"]}
extern "C" __global__ void per_thread_scan_reduce(const float* in, float* scan, float* red) {
  const float* p = in + threadIdx.x * 8;
  thrust::inclusive_scan(thrust::seq, p, p + 8, scan + threadIdx.x * 8);
  red[threadIdx.x] = thrust::reduce(thrust::seq, p, p + 8, 0.0f, thrust::maximum<float>());
}
