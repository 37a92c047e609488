// Device-function calls: .func, call.uni, recursion (stack frames in local memory),
// indirect calls through a function-pointer table (call with a prototype), struct returns.
// Pure C (no header intrinsics), so the -G build is reproducible.

struct Vec3 { float x, y, z; };

__device__ __noinline__ int mix3(int a, int b, int c)
{
    return (a * 31 + b) ^ (c << 3);
}

__device__ __noinline__ long long widen_mix(long long a, double d, float f, short s, unsigned char u)
{
    return a * 3 + (long long)d - (long long)f + s * u;
}

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "s32", "count": 256, "init": "random", "seed": 11, "low": -100000, "high": 100000}, "out": {"dtype": "s32", "count": 256}}, "params": [{"buffer": "a"}, {"buffer": "out"}], "reference": "ref_call_noinline"}
__global__ void call_noinline(const int *a, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = mix3(a[i], i, mix3(i, a[i] >> 4, 7));
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"a": {"dtype": "s64", "count": 128, "init": "random", "seed": 12, "low": -1000000, "high": 1000000}, "d": {"dtype": "f64", "count": 128, "init": "random", "seed": 13, "low": -1000, "high": 1000}, "out": {"dtype": "s64", "count": 128}}, "params": [{"buffer": "a"}, {"buffer": "d"}, {"buffer": "out"}], "reference": "ref_call_many_args"}
__global__ void call_many_args(const long long *a, const double *d, long long *out)
{
    int i = threadIdx.x;
    out[i] = widen_mix(a[i], d[i], (float)(i * 0.5f), (short)(i - 64), (unsigned char)(i * 3));
}

__device__ __noinline__ int fib_rec(int n)
{
    if (n < 2) return n;
    return fib_rec(n - 1) + fib_rec(n - 2);
}

__device__ __noinline__ unsigned gcd_rec(unsigned a, unsigned b)
{
    if (b == 0) return a;
    unsigned r = gcd_rec(b, a % b);
    return r;
}

//@launch {"grid": [1,1,1], "block": [64,1,1], "buffers": {"n": {"dtype": "s32", "count": 64, "init": "random", "seed": 14, "low": 0, "high": 11}, "a": {"dtype": "u32", "count": 64, "init": "random", "seed": 15, "low": 1, "high": 100000}, "b": {"dtype": "u32", "count": 64, "init": "random", "seed": 16, "low": 1, "high": 100000}, "out": {"dtype": "u32", "count": 128}}, "params": [{"buffer": "n"}, {"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_call_recursive"}
__global__ void call_recursive(const int *n, const unsigned *a, const unsigned *b, unsigned *out)
{
    int i = threadIdx.x;
    out[2 * i] = fib_rec(n[i]);
    out[2 * i + 1] = gcd_rec(a[i], b[i]);
}

__device__ __noinline__ int op_add(int x, int y) { return x + y; }
__device__ __noinline__ int op_sub(int x, int y) { return x - y; }
__device__ __noinline__ int op_mul(int x, int y) { return x * y; }
__device__ __noinline__ int op_xor(int x, int y) { return x ^ y; }
__device__ __noinline__ int op_max(int x, int y) { return x > y ? x : y; }

typedef int (*binop_t)(int, int);
__device__ binop_t op_table[5] = { op_add, op_sub, op_mul, op_xor, op_max };

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"sel": {"dtype": "u32", "count": 128, "init": "random", "seed": 17, "low": 0, "high": 5}, "x": {"dtype": "s32", "count": 128, "init": "random", "seed": 18, "low": -50000, "high": 50000}, "y": {"dtype": "s32", "count": 128, "init": "random", "seed": 19, "low": -50000, "high": 50000}, "out": {"dtype": "s32", "count": 128}}, "params": [{"buffer": "sel"}, {"buffer": "x"}, {"buffer": "y"}, {"buffer": "out"}], "reference": "ref_call_indirect"}
__global__ void call_indirect(const unsigned *sel, const int *x, const int *y, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    binop_t f = op_table[sel[i] % 5];
    out[i] = f(x[i], y[i]);
}

__device__ __noinline__ Vec3 cross3(Vec3 a, Vec3 b)
{
    Vec3 r;
    r.x = a.y * b.z - a.z * b.y;
    r.y = a.z * b.x - a.x * b.z;
    r.z = a.x * b.y - a.y * b.x;
    return r;
}

//@launch {"grid": [1,1,1], "block": [96,1,1], "buffers": {"a": {"dtype": "f32", "count": 288, "init": "random_int", "seed": 20, "low": -64, "high": 64}, "b": {"dtype": "f32", "count": 288, "init": "random_int", "seed": 21, "low": -64, "high": 64}, "out": {"dtype": "f32", "count": 288}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "out"}], "reference": "ref_call_struct"}
__global__ void call_struct(const float *a, const float *b, float *out)
{
    int i = threadIdx.x;
    Vec3 u = { a[3 * i], a[3 * i + 1], a[3 * i + 2] };
    Vec3 v = { b[3 * i], b[3 * i + 1], b[3 * i + 2] };
    Vec3 w = cross3(u, v);
    out[3 * i] = w.x;
    out[3 * i + 1] = w.y;
    out[3 * i + 2] = w.z;
}
