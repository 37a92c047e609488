// IEEE floating point without fast-math: div.rn, sqrt.rn, rcp.rn, fma.rn, directed
// rounding intrinsics, f64 arithmetic, min/max/abs, rounding to integral values, and the
// libdevice expansions of expf/logf/sinf (which use local memory for huge arguments).

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f32", "count": 256, "init": "random", "seed": 60, "low": -1000, "high": 1000}, "b": {"dtype": "f32", "count": 256, "init": "random", "seed": 61, "low": 0.001, "high": 50}, "c": {"dtype": "f32", "count": 256, "init": "random", "seed": 62, "low": -10, "high": 10}, "out": {"dtype": "f32", "count": 1280}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"buffer": "out"}], "reference": "ref_ieee_f32"}
__global__ void ieee_f32(const float *a, const float *b, const float *c, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i], y = b[i], z = c[i];
    out[5 * i] = x / y;                 // div.rn.f32
    out[5 * i + 1] = sqrtf(y);          // sqrt.rn.f32
    out[5 * i + 2] = 1.0f / y;          // rcp.rn.f32
    out[5 * i + 3] = fmaf(x, y, z);     // fma.rn.f32
    out[5 * i + 4] = __fmul_rn(x, y) + z;   // no contraction across __fmul_rn
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f32", "count": 128, "init": "random", "seed": 63, "low": -100, "high": 100}, "b": {"dtype": "f32", "count": 128, "init": "random", "seed": 64, "low": 0.01, "high": 30}, "out": {"dtype": "f32", "count": 1536}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_directed_f32"}
__global__ void directed_f32(const float *a, const float *b, float *out)
{
    int i = threadIdx.x;
    float x = a[i], y = b[i];
    float *o = out + 12 * i;
    o[0] = __fadd_rd(x, y);  o[1] = __fadd_ru(x, y);  o[2] = __fadd_rz(x, y);
    o[3] = __fmul_rd(x, y);  o[4] = __fmul_ru(x, y);  o[5] = __fmul_rz(x, y);
    o[6] = __fdiv_rd(x, y);  o[7] = __fdiv_ru(x, y);  o[8] = __fdiv_rz(x, y);
    o[9] = __fsqrt_rd(y);    o[10] = __frcp_ru(y);    o[11] = __fmaf_rz(x, y, -x);
}

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"a": {"dtype": "f64", "count": 128, "init": "random", "seed": 65, "low": -1e6, "high": 1e6}, "b": {"dtype": "f64", "count": 128, "init": "random", "seed": 66, "low": 1e-3, "high": 1e3}, "c": {"dtype": "f64", "count": 128, "init": "random", "seed": 67, "low": -10, "high": 10}, "out": {"dtype": "f64", "count": 896}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"buffer": "out"}], "reference": "ref_ieee_f64"}
__global__ void ieee_f64(const double *a, const double *b, const double *c, double *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double x = a[i], y = b[i], z = c[i];
    double *o = out + 7 * i;
    o[0] = x / y;             // div.rn.f64
    o[1] = sqrt(y);           // sqrt.rn.f64
    o[2] = 1.0 / y;           // rcp.rn.f64
    o[3] = fma(x, y, z);
    o[4] = x * y;             // (x * y - z would leave the choice to fuse to ptxas)
    o[5] = __dadd_rn(x, z) - __dmul_rn(y, y);
    o[6] = (x + y) * (x - y);
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f64", "count": 128, "init": "random", "seed": 68, "low": -100, "high": 100}, "b": {"dtype": "f64", "count": 128, "init": "random", "seed": 69, "low": 0.01, "high": 30}, "out": {"dtype": "f64", "count": 1024}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_directed_f64"}
__global__ void directed_f64(const double *a, const double *b, double *out)
{
    int i = threadIdx.x;
    double x = a[i], y = b[i];
    double *o = out + 8 * i;
    o[0] = __dadd_rd(x, y);  o[1] = __dmul_ru(x, y);  o[2] = __ddiv_rz(x, y);
    o[3] = __ddiv_ru(x, y);  o[4] = __dsqrt_rd(y);   o[5] = __dsqrt_ru(y);
    o[6] = __drcp_rn(y);     o[7] = __fma_rd(x, y, 1.0);
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f32", "count": 128, "init": "random", "seed": 70, "low": -20, "high": 20}, "b": {"dtype": "f32", "count": 128, "init": "random", "seed": 71, "low": -20, "high": 20}, "d": {"dtype": "f64", "count": 128, "init": "random", "seed": 72, "low": -20, "high": 20}, "out": {"dtype": "f32", "count": 1280}, "dout": {"dtype": "f64", "count": 768}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "d"}, {"buffer": "out"}, {"buffer": "dout"}], "reference": "ref_minmax_round"}
__global__ void minmax_round(const float *a, const float *b, const double *d, float *out, double *dout)
{
    int i = threadIdx.x;
    float x = a[i], y = b[i];
    double z = d[i];
    float *o = out + 10 * i;
    o[0] = fminf(x, y);  o[1] = fmaxf(x, y);  o[2] = fabsf(x);  o[3] = copysignf(y, x);
    o[4] = floorf(x);    o[5] = ceilf(x);     o[6] = truncf(x); o[7] = rintf(x);
    o[8] = -x;           o[9] = (x > y) ? x - y : 0.0f;
    double *p = dout + 6 * i;
    p[0] = fmin(z, (double)x);  p[1] = fmax(z, (double)y);  p[2] = fabs(z);
    p[3] = floor(z);            p[4] = ceil(z);             p[5] = rint(z);
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f32", "count": 128, "init": "random", "seed": 73, "low": -20, "high": 20}, "big": {"dtype": "f32", "count": 128, "init": "random", "seed": 74, "low": -1e6, "high": 1e6}, "out": {"dtype": "f32", "count": 512}}, "params": [{"buffer": "a"}, {"buffer": "big"}, {"buffer": "out"}], "reference": "ref_libm_f32"}
__global__ void libm_f32(const float *a, const float *big, float *out)
{
    int i = threadIdx.x;
    float x = a[i];
    out[4 * i] = expf(x);
    out[4 * i + 1] = logf(fabsf(x) + 0.5f);
    out[4 * i + 2] = sinf(x);
    out[4 * i + 3] = cosf(big[i]);   // large arguments take the Payne-Hanek path
}
