// Tensor-core paths written in inline PTX (mma.h needs headers the pinned wheels lack):
// ldmatrix (plain and .trans) and mma.sync m16n8k16 f16/bf16, m16n8k32 s8, m16n8k8 tf32.
// Inputs are small multiples of 1/2 (or small integers), so every product and partial sum
// is exact and the outputs do not depend on the order of accumulation.
// Fragment layouts follow the PTX ISA; the f16 and s8 ones were cross-checked against the
// hardware-verified ZLUDA mma tests.

// Each warp computes one 16x8 tile: D = A (16x16, row-major) * B (16x8, given as its
// transpose, 8x16 row-major) + C, in f32 and with f16 accumulation.
//@launch {"grid": [1,1,1], "block": [64,1,1], "buffers": {"a": {"dtype": "f16", "count": 512, "init": "random_int", "seed": 140, "low": -8, "high": 9, "scale": 0.5}, "bt": {"dtype": "f16", "count": 256, "init": "random_int", "seed": 141, "low": -8, "high": 9, "scale": 0.5}, "c": {"dtype": "f32", "count": 256, "init": "random_int", "seed": 142, "low": -20, "high": 21}, "d": {"dtype": "f32", "count": 256}, "d16": {"dtype": "f16", "count": 256}}, "params": [{"buffer": "a"}, {"buffer": "bt"}, {"buffer": "c"}, {"buffer": "d"}, {"buffer": "d16"}], "reference": "ref_mma_f16"}
__global__ void mma_f16(const unsigned short *a, const unsigned short *bt, const float *c, float *d,
                        unsigned short *d16)
{
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int g = lane >> 2, t = lane & 3;
    const unsigned short *A = a + warp * 256, *BT = bt + warp * 128;
    const float *C = c + warp * 128;
    unsigned ra[4], rb[2];
    for (int j = 0; j < 4; j++) {
        int row = g + 8 * (j & 1), col = 2 * t + 8 * (j >> 1);
        ra[j] = A[row * 16 + col] | (unsigned)A[row * 16 + col + 1] << 16;
    }
    for (int j = 0; j < 2; j++) {
        int k = 2 * t + 8 * j;
        rb[j] = BT[g * 16 + k] | (unsigned)BT[g * 16 + k + 1] << 16;
    }
    float c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1];
    float c2 = C[(g + 8) * 8 + 2 * t], c3 = C[(g + 8) * 8 + 2 * t + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                   "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    float *D = d + warp * 128;
    D[g * 8 + 2 * t] = d0; D[g * 8 + 2 * t + 1] = d1;
    D[(g + 8) * 8 + 2 * t] = d2; D[(g + 8) * 8 + 2 * t + 1] = d3;
    unsigned h0, h1, z = 0;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
                 : "=r"(h0), "=r"(h1)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(z), "r"(z));
    unsigned short *D16 = d16 + warp * 128;
    D16[g * 8 + 2 * t] = h0 & 0xffff; D16[g * 8 + 2 * t + 1] = h0 >> 16;
    D16[(g + 8) * 8 + 2 * t] = h1 & 0xffff; D16[(g + 8) * 8 + 2 * t + 1] = h1 >> 16;
}

// Same tile shape in bf16, with the operands staged through shared memory and loaded with
// ldmatrix: A with .x4, B (stored K x N row-major) with .x2.trans.
//@launch {"grid": [2,1,1], "block": [32,1,1], "buffers": {"a": {"dtype": "bf16", "count": 512, "init": "random_int", "seed": 143, "low": -8, "high": 9, "scale": 0.5}, "b": {"dtype": "bf16", "count": 256, "init": "random_int", "seed": 144, "low": -8, "high": 9, "scale": 0.5}, "d": {"dtype": "f32", "count": 256}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "d"}], "reference": "ref_ldmatrix_mma_bf16"}
__global__ void ldmatrix_mma_bf16(const unsigned short *a, const unsigned short *b, float *d)
{
    __shared__ __align__(16) unsigned short As[256];
    __shared__ __align__(16) unsigned short Bs[128];
    int lane = threadIdx.x;
    const unsigned short *A = a + blockIdx.x * 256, *B = b + blockIdx.x * 128;
    for (int k = lane; k < 256; k += 32) As[k] = A[k];
    for (int k = lane; k < 128; k += 32) Bs[k] = B[k];
    __syncthreads();
    int m = lane >> 3, r = lane & 7;
    unsigned aaddr = (unsigned)__cvta_generic_to_shared(&As[((m & 1) * 8 + r) * 16 + (m >> 1) * 8]);
    unsigned baddr = (unsigned)__cvta_generic_to_shared(&Bs[(lane & 15) * 8]);
    unsigned ra0, ra1, ra2, ra3, rb0, rb1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(ra0), "=r"(ra1), "=r"(ra2), "=r"(ra3) : "r"(aaddr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                 : "=r"(rb0), "=r"(rb1) : "r"(baddr));
    float d0, d1, d2, d3, z = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(ra0), "r"(ra1), "r"(ra2), "r"(ra3), "r"(rb0), "r"(rb1), "f"(z), "f"(z), "f"(z), "f"(z));
    int g = lane >> 2, t = lane & 3;
    float *D = d + blockIdx.x * 128;
    D[g * 8 + 2 * t] = d0; D[g * 8 + 2 * t + 1] = d1;
    D[(g + 8) * 8 + 2 * t] = d2; D[(g + 8) * 8 + 2 * t + 1] = d3;
}

// Raw ldmatrix: four 8x8 b16 matrices whose rows are handed out in a scrambled order
// (thread 8j+r points at stored row (3r mod 8) of matrix j); every register is written out.
//@launch {"grid": [1,1,1], "block": [32,1,1], "buffers": {"m": {"dtype": "u16", "count": 256, "init": "random_bits", "seed": 145}, "out": {"dtype": "u32", "count": 256}}, "params": [{"buffer": "m"}, {"buffer": "out"}], "reference": "ref_ldmatrix_raw"}
__global__ void ldmatrix_raw(const unsigned short *m, unsigned *out)
{
    __shared__ __align__(16) unsigned short s[256];
    int lane = threadIdx.x;
    for (int k = lane; k < 256; k += 32) s[k] = m[k];
    __syncthreads();
    int mat = lane >> 3, row = (3 * (lane & 7)) & 7;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&s[mat * 64 + row * 8]);
    unsigned r0, r1, r2, r3, t0, t1, t2, t3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(t0), "=r"(t1), "=r"(t2), "=r"(t3) : "r"(addr));
    unsigned *o = out + 8 * lane;
    o[0] = r0; o[1] = r1; o[2] = r2; o[3] = r3;
    o[4] = t0; o[5] = t1; o[6] = t2; o[7] = t3;
}

// Integer mma: D (16x8 s32) = A (16x32 s8, row-major) * B (32x8 s8, given transposed) + C.
//@launch {"grid": [1,1,1], "block": [32,1,1], "buffers": {"a": {"dtype": "s8", "count": 512, "init": "random", "seed": 146, "low": -128, "high": 128}, "bt": {"dtype": "s8", "count": 256, "init": "random", "seed": 147, "low": -128, "high": 128}, "c": {"dtype": "s32", "count": 128, "init": "random", "seed": 148, "low": -100000, "high": 100000}, "d": {"dtype": "s32", "count": 128}}, "params": [{"buffer": "a"}, {"buffer": "bt"}, {"buffer": "c"}, {"buffer": "d"}], "reference": "ref_mma_s8"}
__global__ void mma_s8(const signed char *a, const signed char *bt, const int *c, int *d)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    const unsigned *A = (const unsigned *)a, *BT = (const unsigned *)bt;   // 4 bytes per word
    unsigned ra[4], rb[2];
    for (int j = 0; j < 4; j++) ra[j] = A[(g + 8 * (j & 1)) * 8 + t + 4 * (j >> 1)];
    for (int j = 0; j < 2; j++) rb[j] = BT[g * 8 + t + 4 * j];
    int c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1];
    int c2 = c[(g + 8) * 8 + 2 * t], c3 = c[(g + 8) * 8 + 2 * t + 1];
    int d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                   "r"(c0), "r"(c1), "r"(c2), "r"(c3));
    d[g * 8 + 2 * t] = d0; d[g * 8 + 2 * t + 1] = d1;
    d[(g + 8) * 8 + 2 * t] = d2; d[(g + 8) * 8 + 2 * t + 1] = d3;
}

// tf32 mma m16n8k8: A 16x8 row-major, B 8x8 given transposed, values exact in tf32.
//@launch {"grid": [1,1,1], "block": [32,1,1], "buffers": {"a": {"dtype": "f32", "count": 128, "init": "random_int", "seed": 149, "low": -16, "high": 17, "scale": 0.25}, "bt": {"dtype": "f32", "count": 64, "init": "random_int", "seed": 150, "low": -16, "high": 17, "scale": 0.25}, "d": {"dtype": "f32", "count": 128}}, "params": [{"buffer": "a"}, {"buffer": "bt"}, {"buffer": "d"}], "reference": "ref_mma_tf32"}
__global__ void mma_tf32(const float *a, const float *bt, float *d)
{
    int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    unsigned a0, a1, a2, a3, b0, b1;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a0) : "f"(a[g * 8 + t]));
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a1) : "f"(a[(g + 8) * 8 + t]));
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a2) : "f"(a[g * 8 + t + 4]));
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a3) : "f"(a[(g + 8) * 8 + t + 4]));
    b0 = __float_as_uint(bt[g * 8 + t]);
    b1 = __float_as_uint(bt[g * 8 + t + 4]);
    float d0, d1, d2, d3, z = 1.0f;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(z), "f"(z), "f"(z), "f"(z));
    d[g * 8 + 2 * t] = d0; d[g * 8 + 2 * t + 1] = d1;
    d[(g + 8) * 8 + 2 * t] = d2; d[(g + 8) * 8 + 2 * t + 1] = d3;
}
