// Bit manipulation: popc, clz, brev, ffs (bfind), prmt (__byte_perm), bfe / bfi, funnel
// shifts (shf), 24-bit and high multiplies, sad, halving adds, dp4a / dp2a.

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "u32", "count": 128, "init": "values_then_random_bits", "seed": 100, "values": [0, 1, 2147483648, 4294967295, 65536, 3]}, "w": {"dtype": "u64", "count": 128, "init": "values_then_random_bits", "seed": 101, "values": [0, 1, 9223372036854775808, 18446744073709551615, 4294967296]}, "out": {"dtype": "u32", "count": 1024}, "out64": {"dtype": "u64", "count": 128}}, "params": [{"buffer": "v"}, {"buffer": "w"}, {"buffer": "out"}, {"buffer": "out64"}], "reference": "ref_bit_count"}
__global__ void bit_count(const unsigned *v, const unsigned long long *w, unsigned *out, unsigned long long *out64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = v[i];
    unsigned long long y = w[i];
    unsigned *o = out + 8 * i;
    o[0] = __popc(x);   o[1] = __clz(x);   o[2] = __brev(x);   o[3] = __ffs(x);
    o[4] = __popcll(y); o[5] = __clzll(y); o[6] = __ffsll(y);
    o[7] = 31 - __clz(x | 1);          // index of the highest set bit
    out64[i] = __brevll(y);
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"x": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 102}, "y": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 103}, "s": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 104}, "out": {"dtype": "u32", "count": 640}}, "params": [{"buffer": "x"}, {"buffer": "y"}, {"buffer": "s"}, {"buffer": "out"}], "reference": "ref_byte_perm"}
__global__ void byte_perm(const unsigned *x, const unsigned *y, const unsigned *s, unsigned *out)
{
    int i = threadIdx.x;
    unsigned a = x[i], b = y[i];
    unsigned *o = out + 5 * i;
    o[0] = __byte_perm(a, b, s[i]);           // nvcc masks the selector with 0x7777
    o[1] = __byte_perm(a, b, 0x0123);         // byte swap of a
    o[2] = __byte_perm(a, b, 0x7351);
    unsigned r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s[i] >> 16));  // bit 3: sign replicate
    o[3] = r;
    asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s[i]));
    o[4] = r;
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 105}, "w": {"dtype": "u64", "count": 128, "init": "random_bits", "seed": 106}, "pos": {"dtype": "u32", "count": 128, "init": "random", "seed": 107, "low": 0, "high": 70}, "len": {"dtype": "u32", "count": 128, "init": "random", "seed": 108, "low": 0, "high": 40}, "out": {"dtype": "u32", "count": 768}, "out64": {"dtype": "u64", "count": 256}}, "params": [{"buffer": "v"}, {"buffer": "w"}, {"buffer": "pos"}, {"buffer": "len"}, {"buffer": "out"}, {"buffer": "out64"}], "reference": "ref_bitfield"}
__global__ void bitfield(const unsigned *v, const unsigned long long *w, const unsigned *pos,
                         const unsigned *len, unsigned *out, unsigned long long *out64)
{
    int i = threadIdx.x;
    unsigned x = v[i], p = pos[i], l = len[i];
    unsigned long long y = w[i];
    unsigned r0, r2, r3;
    int r1;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r0) : "r"(x), "r"(p), "r"(l));
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r1) : "r"(x), "r"(p), "r"(l));
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r2) : "r"(x ^ 0xdeadbeef), "r"(x), "r"(p), "r"(l));
    asm("bfe.u32 %0, %1, 8, 12;" : "=r"(r3) : "r"(x));
    unsigned *o = out + 6 * i;
    o[0] = r0; o[1] = (unsigned)r1; o[2] = r2; o[3] = r3;
    o[4] = (x >> 5) & 0x3ffu;                 // C bitfield idioms the compiler may turn into bfe
    o[5] = (x & ~0xff00u) | ((p & 0xffu) << 8);
    unsigned long long e, f;
    asm("bfe.s64 %0, %1, %2, %3;" : "=l"(e) : "l"(y), "r"(p), "r"(l));
    asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(f) : "l"(~y), "l"(y), "r"(p), "r"(l));
    out64[2 * i] = e;
    out64[2 * i + 1] = f;
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 109}, "b": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 110}, "n": {"dtype": "u32", "count": 128, "init": "random", "seed": 111, "low": 0, "high": 40}, "out": {"dtype": "u32", "count": 1024}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "n"}, {"buffer": "out"}], "reference": "ref_funnel_shift"}
__global__ void funnel_shift(const unsigned *a, const unsigned *b, const unsigned *n, unsigned *out)
{
    int i = threadIdx.x;
    unsigned lo = a[i], hi = b[i], s = n[i];
    unsigned *o = out + 8 * i;
    o[0] = __funnelshift_l(lo, hi, s);    // shift amount mod 32
    o[1] = __funnelshift_r(lo, hi, s);
    o[2] = __funnelshift_lc(lo, hi, s);   // shift amount clamped to 32
    o[3] = __funnelshift_rc(lo, hi, s);
    o[4] = (lo << (s & 31)) | (lo >> ((32 - s) & 31));   // rotate idiom
    o[5] = lo >> (s & 31);
    o[6] = (unsigned)((int)hi >> (s & 31));
    o[7] = s < 32 ? lo << s : 0;
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "s32", "count": 128, "init": "random_bits", "seed": 112}, "b": {"dtype": "s32", "count": 128, "init": "random_bits", "seed": 113}, "c": {"dtype": "s64", "count": 256, "init": "random_bits", "seed": 114}, "out": {"dtype": "u32", "count": 1536}, "out64": {"dtype": "u64", "count": 256}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"buffer": "out"}, {"buffer": "out64"}], "reference": "ref_int_mul_misc"}
__global__ void int_mul_misc(const int *a, const int *b, const long long *c, unsigned *out,
                             unsigned long long *out64)
{
    int i = threadIdx.x;
    int x = a[i], y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    unsigned *o = out + 12 * i;
    o[0] = __mul24(x, y);      o[1] = __umul24(ux, uy);
    o[2] = __mulhi(x, y);      o[3] = __umulhi(ux, uy);
    o[4] = __sad(x, y, 7u);    o[5] = __usad(ux, uy, 9u);
    o[6] = __hadd(x, y);       o[7] = __rhadd(x, y);
    o[8] = __uhadd(ux, uy);    o[9] = __urhadd(ux, uy);
    o[10] = __dp4a(x, y, 1000);
    o[11] = __dp2a_lo(ux, uy, 5u) ^ __dp2a_hi(x, y, -5);
    long long p = c[2 * i], q = c[2 * i + 1];
    out64[2 * i] = (unsigned long long)__mul64hi(p, q);
    out64[2 * i + 1] = __umul64hi((unsigned long long)p, (unsigned long long)q);
}
