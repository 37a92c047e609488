// SIMD-within-a-word code as sequence-alignment, image and checksum kernels write it: the
// CUDA math API's per-byte and per-halfword intrinsics (__vadd4, __vsubss2, __vmaxu4,
// __vabsdiff4, __vsadu4, __vcmpgtu4, __vavgu4, __vhaddu2, __vseteq2, __vneg4, __vabsss4, ...)
// that NVVM lowers to PTX video instructions, prmt/byte_perm mask arithmetic, or plain
// integer sequences, depending on the intrinsic. A Smith-Waterman-style anti-diagonal scorer
// on 16-bit lanes, a 4x4 block SAD over packed bytes, a saturated image blend, and a mix of
// every remaining intrinsic over random words.
#include <stdint.h>

//@run {"grid": 2, "block": 64, "args": ["u32*128", "u32*128", "u32*1536"]}
extern "C" __global__ void simd_every_intrinsic(const unsigned* a, const unsigned* b, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = a[i], y = b[i];
  unsigned* o = out + i * 12;
  o[0] = __vadd4(x, y) ^ __vadd2(x, y) * 3u;
  o[1] = __vaddss4(x, y) + __vaddss2(x, y) + __vaddus4(x, y) + __vaddus2(x, y);
  o[2] = __vsub4(x, y) ^ __vsub2(x, y) ^ __vsubss4(x, y) ^ __vsubss2(x, y);
  o[3] = __vsubus4(x, y) + (__vsubus2(x, y) << 1);
  o[4] = __vabsdiffu4(x, y) ^ __vabsdiffs4(x, y) ^ (__vabsdiffu2(x, y) << 3) ^ __vabsdiffs2(x, y);
  o[5] = __vmaxu4(x, y) + __vmaxs4(x, y) + __vminu2(x, y) + __vmins2(x, y);
  o[6] = __vmaxu2(x, y) ^ __vmaxs2(x, y) ^ __vminu4(x, y) ^ __vmins4(x, y);
  o[7] = __vavgu4(x, y) ^ __vavgu2(x, y) ^ __vhaddu4(x, y) ^ __vhaddu2(x, y) ^ __vavgs2(x, y);
  o[8] = __vcmpgtu4(x, y) ^ __vcmpges2(x, y) ^ __vcmpeq4(x, y) ^ __vcmpltu2(x, y) ^ __vcmpne4(x, y);
  o[9] = __vseteq4(x, y) + __vsetgtu2(x, y) + __vsetles4(x, y) + __vsetgeu4(x, y) + __vsetlts2(x, y);
  o[10] = __vsadu4(x, y) + __vsads2(x, y) * 7u + __vsadu2(x, y) * 13u + __vsads4(x, y) * 17u;
  o[11] = __vabs4(x) ^ __vabsss4(y) ^ __vabs2(y) ^ __vabsss2(x) ^ __vneg4(x) ^ __vnegss2(y) ^ __vneg2(y) ^ __vnegss4(x);
}

// Anti-diagonal local alignment of 2x16-bit query lanes against a reference, as the
// inter-task SIMD aligners write it: each thread scores two alignments packed in one word.
//@run {"grid": 1, "block": 32, "args": ["u32*2048%4", "u32*64%4", "u32*32"]}
extern "C" __global__ void sw_pairs(const unsigned* query, const unsigned* ref, unsigned* best) {
  const int QLEN = 64, RLEN = 64;
  const unsigned MATCH = 0x00030003u, MISMATCH = 0x00010001u, GAP = 0x00020002u;
  int t = threadIdx.x;
  unsigned h[QLEN + 1];
#pragma unroll 1
  for (int q = 0; q <= QLEN; ++q) h[q] = 0;
  unsigned top = 0;
#pragma unroll 1
  for (int r = 0; r < RLEN; ++r) {
    unsigned rc = ref[r] * 0x00010001u;           // the reference base in both lanes
    unsigned diag = 0, left = 0;
#pragma unroll 4
    for (int q = 1; q <= QLEN; ++q) {
      unsigned qc = query[t * QLEN + q - 1];
      qc = (qc & 3u) | ((qc >> 2 & 3u) << 16);      // two query bases, one a lane
      unsigned eq = __vcmpeq2(qc, rc);              // 0xffff where the bases match
      unsigned score = __vsubus2(__vaddus2(diag, MATCH & eq), MISMATCH & ~eq);
      unsigned up = h[q];
      score = __vmaxu2(score, __vsubus2(up, GAP));
      score = __vmaxu2(score, __vsubus2(left, GAP));
      diag = up;
      left = score;
      h[q] = score;
      top = __vmaxu2(top, score);
    }
  }
  best[t] = top;
}

// 4x4 block sum of absolute differences over packed 8-bit pixels (motion search).
//@run {"grid": 1, "block": 64, "args": ["u32*1024", "u32*1088", "u32*64"]}
extern "C" __global__ void block_sad4x4(const unsigned* cur, const unsigned* refp, unsigned* sad) {
  int b = threadIdx.x;                      // one 4x4 block: 4 rows of one word each
  unsigned bestv = 0xffffffffu;
  for (int dy = 0; dy < 4; ++dy) {
    unsigned acc = 0;
#pragma unroll
    for (int row = 0; row < 4; ++row) {
      unsigned c = cur[b * 16 + row * 4];
      unsigned r0 = refp[b * 16 + row * 4 + dy], r1 = refp[b * 16 + row * 4 + dy + 1];
      unsigned r = __byte_perm(r0, r1, 0x4321 + dy * 0x1111 - (dy ? 0x1111 : 0));
      acc = __vsadu4(c, r) + acc;
    }
    bestv = min(bestv, acc * 4 + dy);
  }
  sad[b] = bestv;
}

// Saturated alpha-less blend and brightness of RGBA8 pixels, two ways.
//@run {"grid": 2, "block": 128, "args": ["u32*256", "u32*256", "s32=3", "u32*512"]}
extern "C" __global__ void rgba_blend(const unsigned* p, const unsigned* q, int shift, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = p[i], y = q[i];
  unsigned half = __vavgu4(x, y);
  unsigned bright = __vaddus4(half, 0x10101010u * (unsigned)shift);
  unsigned dark = __vsubus4(half, (y >> shift) & 0x0f0f0f0fu);
  out[2 * i] = __vmaxu4(bright, dark) ^ __vcmpgtu4(bright, x);
  out[2 * i + 1] = __vminu4(__vabsdiffu4(x, y), dark);
}
