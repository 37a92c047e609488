// Control flow that structured examples avoid: goto into the middle of a loop (an
// irreducible loop with two entries), a state machine over gotos, loops left from deep
// nesting, lane-dependent trip counts with early returns, and recursion with a
// data-dependent depth.
#include <stdint.h>

//@run {"grid": 1, "block": 64, "args": ["s32*64", "s32*64"]}
extern "C" __global__ void two_entry_loop(const int* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x;
  int v = in[t], n = (v & 15) + 1, acc = t;
  if (v & 16) goto middle;
top:
  acc = acc * 3 + 1;
middle:
  acc ^= acc >> 3;
  if (--n > 0) goto top;
  out[t] = acc;
}

//@run {"grid": 1, "block": 64, "args": ["u8*256", "s32*64"]}
extern "C" __global__ void goto_state_machine(const uint8_t* __restrict__ text, int* __restrict__ out) {
  // count numbers (runs of digits, optionally signed) in a lane's 4-byte window, with a
  // state machine written as gotos
  int t = threadIdx.x, i = t * 4, end = i + 4, count = 0, value = 0, sum = 0;
  uint8_t c;
start:
  if (i >= end) goto done;
  c = text[i++] % 16;
  if (c < 10) { value = c; goto digits; }
  if (c == 10) goto sign;
  goto start;
sign:
  if (i >= end) goto done;
  c = text[i++] % 16;
  if (c < 10) { value = -(int)c; goto digits; }
  goto start;
digits:
  if (i >= end) { ++count; sum += value; goto done; }
  c = text[i++] % 16;
  if (c < 10) { value = value * 10 + (value < 0 ? -(int)c : c); goto digits; }
  ++count; sum += value;
  if (c == 10) goto sign;
  goto start;
done:
  out[t] = count * 100000 + sum;
}

//@run {"grid": 1, "block": 96, "args": ["s32*96", "s32*96"]}
extern "C" __global__ void nested_search(const int* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x, target = in[t] & 63, found = -1;
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      for (int c = 0; c < 4; ++c) {
        int key = (a * 7 + b * 3 + c * 11 + t) & 63;
        if (key == target && ((a + b + c) & 1)) { found = a * 100 + b * 10 + c; goto out_of_loops; }
        if (key == 63 - target) break;
      }
      if (b * a > 40) goto out_of_loops;
    }
  }
out_of_loops:
  if (found < 0 && (t & 3) == 1) return;   // these lanes leave out untouched
  out[t] = found;
}

__device__ int collatz_depth(unsigned x, int depth) {
  if (x <= 1 || depth > 200) return depth;
  return collatz_depth((x & 1) ? 3 * x + 1 : x >> 1, depth + 1);
}

__device__ int ackermann_small(int m, int n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann_small(m - 1, 1);
  return ackermann_small(m - 1, ackermann_small(m, n - 1));
}

//@run {"grid": 1, "block": 32, "args": ["u32*32", "s32*64"]}
extern "C" __global__ void recursive_depths(const unsigned* __restrict__ in, int* __restrict__ out) {
  int t = threadIdx.x;
  out[t * 2] = collatz_depth((in[t] & 1023) + 1, 0);
  out[t * 2 + 1] = ackermann_small(t & 1 ? 1 : 2, in[t] & 3);
}
