// Warp-level primitives: shuffles, votes, match, redux. All lanes of a warp are active
// unless a kernel says otherwise.
#define FULL 0xffffffffu

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 256, "init": "random", "seed": 50, "low": -100000, "high": 100000}, "out": {"dtype": "s32", "count": 256}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_shfl_down_reduce"}
__global__ void shfl_down_reduce(const int *v, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = v[i];
    for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(FULL, x, off);
    out[i] = x;   // lane 0 holds the warp sum; other lanes hold partial sums
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u32", "count": 128, "init": "random", "seed": 51, "low": 0, "high": 1000}, "out": {"dtype": "u32", "count": 128}, "seg": {"dtype": "u32", "count": 128}}, "params": [{"buffer": "v"}, {"buffer": "out"}, {"buffer": "seg"}], "reference": "ref_shfl_up_scan"}
__global__ void shfl_up_scan(const unsigned *v, unsigned *out, unsigned *seg)
{
    int i = threadIdx.x;
    int lane = i & 31;
    unsigned x = v[i];
    for (int off = 1; off < 32; off <<= 1) {
        unsigned y = __shfl_up_sync(FULL, x, off);
        if (lane >= off) x += y;
    }
    out[i] = x;                                   // inclusive scan per warp
    unsigned s = v[i];
    for (int off = 1; off < 8; off <<= 1) {      // scan within segments of 8 lanes
        unsigned y = __shfl_up_sync(FULL, s, off, 8);
        if ((lane & 7) >= off) s += y;
    }
    seg[i] = s;
}

//@launch {"grid": [1,1,1], "block": [96,1,1], "buffers": {"v": {"dtype": "f32", "count": 96, "init": "random", "seed": 52, "low": -1000, "high": 1000}, "vmax": {"dtype": "f32", "count": 96}, "d": {"dtype": "f64", "count": 96, "init": "random", "seed": 53, "low": -10, "high": 10}, "dswap": {"dtype": "f64", "count": 96}}, "params": [{"buffer": "v"}, {"buffer": "vmax"}, {"buffer": "d"}, {"buffer": "dswap"}], "reference": "ref_shfl_xor"}
__global__ void shfl_xor(const float *v, float *vmax, const double *d, double *dswap)
{
    int i = threadIdx.x;
    float x = v[i];
    for (int m = 1; m < 32; m <<= 1) x = fmaxf(x, __shfl_xor_sync(FULL, x, m));
    vmax[i] = x;
    dswap[i] = __shfl_xor_sync(FULL, d[i], 5);   // 64-bit: two 32-bit shuffles
}

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 54}, "src": {"dtype": "u32", "count": 128, "init": "random", "seed": 55, "low": 0, "high": 64}, "out": {"dtype": "u32", "count": 384}}, "params": [{"buffer": "v"}, {"buffer": "src"}, {"buffer": "out"}], "reference": "ref_shfl_idx"}
__global__ void shfl_idx(const unsigned *v, const unsigned *src, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    unsigned x = v[i];
    out[3 * i] = __shfl_sync(FULL, x, (lane + 3) & 31);        // rotate
    out[3 * i + 1] = __shfl_sync(FULL, x, src[i]);             // run-time lane (mod 32)
    out[3 * i + 2] = __shfl_sync(FULL, x, src[i], 16);         // within 16-lane halves
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 128, "init": "random", "seed": 56, "low": -20, "high": 100}, "out": {"dtype": "u32", "count": 640}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_vote"}
__global__ void vote(const int *v, unsigned *out)
{
    int i = threadIdx.x;
    int x = v[i];
    out[5 * i] = __ballot_sync(FULL, x > 0);
    out[5 * i + 1] = __any_sync(FULL, x < -15);
    out[5 * i + 2] = __all_sync(FULL, x > -20);
    out[5 * i + 3] = __all_sync(FULL, x > 0);
    unsigned active = 0;
    if (x & 1) active = __activemask();      // lanes taking the branch together
    out[5 * i + 4] = active;
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"k": {"dtype": "u32", "count": 128, "init": "random", "seed": 57, "low": 0, "high": 6}, "k64": {"dtype": "u64", "count": 128, "init": "random", "seed": 58, "low": 0, "high": 3}, "out": {"dtype": "u32", "count": 640}}, "params": [{"buffer": "k"}, {"buffer": "k64"}, {"buffer": "out"}], "reference": "ref_match"}
__global__ void match(const unsigned *k, const unsigned long long *k64, unsigned *out)
{
    int i = threadIdx.x;
    int pred, pred2;
    out[5 * i] = __match_any_sync(FULL, k[i]);
    out[5 * i + 1] = __match_any_sync(FULL, k64[i] << 40);
    out[5 * i + 2] = __match_all_sync(FULL, k[i] / 8u, &pred);    // k < 8: all lanes agree
    out[5 * i + 3] = pred;
    out[5 * i + 4] = __match_all_sync(FULL, k[i] / 3u, &pred2) | (unsigned)pred2 << 4;  // they do not
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 59}, "out": {"dtype": "u32", "count": 896}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_redux"}
__global__ void redux(const unsigned *v, unsigned *out)
{
    int i = threadIdx.x;
    unsigned x = v[i];
    out[7 * i] = __reduce_add_sync(FULL, x);
    out[7 * i + 1] = __reduce_min_sync(FULL, x);
    out[7 * i + 2] = __reduce_max_sync(FULL, x);
    out[7 * i + 3] = (unsigned)__reduce_min_sync(FULL, (int)x);
    out[7 * i + 4] = (unsigned)__reduce_max_sync(FULL, (int)x);
    out[7 * i + 5] = __reduce_and_sync(FULL, x | 0x80000001u) ^ __reduce_or_sync(FULL, x & 0x7ffffffeu);
    out[7 * i + 6] = __reduce_xor_sync(FULL, x);
}
