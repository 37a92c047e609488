// Compiled with -use_fast_math: approximate division, square root, reciprocal and
// transcendental instructions (div.approx/div.full, sqrt.approx, rcp.approx, rsqrt.approx,
// ex2.approx, lg2.approx, sin.approx, cos.approx), all with .ftz.

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f32", "count": 256, "init": "random", "seed": 80, "low": -100, "high": 100}, "b": {"dtype": "f32", "count": 256, "init": "random", "seed": 81, "low": 0.01, "high": 50}, "out": {"dtype": "f32", "count": 1024}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_fast_arith"}
__global__ void fast_arith(const float *a, const float *b, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i], y = b[i];
    out[4 * i] = x / y;
    out[4 * i + 1] = sqrtf(y);
    out[4 * i + 2] = 1.0f / y;
    out[4 * i + 3] = rsqrtf(y);
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "f32", "count": 128, "init": "random", "seed": 82, "low": -3.14, "high": 3.14}, "b": {"dtype": "f32", "count": 128, "init": "random", "seed": 83, "low": 0.1, "high": 20}, "out": {"dtype": "f32", "count": 768}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_fast_transcendental"}
__global__ void fast_transcendental(const float *a, const float *b, float *out)
{
    int i = threadIdx.x;
    float x = a[i], y = b[i];
    out[6 * i] = expf(x);
    out[6 * i + 1] = exp2f(x);
    out[6 * i + 2] = logf(y);
    out[6 * i + 3] = log2f(y);
    out[6 * i + 4] = sinf(x);
    out[6 * i + 5] = cosf(x);
}
