// Byte-oriented text processing as GPU parsers and tokenizers write it: per-lane scans with
// data-dependent early exits (strlen, find a delimiter), SWAR tricks on 32-bit words (zero-byte
// detection, byte compares with __vcmpeq4, case folding), byte gathers with __byte_perm,
// unaligned reads assembled from bytes, signed char arithmetic, and a small tokenizer
// classifying characters through a switch.
#include <stdint.h>

__device__ __forceinline__ uint32_t has_zero_byte(uint32_t v) { return (v - 0x01010101u) & ~v & 0x80808080u; }

//@run {"grid": 1, "block": 64, "args": ["u8*4096", "s32*64"]}
extern "C" __global__ void lane_strlen(const uint8_t* __restrict__ text, int* __restrict__ len) {
  int t = threadIdx.x;
  const uint8_t* s = text + t * 64;
  int n = 0;
  while (n < 63 && (s[n] % 23) != 0) ++n;        // a lane's string ends at a byte = 0 mod 23
  len[t] = n;
}

//@run {"grid": 1, "block": 64, "args": ["u32*1024", "u32*64"]}
extern "C" __global__ void swar_words(const uint32_t* __restrict__ words, uint32_t* __restrict__ out) {
  int t = threadIdx.x;
  uint32_t zeros = 0, spaces = 0, folded = 0, swapped = 0;
  for (int i = 0; i < 16; ++i) {
    uint32_t w = words[t * 16 + i] & 0x7f7f7f7fu;
    zeros += __popc(has_zero_byte(w));
    spaces += __popc(__vcmpeq4(w, 0x20202020u)) / 8;
    uint32_t upper = __vcmpgtu4(w, 0x40404040u) & __vcmpltu4(w, 0x5b5b5b5bu);
    folded ^= w | (upper & 0x20202020u);
    swapped += __byte_perm(w, folded, 0x4152);
  }
  out[t] = zeros * 1000003u + spaces * 7919u + (folded ^ swapped);
}

//@run {"grid": 1, "block": 32, "args": ["u8*2048", "u64*32"]}
extern "C" __global__ void unaligned_reads(const uint8_t* __restrict__ bytes, uint64_t* __restrict__ out) {
  int t = threadIdx.x;
  const uint8_t* p = bytes + t * 61 + (t % 7);        // any alignment
  uint64_t acc = 0;
  for (int k = 0; k < 5; ++k) {
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= (uint64_t)p[k * 9 + b] << (8 * b);
    acc = acc * 31 + v;
    signed char c = (signed char)p[k * 9];
    acc += (int64_t)c * (k + 1);
  }
  out[t] = acc;
}

enum { SPACE, DIGIT, ALPHA, PUNCT, OTHER };

__device__ int cls(uint8_t c) {
  switch (c) {
    case ' ': case '\t': case '\n': return SPACE;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9': return DIGIT;
    case ',': case '.': case ';': case ':': case '{': case '}': case '[': case ']': case '"': return PUNCT;
    default: return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? ALPHA : OTHER;
  }
}

//@run {"grid": 1, "block": 32, "args": ["u8*4096", "s32*160"]}
extern "C" __global__ void tokenize_counts(const uint8_t* __restrict__ text, int* __restrict__ counts) {
  int t = threadIdx.x;
  const uint8_t* s = text + t * 128;
  int c[5] = {0, 0, 0, 0, 0};
  int prev = SPACE, tokens = 0;
  for (int i = 0; i < 128; ++i) {
    uint8_t ch = (uint8_t)(32 + s[i] % 96);
    int k = cls(ch);
    c[k]++;
    if (k != SPACE && (k != prev || k == PUNCT)) ++tokens;
    prev = k;
  }
  for (int k = 0; k < 4; ++k) counts[t * 5 + k] = c[k];
  counts[t * 5 + 4] = tokens * 16 + c[4];
}
