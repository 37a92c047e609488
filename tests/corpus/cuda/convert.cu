// cvt of every kind: float -> integer with each rounding mode and width (PTX clamps out-of-
// range values and turns NaN into 0), integer -> float with rounding modes, f32 <-> f64,
// f16 / bf16 / fp8 conversions (NaN inputs only where the result is an integer, since NaN
// payload propagation is not something this corpus pins down), (inline PTX: cuda_fp16.h needs headers the pinned wheels lack),
// integer narrowing / widening, and saturation.


//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"f": {"dtype": "f32", "count": 128, "init": "values_then_random", "seed": 90, "low": -300, "high": 300, "values": [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 3e9, -3e9, 5e18, -5e18, 2e19, 4.5e9, "nan", "inf", "-inf", 1e-40, -1e30, 2147483520.0, -2147483904.0, 4294967040.0]}, "i32": {"dtype": "s32", "count": 512}, "u32": {"dtype": "u32", "count": 512}, "i64": {"dtype": "s64", "count": 512}, "u64": {"dtype": "u64", "count": 256}, "narrow": {"dtype": "s32", "count": 512}}, "params": [{"buffer": "f"}, {"buffer": "i32"}, {"buffer": "u32"}, {"buffer": "i64"}, {"buffer": "u64"}, {"buffer": "narrow"}], "reference": "ref_cvt_f32_to_int"}
__global__ void cvt_f32_to_int(const float *f, int *i32, unsigned *u32, long long *i64, unsigned long long *u64,
                               int *narrow)
{
    int i = threadIdx.x;
    float x = f[i];
    i32[4 * i] = __float2int_rn(x);   i32[4 * i + 1] = __float2int_rz(x);
    i32[4 * i + 2] = __float2int_ru(x); i32[4 * i + 3] = __float2int_rd(x);
    u32[4 * i] = __float2uint_rn(x);  u32[4 * i + 1] = __float2uint_rz(x);
    u32[4 * i + 2] = __float2uint_ru(x); u32[4 * i + 3] = __float2uint_rd(x);
    i64[4 * i] = __float2ll_rn(x);    i64[4 * i + 1] = __float2ll_rz(x);
    i64[4 * i + 2] = __float2ll_ru(x); i64[4 * i + 3] = __float2ll_rd(x);
    u64[2 * i] = __float2ull_rn(x);   u64[2 * i + 1] = __float2ull_rd(x);
    int *n = narrow + 4 * i;             // 8- and 16-bit destinations, widened again
    asm("{ .reg .s16 t; cvt.rni.s16.f32 t, %1; cvt.s32.s16 %0, t; }" : "=r"(n[0]) : "f"(x));
    asm("{ .reg .u16 t; cvt.rzi.u16.f32 t, %1; cvt.u32.u16 %0, t; }" : "=r"(n[1]) : "f"(x));
    asm("{ .reg .s16 t; cvt.rmi.s8.f32 t, %1; cvt.s32.s8 %0, t; }" : "=r"(n[2]) : "f"(x));
    asm("{ .reg .u16 t; cvt.rpi.u8.f32 t, %1; cvt.u32.u8 %0, t; }" : "=r"(n[3]) : "f"(x));
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"d": {"dtype": "f64", "count": 128, "init": "values_then_random", "seed": 91, "low": -40000, "high": 40000, "values": [0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 3e9, -3e9, 5e18, 2e19, -1e300, "nan", "inf", "-inf", 2147483647.5, -2147483648.5, 65535.5, 32767.5, -32768.5, 255.5, 127.5, -128.5]}, "out": {"dtype": "s32", "count": 1024}, "o64": {"dtype": "s64", "count": 256}}, "params": [{"buffer": "d"}, {"buffer": "out"}, {"buffer": "o64"}], "reference": "ref_cvt_f64_to_int"}
__global__ void cvt_f64_to_int(const double *d, int *out, long long *o64)
{
    int i = threadIdx.x;
    double x = d[i];
    int *o = out + 8 * i;
    o[0] = __double2int_rn(x);  o[1] = __double2int_rz(x);  o[2] = __double2int_ru(x);
    o[3] = (int)__double2uint_rd(x);
    short s; unsigned short us; signed char c; unsigned char uc;
    asm("cvt.rni.s16.f64 %0, %1;" : "=h"(s) : "d"(x));
    asm("cvt.rzi.u16.f64 %0, %1;" : "=h"(us) : "d"(x));
    asm("{ .reg .s16 t; cvt.rni.s8.f64 t, %1; cvt.s32.s8 %0, t; }" : "=r"(o[6]) : "d"(x));
    asm("{ .reg .u16 t; cvt.rmi.u8.f64 t, %1; cvt.u32.u8 %0, t; }" : "=r"(o[7]) : "d"(x));
    o[4] = s; o[5] = us;
    (void)c; (void)uc;
    o64[2 * i] = __double2ll_rz(x);
    o64[2 * i + 1] = (long long)__double2ull_rn(x);
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"i": {"dtype": "s32", "count": 128, "init": "random_bits", "seed": 92}, "l": {"dtype": "s64", "count": 128, "init": "random_bits", "seed": 93}, "f": {"dtype": "f32", "count": 1280}, "d": {"dtype": "f64", "count": 512}}, "params": [{"buffer": "i"}, {"buffer": "l"}, {"buffer": "f"}, {"buffer": "d"}], "reference": "ref_cvt_int_to_float"}
__global__ void cvt_int_to_float(const int *i32, const long long *i64, float *f, double *d)
{
    int i = threadIdx.x;
    int x = i32[i];
    long long y = i64[i];
    float *o = f + 10 * i;
    o[0] = (float)x;                 o[1] = (float)(unsigned)x;
    o[2] = __int2float_rz(x);        o[3] = __uint2float_ru((unsigned)x);
    o[4] = (float)y;                 o[5] = (float)(unsigned long long)y;
    o[6] = __ll2float_rd(y);         o[7] = __ull2float_rz((unsigned long long)y);
    o[8] = (float)(short)x;          o[9] = (float)(unsigned char)(x >> 8);
    double *p = d + 4 * i;
    p[0] = (double)x;                p[1] = (double)y;
    p[2] = __ll2double_ru(y);        p[3] = __ull2double_rz((unsigned long long)y);
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"d": {"dtype": "f64", "count": 128, "init": "values_then_random", "seed": 94, "low": -1e5, "high": 1e5, "values": [1e39, -1e39, 3.4028235677973366e38, 3.4028235e38, 1e-45, 7e-46, 1.401298464324817e-45, 1e-39, -1e-39, "inf", "-inf", 1.0000000596046448, 1.0000000596046449, 0.1]}, "f": {"dtype": "f32", "count": 640}, "back": {"dtype": "f64", "count": 128}}, "params": [{"buffer": "d"}, {"buffer": "f"}, {"buffer": "back"}], "reference": "ref_cvt_f64_f32"}
__global__ void cvt_f64_f32(const double *d, float *f, double *back)
{
    int i = threadIdx.x;
    double x = d[i];
    float *o = f + 5 * i;
    o[0] = (float)x;
    o[1] = __double2float_rz(x);  o[2] = __double2float_ru(x);  o[3] = __double2float_rd(x);
    o[4] = __saturatef((float)x);             // cvt.sat.f32.f32: clamp to [0, 1] (no -0.0 input:
                                              // whether it stays -0.0 is not pinned down here)
    back[i] = (double)o[0];
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"f": {"dtype": "f32", "count": 128, "init": "values_then_random", "seed": 95, "low": -70000, "high": 70000, "values": [65504.0, 65519.99, 65520.0, 70000.0, -70000.0, 6e-8, 2.9e-8, 3e-8, 1e-5, 0.333333343, "inf", "-inf", -0.0, 1.00048828125, 1.001953125, 3.3895314e38, 3.3961776e38, 1e-40]}, "h": {"dtype": "u16", "count": 768}, "hf": {"dtype": "f32", "count": 256}, "hi": {"dtype": "s32", "count": 128}}, "params": [{"buffer": "f"}, {"buffer": "h"}, {"buffer": "hf"}, {"buffer": "hi"}], "reference": "ref_cvt_half"}
__global__ void cvt_half(const float *f, unsigned short *h, float *hf, int *hi)
{
    int i = threadIdx.x;
    float x = f[i];
    unsigned short a, b, c, e, g, k;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(a) : "f"(x));
    asm("cvt.rz.f16.f32 %0, %1;" : "=h"(b) : "f"(x));
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(c) : "f"(x));
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(e) : "d"((double)x * 0.5));
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(g) : "f"(x * 0.01f), "f"(x));
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(k) : "f"(x * 0.5f), "f"(x * 1e-3f));
    unsigned short *o = h + 6 * i;
    o[0] = a; o[1] = b; o[2] = c; o[3] = e; o[4] = g; o[5] = k;
    float back, bback;
    asm("cvt.f32.f16 %0, %1;" : "=f"(back) : "h"(a));
    asm("cvt.f32.bf16 %0, %1;" : "=f"(bback) : "h"(c));
    hf[2 * i] = back;
    hf[2 * i + 1] = bback;
    int r;
    asm("{ .reg .b16 t; cvt.rn.f16.s32 t, %1; cvt.rzi.s32.f16 %0, t; }" : "=r"(r) : "r"((int)(x * 0.1f)));
    hi[i] = r;
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f32", "count": 256, "init": "random", "seed": 96, "low": -1000, "high": 1000}, "packed": {"dtype": "u32", "count": 384}, "unpacked": {"dtype": "f32", "count": 256}}, "params": [{"buffer": "a"}, {"buffer": "packed"}, {"buffer": "unpacked"}], "reference": "ref_cvt_packed"}
__global__ void cvt_packed(const float *a, unsigned *packed, float *unpacked)
{
    int i = threadIdx.x;
    float x = a[2 * i], y = a[2 * i + 1];
    unsigned p, q, r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(x), "f"(y));
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(q) : "f"(x), "f"(y));
    asm("cvt.rn.relu.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x), "f"(y));
    packed[3 * i] = p; packed[3 * i + 1] = q; packed[3 * i + 2] = r;
    unsigned short lo = (unsigned short)(p & 0xffff), hi = (unsigned short)(p >> 16);
    float fl, fh;
    asm("cvt.f32.f16 %0, %1;" : "=f"(fl) : "h"(lo));
    asm("cvt.f32.f16 %0, %1;" : "=f"(fh) : "h"(hi));
    unpacked[2 * i] = fl * 2.0f;
    unpacked[2 * i + 1] = fh + fl;
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 128, "init": "random_bits", "seed": 97}, "w": {"dtype": "s64", "count": 128, "init": "random_bits", "seed": 98}, "out": {"dtype": "s32", "count": 1536}}, "params": [{"buffer": "v"}, {"buffer": "w"}, {"buffer": "out"}], "reference": "ref_cvt_int_int"}
__global__ void cvt_int_int(const int *v, const long long *w, int *out)
{
    int i = threadIdx.x;
    int x = v[i];
    long long y = w[i];
    int *o = out + 12 * i;
    o[0] = (signed char)x;           o[1] = (unsigned char)x;
    o[2] = (short)x;                 o[3] = (unsigned short)x;
    o[4] = (int)(y >> 7);            o[5] = (int)((unsigned long long)y >> 40);
    o[6] = (int)((long long)x * 3 >> 33);
    o[7] = (int)((unsigned long long)(unsigned)x * 5u >> 32);
    int s;
    asm("cvt.sat.s8.s32 %0, %1;" : "=r"(s) : "r"(x >> 20));  o[8] = s;
    asm("cvt.sat.u8.s32 %0, %1;" : "=r"(s) : "r"(x >> 20));  o[9] = s;
    asm("cvt.sat.s16.s64 %0, %1;" : "=r"(s) : "l"(y >> 44)); o[10] = s;
    asm("cvt.sat.u32.s64 %0, %1;" : "=r"(s) : "l"(y >> 20)); o[11] = s;
}
