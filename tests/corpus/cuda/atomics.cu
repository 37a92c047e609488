// Atomics on global and shared memory. Every kernel's final memory state is independent of
// the order in which threads run: the old values returned by atomics are only used where
// the result does not depend on order.

//@launch {"grid": [4,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u32", "count": 512, "init": "random_bits", "seed": 40}, "hist": {"dtype": "u32", "count": 64}}, "params": [{"buffer": "v"}, {"buffer": "hist"}], "reference": "ref_atomic_add_int"}
__global__ void atomic_add_int(const unsigned *v, unsigned *hist)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = v[i];
    atomicAdd(&hist[x & 15], 1u);
    atomicAdd_block((int *)&hist[16 + ((x >> 4) & 15)], 2);   // atom scoped to the block
    atomicAdd_system(&hist[32 + ((x >> 8) & 15)], x >> 28);
    // nvcc writes atom even when the old value is unused; red is written in PTX.
    asm volatile("red.global.add.u32 [%0], %1;" :: "l"(&hist[48 + ((x >> 12) & 15)]), "r"(x & 7) : "memory");
}

// Values are multiples of 1/4 with small magnitude: every partial sum is exact in f32/f64,
// so the order of additions does not matter.
//@launch {"grid": [4,1,1], "block": [128,1,1], "buffers": {"f": {"dtype": "f32", "count": 512, "init": "random_int", "seed": 41, "low": -64, "high": 64, "scale": 0.25}, "d": {"dtype": "f64", "count": 512, "init": "random_int", "seed": 42, "low": -4096, "high": 4096, "scale": 0.125}, "fsum": {"dtype": "f32", "count": 4}, "dsum": {"dtype": "f64", "count": 4}}, "params": [{"buffer": "f"}, {"buffer": "d"}, {"buffer": "fsum"}, {"buffer": "dsum"}], "reference": "ref_atomic_add_float"}
__global__ void atomic_add_float(const float *f, const double *d, float *fsum, double *dsum)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&fsum[i & 3], f[i]);
    atomicAdd(&dsum[(i >> 2) & 3], d[i]);
}

__device__ unsigned atomic_mul_u32(unsigned *p, unsigned m)
{
    unsigned old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, assumed * m);
    } while (old != assumed);
    return old;
}

__device__ float atomic_max_f32(float *p, float v)
{
    int *ip = (int *)p;
    int old = *ip, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(ip, assumed, __float_as_int(v));
    } while (old != assumed);
    return __int_as_float(old);
}

__device__ double atomic_min_f64(double *p, double v)
{
    unsigned long long *ip = (unsigned long long *)p;
    unsigned long long old = *ip, assumed;
    do {
        assumed = old;
        if (__longlong_as_double(assumed) <= v) break;
        old = atomicCAS(ip, assumed, __double_as_longlong(v));
    } while (old != assumed);
    return __longlong_as_double(old);
}

// prod starts at 1 (init "const"), fmax at -inf, dmin at +inf.
//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"m": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 43}, "f": {"dtype": "f32", "count": 128, "init": "random", "seed": 44, "low": -100, "high": 100}, "d": {"dtype": "f64", "count": 128, "init": "random", "seed": 45, "low": -100, "high": 100}, "prod": {"dtype": "u32", "count": 2, "init": "const", "value": 1}, "fmax": {"dtype": "f32", "count": 1, "init": "const", "value": "-inf"}, "dmin": {"dtype": "f64", "count": 1, "init": "const", "value": "inf"}}, "params": [{"buffer": "m"}, {"buffer": "f"}, {"buffer": "d"}, {"buffer": "prod"}, {"buffer": "fmax"}, {"buffer": "dmin"}], "reference": "ref_atomic_cas"}
__global__ void atomic_cas(const unsigned *m, const float *f, const double *d,
                           unsigned *prod, float *fmax, double *dmin)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomic_mul_u32(&prod[i & 1], m[i] | 1);
    atomic_max_f32(fmax, f[i]);
    atomic_min_f64(dmin, d[i]);
}

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 256, "init": "random_bits", "seed": 46}, "w": {"dtype": "s64", "count": 256, "init": "random_bits", "seed": 47}, "res": {"dtype": "s32", "count": 4, "init": "values", "values": [-2147483648, 2147483647, 0, -1]}, "res64": {"dtype": "s64", "count": 4, "init": "values", "values": [-9223372036854775808, 9223372036854775807, 0, -1]}}, "params": [{"buffer": "v"}, {"buffer": "w"}, {"buffer": "res"}, {"buffer": "res64"}], "reference": "ref_atomic_minmax"}
__global__ void atomic_minmax(const int *v, const long long *w, int *res, long long *res64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicMax(&res[0], v[i]);
    atomicMin(&res[1], v[i]);
    atomicMax((unsigned *)&res[2], (unsigned)v[i]);
    atomicMin((unsigned *)&res[3], (unsigned)v[i]);
    atomicMax(&res64[0], w[i]);
    atomicMin(&res64[1], w[i]);
    atomicMax((unsigned long long *)&res64[2], (unsigned long long)w[i]);
    atomicMin((unsigned long long *)&res64[3], (unsigned long long)w[i]);
}

// Exactly one thread finds the flag clear; the others count themselves.
//@launch {"grid": [2,1,1], "block": [96,1,1], "buffers": {"state": {"dtype": "u32", "count": 3}, "fslot": {"dtype": "f32", "count": 1}, "slot64": {"dtype": "u64", "count": 1}}, "params": [{"buffer": "state"}, {"buffer": "fslot"}, {"buffer": "slot64"}], "reference": "ref_atomic_exch"}
__global__ void atomic_exch(unsigned *state, float *fslot, unsigned long long *slot64)
{
    unsigned old = atomicExch(&state[0], 1u);
    if (old == 0) atomicAdd(&state[1], 1u);
    else atomicAdd(&state[2], 1u);
    atomicExch(fslot, 2.5f);
    atomicExch(slot64, 0x0123456789abcdefull);
}

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u32", "count": 256, "init": "random_bits", "seed": 48}, "res": {"dtype": "u32", "count": 3, "init": "values", "values": [4294967295, 0, 305419896]}, "res64": {"dtype": "u64", "count": 3, "init": "values", "values": [18446744073709551615, 0, 0]}}, "params": [{"buffer": "v"}, {"buffer": "res"}, {"buffer": "res64"}], "reference": "ref_atomic_bitwise"}
__global__ void atomic_bitwise(const unsigned *v, unsigned *res, unsigned long long *res64)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = v[i] | (1u << (i & 31));
    atomicAnd(&res[0], x);
    atomicOr(&res[1], v[i] & 0x0f0f0f0fu);
    atomicXor(&res[2], v[i]);
    unsigned long long y = (unsigned long long)v[i] << (i & 31);
    atomicAnd(&res64[0], ~y);
    atomicOr(&res64[1], y);
    atomicXor(&res64[2], y);
}

// atomicInc/atomicDec apply the same function of the old value every time, so the final
// value only depends on how many threads ran. atomicAdd on 64-bit integers likewise.
//@launch {"grid": [3,1,1], "block": [100,1,1], "buffers": {"ctr": {"dtype": "u32", "count": 4, "init": "values", "values": [0, 5, 3, 1000]}, "ctr64": {"dtype": "u64", "count": 1, "init": "const", "value": 4294967000}}, "params": [{"buffer": "ctr"}, {"buffer": "ctr64"}], "reference": "ref_atomic_inc_dec"}
__global__ void atomic_inc_dec(unsigned *ctr, unsigned long long *ctr64)
{
    atomicInc(&ctr[0], 16u);
    atomicInc(&ctr[1], 1000u);
    atomicDec(&ctr[2], 7u);
    atomicSub(&ctr[3], 3u);
    atomicAdd(ctr64, 3ull);
}

// Block-local histogram in shared memory, merged into global memory.
//@launch {"grid": [4,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u8", "count": 512, "init": "random", "seed": 49, "low": 0, "high": 256}, "hist": {"dtype": "u32", "count": 32}, "bmax": {"dtype": "s32", "count": 4}}, "params": [{"buffer": "v"}, {"buffer": "hist"}, {"buffer": "bmax"}], "reference": "ref_atomic_shared"}
__global__ void atomic_shared(const unsigned char *v, unsigned *hist, int *bmax)
{
    __shared__ unsigned sh[32];
    __shared__ int smax;
    __shared__ unsigned long long s64;
    int t = threadIdx.x;
    if (t < 32) sh[t] = 0;
    if (t == 0) { smax = -1; s64 = 0; }
    __syncthreads();
    unsigned x = v[blockIdx.x * blockDim.x + t];
    atomicAdd(&sh[x >> 3], 1u);
    atomicMax(&smax, (int)x);
    atomicAdd(&s64, (unsigned long long)x << 32);
    atomicCAS(&sh[31], 0xffffffffu, 0u);   // never matches: the count is at most 128
    __syncthreads();
    if (t < 32) atomicAdd(&hist[t], sh[t]);
    if (t == 0) bmax[blockIdx.x] = smax + (int)((s64 >> 32) != 0) - 1;
}
