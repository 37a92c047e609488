// C++ the way application code is written: virtual functions (indirect calls through a
// vtable), function pointers chosen per thread, device-side new/delete, recursion with a
// depth bound, and a struct with a dynamically indexed local array.
#include <cstdint>

struct Shape {
  __device__ virtual float area(float s) const = 0;
  __device__ virtual ~Shape() {}
};
struct Square : Shape { __device__ float area(float s) const override { return s * s; } };
struct Circle : Shape { __device__ float area(float s) const override { return 3.14159265f * s * s; } };
struct Tri : Shape { __device__ float area(float s) const override { return 0.4330127f * s * s; } };

//@run {"grid": 1, "block": 64, "args": ["s32*64%3", "f32*64", "f32*64"]}
extern "C" __global__ void virtual_area(const int* __restrict__ kind, const float* __restrict__ side,
                                        float* __restrict__ out) {
  int t = threadIdx.x;
  Square sq; Circle c; Tri tr;
  const Shape* s = kind[t] == 0 ? (const Shape*)&sq : kind[t] == 1 ? (const Shape*)&c : (const Shape*)&tr;
  out[t] = s->area(side[t]);
}

__device__ float f_add(float a, float b) { return a + b; }
__device__ float f_mul(float a, float b) { return a * b; }
__device__ float f_hyp(float a, float b) { return sqrtf(a * a + b * b); }
__device__ float (*const table[3])(float, float) = {f_add, f_mul, f_hyp};

//@run {"grid": 1, "block": 64, "args": ["s32*64%3", "f32*64", "f32*64", "f32*64"]}
extern "C" __global__ void function_pointers(const int* __restrict__ which, const float* __restrict__ a,
                                             const float* __restrict__ b, float* __restrict__ out) {
  int t = threadIdx.x;
  float (*f)(float, float) = table[which[t]];
  out[t] = f(a[t], b[t]) + f(b[t], 1.0f);
}

__device__ __noinline__ unsigned long long ackermann_like(unsigned n, unsigned k) {
  if (n == 0 || k == 0) return k + 1;
  return ackermann_like(n - 1, k - 1) * 3 + ackermann_like(n - 1, k / 2);
}

//@run {"grid": 1, "block": 32, "args": ["u32*32%6", "u32*32%5", "u64*32"]}
extern "C" __global__ void bounded_recursion(const unsigned* __restrict__ n, const unsigned* __restrict__ k,
                                             unsigned long long* __restrict__ out) {
  int t = threadIdx.x;
  out[t] = ackermann_like(n[t], k[t]);
}

struct Window {
  float v[12];
  int head;
  __device__ void push(float x) { v[head] = x; head = (head + 1) % 12; }
  __device__ float at(int i) const { return v[(head + i) % 12]; }
};

//@run {"grid": 1, "block": 64, "args": ["f32*1024", "s32*64%12", "f32*64"]}
extern "C" __global__ void local_ring(const float* __restrict__ x, const int* __restrict__ pick,
                                      float* __restrict__ out) {
  int t = threadIdx.x;
  Window w = {};
  for (int i = 0; i < 16; ++i) w.push(x[t * 16 + i] * (i + 1));
  out[t] = w.at(pick[t]) - w.at(0) + w.at(11);
}
