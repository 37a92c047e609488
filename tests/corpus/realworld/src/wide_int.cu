// 64- and 128-bit integer work of hashing, bignum and fixed-point code: __int128 products and
// shifts, 64-bit division and remainder by run-time values, mulhi, funnel shifts, bit
// reversal/counts, byte permutes, and a switch that nvcc may lower to a jump table.

//@run {"grid": 1, "block": 64, "args": ["u64*64", "u64*64", "u64*256"]}
extern "C" __global__ void int128_mul_shift(const unsigned long long* __restrict__ a,
                                            const unsigned long long* __restrict__ b,
                                            unsigned long long* __restrict__ out) {
  int t = threadIdx.x;
  unsigned __int128 p = (unsigned __int128)a[t] * b[t];
  __int128 s = (__int128)(long long)a[t] * (long long)b[t];
  unsigned __int128 q = p + ((unsigned __int128)b[t] << 64) - a[t];
  out[t * 4 + 0] = (unsigned long long)(p >> 64);
  out[t * 4 + 1] = (unsigned long long)(s >> 67);
  out[t * 4 + 2] = (unsigned long long)(q >> (t & 63)) ^ (unsigned long long)q;
  out[t * 4 + 3] = __umul64hi(a[t], b[t]) + (unsigned long long)__mul64hi((long long)a[t], (long long)b[t]);
}

//@run {"grid": 2, "block": 64, "args": ["s64*128", "s64*128%1000", "s64*512"]}
extern "C" __global__ void div_mod_64(const long long* __restrict__ a, const long long* __restrict__ b,
                                      long long* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  long long d = b[i] == 0 ? 7 : b[i];
  unsigned long long ua = (unsigned long long)a[i], ud = (unsigned long long)(d < 0 ? -d : d);
  out[i * 4 + 0] = a[i] / d;
  out[i * 4 + 1] = a[i] % d;
  out[i * 4 + 2] = (long long)(ua / ud);
  out[i * 4 + 3] = (long long)(ua % 1000003ull) + a[i] / 37;
}

//@run {"grid": 1, "block": 128, "args": ["u32*128", "u32*128", "u32*128%40", "u32*512"]}
extern "C" __global__ void funnel_bits(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
                                       const unsigned* __restrict__ s, unsigned* __restrict__ out) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t], n = s[t];
  out[t * 4 + 0] = __funnelshift_l(x, y, n) ^ __funnelshift_rc(x, y, n);
  out[t * 4 + 1] = __brev(x) + __popc(y) * 3 + __clz(x | 1) + __ffs(y);
  out[t * 4 + 2] = __byte_perm(x, y, n & 0x7777) ^ (unsigned)__brevll(((unsigned long long)x << 32) | y);
  out[t * 4 + 3] = (unsigned)__popcll(((unsigned long long)y << 32) | x) + __clzll((long long)x) + __ffsll((long long)y << 3);
}

__device__ __noinline__ unsigned op_of(unsigned k, unsigned x, unsigned y) {
  switch (k) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x ^ (y << 3);
    case 4: return x / (y | 1);
    case 5: return x % (y | 1);
    case 6: return min(x, y);
    case 7: return max(x, y) >> 2;
    case 8: return __usad(x, y, 5);
    default: return ~x;
  }
}

//@run {"grid": 1, "block": 96, "args": ["u32*96%11", "u32*96", "u32*96", "u32*96"]}
extern "C" __global__ void switch_table(const unsigned* __restrict__ k, const unsigned* __restrict__ x,
                                        const unsigned* __restrict__ y, unsigned* __restrict__ out) {
  int t = threadIdx.x;
  unsigned r = op_of(k[t], x[t], y[t]);
  switch (k[t] & 3) {     // inline switch too
    case 0: r += 11; break;
    case 1: r ^= 0x5a5a; break;
    case 2: r = r * 17 + 3; break;
    default: r = __umulhi(r, 0x9e3779b9u);
  }
  out[t] = r;
}
