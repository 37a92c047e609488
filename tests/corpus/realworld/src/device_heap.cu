// Device-side dynamic memory as C++ code on the GPU uses it: malloc/free of per-thread
// scratch, new[]/delete[] of small objects with constructors, a per-block buffer allocated
// by one thread and shared through a __shared__ pointer, and a linked list built and walked
// in the heap.
#include <stdint.h>

struct Node { int value; Node* next; __device__ Node(int v, Node* n) : value(v), next(n) {} };

//@run {"grid": 1, "block": 32, "args": ["s32*32", "s32*32"]}
extern "C" __global__ void scratch_malloc(const int* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x;
  int n = 4 + (in[t] & 7);
  int* buf = (int*)malloc(n * sizeof(int));
  if (!buf) { out[t] = -1; return; }
  for (int k = 0; k < n; ++k) buf[k] = in[(t + k) & 31] * (k + 1);
  int s = 0;
  for (int k = n - 1; k >= 0; --k) s = s * 3 + buf[k];
  free(buf);
  out[t] = s;
}

//@run {"grid": 1, "block": 32, "args": ["s32*32", "s32*32"]}
extern "C" __global__ void heap_list(const int* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x;
  Node* head = nullptr;
  int n = 1 + (in[t] & 3);
  for (int k = 0; k < n; ++k) head = new Node(in[(t * 5 + k) & 31] + k, head);
  int s = 0, len = 0;
  for (Node* p = head; p; p = p->next) { s ^= p->value << len; ++len; }
  while (head) { Node* nx = head->next; delete head; head = nx; }
  out[t] = s * 16 + len;
}

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128"]}
extern "C" __global__ void block_shared_heap(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float* block_buf;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t == 0) block_buf = (float*)malloc(blockDim.x * sizeof(float));
  __syncthreads();
  float* b = block_buf;
  if (b) b[t] = in[i] * 2.0f;
  __syncthreads();
  out[i] = b ? b[(t + 1) % blockDim.x] + b[t] : -1.0f;
  __syncthreads();
  if (t == 0 && b) free(b);
}
