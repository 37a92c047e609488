// Shared-memory kernels: dynamic shared memory, launch bounds, tiles with padding.
//@run {"grid": [2, 2, 1], "block": [16, 16, 1], "args": ["f32*1024", "f32*1024", "s32=32", "s32=32"]}
extern "C" __global__ void __launch_bounds__(256) transpose_tile(const float* in, float* out, int w, int h) {
  __shared__ float tile[16][17];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * 16 + threadIdx.x; y = blockIdx.x * 16 + threadIdx.y;
  if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}

//@run {"grid": 2, "block": 64, "smem": 272, "args": ["f32*128", "f32*128", "s32=128"]}
extern "C" __global__ void stencil_dyn_smem(const float* in, float* out, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x + 2] = i < n ? in[i] : 0.0f;
  if (threadIdx.x < 2) {
    s[threadIdx.x] = i >= 2 ? in[i - 2] : 0.0f;
    int j = i + blockDim.x;
    s[threadIdx.x + blockDim.x + 2] = j < n ? in[j] : 0.0f;
  }
  __syncthreads();
  if (i < n) out[i] = 0.1f * s[threadIdx.x] + 0.2f * s[threadIdx.x + 1] + 0.4f * s[threadIdx.x + 2]
                    + 0.2f * s[threadIdx.x + 3] + 0.1f * s[threadIdx.x + 4];
}

//@run {"grid": 4, "block": 32, "smem": 512, "args": ["f32*512", "f32*512", "s32=128"]}
extern "C" __global__ void __launch_bounds__(128, 4) softmax_rows(const float* in, float* out, int cols) {
  extern __shared__ float row[];
  const float* r = in + blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += 32) { row[c] = r[c]; m = fmaxf(m, row[c]); }
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) { row[c] = expf(row[c] - m); sum += row[c]; }
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  for (int c = threadIdx.x; c < cols; c += 32) out[blockIdx.x * cols + c] = row[c] / sum;
}

//@run {"grid": 2, "block": 64, "args": ["f32*4096", "f32*64", "f32*128", "s32=64"]}
extern "C" __global__ void matvec_shared_x(const float* a, const float* x, float* y, int n) {
  __shared__ float xs[64];
  int row = blockIdx.x * 64 + threadIdx.x;
  xs[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  float acc = 0.0f;
  #pragma unroll 4
  for (int k = 0; k < n; ++k) acc = fmaf(a[(row % 64) * n + k], xs[k], acc);
  y[row] = acc;
}

//@run {"grid": 3, "block": 128, "args": ["f32*1000", "f32*1000", "f32*1000", "s32=1000", "f32=2.5"]}
extern "C" __global__ void saxpy_grid_stride(const float* x, const float* y, float* out, int n, float a) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = a * x[i] + y[i];
}
