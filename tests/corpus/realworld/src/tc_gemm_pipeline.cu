// Tensor-core GEMM tiles written the way CUTLASS's sm_80 mainloops are: 16-byte cp.async.cg
// copies into multi-stage shared tiles (padded or XOR-swizzled), ldmatrix fragment loads
// (x4, x2, .trans), mma.sync for f16 (f32 and f16 accumulators), bf16, int8 (m16n8k32) and
// tf32 (m16n8k8), and epilogues through movmatrix / stmatrix (sm_90) and 16-byte stores.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async16_zfill(void* dst, const void* src, bool full) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(full ? 16 : 0));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x2(unsigned (&r)[2], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void mma_f16_f32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_bf16_f32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_f16_f16(unsigned (&d)[2], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
               : "+r"(d[0]), "+r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_s8_s32(int (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ unsigned to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// C[64x64] f32 = A[64xK] f16 (row-major) * B[Kx64] f16 (row-major), K = 64, 32-wide k tiles,
// two stages, padded rows; 4 warps in 2x2, each 32x32 (2x4 mma tiles).
constexpr int GK = 64, GT = 32, APAD = GT + 8, BPAD = 64 + 8;
//@run {"grid": 1, "block": 128, "args": ["f16*4096", "f16*4096", "f32*4096"]}
extern "C" __global__ void __launch_bounds__(128) hgemm_cp_async_ldmatrix(const __half* __restrict__ A,
                                                                           const __half* __restrict__ B,
                                                                           float* __restrict__ C) {
  __shared__ __align__(16) __half As[2][64][APAD];
  __shared__ __align__(16) __half Bs[2][GT][BPAD];
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
  auto load = [&](int stage, int k0) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      int c = tid + i * 128;                    // 256 chunks of 8 halves each
      int ar = c >> 2, ac = (c & 3) * 8;
      cp_async16(&As[stage][ar][ac], A + ar * GK + k0 + ac);
      int br = c >> 3, bc = (c & 7) * 8;
      cp_async16(&Bs[stage][br][bc], B + (k0 + br) * 64 + bc);
    }
    cp_commit();
  };
  float acc[2][4][4] = {};
  load(0, 0);
  for (int kt = 0; kt < GK / GT; ++kt) {
    if (kt + 1 < GK / GT) {
      load((kt + 1) & 1, (kt + 1) * GT);
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    int s = kt & 1;
#pragma unroll
    for (int kk = 0; kk < GT; kk += 16) {
      unsigned a[2][4], b[2][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) ldsm_x4(a[mi], &As[s][wm + mi * 16 + (lane & 15)][kk + (lane >> 4) * 8]);
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) ldsm_x4_trans(b[nj], &Bs[s][kk + (lane & 15)][wn + nj * 16 + (lane >> 4) * 8]);
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) mma_f16_f32(acc[mi][ni], a[mi], b[ni >> 1][(ni & 1) * 2], b[ni >> 1][(ni & 1) * 2 + 1]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      int r = wm + mi * 16 + (lane >> 2), c = wn + ni * 8 + (lane & 3) * 2;
      *reinterpret_cast<float2*>(C + r * 64 + c) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2*>(C + (r + 8) * 64 + c) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
}

// bf16, three stages over K = 96, XOR-swizzled tiles (no padding), D = alpha*A*B + beta*C in
// bf16, rows past m (a run-time bound) zero-filled by cp.async's src-size operand.
template <int STAGES>
__device__ void bf16_gemm_swizzled(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                   const __nv_bfloat16* __restrict__ Cin, __nv_bfloat16* __restrict__ D,
                                   int m, float alpha, float beta) {
  constexpr int K = 96, T = 32;
  __shared__ __align__(128) __nv_bfloat16 As[STAGES][64 * T];
  __shared__ __align__(128) __nv_bfloat16 Bs[STAGES][T * 64];
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
  auto a_at = [](int r, int chunk) { return r * T + ((chunk ^ ((r >> 1) & 3)) * 8); };
  auto b_at = [](int r, int chunk) { return r * 64 + ((chunk ^ (r & 7)) * 8); };
  auto load = [&](int stage, int k0) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      int c = tid + i * 128;
      int ar = c >> 2, ach = c & 3;
      bool in = ar < m;
      cp_async16_zfill(&As[stage][a_at(ar, ach)], A + (in ? ar : 0) * K + k0 + ach * 8, in);
      int br = c >> 3, bch = c & 7;
      cp_async16(&Bs[stage][b_at(br, bch)], B + (k0 + br) * 64 + bch * 8);
    }
  };
  float acc[2][4][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    load(s, s * T);
    cp_commit();
  }
  for (int kt = 0; kt < K / T; ++kt) {
    cp_wait<STAGES - 2>();
    __syncthreads();
    int next = kt + STAGES - 1;
    if (next < K / T) load(next % STAGES, next * T);
    cp_commit();
    int s = kt % STAGES;
#pragma unroll
    for (int kk = 0; kk < T; kk += 16) {
      unsigned a[2][4], b[2][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        int r = wm + mi * 16 + (lane & 15);
        ldsm_x4(a[mi], &As[s][a_at(r, kk / 8 + (lane >> 4))]);
      }
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        int r = kk + (lane & 15);
        ldsm_x4_trans(b[nj], &Bs[s][b_at(r, (wn + nj * 16) / 8 + (lane >> 4))]);
      }
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) mma_bf16_f32(acc[mi][ni], a[mi], b[ni >> 1][(ni & 1) * 2], b[ni >> 1][(ni & 1) * 2 + 1]);
    }
  }
  cp_wait<0>();
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r = wm + mi * 16 + (lane >> 2) + h * 8, c = wn + ni * 8 + (lane & 3) * 2;
        if (r >= m) continue;
        __nv_bfloat162 old = *reinterpret_cast<const __nv_bfloat162*>(Cin + r * 64 + c);
        float2 o = __bfloat1622float2(old);
        *reinterpret_cast<__nv_bfloat162*>(D + r * 64 + c) =
            __floats2bfloat162_rn(alpha * acc[mi][ni][2 * h] + beta * o.x, alpha * acc[mi][ni][2 * h + 1] + beta * o.y);
      }
}

//@run {"grid": 1, "block": 128, "args": ["bf16*6144", "bf16*6144", "bf16*4096", "bf16*4096", "s32=53", "f32=0.75", "f32=-1.25"]}
extern "C" __global__ void __launch_bounds__(128) bf16_gemm_3stage_swizzle(
    const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B, const __nv_bfloat16* __restrict__ Cin,
    __nv_bfloat16* __restrict__ D, int m, float alpha, float beta) {
  bf16_gemm_swizzled<3>(A, B, Cin, D, m, alpha, beta);
}

// int8 "TN" GEMM: A[32x64] s8 row-major, B given as [N=32][K=64] s8 (k contiguous), m16n8k32;
// each of 2 warps owns 16 rows x 32 columns; s32 result and a dequantised f32 copy scaled per
// row and per column.
//@run {"grid": 1, "block": 64, "args": ["s8*2048", "s8*2048", "f32*32", "f32*32", "s32*1024", "f32*1024"]}
extern "C" __global__ void igemm_s8_m16n8k32(const int8_t* __restrict__ A, const int8_t* __restrict__ B,
                                             const float* __restrict__ row_scale, const float* __restrict__ col_scale,
                                             int* __restrict__ C, float* __restrict__ F) {
  constexpr int K = 64, LD = K + 16;
  __shared__ __align__(16) int8_t As[32 * LD];
  __shared__ __align__(16) int8_t Bs[32 * LD];
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    int c = tid + i * 64;                   // 128 chunks of 16 bytes per matrix
    int r = c >> 2, col = (c & 3) * 16;
    cp_async16(&As[r * LD + col], A + r * K + col);
    cp_async16(&Bs[r * LD + col], B + r * K + col);
  }
  cp_commit();
  cp_wait<0>();
  __syncthreads();
  int acc[4][4] = {};
#pragma unroll
  for (int kk = 0; kk < K; kk += 32) {
    unsigned a[4];
    ldsm_x4(a, &As[(warp * 16 + (lane & 15)) * LD + kk + (lane >> 4) * 16]);
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      unsigned b[2];
      ldsm_x2(b, &Bs[(ni * 8 + (lane & 7)) * LD + kk + ((lane >> 3) & 1) * 16]);
      mma_s8_s32(acc[ni], a, b[0], b[1]);
    }
  }
#pragma unroll
  for (int ni = 0; ni < 4; ++ni)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      int r = warp * 16 + (lane >> 2) + (e >> 1) * 8, c = ni * 8 + (lane & 3) * 2 + (e & 1);
      C[r * 32 + c] = acc[ni][e];
      F[r * 32 + c] = static_cast<float>(acc[ni][e]) * row_scale[r] * col_scale[c];
    }
}

// tf32: one warp, C[16x16] = A[16x32] * B[32x16] in f32 storage, fragments read from shared
// memory by hand (ldmatrix has no 32-bit form), rounded with cvt.rna.tf32.f32; plus a
// residual: the same product in plain f32 FMAs, and the difference written too.
//@run {"grid": 2, "block": 32, "args": ["f32*1024", "f32*1024", "f32*512", "f32*512"]}
extern "C" __global__ void tf32_mma_vs_fma(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, float* __restrict__ err) {
  __shared__ float As[16][33], Bs[32][17];
  int lane = threadIdx.x, g = lane >> 2, q = lane & 3;
  const float* a_in = A + blockIdx.x * 512;
  const float* b_in = B + blockIdx.x * 512;
  for (int i = lane; i < 512; i += 32) {
    As[i >> 5][i & 31] = a_in[i];
    Bs[i >> 4][i & 15] = b_in[i];
  }
  __syncwarp();
  float acc[2][4] = {};
#pragma unroll
  for (int k = 0; k < 32; k += 8) {
    unsigned a[4] = {to_tf32(As[g][k + q]), to_tf32(As[g + 8][k + q]), to_tf32(As[g][k + q + 4]),
                     to_tf32(As[g + 8][k + q + 4])};
#pragma unroll
    for (int ni = 0; ni < 2; ++ni)
      mma_tf32(acc[ni], a, to_tf32(Bs[k + q][ni * 8 + g]), to_tf32(Bs[k + q + 4][ni * 8 + g]));
  }
  float* c_out = C + blockIdx.x * 256;
  float* e_out = err + blockIdx.x * 256;
#pragma unroll
  for (int ni = 0; ni < 2; ++ni)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      int r = g + (e >> 1) * 8, c = ni * 8 + q * 2 + (e & 1);
      float ref = 0.0f;
#pragma unroll 8
      for (int k = 0; k < 32; ++k) ref = fmaf(As[r][k], Bs[k][c], ref);
      c_out[r * 16 + c] = acc[ni][e];
      e_out[r * 16 + c] = fabsf(acc[ni][e] - ref);
    }
}

// f16 accumulators (m16n8k16 .f16.f16.f16.f16), then a CUTLASS-style epilogue: the fragments
// go to shared memory with stmatrix on sm_90 (per-lane halves stores before it) and come back
// as 16-byte rows, with a per-column bias and a ReLU; each 8x8 fragment is also transposed in
// registers by movmatrix and written raw.
//@run {"grid": 2, "block": 64, "args": ["f16*4096", "f16*2048", "f16*32", "f16*2048", "u32*512"]}
extern "C" __global__ void hgemm_f16acc_epilogue(const __half* __restrict__ A, const __half* __restrict__ Bt,
                                                 const __half* __restrict__ bias, __half* __restrict__ D,
                                                 unsigned* __restrict__ T) {
  constexpr int K = 64, LD = K + 8;
  __shared__ __align__(16) __half As[32 * LD];
  __shared__ __align__(16) __half Bs[32 * LD];
  __shared__ __align__(16) __half Ds[32 * 40];
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const __half* a_in = A + blockIdx.x * 32 * K;
  for (int c = tid; c < 32 * K / 8; c += 64) {
    int r = c >> 3, col = (c & 7) * 8;
    cp_async16(&As[r * LD + col], a_in + r * K + col);
    cp_async16(&Bs[r * LD + col], Bt + r * K + col);
  }
  cp_commit();
  cp_wait<0>();
  __syncthreads();
  unsigned acc[4][2] = {};
#pragma unroll
  for (int kk = 0; kk < K; kk += 16) {
    unsigned a[4];
    ldsm_x4(a, &As[(warp * 16 + (lane & 15)) * LD + kk + (lane >> 4) * 8]);
#pragma unroll
    for (int nj = 0; nj < 2; ++nj) {
      unsigned b[4];
      // Bt is [n][k]: non-transposed ldmatrix gives the .col operand directly
      ldsm_x4(b, &Bs[(nj * 16 + (lane & 7) + ((lane >> 4) << 3)) * LD + kk + ((lane >> 3) & 1) * 8]);
      mma_f16_f16(acc[nj * 2], a, b[0], b[1]);
      mma_f16_f16(acc[nj * 2 + 1], a, b[2], b[3]);
    }
  }
#pragma unroll
  for (int ni = 0; ni < 4; ++ni) {
    unsigned t;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(t) : "r"(acc[ni][0]));
    T[(blockIdx.x * 64 + tid) * 4 + ni] = t;
  }
#if __CUDA_ARCH__ >= 900
#pragma unroll
  for (int ni = 0; ni < 4; ni += 2) {
    int row = warp * 16 + (lane & 15), col = ni * 8 + (lane >> 4) * 8;
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(smem_u32(&Ds[row * 40 + col])),
                 "r"(acc[ni][0]), "r"(acc[ni][1]), "r"(acc[ni + 1][0]), "r"(acc[ni + 1][1]));
  }
#else
#pragma unroll
  for (int ni = 0; ni < 4; ++ni) {
    int row = warp * 16 + (lane >> 2), col = ni * 8 + (lane & 3) * 2;
    *reinterpret_cast<unsigned*>(&Ds[row * 40 + col]) = acc[ni][0];
    *reinterpret_cast<unsigned*>(&Ds[(row + 8) * 40 + col]) = acc[ni][1];
  }
#endif
  __syncthreads();
  for (int c = tid; c < 32 * 4; c += 64) {
    int r = c >> 2, col = (c & 3) * 8;
    uint4 v = *reinterpret_cast<const uint4*>(&Ds[r * 40 + col]);
    __half2* h = reinterpret_cast<__half2*>(&v);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      __half2 bb = *reinterpret_cast<const __half2*>(bias + col + 2 * j);
      h[j] = __hmax2(__hadd2(h[j], bb), __float2half2_rn(0.0f));
    }
    *reinterpret_cast<uint4*>(D + (blockIdx.x * 32 + r) * 32 + col) = v;
  }
}
