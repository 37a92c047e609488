// Integer division and remainder, 32 and 64 bits, signed and unsigned, by run-time
// divisors (div/rem, which ptxas expands into long sequences or calls) and by constants
// (which nvcc turns into mul.hi and shifts). Divisors are never zero and INT_MIN / -1 never
// occurs; C semantics: quotients truncate toward zero, remainders take the dividend's sign.

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "s32", "count": 256, "init": "values_then_random_bits", "seed": 120, "values": [2147483647, -2147483647, 7, -7, 0, 1]}, "b": {"dtype": "s32", "count": 256, "init": "values_then_random", "seed": 121, "low": -70000, "high": 70000, "nonzero": true, "values": [1, 2, -2, 3, -3, 2147483647]}, "out": {"dtype": "s32", "count": 2048}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_div32"}
__global__ void div32(const int *a, const int *b, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = a[i], y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    int *o = out + 8 * i;
    o[0] = x / y;              o[1] = x % y;
    o[2] = (int)(ux / uy);     o[3] = (int)(ux % uy);
    o[4] = x / 7;              o[5] = x % -3;
    o[6] = (int)(ux / 10u);    o[7] = (int)(ux % 1000u);
}

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"a": {"dtype": "s64", "count": 128, "init": "values_then_random_bits", "seed": 122, "values": [9223372036854775807, -9223372036854775807, 7, -7, 0]}, "b": {"dtype": "s64", "count": 128, "init": "values_then_random", "seed": 123, "low": -5000000000, "high": 5000000000, "nonzero": true, "values": [1, 2, -2, 3, 4294967296, -4294967297]}, "out": {"dtype": "s64", "count": 1024}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_div64"}
__global__ void div64(const long long *a, const long long *b, long long *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long x = a[i], y = b[i];
    unsigned long long ux = (unsigned long long)x, uy = (unsigned long long)y;
    long long *o = out + 8 * i;
    o[0] = x / y;                   o[1] = x % y;
    o[2] = (long long)(ux / uy);    o[3] = (long long)(ux % uy);
    o[4] = x / 1000000007LL;        o[5] = x % -12345LL;
    o[6] = (long long)(ux / 3ull);  o[7] = (long long)(ux % (uy >> 40 | 1));
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "s16", "count": 128, "init": "random_bits", "seed": 124}, "b": {"dtype": "s8", "count": 128, "init": "random", "seed": 125, "low": -128, "high": 128, "nonzero": true}, "out": {"dtype": "s32", "count": 512}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_div_small"}
__global__ void div_small(const short *a, const signed char *b, int *out)
{
    int i = threadIdx.x;
    short x = a[i];
    signed char y = b[i];
    unsigned short ux = (unsigned short)x;
    unsigned char uy = (unsigned char)y;
    out[4 * i] = (short)(x / y);
    out[4 * i + 1] = (short)(x % y);
    out[4 * i + 2] = (unsigned short)(ux / uy);
    out[4 * i + 3] = (unsigned char)(uy % (unsigned char)(ux | 1));
}
