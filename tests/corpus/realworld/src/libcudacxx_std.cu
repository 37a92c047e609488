// Modern C++ on the device through libcu++ (CCCL): cuda::atomic_ref with explicit scopes and
// memory orders (fetch_add, fetch_min/max, a compare_exchange loop of a commutative update), cuda::std::bit's
// popcount/countl_zero/rotl/bit_cast/bit_width, cuda::std::complex<float> arithmetic,
// cuda::std::array and tuple as values, cuda::std::clamp/minmax, numeric_limits, and
// cuda::std::optional as a result type. The code a library-heavy kernel expands into.
#include <cuda/atomic>
#include <cuda/std/array>
#include <cuda/std/bit>
#include <cuda/std/complex>
#include <cuda/std/limits>
#include <cuda/std/optional>
#include <cuda/std/tuple>
#include <cuda/std/utility>
#include <cuda/std/algorithm>
#include <stdint.h>

//@run {"grid": 2, "block": 128, "args": ["u32*256", "u32*4", "s32*4"]}
extern "C" __global__ void scoped_atomics(const uint32_t* __restrict__ in, uint32_t* acc, int* extremes) {
  __shared__ uint32_t block_acc;
  if (threadIdx.x == 0) block_acc = 0;
  __syncthreads();
  uint32_t v = in[blockIdx.x * blockDim.x + threadIdx.x];
  cuda::atomic_ref<uint32_t, cuda::thread_scope_block> b(block_acc);
  b.fetch_add(v & 0xff, cuda::std::memory_order_relaxed);
  cuda::atomic_ref<uint32_t, cuda::thread_scope_device> d(acc[0]);
  d.fetch_xor(v, cuda::std::memory_order_acq_rel);
  cuda::atomic_ref<int, cuda::thread_scope_device> lo(extremes[0]), hi(extremes[1]);
  lo.fetch_min((int)v, cuda::std::memory_order_relaxed);
  hi.fetch_max((int)v, cuda::std::memory_order_release);
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system> s(acc[1]);
  uint32_t expected = s.load(cuda::std::memory_order_acquire);
  while (!s.compare_exchange_weak(expected, expected + (v >> 28) + 1u, cuda::std::memory_order_acq_rel,
                                  cuda::std::memory_order_relaxed)) {
  }
  __syncthreads();
  if (threadIdx.x == 0) cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(acc[2]).fetch_add(b.load());
}

//@run {"grid": 1, "block": 64, "args": ["u64*64", "u32*64", "f32*64", "u32*256"]}
extern "C" __global__ void bit_library(const uint64_t* __restrict__ x, const uint32_t* __restrict__ y,
                                       const float* __restrict__ f, uint32_t* out) {
  int t = threadIdx.x;
  uint64_t a = x[t];
  uint32_t b = y[t];
  out[4 * t + 0] = cuda::std::popcount(a) * 1000u + cuda::std::countl_zero(b) * 10u + cuda::std::countr_zero(b | 0x80000000u);
  out[4 * t + 1] = cuda::std::rotl(b, t) ^ cuda::std::rotr(b, 3 * t);
  out[4 * t + 2] = cuda::std::bit_cast<uint32_t>(f[t] * 2.0f) ^ (uint32_t)cuda::std::bit_width(a);
  out[4 * t + 3] = (uint32_t)cuda::std::bit_floor(a >> (t % 40)) + cuda::std::has_single_bit(b) + (uint32_t)cuda::std::bit_ceil(b & 0xffffu);
}

using cfloat = cuda::std::complex<float>;

//@run {"grid": 1, "block": 64, "args": ["f32*256", "f32*256"]}
extern "C" __global__ void complex_ops(const float* __restrict__ in, float* out) {
  int t = threadIdx.x;
  cfloat z(in[4 * t], in[4 * t + 1]), w(in[4 * t + 2], in[4 * t + 3] + 5.0f);
  cfloat p = z * w + cuda::std::conj(z);
  cfloat q = z / w;
  out[4 * t + 0] = p.real();
  out[4 * t + 1] = p.imag();
  out[4 * t + 2] = cuda::std::abs(q) + cuda::std::norm(w);
  out[4 * t + 3] = cuda::std::arg(z);
}

struct Stats { float lo, hi; int n; };

__device__ cuda::std::optional<Stats> window_stats(const float* v, int n, float limit) {
  if (n <= 0) return cuda::std::nullopt;
  cuda::std::array<float, 8> w{};
  for (int i = 0; i < 8; ++i) w[i] = i < n ? v[i] : v[0];
  float lo = cuda::std::numeric_limits<float>::max(), hi = cuda::std::numeric_limits<float>::lowest();
  for (float e : w) {
    auto mm = cuda::std::minmax(lo, e);
    lo = mm.first;
    hi = cuda::std::max(hi, e);
  }
  if (hi - lo > limit) return cuda::std::nullopt;
  return Stats{lo, hi, n};
}

//@run {"grid": 1, "block": 64, "args": ["f32*576", "s32*64%9", "f32*192"]}
extern "C" __global__ void optional_tuple(const float* __restrict__ v, const int* __restrict__ lens, float* out) {
  int t = threadIdx.x;
  auto s = window_stats(v + 8 * t, lens[t], 6.0f);
  auto tup = s ? cuda::std::make_tuple(s->lo, s->hi, s->n) : cuda::std::make_tuple(0.0f, 0.0f, -1);
  float c = cuda::std::clamp(cuda::std::get<1>(tup) * 2.0f, -3.0f, 3.0f);
  out[3 * t + 0] = cuda::std::get<0>(tup);
  out[3 * t + 1] = c;
  out[3 * t + 2] = (float)cuda::std::get<2>(tup) + (s.has_value() ? 0.5f : 0.25f);
}
