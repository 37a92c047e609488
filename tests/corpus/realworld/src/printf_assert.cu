// Device printf and assert (system calls: vprintf, __assertfail).
#include <cstdio>
#include <cassert>

extern "C" __global__ void debug_print(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < 0.0f) printf("block %d thread %d: negative value %f at %d\n", blockIdx.x, threadIdx.x, x[i], i);
}

extern "C" __global__ void checked_copy(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(n > 0);
  if (i < n) { assert(in[i] != -1); out[i] = in[i]; }
}
