// Warp-level intrinsics: shuffles, votes, match, redux, and bit manipulation.
//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*64"]}
extern "C" __global__ void warp_allreduce_shfl(const float* x, float* out) {
  float v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  float up = __shfl_up_sync(0xffffffffu, x[threadIdx.x], 1);
  float dn = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 2, 16);
  out[threadIdx.x] = v + up * 2.0f + dn * 4.0f + __shfl_sync(0xffffffffu, x[threadIdx.x], 7);
}

//@run {"grid": 1, "block": 64, "args": ["s32*64%5", "u32*64"]}
extern "C" __global__ void votes_and_match(const int* x, unsigned* out) {
  int v = x[threadIdx.x];
  unsigned b = __ballot_sync(0xffffffffu, v > 2);
  int any = __any_sync(0xffffffffu, v == 4), all = __all_sync(0xffffffffu, v >= 0);
  unsigned m = __match_any_sync(0xffffffffu, v);
  int pred; unsigned ma = __match_all_sync(0xffffffffu, v & 0, &pred);
  out[threadIdx.x] = b ^ (m << 1) ^ any ^ (all << 1) ^ (pred << 2) ^ ma ^ __activemask();
}

//@run {"grid": 1, "block": 64, "args": ["u32*64", "u32*64"]}
extern "C" __global__ void redux_ops(const unsigned* x, unsigned* out) {
  unsigned v = x[threadIdx.x];
  out[threadIdx.x] = __reduce_add_sync(0xffffffffu, v & 0xffff) ^ __reduce_max_sync(0xffffffffu, v)
      ^ __reduce_min_sync(0xffffffffu, v) ^ __reduce_or_sync(0xffffffffu, v) ^ __reduce_and_sync(0xffffffffu, v)
      ^ __reduce_xor_sync(0xffffffffu, v) ^ (unsigned)__reduce_max_sync(0xffffffffu, (int)v);
}

//@run {"grid": 1, "block": 64, "args": ["u32*64", "u64*64", "u32*64"]}
extern "C" __global__ void bit_tricks(const unsigned* x, const unsigned long long* y, unsigned* out) {
  unsigned v = x[threadIdx.x]; unsigned long long w = y[threadIdx.x];
  out[threadIdx.x] = __popc(v) + __clz(v) * 3 + __ffs(v) * 5 + __brev(v) + __popcll(w) + __clzll(w)
      + __ffsll(w) + __byte_perm(v, (unsigned)w, 0x5140) + __funnelshift_l(v, (unsigned)w, v & 31)
      + __umulhi(v, (unsigned)w) + (unsigned)(__umul64hi(w, v) >> 3) + __sad(v, (unsigned)w, 7u) + __vabsdiffu4(v, (unsigned)w);
}

//@run {"grid": 1, "block": 64, "args": ["s32*64%4", "s32*64"]}
extern "C" __global__ void partial_mask_shuffle(const int* x, int* out) {
  int v = x[threadIdx.x];
  int r = v;
  if (v != 0) {
    unsigned mask = __activemask();
    int leader = __ffs(mask) - 1;
    r = __shfl_sync(mask, v * 10, leader) + __popc(mask);
  }
  out[threadIdx.x] = r;
}
