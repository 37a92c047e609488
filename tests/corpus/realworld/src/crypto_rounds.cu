// Integer-heavy inner loops as cryptographic code writes them: SHA-256 compression rounds
// (rotates through funnel shifts, sigma functions, a 64-word schedule), ChaCha20 quarter
// rounds on a 16-word state, Keccak-f[1600] on 64-bit lanes (64-bit rotates, chi, iota), and
// a 256-bit modular multiply-accumulate with 32-bit limbs and carry chains.
#include <stdint.h>

__device__ __forceinline__ uint32_t rotr(uint32_t x, int n) { return __funnelshift_r(x, x, n); }
__device__ __forceinline__ uint64_t rotl64(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

__constant__ uint32_t K256[64] = {
  0x428a2f98,0x71374491,0xb5c0fbcf,0xe9b5dba5,0x3956c25b,0x59f111f1,0x923f82a4,0xab1c5ed5,
  0xd807aa98,0x12835b01,0x243185be,0x550c7dc3,0x72be5d74,0x80deb1fe,0x9bdc06a7,0xc19bf174,
  0xe49b69c1,0xefbe4786,0x0fc19dc6,0x240ca1cc,0x2de92c6f,0x4a7484aa,0x5cb0a9dc,0x76f988da,
  0x983e5152,0xa831c66d,0xb00327c8,0xbf597fc7,0xc6e00bf3,0xd5a79147,0x06ca6351,0x14292967,
  0x27b70a85,0x2e1b2138,0x4d2c6dfc,0x53380d13,0x650a7354,0x766a0abb,0x81c2c92e,0x92722c85,
  0xa2bfe8a1,0xa81a664b,0xc24b8b70,0xc76c51a3,0xd192e819,0xd6990624,0xf40e3585,0x106aa070,
  0x19a4c116,0x1e376c08,0x2748774c,0x34b0bcb5,0x391c0cb3,0x4ed8aa4a,0x5b9cca4f,0x682e6ff3,
  0x748f82ee,0x78a5636f,0x84c87814,0x8cc70208,0x90befffa,0xa4506ceb,0xbef9a3f7,0xc67178f2};

//@run {"grid": 1, "block": 32, "args": ["u32*512", "u32*256"]}
extern "C" __global__ void sha256_block(const uint32_t* __restrict__ msg, uint32_t* __restrict__ digest) {
  int t = threadIdx.x;
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) w[i] = __byte_perm(msg[t * 16 + i], 0, 0x0123);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t h[8] = {0x6a09e667,0xbb67ae85,0x3c6ef372,0xa54ff53a,0x510e527f,0x9b05688c,0x1f83d9ab,0x5be0cd19};
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = hh + S1 + ch + K256[i] + w[i];
    uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = S0 + maj;
    hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  uint32_t out[8] = {a, b, c, d, e, f, g, hh};
  for (int i = 0; i < 8; ++i) digest[t * 8 + i] = out[i] + h[i];
}

#define QR(a, b, c, d) a += b; d ^= a; d = __funnelshift_l(d, d, 16); c += d; b ^= c; b = __funnelshift_l(b, b, 12); \
                       a += b; d ^= a; d = __funnelshift_l(d, d, 8);  c += d; b ^= c; b = __funnelshift_l(b, b, 7);

//@run {"grid": 1, "block": 64, "args": ["u32*1024", "u32*1024"]}
extern "C" __global__ void chacha20_block(const uint32_t* __restrict__ in, uint32_t* __restrict__ out) {
  int t = threadIdx.x;
  uint32_t x[16], s[16];
  for (int i = 0; i < 16; ++i) s[i] = x[i] = in[t * 16 + i];
  for (int r = 0; r < 10; ++r) {
    QR(x[0], x[4], x[8], x[12]) QR(x[1], x[5], x[9], x[13]) QR(x[2], x[6], x[10], x[14]) QR(x[3], x[7], x[11], x[15])
    QR(x[0], x[5], x[10], x[15]) QR(x[1], x[6], x[11], x[12]) QR(x[2], x[7], x[8], x[13]) QR(x[3], x[4], x[9], x[14])
  }
  for (int i = 0; i < 16; ++i) out[t * 16 + i] = x[i] + s[i];
}

__constant__ uint64_t RC[24] = {
  0x0000000000000001ull,0x0000000000008082ull,0x800000000000808aull,0x8000000080008000ull,
  0x000000000000808bull,0x0000000080000001ull,0x8000000080008081ull,0x8000000000008009ull,
  0x000000000000008aull,0x0000000000000088ull,0x0000000080008009ull,0x000000008000000aull,
  0x000000008000808bull,0x800000000000008bull,0x8000000000008089ull,0x8000000000008003ull,
  0x8000000000008002ull,0x8000000000000080ull,0x000000000000800aull,0x800000008000000aull,
  0x8000000080008081ull,0x8000000000008080ull,0x0000000080000001ull,0x8000000080008008ull};
__constant__ int ROT[25] = {0,1,62,28,27,36,44,6,55,20,3,10,43,25,39,41,45,15,21,8,18,2,61,56,14};

//@run {"grid": 1, "block": 32, "args": ["u64*800", "u64*800"]}
extern "C" __global__ void keccak_f1600(const uint64_t* __restrict__ in, uint64_t* __restrict__ out) {
  int t = threadIdx.x;
  uint64_t A[25];
  for (int i = 0; i < 25; ++i) A[i] = in[t * 25 + i];
  for (int round = 0; round < 24; ++round) {
    uint64_t C[5], D[5], B[25];
    for (int x = 0; x < 5; ++x) C[x] = A[x] ^ A[x + 5] ^ A[x + 10] ^ A[x + 15] ^ A[x + 20];
    for (int x = 0; x < 5; ++x) D[x] = C[(x + 4) % 5] ^ rotl64(C[(x + 1) % 5], 1);
    for (int i = 0; i < 25; ++i) A[i] ^= D[i % 5];
    for (int x = 0; x < 5; ++x)
      for (int y = 0; y < 5; ++y) {
        int r = ROT[x + 5 * y];
        B[y + 5 * ((2 * x + 3 * y) % 5)] = r ? rotl64(A[x + 5 * y], r) : A[x + 5 * y];
      }
    for (int x = 0; x < 5; ++x)
      for (int y = 0; y < 5; ++y)
        A[x + 5 * y] = B[x + 5 * y] ^ (~B[(x + 1) % 5 + 5 * y] & B[(x + 2) % 5 + 5 * y]);
    A[0] ^= RC[round];
  }
  for (int i = 0; i < 25; ++i) out[t * 25 + i] = A[i];
}

//@run {"grid": 1, "block": 32, "args": ["u32*256", "u32*256", "u32*256"]}
extern "C" __global__ void mul_acc_256(const uint32_t* __restrict__ a, const uint32_t* __restrict__ b, uint32_t* __restrict__ out) {
  int t = threadIdx.x;
  uint32_t r[16] = {0};
  for (int i = 0; i < 8; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < 8; ++j) {
      uint64_t p = (uint64_t)a[t * 8 + i] * b[t * 8 + j] + r[i + j] + carry;
      r[i + j] = (uint32_t)p;
      carry = p >> 32;
    }
    r[i + 8] = (uint32_t)carry;
  }
  for (int k = 0; k < 8; ++k) out[t * 8 + k] = r[k] ^ r[k + 8];
}
