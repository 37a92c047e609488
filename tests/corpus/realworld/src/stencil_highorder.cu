// High-order 3-D stencils as seismic and CFD codes write them: an 8th-order 25-point star
// stencil that marches along z with a register queue (nine planes in registers) and an x-y
// shared tile with a 4-wide halo, an acoustic wave leapfrog step on it with a velocity model,
// a 27-point box stencil in doubles under __launch_bounds__(128, 4) with per-offset weights
// from __constant__ memory, and a variable-coefficient 2-D diffusion step with float2 loads.

#define NX 16
#define NY 16
#define NZ 16
#define R 4

__constant__ float c8[R + 1] = {-2.8472222f, 1.6f, -0.2f, 0.0253968f, -0.0017857f};

__device__ __forceinline__ int at(int x, int y, int z) { return (z * NY + y) * NX + x; }

// One 16x16 column per block; the queue holds planes z-4 .. z+4 of this thread's (x, y).
__device__ void star25_march(const float* __restrict__ u, float* __restrict__ lap) {
  __shared__ float tile[NY + 2 * R][NX + 2 * R];
  int tx = threadIdx.x, ty = threadIdx.y;
  float q[2 * R + 1];
#pragma unroll
  for (int k = 0; k < 2 * R + 1; ++k) {
    int z = k - R;
    q[k] = z >= 0 ? u[at(tx, ty, z)] : 0.0f;
  }
  for (int z = 0; z < NZ; ++z) {
    __syncthreads();
    tile[ty + R][tx + R] = q[R];
    if (tx < R) {
      tile[ty + R][tx] = 0.0f;
      tile[ty + R][tx + NX + R] = 0.0f;
    }
    if (ty < R) {
      tile[ty][tx + R] = 0.0f;
      tile[ty + NY + R][tx + R] = 0.0f;
    }
    __syncthreads();
    float v = 3.0f * c8[0] * q[R];
#pragma unroll
    for (int r = 1; r <= R; ++r)
      v += c8[r] * (tile[ty + R][tx + R - r] + tile[ty + R][tx + R + r] + tile[ty + R - r][tx + R] +
                    tile[ty + R + r][tx + R] + q[R - r] + q[R + r]);
    lap[at(tx, ty, z)] = v;
#pragma unroll
    for (int k = 0; k < 2 * R; ++k) q[k] = q[k + 1];
    int zn = z + R + 1;
    q[2 * R] = zn < NZ ? u[at(tx, ty, zn)] : 0.0f;
  }
}

//@run {"grid": 1, "block": [16, 16, 1], "args": ["f32*4096", "f32*4096"]}
extern "C" __global__ void star25_laplacian(const float* __restrict__ u, float* __restrict__ lap) {
  star25_march(u, lap);
}

// u_next = 2u - u_prev + (v dt/h)^2 lap(u), with the velocity clamped to a range.
//@run {"grid": 1, "block": [16, 16, 1], "args": ["f32*4096", "f32*4096", "f32*4096", "f32*4096", "f32=0.1"]}
extern "C" __global__ void wave_leapfrog(const float* __restrict__ u, const float* __restrict__ u_prev,
                                         const float* __restrict__ vel, float* __restrict__ u_next, float dt_over_h) {
  star25_march(u, u_next);                                // u_next holds lap(u) for now
  __syncthreads();
  for (int z = 0; z < NZ; ++z) {
    int i = at(threadIdx.x, threadIdx.y, z);
    float c = fminf(fmaxf(fabsf(vel[i]), 1.0f), 3.0f) * dt_over_h;
    u_next[i] = 2.0f * u[i] - u_prev[i] + c * c * u_next[i];
  }
}

__constant__ double box_w[27] = {0.01, 0.02, 0.01, 0.02, 0.04, 0.02, 0.01, 0.02, 0.01,
                                 0.02, 0.04, 0.02, 0.04, -0.56, 0.04, 0.02, 0.04, 0.02,
                                 0.01, 0.02, 0.01, 0.02, 0.04, 0.02, 0.01, 0.02, 0.01};

// 8x8x8 doubles, periodic; blocks of 128 threads (8x8x2).
//@run {"grid": [1, 1, 4], "block": [8, 8, 2], "args": ["f64*512", "f64*512"]}
extern "C" __global__ void __launch_bounds__(128, 4) box27_periodic_f64(const double* __restrict__ u, double* __restrict__ out) {
  int x = threadIdx.x, y = threadIdx.y, z = blockIdx.z * blockDim.z + threadIdx.z;
  double acc = 0.0;
#pragma unroll
  for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
    for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
      for (int dx = -1; dx <= 1; ++dx) {
        int xx = (x + dx) & 7, yy = (y + dy) & 7, zz = (z + dz) & 7;
        acc = fma(box_w[(dz + 1) * 9 + (dy + 1) * 3 + dx + 1], __ldg(u + (zz * 8 + yy) * 8 + xx), acc);
      }
  out[(z * 8 + y) * 8 + x] = acc;
}

// div(k grad u) on a 32x32 grid, two cells per thread through float2; zero-flux edges.
//@run {"grid": 2, "block": [8, 16, 1], "args": ["f32*1024", "f32*1024", "f32*1024", "f32=0.2"]}
extern "C" __global__ void diffusion_varcoef_2d(const float* __restrict__ u, const float* __restrict__ kcoef,
                                                float* __restrict__ out, float dt) {
  int y = blockIdx.x * 16 + threadIdx.y, x0 = threadIdx.x * 4;
  const int W = 32;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    int x = x0 + 2 * h;
    float2 uc = *reinterpret_cast<const float2*>(u + y * W + x);
    float2 kc = *reinterpret_cast<const float2*>(kcoef + y * W + x);
    float uu[2] = {uc.x, uc.y}, kk[2] = {fabsf(kc.x), fabsf(kc.y)};
    float res[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      int xe = x + e;
      float f = 0.0f;
      const int nx[4] = {xe - 1, xe + 1, xe, xe}, ny[4] = {y, y, y - 1, y + 1};
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        if (nx[n] < 0 || nx[n] >= W || ny[n] < 0 || ny[n] >= W) continue;
        int j = ny[n] * W + nx[n];
        float kf = 0.5f * (kk[e] + fabsf(kcoef[j]));
        f += kf * (u[j] - uu[e]);
      }
      res[e] = uu[e] + dt * f;
    }
    *reinterpret_cast<float2*>(out + y * W + x) = make_float2(res[0], res[1]);
  }
}
