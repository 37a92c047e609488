// CUB block radix sort of keys and of key-value pairs.
#include <cub/cub.cuh>

//@run {"grid": 1, "block": 64, "args": ["u32*256", "u32*256"]}
extern "C" __global__ void sort_keys_u32(const unsigned* in, unsigned* out) {
  typedef cub::BlockRadixSort<unsigned, 64, 4> Sort;
  __shared__ typename Sort::TempStorage tmp;
  unsigned keys[4];
  for (int i = 0; i < 4; ++i) keys[i] = in[threadIdx.x * 4 + i];
  Sort(tmp).Sort(keys);
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = keys[i];
}

//@run {"grid": 1, "block": 32, "args": ["f32*64", "s32*64", "f32*64", "s32*64"]}
extern "C" __global__ void sort_pairs_desc_f32(const float* k, const int* v, float* ko, int* vo) {
  typedef cub::BlockRadixSort<float, 32, 2, int> Sort;
  __shared__ typename Sort::TempStorage tmp;
  float keys[2]; int vals[2];
  for (int i = 0; i < 2; ++i) { keys[i] = k[threadIdx.x * 2 + i]; vals[i] = v[threadIdx.x * 2 + i]; }
  Sort(tmp).SortDescendingBlockedToStriped(keys, vals);
  for (int i = 0; i < 2; ++i) { ko[i * 32 + threadIdx.x] = keys[i]; vo[i * 32 + threadIdx.x] = vals[i]; }
}

//@run {"grid": 1, "block": 32, "args": ["u64*64", "u64*64"]}
extern "C" __global__ void sort_keys_u64_bits(const unsigned long long* in, unsigned long long* out) {
  typedef cub::BlockRadixSort<unsigned long long, 32, 2> Sort;
  __shared__ typename Sort::TempStorage tmp;
  unsigned long long keys[2] = {in[threadIdx.x * 2], in[threadIdx.x * 2 + 1]};
  Sort(tmp).Sort(keys, 8, 40);
  out[threadIdx.x * 2] = keys[0]; out[threadIdx.x * 2 + 1] = keys[1];
}
