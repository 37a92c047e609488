// CUB block- and warp-wide reductions, as used for per-block partial sums.
#include <cub/cub.cuh>

//@run {"grid": 4, "block": 128, "args": ["f32*512", "f32*4"]}
extern "C" __global__ void block_sum_f32(const float* in, float* out) {
  typedef cub::BlockReduce<float, 128> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  float v = in[blockIdx.x * 128 + threadIdx.x];
  float s = Reduce(tmp).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

//@run {"grid": 2, "block": 256, "args": ["s32*2048", "s32*2"]}
extern "C" __global__ void block_max_items(const int* in, int* out) {
  typedef cub::BlockReduce<int, 256, cub::BLOCK_REDUCE_WARP_REDUCTIONS> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  int items[4];
  for (int i = 0; i < 4; ++i) items[i] = in[(blockIdx.x * 256 + threadIdx.x) * 4 + i];
  int m = Reduce(tmp).Reduce(items, cuda::maximum<int>());
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}

//@run {"grid": 1, "block": 128, "args": ["u32*128", "u32*4", "s32=100"]}
extern "C" __global__ void warp_sum_partial(const unsigned* in, unsigned* out, int valid) {
  typedef cub::WarpReduce<unsigned> WR;
  __shared__ typename WR::TempStorage tmp[4];
  int warp = threadIdx.x / 32;
  unsigned v = threadIdx.x < valid ? in[threadIdx.x] : 0u;
  unsigned s = WR(tmp[warp]).Sum(v, valid - warp * 32 > 32 ? 32 : (valid - warp * 32 > 0 ? valid - warp * 32 : 1));
  if (threadIdx.x % 32 == 0) out[warp] = s;
}

//@run {"grid": 2, "block": 64, "args": ["f64*128", "f64*2"]}
extern "C" __global__ void block_sum_f64_raking(const double* in, double* out) {
  typedef cub::BlockReduce<double, 64, cub::BLOCK_REDUCE_RAKING> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  double s = Reduce(tmp).Sum(in[blockIdx.x * 64 + threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}
