// Byte-oriented parsing kernels as log processors and data loaders write them: a dense
// `switch` state machine (a lexer for numbers, words and punctuation), UTF-8 decoding with
// validation, base64 encoding and decoding through a shared-memory table, decimal integer
// parsing with overflow saturation, and a per-thread case-insensitive substring search.
#include <stdint.h>

// A lexer over a 32-byte record per thread: classify bytes by a dense switch, count tokens.
//@run {"grid": 2, "block": 64, "args": ["u8*4096%128", "u32*512"]}
extern "C" __global__ void lex_records(const unsigned char* text, unsigned* counts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned char* s = text + 32 * i;
  unsigned numbers = 0, words = 0, puncts = 0, spaces = 0;
  int state = 0;
  for (int k = 0; k < 32; ++k) {
    unsigned char c = s[k];
    int cls;
    switch (c >> 3) {
      case 4: cls = (c == ' ') ? 0 : 3; break;
      case 5: cls = 3; break;
      case 6: case 7: cls = 1; break;
      case 8: case 9: case 10: case 11: cls = (c == '@') ? 3 : 2; break;
      case 12: case 13: case 14: case 15: cls = (c == '`') ? 3 : 2; break;
      case 1: cls = (c == '\t' || c == '\n') ? 0 : 4; break;
      default: cls = 4; break;
    }
    switch (state * 5 + cls) {
      case 0: case 5: case 10: case 15: case 20: ++spaces; state = 0; break;
      case 1: case 6: case 16: case 21: ++numbers; state = 1; break;
      case 11: state = 2; break;          // a digit inside a word stays a word
      case 2: case 7: case 17: case 22: ++words; state = 2; break;
      case 12: state = 2; break;
      case 3: case 8: case 13: case 18: case 23: ++puncts; state = 3; break;
      default: state = 4; break;
    }
  }
  counts[4 * i] = numbers; counts[4 * i + 1] = words;
  counts[4 * i + 2] = puncts; counts[4 * i + 3] = spaces | (state << 16);
}

// UTF-8 decoding of 16 bytes per thread: code points summed, invalid sequences counted.
//@run {"grid": 2, "block": 64, "args": ["u8*2048", "u32*256"]}
extern "C" __global__ void utf8_decode(const unsigned char* bytes, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned char* s = bytes + 16 * i;
  unsigned sum = 0, bad = 0;
  int k = 0;
  while (k < 16) {
    unsigned c = s[k];
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || k + len > 16) { ++bad; ++k; continue; }
    unsigned cp = len == 1 ? c : c & (0x7f >> len);
    bool ok = true;
    for (int j = 1; j < len; ++j) {
      unsigned cc = s[k + j];
      ok = ok && (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (!ok || (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || cp > 0x10ffff) { ++bad; ++k; continue; }
    sum += cp;
    k += len;
  }
  out[2 * i] = sum;
  out[2 * i + 1] = bad;
}

__constant__ char kB64[65] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Base64: each thread encodes 12 bytes into 16 characters and decodes them back through a
// reverse table built in shared memory.
//@run {"grid": 2, "block": 64, "args": ["u8*1536", "u8*2048", "u8*1536"]}
extern "C" __global__ void base64_roundtrip(const unsigned char* in, char* enc, unsigned char* dec) {
  __shared__ unsigned char rev[128];
  for (int c = threadIdx.x; c < 128; c += blockDim.x) rev[c] = 0xff;
  __syncthreads();
  if (threadIdx.x < 64) rev[(unsigned char)kB64[threadIdx.x]] = threadIdx.x;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned char* s = in + 12 * i;
  char* e = enc + 16 * i;
  for (int g = 0; g < 4; ++g) {
    unsigned w = (s[3 * g] << 16) | (s[3 * g + 1] << 8) | s[3 * g + 2];
    e[4 * g] = kB64[w >> 18];
    e[4 * g + 1] = kB64[(w >> 12) & 63];
    e[4 * g + 2] = kB64[(w >> 6) & 63];
    e[4 * g + 3] = kB64[w & 63];
  }
  unsigned char* d = dec + 12 * i;
  for (int g = 0; g < 4; ++g) {
    unsigned w = 0;
    for (int j = 0; j < 4; ++j) w = (w << 6) | rev[(unsigned char)e[4 * g + j] & 127];
    d[3 * g] = w >> 16; d[3 * g + 1] = w >> 8; d[3 * g + 2] = w;
  }
}

// Decimal parsing: up to 12 characters per field, optional sign, saturating at INT_MAX/MIN;
// a non-digit ends the number.
//@run {"grid": 2, "block": 64, "args": ["u8*1536%16", "s32*128", "u32*128"]}
extern "C" __global__ void parse_ints(const unsigned char* raw, int* values, unsigned* used) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned char* s = raw + 12 * i;
  int k = 0;
  bool neg = false;
  unsigned char c0 = s[0] < 10 ? '0' + s[0] : (s[0] == 10 ? '-' : (s[0] == 11 ? '+' : ' '));
  if (c0 == '-' || c0 == '+') { neg = c0 == '-'; k = 1; }
  long long v = 0;
  for (; k < 12; ++k) {
    unsigned char c = s[k] < 10 ? '0' + s[k] : ' ';
    if (c < '0' || c > '9') break;
    v = v * 10 + (c - '0');
    if (v > 0x80000000LL) v = 0x80000000LL;
  }
  long long r = neg ? -v : v;
  values[i] = r > 0x7fffffffLL ? 0x7fffffff : (int)r;
  used[i] = k;
}

__device__ __forceinline__ unsigned char lower(unsigned char c) {
  return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

// Case-insensitive search of a 4-byte needle in a 64-byte haystack per thread.
//@run {"grid": 2, "block": 64, "args": ["u8*8192%4", "u8*4%4", "s32*128"]}
extern "C" __global__ void find_needle(const unsigned char* hay, const unsigned char* needle, int* pos) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned char* h = hay + 64 * i;
  unsigned char n[4];
  for (int j = 0; j < 4; ++j) n[j] = lower('A' + needle[j] + (j & 1) * 32);
  int found = -1;
  for (int k = 0; k + 4 <= 64 && found < 0; ++k) {
    int j = 0;
    while (j < 4 && lower('A' + h[k + j] + ((k + j) % 3 == 0 ? 32 : 0)) == n[j]) ++j;
    if (j == 4) found = k;
  }
  pos[i] = found;
}
