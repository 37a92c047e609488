// CUB block and warp prefix scans (stream compaction, offsets).
#include <cub/cub.cuh>

//@run {"grid": 2, "block": 128, "args": ["s32*256%100", "s32*256"]}
extern "C" __global__ void block_inclusive_sum(const int* in, int* out) {
  typedef cub::BlockScan<int, 128> Scan;
  __shared__ typename Scan::TempStorage tmp;
  int i = blockIdx.x * 128 + threadIdx.x;
  int v = in[i], r;
  Scan(tmp).InclusiveSum(v, r);
  out[i] = r;
}

//@run {"grid": 1, "block": 64, "args": ["f32*256", "f32*256", "f32*1"]}
extern "C" __global__ void block_exclusive_items(const float* in, float* out, float* total) {
  typedef cub::BlockScan<float, 64, cub::BLOCK_SCAN_WARP_SCANS> Scan;
  __shared__ typename Scan::TempStorage tmp;
  float items[4];
  for (int i = 0; i < 4; ++i) items[i] = in[threadIdx.x * 4 + i];
  float agg;
  Scan(tmp).ExclusiveSum(items, items, agg);
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = items[i];
  if (threadIdx.x == 0) total[0] = agg;
}

//@run {"grid": 1, "block": 64, "args": ["u32*64%2", "u32*64", "u32*1"]}
extern "C" __global__ void compact_flags(const unsigned* flags, unsigned* idx, unsigned* count) {
  typedef cub::BlockScan<unsigned, 64, cub::BLOCK_SCAN_RAKING_MEMOIZE> Scan;
  __shared__ typename Scan::TempStorage tmp;
  unsigned f = flags[threadIdx.x] & 1u, pos, agg;
  Scan(tmp).ExclusiveSum(f, pos, agg);
  if (f) idx[pos] = threadIdx.x;
  if (threadIdx.x == 0) count[0] = agg;
}

//@run {"grid": 1, "block": 64, "args": ["s32*64", "s32*64"]}
extern "C" __global__ void warp_inclusive_max(const int* in, int* out) {
  typedef cub::WarpScan<int> WS;
  __shared__ typename WS::TempStorage tmp[2];
  int r;
  WS(tmp[threadIdx.x / 32]).InclusiveScan(in[threadIdx.x], r, cuda::maximum<int>());
  out[threadIdx.x] = r;
}
