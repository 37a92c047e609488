// Sorting and merging written by hand, as libraries without CUB do it: a block-wide LSD radix
// sort of key-value pairs with 4-bit digits ranked inside each warp by __match_any_sync and
// lane masks (stable), digit counts per warp scanned in shared memory; a merge-path merge of
// two sorted runs (built in the kernel by scanning small gaps) with a diagonal binary search per
// thread; lower/upper-bound ranks by binary search; and a warp-level odd-even transposition
// sort of float keys with NaN-free compare-exchanges through __shfl_sync.

#define RS_THREADS 128
#define RS_WARPS (RS_THREADS / 32)

//@run {"grid": 2, "block": 128, "args": ["u32*256", "u32*256", "u32*256"]}
extern "C" __global__ void radix_sort_match_any(const unsigned* __restrict__ keys_in, unsigned* __restrict__ keys_out,
                                                unsigned* __restrict__ vals_out) {
  __shared__ unsigned keys[RS_THREADS], vals[RS_THREADS];
  __shared__ unsigned counts[RS_WARPS][16], digit_base[16];
  unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  keys[t] = keys_in[blockIdx.x * RS_THREADS + t];
  vals[t] = t;
  __syncthreads();
  unsigned lt_mask = (1u << lane) - 1u;
  for (int shift = 0; shift < 32; shift += 4) {
    unsigned k = keys[t], v = vals[t], digit = (k >> shift) & 15u;
    if (t < RS_WARPS * 16) counts[t / 16][t % 16] = 0;
    __syncthreads();
    unsigned peers = __match_any_sync(0xffffffffu, digit);
    unsigned rank_in_warp = __popc(peers & lt_mask);
    if (rank_in_warp == 0) counts[warp][digit] = __popc(peers);
    __syncthreads();
    if (t < 16) {                                         // exclusive scan over (digit, warp)
      unsigned base = 0;
      for (unsigned d = 0; d < t; ++d)
        for (unsigned w = 0; w < RS_WARPS; ++w) base += counts[w][d];
      digit_base[t] = base;
    }
    __syncthreads();
    unsigned before = digit_base[digit];
    for (unsigned w = 0; w < warp; ++w) before += counts[w][digit];
    __syncthreads();
    keys[before + rank_in_warp] = k;
    vals[before + rank_in_warp] = v;
    __syncthreads();
  }
  keys_out[blockIdx.x * RS_THREADS + t] = keys[t];
  vals_out[blockIdx.x * RS_THREADS + t] = vals[t];
}

// Inclusive scan of gaps (0..7) in shared memory: a sorted run of 256 values.
__device__ void sorted_run(const int* __restrict__ gaps, int* run, unsigned t) {
  run[t] = gaps[t];
  run[t + 128] = gaps[t + 128];
  __syncthreads();
  if (t == 0)
    for (int i = 1; i < 256; ++i) run[i] += run[i - 1];
  __syncthreads();
}

__device__ int merge_split(int diag, const int* a, int na, const int* b, int nb) {
  int lo = max(0, diag - nb), hi = min(diag, na);
  while (lo < hi) {                                       // a-items taken before the diagonal
    int mid = (lo + hi) >> 1;
    if (a[mid] <= b[diag - 1 - mid]) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

//@run {"grid": 1, "block": 128, "args": ["s32*256%8", "s32*256%8", "s32*512", "u32*512"]}
extern "C" __global__ void merge_path_merge(const int* __restrict__ gaps_a, const int* __restrict__ gaps_b,
                                            int* __restrict__ merged, unsigned* __restrict__ source) {
  __shared__ int a[256], b[256];
  unsigned t = threadIdx.x;
  sorted_run(gaps_a, a, t);
  sorted_run(gaps_b, b, t);
  const int per = 4, diag = t * per;
  int i = merge_split(diag, a, 256, b, 256), j = diag - i;
  for (int k = 0; k < per; ++k) {
    bool take_a = j >= 256 || (i < 256 && a[i] <= b[j]);  // stable: ties from a first
    merged[diag + k] = take_a ? a[i] : b[j];
    source[diag + k] = take_a ? (unsigned)i : 0x80000000u | (unsigned)j;
    if (take_a) ++i; else ++j;
  }
}

//@run {"grid": 1, "block": 128, "args": ["s32*256%8", "s32*128", "u32*256"]}
extern "C" __global__ void binary_search_ranks(const int* __restrict__ gaps, const int* __restrict__ queries,
                                               unsigned* __restrict__ ranks) {
  __shared__ int run[256];
  unsigned t = threadIdx.x;
  sorted_run(gaps, run, t);
  int q = queries[t] & 1023;
  int lo = 0, hi = 256;
  while (lo < hi) { int mid = (lo + hi) >> 1; if (run[mid] < q) lo = mid + 1; else hi = mid; }
  int lower = lo;
  hi = 256;
  while (lo < hi) { int mid = (lo + hi) >> 1; if (run[mid] <= q) lo = mid + 1; else hi = mid; }
  ranks[2 * t] = lower;
  ranks[2 * t + 1] = lo - lower;                         // how many equal q
}

// 32 floats per warp, one per lane: 32 rounds of odd-even transposition by shuffles.
//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128", "s32*128"]}
extern "C" __global__ void warp_odd_even_sort(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ origin) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  float v = in[g];
  int id = (int)lane;
  for (int round = 0; round < 32; ++round) {
    bool left = ((lane ^ round) & 1) == 0;               // pairs (even, odd) then (odd, even)
    int partner = left ? (int)lane + 1 : (int)lane - 1;
    bool active = partner >= 0 && partner < 32;
    float pv = __shfl_sync(0xffffffffu, v, active ? partner : lane);
    int pid = __shfl_sync(0xffffffffu, id, active ? partner : lane);
    if (active) {
      bool swap = left ? (pv < v || (pv == v && pid < id)) : (v < pv || (v == pv && id < pid));
      if (swap) { v = pv; id = pid; }
    }
  }
  out[g] = v;
  origin[g] = id;
}
