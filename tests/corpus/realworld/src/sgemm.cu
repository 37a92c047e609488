// Tiled single-precision GEMM variants (register blocking, float4 loads).
#define TILE 16
//@run {"grid": [2, 2, 1], "block": [16, 16, 1], "args": ["f32*1024", "f32*1024", "f32*1024", "s32=32", "s32=32", "s32=32", "f32=1.0", "f32=0.5"]}
extern "C" __global__ void sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K, float alpha, float beta) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

//@run {"grid": [1, 1, 1], "block": [8, 8, 1], "args": ["f32*1024", "f32*1024", "f32*1024"]}
extern "C" __global__ void sgemm_reg4x4(const float* A, const float* B, float* C) {
  // 32x32 matrices, each thread computes a 4x4 block
  float acc[4][4] = {};
  int r0 = threadIdx.y * 4, c0 = threadIdx.x * 4;
  for (int k = 0; k < 32; ++k) {
    float4 b = *reinterpret_cast<const float4*>(&B[k * 32 + c0]);
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
      float a = A[(r0 + i) * 32 + k];
      acc[i][0] += a * b.x; acc[i][1] += a * b.y; acc[i][2] += a * b.z; acc[i][3] += a * b.w;
    }
  }
  for (int i = 0; i < 4; ++i)
    *reinterpret_cast<float4*>(&C[(r0 + i) * 32 + c0]) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}

//@run {"grid": 1, "block": 64, "args": ["f64*4096", "f64*64", "f64*64"]}
extern "C" __global__ void dgemv(const double* A, const double* x, double* y) {
  double acc = 0.0;
  for (int k = 0; k < 64; ++k) acc = fma(A[threadIdx.x * 64 + k], x[k], acc);
  y[threadIdx.x] = acc;
}
