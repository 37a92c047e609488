// Fused attention tiles of the FlashAttention-2 kind: Q.K^T by mma.sync m16n8k16 from ldmatrix
// fragments, the online softmax in registers (row max/sum across the quad by shuffles, exp2f
// with the scale folded in, rescaling of the running output), P packed to f16 and fed back as
// the A fragment of P.V without a trip through shared memory; a causal variant with masking,
// the row log-sum-exp written out; and decode-time attention: split keys across warps with a
// merge of partial (max, sum, acc) states, and a paged KV cache read through a block table.
#include <cuda_fp16.h>
#include <stdint.h>
#include <math.h>

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src));
}
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_trans(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ unsigned pack_half2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<unsigned*>(&h);
}

// 64 queries (16 per warp) x 64 keys x head dim 64, keys in blocks of 16.
constexpr int SEQ = 64, HD = 64, LDS_ = HD + 8;

template <bool CAUSAL>
__device__ void flash_forward(const __half* __restrict__ Q, const __half* __restrict__ K, const __half* __restrict__ V,
                              float* __restrict__ O, float* __restrict__ lse, float scale) {
  __shared__ __align__(16) __half Qs[SEQ * LDS_];
  __shared__ __align__(16) __half Ks[SEQ * LDS_];
  __shared__ __align__(16) __half Vs[SEQ * LDS_];
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  size_t head = blockIdx.x;
  Q += head * SEQ * HD; K += head * SEQ * HD; V += head * SEQ * HD;
  O += head * SEQ * HD; lse += head * SEQ;
  for (int c = tid; c < SEQ * HD / 8; c += blockDim.x) {
    int r = c >> 3, col = (c & 7) * 8;
    cp_async16(&Qs[r * LDS_ + col], Q + r * HD + col);
    cp_async16(&Ks[r * LDS_ + col], K + r * HD + col);
    cp_async16(&Vs[r * LDS_ + col], V + r * HD + col);
  }
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::);
  __syncthreads();

  unsigned qf[4][4];
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) ldsm_x4(qf[kk], &Qs[(warp * 16 + (lane & 15)) * LDS_ + kk * 16 + (lane >> 4) * 8]);

  const float sl2 = scale * 1.4426950408889634f;
  float o[8][4] = {};
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};
  int q_row0 = warp * 16 + (lane >> 2);
  int kb_end = CAUSAL ? (warp * 16 + 16) : SEQ;
  for (int kb = 0; kb < kb_end; kb += 16) {
    float s[2][4] = {};
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      unsigned b[4];
      ldsm_x4(b, &Ks[(kb + (lane & 7) + ((lane >> 4) << 3)) * LDS_ + kk * 16 + ((lane >> 3) & 1) * 8]);
      mma16816(s[0], qf[kk], b[0], b[1]);
      mma16816(s[1], qf[kk], b[2], b[3]);
    }
    float mx[2] = {m_run[0], m_run[1]};
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int key = kb + n * 8 + (lane & 3) * 2 + (e & 1), row = q_row0 + (e >> 1) * 8;
        float v = s[n][e] * sl2;
        if (CAUSAL && key > row) v = -INFINITY;
        s[n][e] = v;
        mx[e >> 1] = fmaxf(mx[e >> 1], v);
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
    }
    float corr[2], rs[2] = {0.0f, 0.0f};
#pragma unroll
    for (int h = 0; h < 2; ++h) corr[h] = exp2f(m_run[h] - mx[h]);
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float p = exp2f(s[n][e] - mx[e >> 1]);
        s[n][e] = p;
        rs[e >> 1] += p;
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      rs[h] += __shfl_xor_sync(0xffffffffu, rs[h], 1);
      rs[h] += __shfl_xor_sync(0xffffffffu, rs[h], 2);
      l_run[h] = l_run[h] * corr[h] + rs[h];
      m_run[h] = mx[h];
    }
#pragma unroll
    for (int d = 0; d < 8; ++d) {
      o[d][0] *= corr[0]; o[d][1] *= corr[0];
      o[d][2] *= corr[1]; o[d][3] *= corr[1];
    }
    // the S accumulators are the A fragment of P.V once packed to f16
    unsigned pa[4] = {pack_half2(s[0][0], s[0][1]), pack_half2(s[0][2], s[0][3]),
                      pack_half2(s[1][0], s[1][1]), pack_half2(s[1][2], s[1][3])};
#pragma unroll
    for (int dj = 0; dj < 4; ++dj) {
      unsigned b[4];
      ldsm_x4_trans(b, &Vs[(kb + (lane & 15)) * LDS_ + dj * 16 + (lane >> 4) * 8]);
      mma16816(o[dj * 2], pa, b[0], b[1]);
      mma16816(o[dj * 2 + 1], pa, b[2], b[3]);
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float inv = 1.0f / l_run[h];
    int row = q_row0 + h * 8;
#pragma unroll
    for (int d = 0; d < 8; ++d) {
      int col = d * 8 + (lane & 3) * 2;
      *reinterpret_cast<float2*>(O + row * HD + col) = make_float2(o[d][2 * h] * inv, o[d][2 * h + 1] * inv);
    }
    if ((lane & 3) == 0) lse[row] = m_run[h] * 0.6931471805599453f + logf(l_run[h]);
  }
}

//@run {"grid": 2, "block": 128, "args": ["f16*8192", "f16*8192", "f16*8192", "f32*8192", "f32*128", "f32=0.125"]}
extern "C" __global__ void __launch_bounds__(128) flash_fwd_tile(const __half* Q, const __half* K, const __half* V,
                                                                  float* O, float* lse, float scale) {
  flash_forward<false>(Q, K, V, O, lse, scale);
}

//@run {"grid": 2, "block": 128, "args": ["f16*8192", "f16*8192", "f16*8192", "f32*8192", "f32*128", "f32=0.125"]}
extern "C" __global__ void __launch_bounds__(128) flash_fwd_causal(const __half* Q, const __half* K, const __half* V,
                                                                    float* O, float* lse, float scale) {
  flash_forward<true>(Q, K, V, O, lse, scale);
}

// Decode: one query per head (grid = heads), 128 keys split over 4 warps, head dim 32 (one
// element per lane); each warp's online state is merged through shared memory.
//@run {"grid": 3, "block": 128, "args": ["f32*96", "f32*12288", "f32*12288", "s32=117", "f32*96"]}
extern "C" __global__ void __launch_bounds__(128) flash_decode_split(const float* __restrict__ q, const float* __restrict__ Kc,
                                                                     const float* __restrict__ Vc, int len,
                                                                     float* __restrict__ out) {
  constexpr int KEYS = 128, D = 32, WARPS = 4;
  __shared__ float part_m[WARPS], part_l[WARPS], part_o[WARPS][D];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, head = blockIdx.x;
  float qv = q[head * D + lane] * rsqrtf((float)D);
  const float* Kh = Kc + (size_t)head * KEYS * D;
  const float* Vh = Vc + (size_t)head * KEYS * D;
  float m = -INFINITY, l = 0.0f, acc = 0.0f;
  for (int k = warp; k < len; k += WARPS) {
    float dot = qv * Kh[k * D + lane];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    float m_new = fmaxf(m, dot);
    float c = __expf(m - m_new), p = __expf(dot - m_new);
    l = l * c + p;
    acc = acc * c + p * Vh[k * D + lane];
    m = m_new;
  }
  if (lane == 0) { part_m[warp] = m; part_l[warp] = l; }
  part_o[warp][lane] = acc;
  __syncthreads();
  if (warp == 0) {
    float gm = -INFINITY;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) gm = fmaxf(gm, part_m[w]);
    float gl = 0.0f, go = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      float c = part_m[w] == -INFINITY ? 0.0f : __expf(part_m[w] - gm);
      gl += part_l[w] * c;
      go += part_o[w][lane] * c;
    }
    out[head * D + lane] = go / gl;
  }
}

// Paged KV cache (vLLM's layout, shrunk): K/V pages of 16 tokens x 4 heads x 32 dims in f16,
// a per-sequence block table of page numbers, one warp per (sequence, head); each lane holds a
// __half2 of the query (head dim 64) and dot products are half2 FMAs reduced in f32.
//@run {"grid": [2, 4], "block": 32, "args": ["f16*512", "f16*32768", "f16*32768", "s32*16%8", "s32*2%60", "f32*512"]}
extern "C" __global__ void paged_attention_decode(const __half* __restrict__ q, const __half* __restrict__ kcache,
                                                  const __half* __restrict__ vcache, const int* __restrict__ block_table,
                                                  const int* __restrict__ seq_lens, float* __restrict__ out) {
  constexpr int PAGE = 16, HEADS = 4, D = 64, MAXP = 8;
  int seq = blockIdx.x, head = blockIdx.y, lane = threadIdx.x;
  int len = seq_lens[seq] + 1;
  const __half2* qh = reinterpret_cast<const __half2*>(q + ((size_t)seq * HEADS + head) * D);
  float2 qf = __half22float2(qh[lane]);
  float m = -INFINITY, l = 0.0f;
  float2 acc = make_float2(0.0f, 0.0f);
  for (int t = 0; t < len; ++t) {
    int page = block_table[seq * MAXP + t / PAGE];
    size_t base = (((size_t)page * PAGE + t % PAGE) * HEADS + head) * D;
    float2 kf = __half22float2(reinterpret_cast<const __half2*>(kcache + base)[lane]);
    float dot = qf.x * kf.x + qf.y * kf.y;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    dot *= 0.125f;
    float m_new = fmaxf(m, dot), c = expf(m - m_new), p = expf(dot - m_new);
    float2 vf = __half22float2(reinterpret_cast<const __half2*>(vcache + base)[lane]);
    l = l * c + p;
    acc.x = acc.x * c + p * vf.x;
    acc.y = acc.y * c + p * vf.y;
    m = m_new;
  }
  float inv = 1.0f / l;
  reinterpret_cast<float2*>(out + ((size_t)seq * HEADS + head) * D)[lane] = make_float2(acc.x * inv, acc.y * inv);
}
