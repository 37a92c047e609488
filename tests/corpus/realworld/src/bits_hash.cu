// Bit manipulation as hashing, compression and succinct-data-structure code writes it with
// the CUDA integer intrinsics: MurmurHash3 (x86_32 and the 64-bit finaliser), xxHash32,
// FNV-1a, a CRC-32 by bytes and by slicing, rank/select over a bit vector (__popc, __fns,
// __ffs, __clz), Morton codes (bit spreading), bit reversal and funnel rotates, Gray codes,
// and a SplitMix/xorshift generator with __umul64hi.
#include <stdint.h>

__device__ __forceinline__ unsigned rotl32(unsigned x, int r) { return __funnelshift_l(x, x, r); }

__device__ unsigned murmur3_32(const unsigned* key, int words, unsigned seed) {
  const unsigned c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
  unsigned h = seed;
  for (int i = 0; i < words; ++i) {
    unsigned k = key[i];
    k *= c1; k = rotl32(k, 15); k *= c2;
    h ^= k; h = rotl32(h, 13); h = h * 5 + 0xe6546b64u;
  }
  h ^= words * 4;
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
  return h;
}

//@run {"grid": 2, "block": 64, "args": ["u32*2048", "u32*128"]}
extern "C" __global__ void murmur_rows(const unsigned* keys, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = murmur3_32(keys + i * 16, 16, 0x9747b28cu);
}

//@run {"grid": 1, "block": 128, "args": ["u32*1024", "u32*128"]}
extern "C" __global__ void xxhash32_rows(const unsigned* data, unsigned* out) {
  const unsigned P1 = 2654435761u, P2 = 2246822519u, P3 = 3266489917u, P4 = 668265263u, P5 = 374761393u;
  const unsigned* p = data + threadIdx.x * 8;
  unsigned v1 = 7u + P1 + P2, v2 = 7u + P2, v3 = 7u, v4 = 7u - P1;
  for (int i = 0; i < 8; i += 4) {
    v1 = rotl32(v1 + p[i] * P2, 13) * P1;
    v2 = rotl32(v2 + p[i + 1] * P2, 13) * P1;
    v3 = rotl32(v3 + p[i + 2] * P2, 13) * P1;
    v4 = rotl32(v4 + p[i + 3] * P2, 13) * P1;
  }
  unsigned h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18) + 32u;
  h = rotl32(h + (p[0] ^ p[7]) * P3, 17) * P4;
  h ^= h >> 15; h *= P2; h ^= h >> 13; h *= P3; h ^= h >> 16;
  out[threadIdx.x] = h + P5;
}

//@run {"grid": 1, "block": 64, "args": ["u8*4096", "u32*64"]}
extern "C" __global__ void crc32_bytes(const unsigned char* data, unsigned* out) {
  __shared__ unsigned table[256];
  for (int n = threadIdx.x; n < 256; n += blockDim.x) {
    unsigned c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  __syncthreads();
  const unsigned char* p = data + threadIdx.x * 64;
  unsigned crc = 0xffffffffu, fnv = 2166136261u;
  for (int i = 0; i < 64; ++i) {
    crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    fnv = (fnv ^ p[i]) * 16777619u;
  }
  out[threadIdx.x] = ~crc ^ __brev(fnv);
}

// rank/select over a 4096-bit vector: rank by popcounts, select by __fns within a word.
//@run {"grid": 1, "block": 128, "args": ["u32*128", "u32*128%4096", "u32*256"]}
extern "C" __global__ void rank_select(const unsigned* bits, const unsigned* queries, unsigned* out) {
  __shared__ unsigned prefix[129];
  int t = threadIdx.x;
  if (t == 0) {
    unsigned s = 0;
    for (int w = 0; w < 128; ++w) { prefix[w] = s; s += __popc(bits[w]); }
    prefix[128] = s;
  }
  __syncthreads();
  unsigned q = queries[t];
  unsigned w = q >> 5, b = q & 31;
  unsigned rank = prefix[w] + __popc(bits[w] & ((1u << b) - 1u));
  // select: the position of the (rank+1)-th set bit at or after word w, or 0xffffffff
  unsigned want = rank - prefix[w] + 1u, pos = 0xffffffffu;
  for (unsigned v = w; v < 128; ++v) {
    unsigned c = __popc(bits[v]);
    if (want <= c) { pos = v * 32 + __fns(bits[v], 0, want); break; }
    want -= c;
  }
  out[2 * t] = rank ^ (__clz(bits[w]) << 24) ^ (__ffs(bits[w]) << 16);
  out[2 * t + 1] = pos;
}

__device__ __forceinline__ unsigned long long spread3(unsigned long long x) {
  x &= 0x1fffffull;
  x = (x | x << 32) & 0x1f00000000ffffull;
  x = (x | x << 16) & 0x1f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

//@run {"grid": 2, "block": 128, "args": ["u32*768", "u64*256", "u32*256"]}
extern "C" __global__ void morton_gray(const unsigned* xyz, unsigned long long* codes, unsigned* gray) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = xyz[3 * i], y = xyz[3 * i + 1], z = xyz[3 * i + 2];
  codes[i] = spread3(x) | spread3(y) << 1 | spread3(z) << 2;
  unsigned g = x ^ (x >> 1);                 // binary -> Gray
  unsigned b = g;                            // Gray -> binary by prefix XOR
  b ^= b >> 16; b ^= b >> 8; b ^= b >> 4; b ^= b >> 2; b ^= b >> 1;
  gray[i] = g ^ __byte_perm(b, y, 0x7351) ^ __funnelshift_r(y, z, x & 31) ^ __funnelshift_lc(z, y, y);
}

//@run {"grid": 1, "block": 64, "args": ["u64*64", "u64*256"]}
extern "C" __global__ void splitmix_xorshift(const unsigned long long* seeds, unsigned long long* out) {
  unsigned long long s = seeds[threadIdx.x];
  for (int k = 0; k < 4; ++k) {
    s += 0x9e3779b97f4a7c15ull;
    unsigned long long z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    unsigned long long x = z ^ (z << 13);
    x ^= x >> 7; x ^= x << 17;
    out[threadIdx.x * 4 + k] = x ^ __umul64hi(z, 0xd1342543de82ef95ull) ^ (unsigned long long)__clzll(x)
                               ^ ((unsigned long long)__popcll(z) << 56) ^ __brevll(s);
  }
}
