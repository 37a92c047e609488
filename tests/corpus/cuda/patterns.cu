// The kernel shapes our code quality was weakest on (issue 20, item 4), written the way CUDA
// programmers write them: shared-memory transposes and tiled matmuls, shared-memory
// histograms with atomics, warp-shuffle and vote reductions, global atomics, grid-stride
// loops, a stencil. Each kernel's launch has more than one block so that every path of the
// index arithmetic runs.
#define FULL 0xffffffffu
#define TILE 32

//@launch {"grid": [2,2,1], "block": [32,8,1], "buffers": {"in": {"dtype": "f32", "count": 4096, "init": "random", "seed": 301, "low": -100, "high": 100}, "out": {"dtype": "f32", "count": 4096}}, "params": [{"buffer": "in"}, {"buffer": "out"}, {"type": "s32", "value": 64, "name": "n"}], "reference": "ref_transpose_smem"}
__global__ void transpose_smem(const float *in, float *out, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

//@launch {"grid": [2,2,1], "block": [16,16,1], "buffers": {"a": {"dtype": "f32", "count": 2048, "init": "random_int", "seed": 302, "low": -8, "high": 9, "scale": 0.25}, "b": {"dtype": "f32", "count": 2048, "init": "random_int", "seed": 303, "low": -8, "high": 9, "scale": 0.25}, "c": {"dtype": "f32", "count": 1024}}, "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"type": "s32", "value": 32, "name": "n"}, {"type": "s32", "value": 64, "name": "k"}], "reference": "ref_matmul_tiled"}
__global__ void matmul_tiled(const float *a, const float *b, float *c, int n, int k)
{
    __shared__ float as[16][16], bs[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < k; t += 16) {
        as[threadIdx.y][threadIdx.x] = a[row * k + t + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 16; i++) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}

//@launch {"grid": [4,1,1], "block": [256,1,1], "buffers": {"v": {"dtype": "u8", "count": 8192, "init": "random", "seed": 304, "low": 0, "high": 256}, "hist": {"dtype": "u32", "count": 256}}, "params": [{"buffer": "v"}, {"buffer": "hist"}, {"type": "s32", "value": 8192, "name": "n"}], "reference": "ref_histogram_smem"}
__global__ void histogram_smem(const unsigned char *v, unsigned *hist, int n)
{
    __shared__ unsigned local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[v[i]], 1u);
    __syncthreads();
    atomicAdd(&hist[threadIdx.x], local[threadIdx.x]);
}

//@launch {"grid": [3,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u32", "count": 3000, "init": "random", "seed": 305, "low": 0, "high": 1000000}, "hist": {"dtype": "u32", "count": 64}}, "params": [{"buffer": "v"}, {"buffer": "hist"}, {"type": "s32", "value": 3000, "name": "n"}], "reference": "ref_histogram_global"}
__global__ void histogram_global(const unsigned *v, unsigned *hist, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&hist[v[i] % 64], 1u);
}

//@launch {"grid": [4,1,1], "block": [256,1,1], "buffers": {"v": {"dtype": "s32", "count": 4096, "init": "random", "seed": 306, "low": -1000, "high": 1000}, "sum": {"dtype": "s32", "count": 1}}, "params": [{"buffer": "v"}, {"buffer": "sum"}, {"type": "s32", "value": 4096, "name": "n"}], "reference": "ref_block_reduce"}
__global__ void block_reduce(const int *v, int *sum, int n)
{
    __shared__ int warps[32];
    int x = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x += v[i];
    for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(FULL, x, off);
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = x;
    __syncthreads();
    if (threadIdx.x < 32) {
        x = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : 0;
        for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(FULL, x, off);
        if (threadIdx.x == 0) atomicAdd(sum, x);
    }
}

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "f32", "count": 256, "init": "random_int", "seed": 307, "low": -64, "high": 64, "scale": 0.5}, "out": {"dtype": "f32", "count": 8}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_warp_sum_f32"}
__global__ void warp_sum_f32(const float *v, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = v[i];
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(FULL, x, off);
    if ((threadIdx.x & 31) == 0) out[i >> 5] = x;
}

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 256, "init": "random", "seed": 308, "low": -50, "high": 50}, "out": {"dtype": "s32", "count": 256}, "count": {"dtype": "u32", "count": 8}}, "params": [{"buffer": "v"}, {"buffer": "out"}, {"buffer": "count"}], "reference": "ref_compact_ballot"}
__global__ void compact_ballot(const int *v, int *out, unsigned *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = v[i];
    bool keep = x > 0;
    unsigned ballot = __ballot_sync(FULL, keep);
    unsigned lane = threadIdx.x & 31;
    if (lane == 0) count[i >> 5] = __popc(ballot);
    if (keep) out[(i & ~31) + __popc(ballot & ((1u << lane) - 1))] = x;   // each warp's positives, packed
}

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 256, "init": "random", "seed": 309, "low": -3, "high": 3}, "out": {"dtype": "u32", "count": 24}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_vote_counts"}
__global__ void vote_counts(const int *v, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = v[i];
    unsigned pos = __ballot_sync(FULL, x > 0), any0 = __any_sync(FULL, x == 0), all_small = __all_sync(FULL, x > -3);
    if ((threadIdx.x & 31) == 0) {
        int w = i >> 5;
        out[3 * w] = __popc(pos);
        out[3 * w + 1] = any0;
        out[3 * w + 2] = all_small;
    }
}

//@launch {"grid": [3,1,1], "block": [64,1,1], "buffers": {"x": {"dtype": "f32", "count": 1000, "init": "random_int", "seed": 310, "low": -100, "high": 100, "scale": 0.25}, "y": {"dtype": "f32", "count": 1000, "init": "random_int", "seed": 311, "low": -100, "high": 100, "scale": 0.25}}, "params": [{"type": "f32", "value": 1.5, "name": "a"}, {"buffer": "x"}, {"buffer": "y"}, {"type": "s32", "value": 1000, "name": "n"}], "reference": "ref_saxpy_grid_stride"}
__global__ void saxpy_grid_stride(float a, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "f64", "count": 2000, "init": "random_int", "seed": 312, "low": -1000, "high": 1000, "scale": 0.125}, "sum": {"dtype": "f64", "count": 128}}, "params": [{"buffer": "v"}, {"buffer": "sum"}, {"type": "s32", "value": 2000, "name": "n"}], "reference": "ref_sum_f64_grid_stride"}
__global__ void sum_f64_grid_stride(const double *v, double *sum, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    double s = 0.0;
    for (int i = t; i < n; i += gridDim.x * blockDim.x) s += v[i];
    sum[t] = s;
}

//@launch {"grid": [2,2,1], "block": [16,16,1], "buffers": {"in": {"dtype": "f32", "count": 1024, "init": "random_int", "seed": 313, "low": -64, "high": 64, "scale": 0.25}, "out": {"dtype": "f32", "count": 1024}}, "params": [{"buffer": "in"}, {"buffer": "out"}, {"type": "s32", "value": 32, "name": "n"}], "reference": "ref_stencil_5pt"}
__global__ void stencil_5pt(const float *in, float *out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= n - 1 || y >= n - 1) {
        out[y * n + x] = in[y * n + x];
        return;
    }
    out[y * n + x] = 0.5f * in[y * n + x] + 0.125f * (in[y * n + x - 1] + in[y * n + x + 1]
                                                      + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
}

//@launch {"grid": [2,1,1], "block": [128,1,1], "dynamic_shared_bytes": 512, "buffers": {"v": {"dtype": "u32", "count": 256, "init": "random_bits", "seed": 314}, "out": {"dtype": "u32", "count": 256}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_smem_reverse_block"}
__global__ void smem_reverse_block(const unsigned *v, unsigned *out)
{
    extern __shared__ unsigned buf[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buf[t] = v[i];
    __syncthreads();
    out[i] = buf[blockDim.x - 1 - t] ^ (buf[t] >> 3);
}
