// Quantized inference kernels in the style of llama.cpp / ggml: 4-bit blocks (a half scale and
// 32 nibbles) dequantized by shifts and masks, q4 x q8 dot products with __dp4a and a half2
// scale pair, a matrix-vector product with a warp reduction by __shfl_xor_sync, 8-bit weights
// through an int8 tensor-core MMA written as inline PTX (ldmatrix + mma.sync m16n8k32 s8),
// and a row-wise RMS norm with rsqrtf. Byte-level loads of packed structs, half <-> float.
#include <cuda_fp16.h>
#include <stdint.h>

struct block_q4 { __half d; uint8_t qs[16]; };          // 32 weights: (q - 8) * d
struct block_q8 { __half d; __half s; int8_t qs[32]; };  // 32 activations: q * d, s = d * sum(q)

//@run {"grid": 1, "block": 64, "args": ["u8*1152", "f32*2048"]}
extern "C" __global__ void dequantize_q4(const block_q4* __restrict__ blocks, float* __restrict__ out) {
  int b = threadIdx.x;                                     // one block of 32 weights per thread
  const block_q4& q = blocks[b];
  float d = __half2float(q.d);
  if (!isfinite(d)) d = 1.0f;                              // random bytes may hold inf/nan halves
  for (int j = 0; j < 16; ++j) {
    int lo = q.qs[j] & 0x0f, hi = q.qs[j] >> 4;
    out[b * 32 + j] = (lo - 8) * d;
    out[b * 32 + j + 16] = (hi - 8) * d;
  }
}

__device__ __forceinline__ int unpack_nibbles(uint32_t v, int half) {
  return (v >> (4 * half)) & 0x0f0f0f0f;
}

//@run {"grid": 1, "block": 128, "args": ["u8*2304", "u8*4608", "f32*4"]}
extern "C" __global__ void gemv_q4_q8(const block_q4* __restrict__ w, const block_q8* __restrict__ x, float* __restrict__ y) {
  // 4 rows x 32 blocks of 32; a warp per row, a lane per block
  int row = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const block_q4& wb = w[row * 32 + lane];
  const block_q8& xb = x[lane];
  int sumi = 0;
  for (int j = 0; j < 4; ++j) {
    uint32_t packed;
    memcpy(&packed, wb.qs + 4 * j, 4);
    int xlo, xhi;
    memcpy(&xlo, xb.qs + 4 * j, 4);
    memcpy(&xhi, xb.qs + 16 + 4 * j, 4);
    sumi = __dp4a(unpack_nibbles(packed, 0), xlo, sumi);
    sumi = __dp4a(unpack_nibbles(packed, 1), xhi, sumi);
  }
  float dw = __half2float(wb.d), dx = __half2float(xb.d), sx = __half2float(xb.s);
  float v = dw * (sumi * dx - 8.0f * sx);
  if (!isfinite(v)) v = 0.0f;
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if (lane == 0) y[row] = v;
}

//@run {"grid": 1, "block": 32, "args": ["s8*512", "s8*256", "s32*128"]}
extern "C" __global__ void mma_s8_tile(const int8_t* __restrict__ a, const int8_t* __restrict__ b, int* __restrict__ c) {
  // one m16n8k32 tile: A 16x32 row-major through shared memory and ldmatrix, B 32x8 (stored n-major)
  __shared__ __align__(16) int8_t sa[16 * 32];
  int lane = threadIdx.x;
  for (int i = lane; i < 16 * 32 / 4; i += 32) reinterpret_cast<int*>(sa)[i] = reinterpret_cast<const int*>(a)[i];
  __syncwarp();
  uint32_t a0, a1, a2, a3;
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(sa + (lane % 16) * 32 + (lane / 16) * 16);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(addr));
  int g = lane >> 2, t = lane & 3;
  uint32_t b0 = *reinterpret_cast<const uint32_t*>(b + g * 32 + t * 4);
  uint32_t b1 = *reinterpret_cast<const uint32_t*>(b + g * 32 + 16 + t * 4);
  int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  c[g * 8 + 2 * t] = d0;
  c[g * 8 + 2 * t + 1] = d1;
  c[(g + 8) * 8 + 2 * t] = d2;
  c[(g + 8) * 8 + 2 * t + 1] = d3;
}

//@run {"grid": 4, "block": 128, "args": ["f32*2048", "f32*512", "f32*2048"]}
extern "C" __global__ void rms_norm(const float* __restrict__ x, const float* __restrict__ weight, float* __restrict__ out) {
  __shared__ float partial[4];
  const int n = 512;
  const float* row = x + blockIdx.x * n;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) ss += row[i] * row[i];
  for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = partial[0] + partial[1] + partial[2] + partial[3];
  float scale = rsqrtf(total / n + 1e-6f);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[blockIdx.x * n + i] = row[i] * scale * weight[i];
}
