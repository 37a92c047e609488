// CUB's block- and warp-level collectives the corpus did not use yet: BlockMergeSort (pairs,
// a custom comparator, a partial tile), WarpMergeSort on 16-lane logical warps,
// BlockAdjacentDifference, BlockExchange (striped/blocked/warp-striped and a scatter by rank),
// BlockShuffle, BlockRunLengthDecode, WarpLoad/WarpExchange/WarpStore, and BlockScan over a
// non-commutative operator (composition of affine maps: a linear recurrence).
#include <cub/block/block_merge_sort.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_shuffle.cuh>
#include <cub/block/block_run_length_decode.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_store.cuh>
#include <cub/warp/warp_exchange.cuh>
#include <stdint.h>

struct AbsLess {
  __device__ bool operator()(const int& a, const int& b) const {
    int ua = a < 0 ? -a : a, ub = b < 0 ? -b : b;
    return ua < ub || (ua == ub && a < b);
  }
};

// 64 threads x 4 items: sort (key, index) pairs by |key|, stably by value for ties.
//@run {"grid": 2, "block": 64, "args": ["s32*512%2001", "s32*512", "s32*512"]}
extern "C" __global__ void merge_sort_pairs_abs(const int* __restrict__ in, int* __restrict__ keys_out,
                                                int* __restrict__ idx_out) {
  using Sort = cub::BlockMergeSort<int, 64, 4, int>;
  __shared__ typename Sort::TempStorage temp;
  int keys[4], vals[4];
  int base = blockIdx.x * 256 + threadIdx.x * 4;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    keys[i] = in[base + i] - 1000;
    vals[i] = base + i;
  }
  Sort(temp).Sort(keys, vals, AbsLess());
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    keys_out[base + i] = keys[i];
    idx_out[base + i] = vals[i];
  }
}

// A partial tile: only `valid` of 256 floats are real; the rest get +inf and stay at the end.
//@run {"grid": 1, "block": 64, "args": ["f32*256", "s32=201", "f32*256"]}
extern "C" __global__ void merge_sort_partial_tile(const float* __restrict__ in, int valid, float* __restrict__ out) {
  using Sort = cub::BlockMergeSort<float, 64, 4>;
  __shared__ typename Sort::TempStorage temp;
  float keys[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int idx = threadIdx.x * 4 + i;
    keys[i] = idx < valid ? in[idx] : __int_as_float(0x7f800000);
  }
  Sort(temp).Sort(keys, cuda::std::less<float>(), valid, __int_as_float(0x7f800000));
#pragma unroll
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = keys[i];
}

// Two 16-lane logical warps per warp, 4 keys per lane: each sorts 64 u16 keys descending.
//@run {"grid": 1, "block": 64, "args": ["u16*256", "u16*256"]}
extern "C" __global__ void warp_merge_sort_16(const uint16_t* __restrict__ in, uint16_t* __restrict__ out) {
  constexpr int LW = 16, ITEMS = 4, GROUPS = 64 / LW;
  using Sort = cub::WarpMergeSort<uint16_t, ITEMS, LW>;
  __shared__ typename Sort::TempStorage temp[GROUPS];
  int group = threadIdx.x / LW;
  uint16_t k[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) k[i] = in[threadIdx.x * ITEMS + i];
  Sort(temp[group]).Sort(k, cuda::std::greater<uint16_t>());
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) out[threadIdx.x * ITEMS + i] = k[i];
}

struct AbsDiff {
  __device__ int operator()(const int& a, const int& b) const { return a > b ? a - b : b - a; }
};

// Differences with the left neighbour (the tile's first item against the previous tile's
// last, read from global memory) and with the right one in a partial tile.
//@run {"grid": 2, "block": 32, "args": ["s32*256%1000", "s32*256", "s32*256", "s32=100"]}
extern "C" __global__ void adjacent_differences(const int* __restrict__ in, int* __restrict__ left,
                                                int* __restrict__ right, int valid) {
  using Adj = cub::BlockAdjacentDifference<int, 32>;
  __shared__ typename Adj::TempStorage temp;
  int items[4], out[4];
  int base = blockIdx.x * 128;
#pragma unroll
  for (int i = 0; i < 4; ++i) items[i] = in[base + threadIdx.x * 4 + i];
  int pred = blockIdx.x > 0 ? in[base - 1] : 0;
  Adj(temp).SubtractLeft(items, out, AbsDiff(), pred);
#pragma unroll
  for (int i = 0; i < 4; ++i) left[base + threadIdx.x * 4 + i] = out[i];
  __syncthreads();
  Adj(temp).SubtractRightPartialTile(items, out, cuda::std::minus<int>(), valid);
#pragma unroll
  for (int i = 0; i < 4; ++i) right[base + threadIdx.x * 4 + i] = out[i];
}

// Striped loads to blocked (a per-thread run of 8), a local prefix max, back to warp-striped
// stores; then each item scattered to the slot given by a rank (a permutation).
//@run {"grid": 1, "block": 64, "args": ["s32*512%5000", "s32*512", "s32*512"]}
extern "C" __global__ void exchange_layouts(const int* __restrict__ in, int* __restrict__ runmax,
                                            int* __restrict__ scattered) {
  using Ex = cub::BlockExchange<int, 64, 8>;
  __shared__ typename Ex::TempStorage temp;
  int items[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) items[i] = in[i * 64 + threadIdx.x];
  Ex(temp).StripedToBlocked(items);
#pragma unroll
  for (int i = 1; i < 8; ++i) items[i] = max(items[i], items[i - 1]);
  __syncthreads();
  Ex(temp).BlockedToWarpStriped(items);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < 8; ++i) runmax[warp * 256 + i * 32 + lane] = items[i];
  int ranks[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    int j = threadIdx.x * 8 + i;
    ranks[i] = (j * 197 + 31) & 511;      // 197 is odd: a permutation of 0..511
  }
  __syncthreads();
  Ex(temp).ScatterToStriped(items, ranks);
#pragma unroll
  for (int i = 0; i < 8; ++i) scattered[i * 64 + threadIdx.x] = items[i];
}

// BlockShuffle: a value from `distance` threads away, a rotation, and Up/Down of blocked items.
//@run {"grid": 1, "block": 128, "args": ["f32*512", "f32*128", "f32*128", "f32*512", "s32=5"]}
extern "C" __global__ void block_shuffles(const float* __restrict__ in, float* __restrict__ off,
                                          float* __restrict__ rot, float* __restrict__ up, int distance) {
  using Sh = cub::BlockShuffle<float, 128>;
  __shared__ typename Sh::TempStorage temp;
  float v = in[threadIdx.x], o = -1.0f, r = -1.0f;
  Sh(temp).Offset(v, o, distance);
  __syncthreads();
  Sh(temp).Rotate(v, r, (unsigned)distance);
  off[threadIdx.x] = o;
  rot[threadIdx.x] = r;
  // (Up leaves thread 0's prev[0] unset: zero here, so every output is defined)
  float items[4], prev[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int i = 0; i < 4; ++i) items[i] = in[threadIdx.x * 4 + i];
  __syncthreads();
  float block_suffix;
  Sh(temp).Up(items, prev, block_suffix);
#pragma unroll
  for (int i = 0; i < 4; ++i) up[threadIdx.x * 4 + i] = prev[i] - items[i] + (threadIdx.x == 0 ? block_suffix : 0.0f);
}

// Run-length decoding: 32 threads x 2 runs (value, length 0..5), decoded 4 items per thread
// per window until every run is out.
//@run {"grid": 1, "block": 32, "args": ["u8*64", "u32*64%6", "u8*512", "u32*2"]}
extern "C" __global__ void run_length_decode(const uint8_t* __restrict__ values, const uint32_t* __restrict__ lengths,
                                             uint8_t* __restrict__ out, uint32_t* __restrict__ total) {
  using Rld = cub::BlockRunLengthDecode<uint8_t, 32, 2, 4>;
  __shared__ typename Rld::TempStorage temp;
  uint8_t v[2];
  uint32_t len[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    v[i] = values[threadIdx.x * 2 + i];
    len[i] = lengths[threadIdx.x * 2 + i];
  }
  uint32_t decoded_size = 0;
  Rld rld(temp, v, len, decoded_size);
  uint32_t windows = 0;
  for (uint32_t offset = 0; offset < decoded_size && offset < 512; offset += 32 * 4) {
    uint8_t items[4];
    rld.RunLengthDecode(items, offset);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      uint32_t at = offset + threadIdx.x * 4 + i;
      if (at < decoded_size && at < 512) out[at] = items[i];
    }
    ++windows;
  }
  if (threadIdx.x == 0) {
    total[0] = decoded_size;
    total[1] = windows;
  }
}

// WarpLoad (transposing), a per-lane sort-free min/max over its 8 blocked items, WarpExchange
// back to striped, WarpStore (vectorised).
//@run {"grid": 1, "block": 64, "args": ["u32*512", "u32*512", "u32*128"]}
extern "C" __global__ void warp_load_exchange_store(const uint32_t* __restrict__ in, uint32_t* __restrict__ out,
                                                    uint32_t* __restrict__ minmax) {
  constexpr int ITEMS = 8;
  using Load = cub::WarpLoad<uint32_t, ITEMS, cub::WARP_LOAD_TRANSPOSE, 32>;
  using Exch = cub::WarpExchange<uint32_t, ITEMS, 32>;
  using Store = cub::WarpStore<uint32_t, ITEMS, cub::WARP_STORE_VECTORIZE, 32>;
  __shared__ typename Load::TempStorage load_temp[2];
  __shared__ typename Exch::TempStorage ex_temp[2];
  __shared__ typename Store::TempStorage store_temp[2];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint32_t items[ITEMS];
  Load(load_temp[warp]).Load(in + warp * 256, items);
  uint32_t lo = items[0], hi = items[0];
#pragma unroll
  for (int i = 1; i < ITEMS; ++i) {
    lo = min(lo, items[i]);
    hi = max(hi, items[i]);
  }
  minmax[(warp * 32 + lane) * 2] = lo;
  minmax[(warp * 32 + lane) * 2 + 1] = hi;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) items[i] = (items[i] >> 3) ^ (items[i] << 7) ^ (uint32_t)i;
  uint32_t striped[ITEMS];
  Exch(ex_temp[warp]).BlockedToStriped(items, striped);
  Store(store_temp[warp]).Store(out + warp * 256, striped);
}

// x_i = a_i * x_{i-1} + b_i for 256 items: a block scan over (a, b) pairs under composition.
struct Affine {
  float a, b;
};
struct Compose {
  __device__ Affine operator()(const Affine& first, const Affine& then) const {
    return {then.a * first.a, fmaf(then.a, first.b, then.b)};
  }
};
//@run {"grid": 2, "block": 64, "args": ["f32*512", "f32*512", "f32*512", "f32=0.5"]}
extern "C" __global__ void affine_recurrence_scan(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ x, float x0) {
  using Scan = cub::BlockScan<Affine, 64>;
  __shared__ typename Scan::TempStorage temp;
  int base = blockIdx.x * 256 + threadIdx.x * 4;
  Affine items[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) items[i] = {0.25f * a[base + i], b[base + i]};
  Scan(temp).InclusiveScan(items, items, Compose());
#pragma unroll
  for (int i = 0; i < 4; ++i) x[base + i] = fmaf(items[i].a, x0, items[i].b);
}
