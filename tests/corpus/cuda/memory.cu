// Memory spaces: static and dynamic shared arrays with barriers, __constant__ data,
// __device__ globals with initialisers, cp.async into shared memory, vector and cached
// loads/stores, fences, and grid-stride loops with run-time trip counts.

//@launch {"grid": [4,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 512, "init": "random", "seed": 130, "low": -100000, "high": 100000}, "out": {"dtype": "s32", "count": 4}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_smem_reduce"}
__global__ void smem_reduce(const int *v, int *out)
{
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = v[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

//@launch {"grid": [3,1,1], "block": [96,1,1], "dynamic_shared_bytes": 768, "buffers": {"v": {"dtype": "f32", "count": 288, "init": "random", "seed": 131, "low": -10, "high": 10}, "out": {"dtype": "f32", "count": 288}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_smem_dynamic"}
__global__ void smem_dynamic(const float *v, float *out)
{
    extern __shared__ float dyn[];
    float *twice = dyn + blockDim.x;           // second half of the dynamic allocation
    int t = threadIdx.x, n = blockDim.x;
    int g = blockIdx.x * n + t;
    dyn[t] = v[g];
    twice[t] = v[g] * 2.0f;
    __syncthreads();
    out[g] = dyn[n - 1 - t] + twice[(t + 1) % n];
}

//@launch {"grid": [2,3,1], "block": [16,16,1], "buffers": {"m": {"dtype": "u32", "count": 1536, "init": "arange"}, "out": {"dtype": "u32", "count": 1536}}, "params": [{"buffer": "m"}, {"buffer": "out"}, {"type": "s32", "value": 32, "name": "width"}, {"type": "s32", "value": 48, "name": "height"}], "reference": "ref_smem_transpose"}
__global__ void smem_transpose(const unsigned *m, unsigned *out, int width, int height)
{
    __shared__ unsigned tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x < width && y < height) tile[threadIdx.y][threadIdx.x] = m[y * width + x];
    __syncthreads();
    int tx = blockIdx.y * 16 + threadIdx.x, ty = blockIdx.x * 16 + threadIdx.y;
    if (tx < height && ty < width) out[ty * height + tx] = tile[threadIdx.x][threadIdx.y];
}

__constant__ float poly_coeff[5] = { 0.5f, -1.25f, 0.75f, 2.0f, -0.125f };
__constant__ int lut[16] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3 };

// x is a multiple of 1/8 in [-2, 2]: every intermediate is exact in f32.
//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"x": {"dtype": "f32", "count": 128, "init": "random_int", "seed": 132, "low": -16, "high": 17, "scale": 0.125}, "k": {"dtype": "u32", "count": 128, "init": "random_bits", "seed": 133}, "out": {"dtype": "f32", "count": 128}, "iout": {"dtype": "s32", "count": 128}}, "params": [{"buffer": "x"}, {"buffer": "k"}, {"buffer": "out"}, {"buffer": "iout"}], "reference": "ref_constant_mem"}
__global__ void constant_mem(const float *x, const unsigned *k, float *out, int *iout)
{
    int i = threadIdx.x;
    float v = x[i], r = poly_coeff[4];
    for (int j = 3; j >= 0; j--) r = r * v + poly_coeff[j];
    out[i] = r;
    unsigned key = k[i];
    iout[i] = lut[key & 15] * 100 + lut[(key >> 4) & 15];
}

__device__ int dev_table[8] = { 10, 20, 30, 40, 50, 60, 70, 80 };
__device__ float dev_scale = 2.5f;
__device__ unsigned dev_arrivals = 0;

// The block that arrives last (ordered by an atomic counter) publishes the total.
//@launch {"grid": [4,1,1], "block": [64,1,1], "buffers": {"k": {"dtype": "u32", "count": 256, "init": "random_bits", "seed": 134}, "out": {"dtype": "f32", "count": 256}, "partial": {"dtype": "s32", "count": 4}, "total": {"dtype": "s32", "count": 1}}, "params": [{"buffer": "k"}, {"buffer": "out"}, {"buffer": "partial"}, {"buffer": "total"}], "reference": "ref_device_globals"}
__global__ void device_globals(const unsigned *k, float *out, int *partial, int *total)
{
    __shared__ int block_sum;
    __shared__ bool last;
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    int val = dev_table[k[g] & 7];
    out[g] = val * dev_scale;
    if (t == 0) block_sum = 0;
    __syncthreads();
    atomicAdd(&block_sum, val);
    __syncthreads();
    if (t == 0) {
        partial[blockIdx.x] = block_sum;
        __threadfence();
        unsigned ticket = atomicAdd(&dev_arrivals, 1u);
        last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (last && t == 0) {
        int s = 0;
        for (int b = 0; b < gridDim.x; b++) s += ((volatile int *)partial)[b];
        *total = s;
        dev_arrivals = 0;                    // ready for the next launch of the same module
    }
}

// cp.async of 4, 8 and 16 bytes (cache-all and cache-global variants), grouped and waited on.
//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "u32", "count": 1792, "init": "arange", "start": 1000, "step": 3}, "out": {"dtype": "u32", "count": 1152}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_cp_async"}
__global__ void cp_async(const unsigned *v, unsigned *out)
{
    __shared__ __align__(16) unsigned s4[64];
    __shared__ __align__(16) unsigned s8[128];
    __shared__ __align__(16) unsigned s16[256];
    __shared__ __align__(16) unsigned s16g[256];
    int t = threadIdx.x;
    const unsigned *base = v + blockIdx.x * 704;
    unsigned a4 = (unsigned)__cvta_generic_to_shared(&s4[t]);
    unsigned a8 = (unsigned)__cvta_generic_to_shared(&s8[2 * t]);
    unsigned a16 = (unsigned)__cvta_generic_to_shared(&s16[4 * t]);
    unsigned a16g = (unsigned)__cvta_generic_to_shared(&s16g[4 * t]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a4), "l"(base + t) : "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(a8), "l"(base + 64 + 2 * t) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(a16), "l"(base + 192 + 4 * t) : "memory");
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(a16g), "l"(base + 448 + 4 * t) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    __syncthreads();
    unsigned *o = out + blockIdx.x * 576;
    o[t] = s4[63 - t] + s8[127 - 2 * t];
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    for (int j = 0; j < 4; j++) {
        o[64 + 4 * t + j] = s16[255 - (4 * t + j)];
        o[320 + 4 * t + j] = s16g[(4 * t + j + 5) & 255] ^ s8[(t + j) & 127];
    }
}

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "f32", "count": 512, "init": "random", "seed": 135, "low": -5, "high": 5}, "w": {"dtype": "s32", "count": 256, "init": "random_bits", "seed": 136}, "out": {"dtype": "f32", "count": 512}, "iout": {"dtype": "s32", "count": 384}}, "params": [{"buffer": "v"}, {"buffer": "w"}, {"buffer": "out"}, {"buffer": "iout"}], "reference": "ref_vector_ldst"}
__global__ void vector_ldst(const float4 *v, const int2 *w, float4 *out, int *iout)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 a = __ldg(&v[i]);                   // ld.global.nc.v4.f32
    float4 r = make_float4(a.w, a.z + 1.0f, a.y * 2.0f, a.x);
    __stcs(&out[i], r);                        // st.global.cs.v4.f32
    int2 b = __ldcg(&w[i]);                    // ld.global.cg.v2.s32
    int c = __ldcs(&w[(i + 1) & 127].x);
    iout[3 * i] = b.x + b.y;
    __stwt(&iout[3 * i + 1], b.x ^ c);
    iout[3 * i + 2] = __ldca(&w[i].y) - c;
}

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "s32", "count": 1000, "init": "random", "seed": 137, "low": -1000, "high": 1000}, "out": {"dtype": "s32", "count": 1000}}, "params": [{"buffer": "v"}, {"buffer": "out"}, {"type": "u32", "value": 1000, "name": "n"}, {"type": "s32", "value": -3, "name": "k"}], "reference": "ref_grid_stride"}
__global__ void grid_stride(const int *v, int *out, unsigned n, int k)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = v[i] * k + (int)i;
}

//@launch {"grid": [1,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "u64", "count": 64, "init": "random_bits", "seed": 138}, "out": {"dtype": "u64", "count": 128}}, "params": [{"buffer": "v"}, {"buffer": "out"}, {"type": "u64", "value": 81985529216486895, "name": "salt"}, {"type": "f64", "value": 0.5, "name": "half"}, {"type": "u8", "value": 7, "name": "shift"}], "reference": "ref_scalar_params"}
__global__ void scalar_params(const unsigned long long *v, unsigned long long *out,
                              unsigned long long salt, double half, unsigned char shift)
{
    int i = threadIdx.x;
    out[2 * i] = (v[i] ^ salt) >> shift;
    out[2 * i + 1] = (unsigned long long)((double)(v[i] >> 12) * half);
}
