// Simulation kernels as the CUDA samples and course codes write them: all-pairs n-body with
// float4 positions staged through shared memory (rsqrtf, softening), Mandelbrot escape-time
// in float and double (lane-divergent trip counts), Conway's Game of Life on a byte grid with
// a shared halo, a D2Q9 lattice-Boltzmann collide-and-stream step (nine distributions per
// cell, register-heavy), a leapfrog spring-mass integrator with fminf/fmaxf clamps, and a
// heat-equation Jacobi sweep with a residual reduced by atomicMax on the float's bits.
#include <stdint.h>

//@run {"grid": 2, "block": 64, "args": ["f32*512", "f32*384", "f32=0.01"]}
extern "C" __global__ void nbody_forces(const float4* pos, float3* acc, float dt) {
  __shared__ float4 tile[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 me = pos[i];
  float3 a = make_float3(0.f, 0.f, 0.f);
  for (int base = 0; base < 128; base += 64) {
    tile[threadIdx.x] = pos[base + threadIdx.x];
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < 64; ++j) {
      float4 o = tile[j];
      float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
      float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
      float inv = rsqrtf(r2);
      float s = o.w * inv * inv * inv;
      a.x += dx * s; a.y += dy * s; a.z += dz * s;
    }
    __syncthreads();
  }
  acc[i] = make_float3(a.x * dt, a.y * dt, a.z * dt);
}

//@run {"grid": 4, "block": 64, "args": ["u32*256", "u32*256", "s32=64"]}
extern "C" __global__ void mandelbrot(unsigned* iters_f, unsigned* iters_d, int max_iter) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float cx = -2.0f + 2.5f * (i % 16) / 16.0f, cy = -1.25f + 2.5f * (i / 16) / 16.0f;
  float x = 0.f, y = 0.f;
  int n = 0;
  while (n < max_iter && x * x + y * y <= 4.0f) {
    float t = x * x - y * y + cx;
    y = 2.0f * x * y + cy;
    x = t;
    ++n;
  }
  iters_f[i] = n;
  double dx = 0.0, dy = 0.0, dcx = cx, dcy = cy;
  int m = 0;
  for (; m < max_iter; ++m) {
    double xx = dx * dx, yy = dy * dy;
    if (xx + yy > 4.0) break;
    dy = 2.0 * dx * dy + dcy;
    dx = xx - yy + dcx;
  }
  iters_d[i] = m | (n == m ? 0x80000000u : 0u);
}

//@run {"grid": 1, "block": 256, "args": ["u8*256%2", "u8*256", "s32=3"]}
extern "C" __global__ void life_steps(const unsigned char* in, unsigned char* out, int steps) {
  __shared__ unsigned char g[2][18][18];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  g[0][ty + 1][tx + 1] = in[threadIdx.x];
  int cur = 0;
  for (int s = 0; s < steps; ++s) {
    __syncthreads();
    if (threadIdx.x < 16) {                 // wrap-around halo
      int k = threadIdx.x + 1;
      g[cur][0][k] = g[cur][16][k]; g[cur][17][k] = g[cur][1][k];
      g[cur][k][0] = g[cur][k][16]; g[cur][k][17] = g[cur][k][1];
    }
    if (threadIdx.x == 0) {
      g[cur][0][0] = g[cur][16][16]; g[cur][0][17] = g[cur][16][1];
      g[cur][17][0] = g[cur][1][16]; g[cur][17][17] = g[cur][1][1];
    }
    __syncthreads();
    int n = 0;
    for (int dy = 0; dy < 3; ++dy)
      for (int dx = 0; dx < 3; ++dx)
        n += g[cur][ty + dy][tx + dx];
    unsigned char alive = g[cur][ty + 1][tx + 1];
    n -= alive;
    g[cur ^ 1][ty + 1][tx + 1] = (n == 3) || (alive && n == 2);
    cur ^= 1;
  }
  __syncthreads();
  out[threadIdx.x] = g[cur][ty + 1][tx + 1];
}

__constant__ float W9[9] = {4.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36};
__constant__ int CX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
__constant__ int CY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};

//@run {"grid": 1, "block": 256, "args": ["f32*2304", "f32*2304", "f32=0.6"]}
extern "C" __global__ void lbm_d2q9(const float* f_in, float* f_out, float omega) {
  const int NX = 16, NY = 16, N = NX * NY;
  int c = threadIdx.x, x = c % NX, y = c / NX;
  float f[9], rho = 0.f, ux = 0.f, uy = 0.f;
#pragma unroll
  for (int q = 0; q < 9; ++q) {
    f[q] = 0.05f + 0.01f * fabsf(f_in[q * N + c]);
    rho += f[q]; ux += CX[q] * f[q]; uy += CY[q] * f[q];
  }
  ux /= rho; uy /= rho;
  float usq = 1.5f * (ux * ux + uy * uy);
#pragma unroll
  for (int q = 0; q < 9; ++q) {
    float cu = 3.f * (CX[q] * ux + CY[q] * uy);
    float feq = W9[q] * rho * (1.f + cu + 0.5f * cu * cu - usq);
    int xn = (x + CX[q] + NX) % NX, yn = (y + CY[q] + NY) % NY;
    f_out[q * N + yn * NX + xn] = f[q] - omega * (f[q] - feq);
  }
}

//@run {"grid": 1, "block": 128, "args": ["f32*128", "f32*128", "f32=0.005", "s32=20"]}
extern "C" __global__ void spring_chain(float* x, float* v, float dt, int steps) {
  __shared__ float sx[130];
  int i = threadIdx.x;
  float xi = x[i], vi = v[i];
  for (int s = 0; s < steps; ++s) {
    sx[i + 1] = xi;
    if (i == 0) { sx[0] = 0.f; sx[129] = 0.f; }
    __syncthreads();
    float force = 40.f * (sx[i] + sx[i + 2] - 2.f * xi) - 0.1f * vi;
    vi = fminf(fmaxf(vi + dt * force, -10.f), 10.f);
    xi += dt * vi;
    __syncthreads();
  }
  x[i] = xi;
  v[i] = vi;
}

//@run {"grid": 1, "block": 256, "args": ["f32*324", "f32*324", "u32*1%1"]}
extern "C" __global__ void jacobi_residual(const float* u, float* un, unsigned* max_bits) {
  const int W = 18;                        // 16x16 interior with a fixed border
  int x = threadIdx.x % 16 + 1, y = threadIdx.x / 16 + 1;
  float c = u[y * W + x];
  float nv = 0.25f * (u[y * W + x - 1] + u[y * W + x + 1] + u[(y - 1) * W + x] + u[(y + 1) * W + x]);
  un[y * W + x] = nv;
  float r = fabsf(nv - c);
  for (int o = 16; o; o >>= 1) r = fmaxf(r, __shfl_xor_sync(0xffffffffu, r, o));
  if ((threadIdx.x & 31) == 0) atomicMax(max_bits, __float_as_uint(r));
}
