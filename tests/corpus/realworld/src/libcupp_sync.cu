// libcu++ beyond atomics: block-scope synchronisation objects placed in shared memory
// (cuda::binary_semaphore as a mutex between warp leaders, cuda::counting_semaphore bounding
// how many warps are inside, cuda::latch, cuda::barrier with a completion function run once per
// phase, cuda::atomic wait/notify), and the vocabulary types cuda::std::span, array, mdspan,
// variant + visit, bitset.
#include <cuda/semaphore>
#include <cuda/latch>
#include <cuda/barrier>
#include <cuda/atomic>
#include <cuda/std/span>
#include <cuda/std/array>
#include <cuda/std/mdspan>
#include <cuda/std/variant>
#include <cuda/std/bitset>
#include <cuda/std/cmath>
#include <new>
#include <stdint.h>

// Warp leaders take a binary semaphore in turn to fold their warp's sum into a shared
// (non-atomic) 64-bit total and a running xor; a counting semaphore lets at most 2 warps in the
// second section at once, each bumping and dropping an occupancy gauge whose peak is kept.
//@run {"grid": 2, "block": 256, "args": ["s32*512%1000", "s64*2", "u32*2", "s32*2"]}
extern "C" __global__ void semaphore_sections(const int* __restrict__ in, long long* __restrict__ totals,
                                              unsigned* __restrict__ xors, int* __restrict__ peaks) {
  using Mutex = cuda::binary_semaphore<cuda::thread_scope_block>;
  using Gate = cuda::counting_semaphore<cuda::thread_scope_block, 2>;
  __shared__ alignas(Mutex) unsigned char mutex_buf[sizeof(Mutex)];
  __shared__ alignas(Gate) unsigned char gate_buf[sizeof(Gate)];
  __shared__ long long total;
  __shared__ unsigned running_xor;
  __shared__ int inside, peak;
  Mutex* mutex = reinterpret_cast<Mutex*>(mutex_buf);
  Gate* gate = reinterpret_cast<Gate*>(gate_buf);
  if (threadIdx.x == 0) {
    new (mutex) Mutex(1);
    new (gate) Gate(2);
    total = 0;
    running_xor = 0;
    inside = 0;
    peak = 0;
  }
  __syncthreads();
  int v = in[blockIdx.x * 256 + threadIdx.x];
  int s = v;
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  unsigned x = __reduce_xor_sync(0xffffffffu, (unsigned)v * 2654435761u);
  if ((threadIdx.x & 31) == 0) {
    mutex->acquire();
    total += s;
    running_xor ^= x;
    mutex->release();
    gate->acquire();
    cuda::atomic_ref<int, cuda::thread_scope_block> in_ref(inside);
    int now = in_ref.fetch_add(1) + 1;
    cuda::atomic_ref<int, cuda::thread_scope_block>(peak).fetch_max(now);
    __nanosleep(64);
    in_ref.fetch_sub(1);
    gate->release();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    totals[blockIdx.x] = total;
    xors[blockIdx.x] = running_xor;
    peaks[blockIdx.x] = peak <= 2 ? peak : -peak;
  }
}

// A latch counted down by the 4 warps' leaders after they fill their quarter of a tile; every
// thread waits on it, then reads a neighbour quarter. Then an atomic flag with wait/notify:
// warp 0 publishes a scale, the others wait for the flag's change.
//@run {"grid": 2, "block": 128, "args": ["f32*256", "f32*256"]}
extern "C" __global__ void latch_and_notify(const float* __restrict__ in, float* __restrict__ out) {
  using Latch = cuda::latch<cuda::thread_scope_block>;
  using Flag = cuda::atomic<int, cuda::thread_scope_block>;
  __shared__ alignas(Latch) unsigned char latch_buf[sizeof(Latch)];
  __shared__ alignas(Flag) unsigned char flag_buf[sizeof(Flag)];
  __shared__ float tile[128];
  __shared__ float published;
  Latch* latch = reinterpret_cast<Latch*>(latch_buf);
  Flag* flag = reinterpret_cast<Flag*>(flag_buf);
  if (threadIdx.x == 0) {
    new (latch) Latch(4);
    new (flag) Flag(0);
  }
  __syncthreads();
  int t = threadIdx.x, warp = t >> 5;
  tile[t] = in[blockIdx.x * 128 + t] * 2.0f;
  __syncwarp();
  if ((t & 31) == 0) latch->count_down();
  latch->wait();
  float v = tile[(t + 32) & 127];
  if (warp == 0) {
    float m = fabsf(v);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (t == 0) {
      published = 1.0f / (m + 1.0f);
      flag->store(1, cuda::std::memory_order_release);
      flag->notify_all();
    }
  } else {
    flag->wait(0, cuda::std::memory_order_acquire);
  }
  __syncwarp();
  if (warp == 0) flag->wait(0, cuda::std::memory_order_acquire);
  out[blockIdx.x * 128 + t] = v * published;
}

// Jacobi smoothing of a 1-D row in shared memory for 6 phases of a cuda::barrier whose
// completion function (run by one thread once every thread has arrived) swaps the buffers
// and records the phase's largest change.
struct PhaseDone {
  float* bufs[2];
  int* which;
  float* change;
  float* history;
  int* phase;
  __device__ void operator()() noexcept {
    float m = 0.0f;
    for (int i = 0; i < 128; ++i) m = fmaxf(m, fabsf(bufs[1 - *which][i] - bufs[*which][i]));
    history[*phase] = m;
    *change = m;
    *which = 1 - *which;
    ++*phase;
  }
};
//@run {"grid": 1, "block": 128, "args": ["f32*128", "f32*128", "f32*8"]}
extern "C" __global__ void barrier_completion_jacobi(const float* __restrict__ in, float* __restrict__ out,
                                                     float* __restrict__ history) {
  using Bar = cuda::barrier<cuda::thread_scope_block, PhaseDone>;
  __shared__ alignas(Bar) unsigned char bar_buf[sizeof(Bar)];
  __shared__ float a[128], b[128], change;
  __shared__ int which, phase;
  Bar* bar = reinterpret_cast<Bar*>(bar_buf);
  int t = threadIdx.x;
  a[t] = in[t];
  if (t == 0) {
    which = 0;
    phase = 0;
    change = 0.0f;
    new (bar) Bar(128, PhaseDone{{a, b}, &which, &change, history, &phase});
  }
  __syncthreads();
  for (int it = 0; it < 6; ++it) {
    const float* src = which == 0 ? a : b;
    float* dst = which == 0 ? b : a;
    float l = src[t > 0 ? t - 1 : t], r = src[t < 127 ? t + 1 : t];
    dst[t] = 0.25f * l + 0.5f * src[t] + 0.25f * r;
    bar->arrive_and_wait();
  }
  out[t] = (which == 0 ? a : b)[t] + (t == 0 ? change : 0.0f);
}

// span/array/mdspan: a 2-D view over a flat buffer (row-major, dynamic rows), a stencil through
// it into a layout_left view, a fixed cuda::std::array of taps, subspans of a row.
//@run {"grid": 1, "block": 64, "args": ["f32*1024", "f32*1024", "s32=16"]}
extern "C" __global__ void views_mdspan_span(const float* __restrict__ in, float* __restrict__ out, int rows) {
  using Ext = cuda::std::extents<int, cuda::std::dynamic_extent, 64>;
  cuda::std::mdspan<const float, Ext> src(in, rows);
  cuda::std::mdspan<float, Ext, cuda::std::layout_left> dst(out, rows);
  constexpr cuda::std::array<float, 5> taps{0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};
  int c = threadIdx.x;
  for (int r = 0; r < src.extent(0); ++r) {
    cuda::std::span<const float, 64> row(&src(r, 0), 64);
    float acc = 0.0f;
    for (size_t k = 0; k < taps.size(); ++k) {
      int cc = c + int(k) - 2;
      cc = cc < 0 ? -cc : (cc > 63 ? 126 - cc : cc);
      acc += taps[k] * row[cc];
    }
    auto tail = row.subspan(c).first(1);
    dst(r, c) = acc - 0.125f * tail[0] + 0.0f * float(row.last(8).size());
  }
}

// A variant of shapes visited per thread; an index chooses the alternative.
struct Circle { float r; };
struct Rect { float w, h; };
struct Tri { float a, b, c; };
using Shape = cuda::std::variant<Circle, Rect, Tri>;
struct Area {
  __device__ float operator()(const Circle& s) const { return 3.14159265f * s.r * s.r; }
  __device__ float operator()(const Rect& s) const { return s.w * s.h; }
  __device__ float operator()(const Tri& s) const {
    float p = 0.5f * (s.a + s.b + s.c);
    return sqrtf(fmaxf(p * (p - s.a) * (p - s.b) * (p - s.c), 0.0f));
  }
};
//@run {"grid": 1, "block": 128, "args": ["s32*128%3", "f32*384", "f32*128", "s32*128"]}
extern "C" __global__ void variant_visit(const int* __restrict__ kind, const float* __restrict__ dims,
                                         float* __restrict__ area, int* __restrict__ index) {
  int t = threadIdx.x;
  float d0 = fabsf(dims[t * 3]), d1 = fabsf(dims[t * 3 + 1]), d2 = fabsf(dims[t * 3 + 2]);
  Shape s;
  switch (kind[t]) {
    case 0: s = Circle{d0}; break;
    case 1: s = Rect{d0, d1}; break;
    default: s = Tri{d0 + 1.0f, d1 + 1.0f, d2 + 1.0f}; break;
  }
  if (cuda::std::holds_alternative<Rect>(s) && d0 > 3.0f) s.emplace<Circle>(Circle{d1});
  area[t] = cuda::std::visit(Area{}, s);
  index[t] = (int)s.index();
}

// bitset<100> per thread: a sieve-like mask, shifts, counts, tests.
//@run {"grid": 1, "block": 64, "args": ["u64*128", "u32*64", "u32*64"]}
extern "C" __global__ void bitset_ops(const uint64_t* __restrict__ words, uint32_t* __restrict__ counts,
                                      uint32_t* __restrict__ firsts) {
  int t = threadIdx.x;
  cuda::std::bitset<100> bits(words[2 * t]);
  cuda::std::bitset<100> hi(words[2 * t + 1]);
  bits |= hi << 50;
  cuda::std::bitset<100> sieve;
  for (int p = 2; p < 100; ++p)
    if (bits.test(p))
      for (int m = p * p; m < 100; m += p) sieve.set(m);
  bits &= ~sieve;
  bits.flip(t % 100);
  uint32_t first = 100;
  for (int i = 0; i < 100; ++i)
    if (bits[i]) { first = i; break; }
  counts[t] = (uint32_t)bits.count() | ((bits.any() ? 1u : 0u) << 16) | ((uint32_t)(bits >> 37).count() << 20);
  firsts[t] = first;
}
