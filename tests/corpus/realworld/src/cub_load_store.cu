// CUB BlockLoad/BlockStore with transposes, histogram, discontinuity, exchange.
#include <cub/cub.cuh>

//@run {"grid": 2, "block": 32, "args": ["f32*256", "f32*256", "s32=200"]}
extern "C" __global__ void load_transpose_scale(const float* in, float* out, int n) {
  typedef cub::BlockLoad<float, 32, 4, cub::BLOCK_LOAD_TRANSPOSE> Load;
  typedef cub::BlockStore<float, 32, 4, cub::BLOCK_STORE_TRANSPOSE> Store;
  __shared__ union { typename Load::TempStorage l; typename Store::TempStorage s; } tmp;
  int base = blockIdx.x * 128;
  float items[4];
  Load(tmp.l).Load(in + base, items, n - base, -1.0f);
  for (int i = 0; i < 4; ++i) items[i] = items[i] * 2.0f + 1.0f;
  __syncthreads();
  Store(tmp.s).Store(out + base, items, n - base);
}

//@run {"grid": 1, "block": 64, "args": ["u32*256", "u32*256"]}
extern "C" __global__ void load_vectorized(const unsigned* in, unsigned* out) {
  typedef cub::BlockLoad<unsigned, 64, 4, cub::BLOCK_LOAD_VECTORIZE> Load;
  typedef cub::BlockStore<unsigned, 64, 4, cub::BLOCK_STORE_WARP_TRANSPOSE> Store;
  __shared__ typename Store::TempStorage st;
  unsigned items[4];
  Load().Load(in, items);
  for (int i = 0; i < 4; ++i) items[i] ^= items[i] >> 7;
  Store(st).Store(out, items);
}

//@run {"grid": 1, "block": 64, "args": ["u8*256", "u32*64"]}
extern "C" __global__ void block_histogram_bytes(const unsigned char* in, unsigned* hist) {
  typedef cub::BlockHistogram<unsigned char, 64, 4, 64, cub::BLOCK_HISTO_ATOMIC> Hist;
  __shared__ typename Hist::TempStorage tmp;
  __shared__ unsigned smem_hist[64];
  unsigned char items[4];
  for (int i = 0; i < 4; ++i) items[i] = in[threadIdx.x * 4 + i] & 63;
  Hist(tmp).Histogram(items, smem_hist);
  __syncthreads();
  hist[threadIdx.x] = smem_hist[threadIdx.x];
}

//@run {"grid": 1, "block": 32, "args": ["s32*128%4", "s32*128"]}
extern "C" __global__ void head_flags(const int* in, int* flags) {
  typedef cub::BlockDiscontinuity<int, 32> Disc;
  __shared__ typename Disc::TempStorage tmp;
  int items[4], f[4];
  for (int i = 0; i < 4; ++i) items[i] = in[threadIdx.x * 4 + i];
  Disc(tmp).FlagHeads(f, items, cuda::std::not_equal_to<int>());
  for (int i = 0; i < 4; ++i) flags[threadIdx.x * 4 + i] = f[i];
}
