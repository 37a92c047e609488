// Dense matrix products as hand-tuned BLAS-like kernels write them: DGEMM with 4x4 register
// blocking and double2 loads from shared tiles, SGEMM with 8x8 register blocking (64 live
// accumulators) under __launch_bounds__(64, 2), a bf16 tensor-core tile through inline PTX
// `mma.sync.m16n8k16` with fragments loaded by hand (no ldmatrix), and a batched small GEMM
// with per-matrix pointers read from an array of 64-bit pointers.
#include <cuda_bf16.h>

// C (32x32) = A (32x32) * B (32x32), one 8x8 thread block, each thread a 4x4 tile.
//@run {"grid": 1, "block": [8, 8, 1], "args": ["f64*1024", "f64*1024", "f64*1024"]}
extern "C" __global__ void dgemm_4x4_regblock(const double* __restrict__ A, const double* __restrict__ B,
                                              double* __restrict__ C) {
  __shared__ double As[8][32], Bs[8][32];                // k-slices of 8
  int tx = threadIdx.x, ty = threadIdx.y, t = ty * 8 + tx;
  double acc[4][4] = {};
  for (int k0 = 0; k0 < 32; k0 += 8) {
    for (int i = t; i < 256; i += 64) {
      int r = i / 8, k = i % 8;                          // A's row r, column k0 + k -> As[k][r]
      As[k][r] = A[r * 32 + k0 + k];
      Bs[i / 32][i % 32] = B[(k0 + i / 32) * 32 + i % 32];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      double2 a01 = *reinterpret_cast<const double2*>(&As[k][ty * 4]);
      double2 a23 = *reinterpret_cast<const double2*>(&As[k][ty * 4 + 2]);
      double2 b01 = *reinterpret_cast<const double2*>(&Bs[k][tx * 4]);
      double2 b23 = *reinterpret_cast<const double2*>(&Bs[k][tx * 4 + 2]);
      double a[4] = {a01.x, a01.y, a23.x, a23.y}, b[4] = {b01.x, b01.y, b23.x, b23.y};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; j += 2)
      *reinterpret_cast<double2*>(&C[(ty * 4 + i) * 32 + tx * 4 + j]) = make_double2(acc[i][j], acc[i][j + 1]);
}

// C (64x64) = alpha A B + beta C; 64 threads, each an 8x8 tile; K = 32 staged by 4.
//@run {"grid": 1, "block": 64, "args": ["f32*2048", "f32*2048", "f32*4096", "f32=1.5", "f32=-0.5"]}
extern "C" __global__ void __launch_bounds__(64, 2) sgemm_8x8_regblock(const float* __restrict__ A, const float* __restrict__ B,
                                                                      float* __restrict__ C, float alpha, float beta) {
  __shared__ float As[4][64], Bs[4][64];
  int t = threadIdx.x, tr = (t / 8) * 8, tc = (t % 8) * 8;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < 32; k0 += 4) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      As[k][t] = A[t * 32 + k0 + k];                     // A is 64x32 row-major
      Bs[k][t] = B[(k0 + k) * 64 + t];                   // B is 32x64 row-major
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float4 a0 = *reinterpret_cast<const float4*>(&As[k][tr]), a1 = *reinterpret_cast<const float4*>(&As[k][tr + 4]);
      float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tc]), b1 = *reinterpret_cast<const float4*>(&Bs[k][tc + 4]);
      float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float* c = &C[(tr + i) * 64 + tc + j];
      *c = alpha * acc[i][j] + beta * *c;
    }
}

__device__ __forceinline__ unsigned pack_bf16(const __nv_bfloat16* p, int i0, int i1) {
  unsigned lo = __bfloat16_as_ushort(p[i0]), hi = __bfloat16_as_ushort(p[i1]);
  return lo | (hi << 16);
}

// D (16x8, f32) = A (16x16 bf16, row-major) x B (16x8 bf16, column-major) + C, one warp.
//@run {"grid": 2, "block": 32, "args": ["bf16*512", "bf16*256", "f32*256", "f32*256"]}
extern "C" __global__ void mma_bf16_m16n8k16(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                             const float* __restrict__ C, float* __restrict__ D) {
#if __CUDA_ARCH__ >= 800
  const __nv_bfloat16* a = A + blockIdx.x * 256;
  const __nv_bfloat16* b = B + blockIdx.x * 128;
  int lane = threadIdx.x, g = lane >> 2, q = lane & 3;
  unsigned a0 = pack_bf16(a, g * 16 + q * 2, g * 16 + q * 2 + 1);
  unsigned a1 = pack_bf16(a, (g + 8) * 16 + q * 2, (g + 8) * 16 + q * 2 + 1);
  unsigned a2 = pack_bf16(a, g * 16 + q * 2 + 8, g * 16 + q * 2 + 9);
  unsigned a3 = pack_bf16(a, (g + 8) * 16 + q * 2 + 8, (g + 8) * 16 + q * 2 + 9);
  unsigned b0 = pack_bf16(b, g * 16 + q * 2, g * 16 + q * 2 + 1);            // column g, rows 2q, 2q+1
  unsigned b1 = pack_bf16(b, g * 16 + q * 2 + 8, g * 16 + q * 2 + 9);
  const float* c = C + blockIdx.x * 128;
  float c0 = c[g * 8 + q * 2], c1 = c[g * 8 + q * 2 + 1], c2 = c[(g + 8) * 8 + q * 2], c3 = c[(g + 8) * 8 + q * 2 + 1];
  float d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%10, %11, %12, %13};"
               : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  float* d = D + blockIdx.x * 128;
  d[g * 8 + q * 2] = d0; d[g * 8 + q * 2 + 1] = d1; d[(g + 8) * 8 + q * 2] = d2; d[(g + 8) * 8 + q * 2 + 1] = d3;
#endif
}

// Batched 6x6 GEMMs through an array of pointers built in the kernel (an int offset table
// turned into 64-bit pointers), one matrix product per warp, lanes over the 36 outputs.
//@run {"grid": 2, "block": 64, "args": ["f32*1152", "f32*1152", "f32*1152", "s32*32%32"]}
extern "C" __global__ void batched_ptr_gemm6(const float* __restrict__ As, const float* __restrict__ Bs,
                                             float* __restrict__ Cs, const int* __restrict__ which) {
  __shared__ const float* a_ptr[2];
  __shared__ const float* b_ptr[2];
  __shared__ float* c_ptr[2];
  int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, m = blockIdx.x * 2 + warp;
  if (lane == 0) {
    a_ptr[warp] = As + which[m] * 36;                    // any A, B for this output
    b_ptr[warp] = Bs + which[m + 4] * 36;
    c_ptr[warp] = Cs + m * 36;
  }
  __syncwarp();
  const float* a = a_ptr[warp];
  const float* b = b_ptr[warp];
  float* c = c_ptr[warp];
  for (int e = lane; e < 36; e += 32) {
    int i = e / 6, j = e % 6;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 6; ++k) s = fmaf(a[i * 6 + k], b[k * 6 + j], s);
    c[e] = s;
  }
}
