// Sorting networks and searches: bitonic sort in shared memory, odd-even merge, binary search.
//@run {"grid": 1, "block": 128, "args": ["u32*128", "u32*128"]}
extern "C" __global__ void bitonic_sort_128(const unsigned* in, unsigned* out) {
  __shared__ unsigned s[128];
  unsigned t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (unsigned k = 2; k <= 128; k <<= 1)
    for (unsigned j = k >> 1; j > 0; j >>= 1) {
      unsigned p = t ^ j;
      if (p > t) {
        bool up = (t & k) == 0;
        if ((s[t] > s[p]) == up) { unsigned tmp = s[t]; s[t] = s[p]; s[p] = tmp; }
      }
      __syncthreads();
    }
  out[t] = s[t];
}

//@run {"grid": 1, "block": 64, "args": ["s32*256", "s32*64", "s32*64"]}
extern "C" __global__ void lower_bound_search(const int* sorted_unused, const int* keys, int* pos) {
  // a sorted table built in place: 4*i - 300
  int key = keys[threadIdx.x] % 1000, lo = 0, hi = 256;
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    if (4 * mid - 300 < key) lo = mid + 1; else hi = mid;
  }
  pos[threadIdx.x] = lo;
}

//@run {"grid": 1, "block": 32, "args": ["f32*256", "f32*256"]}
extern "C" __global__ void odd_even_rows(const float* in, float* out) {
  float v[8];
  for (int i = 0; i < 8; ++i) v[i] = in[threadIdx.x * 8 + i];
  for (int pass = 0; pass < 8; ++pass)
    for (int i = pass & 1; i + 1 < 8; i += 2)
      if (v[i] > v[i + 1]) { float t = v[i]; v[i] = v[i + 1]; v[i + 1] = t; }
  for (int i = 0; i < 8; ++i) out[threadIdx.x * 8 + i] = v[i];
}
