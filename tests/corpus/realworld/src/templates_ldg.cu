// Generic C++ as header-only GPU libraries write it: templated element-wise kernels over a
// type and a functor with grid-stride loops on size_t indices (64-bit index arithmetic),
// __restrict__ pointers read through __ldg, if constexpr per element type (float, double,
// __half2, int64), a variadic fold over several input arrays, a device lambda passed to a
// template, a vectorised path with a scalar tail on a misaligned count, and a gather whose
// indices are 64-bit hashes reduced modulo a run-time length.
#include <cuda_fp16.h>
#include <cstdint>
#include <cuda/std/type_traits>

template <typename T> struct Axpy {
  T a;
  __device__ T operator()(T x, T y) const {
    if constexpr (cuda::std::is_integral_v<T>) return a * x + (y >> 1);   // integers: halve y
    else return a * x + y;
  }
};

template <typename T, typename Op>
__device__ void grid_stride_apply(const T* __restrict__ x, T* __restrict__ y, size_t n, Op op) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = op(__ldg(x + i), y[i]);
}

//@run {"grid": 2, "block": 64, "args": ["f32*1000", "f32*1000", "f32=0.75", "u64=1000"]}
extern "C" __global__ void axpy_f32(const float* __restrict__ x, float* __restrict__ y, float a, size_t n) {
  grid_stride_apply(x, y, n, Axpy<float>{a});
}

//@run {"grid": 2, "block": 64, "args": ["f64*700", "f64*700", "f64=-1.25", "u64=700"]}
extern "C" __global__ void axpy_f64(const double* __restrict__ x, double* __restrict__ y, double a, size_t n) {
  grid_stride_apply(x, y, n, Axpy<double>{a});
}

//@run {"grid": 1, "block": 96, "args": ["s64*500", "s64*500", "s64=-3", "u64=500"]}
extern "C" __global__ void axpy_i64(const long long* __restrict__ x, long long* __restrict__ y, long long a, size_t n) {
  grid_stride_apply(x, y, n, Axpy<long long>{a});
}

struct Half2Fma {
  __half2 a;
  __device__ __half2 operator()(__half2 x, __half2 y) const { return __hfma2(a, x, y); }
};

//@run {"grid": 1, "block": 64, "args": ["f16*512", "f16*512", "u64=256"]}
extern "C" __global__ void axpy_half2(const __half2* __restrict__ x, __half2* __restrict__ y, size_t n) {
  grid_stride_apply(x, y, n, Half2Fma{__floats2half2_rn(0.5f, -2.0f)});
}

template <typename... Ts>
__device__ __forceinline__ float weighted_sum(size_t i, const float* __restrict__ w, const Ts* __restrict__... xs) {
  int k = 0;
  float acc = 0.0f;
  ((acc = fmaf(__ldg(w + k++), (float)__ldg(xs + i), acc)), ...);
  return acc;
}

// Four inputs of three types folded into one output.
//@run {"grid": 2, "block": 128, "args": ["f32*4", "f32*256", "s32*256", "f64*256", "u16*256", "f32*256"]}
extern "C" __global__ void fold_four_inputs(const float* __restrict__ w, const float* __restrict__ a,
                                            const int* __restrict__ b, const double* __restrict__ c,
                                            const unsigned short* __restrict__ d, float* __restrict__ out) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = weighted_sum(i, w, a, b, c, d);
}

template <typename F>
__device__ float transform_reduce_block(const float* __restrict__ in, size_t n, F f) {
  __shared__ float part[32];
  float acc = 0.0f;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    acc += f(__ldg(in + i));
  for (int d = 16; d > 0; d >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, d);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = acc;
  __syncthreads();
  float total = 0.0f;
  if (threadIdx.x == 0)
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += part[w];
  return total;
}

//@run {"grid": 2, "block": 128, "args": ["f32*1500", "f32*2", "u64=1500", "f32=0.5"]}
extern "C" __global__ void lambda_transform_reduce(const float* __restrict__ in, float* __restrict__ out, size_t n,
                                                   float shift) {
  auto sq = [shift](float v) { float u = v - shift; return u * u; };
  float s = transform_reduce_block(in, n, sq);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// float4 body where the pointer and the count allow it, a scalar head and tail otherwise.
//@run {"grid": 2, "block": 64, "args": ["f32*1031", "f32*1031", "u64=3", "u64=1025"]}
extern "C" __global__ void scale_vector_tail(const float* __restrict__ in, float* __restrict__ out, size_t offset, size_t n) {
  const float* src = in + offset;
  float* dst = out + offset;
  size_t head = ((16 - ((uintptr_t)src & 15)) & 15) / sizeof(float);
  if (head > n) head = n;
  size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, threads = (size_t)gridDim.x * blockDim.x;
  if (tid < head) dst[tid] = 3.0f * src[tid];
  size_t body = (n - head) / 4;
  const float4* s4 = reinterpret_cast<const float4*>(src + head);
  float4* d4 = reinterpret_cast<float4*>(dst + head);
  for (size_t i = tid; i < body; i += threads) {
    float4 v = __ldg(s4 + i);
    d4[i] = make_float4(3.0f * v.x, 3.0f * v.y, 3.0f * v.z, 3.0f * v.w);
  }
  for (size_t i = head + body * 4 + tid; i < n; i += threads) dst[i] = 3.0f * src[i];
}

// Gather through 64-bit hashes: index = (k * golden) % n with a run-time n.
//@run {"grid": 2, "block": 64, "args": ["u64*128", "f32*333", "f32*128", "u64*128", "u64=333"]}
extern "C" __global__ void hashed_gather_u64(const unsigned long long* __restrict__ keys, const float* __restrict__ table,
                                             float* __restrict__ out, unsigned long long* __restrict__ where,
                                             unsigned long long n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long k = __ldg(keys + i);
  unsigned long long h = (k ^ (k >> 29)) * 0x9E3779B97F4A7C15ull;
  unsigned long long j = h % n;
  where[i] = j | (h / n << 48);
  out[i] = __ldg(table + j);
}
