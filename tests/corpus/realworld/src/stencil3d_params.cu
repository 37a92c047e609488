// A 3-D 7-point stencil with __restrict__ pointers and scalar parameters of every width
// (8/16/32/64-bit signed and unsigned, bool, float, double) feeding index and value arithmetic.
#include <cstdint>

//@run {"grid": [1, 1, 2], "block": [8, 8, 4], "args": ["f32*512", "f32*512", "s32=8", "s32=8", "s32=8", "f32=0.4", "f32=0.1", "s8=-3", "u8=200", "s16=-1234", "u16=60000", "s64=-123456789012", "u64=18446744073709551000", "f64=0.001", "u8=1"]}
extern "C" __global__ void stencil3d_7pt(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz,
                                         float c0, float c1, signed char bias8, unsigned char gain8, short bias16,
                                         unsigned short gain16, long long off64, unsigned long long mask64,
                                         double scale, bool clamp_edges) {
  int x = threadIdx.x, y = threadIdx.y, z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long long plane = (long long)nx * ny;
  long long idx = z * plane + y * nx + x;
  auto at = [&](int dx, int dy, int dz) -> float {
    int xx = x + dx, yy = y + dy, zz = z + dz;
    if (clamp_edges) {
      xx = min(max(xx, 0), nx - 1); yy = min(max(yy, 0), ny - 1); zz = min(max(zz, 0), nz - 1);
    } else if (xx < 0 || yy < 0 || zz < 0 || xx >= nx || yy >= ny || zz >= nz) {
      return 0.0f;
    }
    return in[zz * plane + yy * nx + xx];
  };
  float s = c0 * at(0, 0, 0) + c1 * (at(-1, 0, 0) + at(1, 0, 0) + at(0, -1, 0) + at(0, 1, 0) + at(0, 0, -1) + at(0, 0, 1));
  long long k = (off64 + idx * gain16) ^ (long long)(mask64 >> (idx & 31));
  int small = bias8 * gain8 + bias16;
  out[idx] = s + (float)((double)(k % 1000003) * scale) + small * 1e-3f;
}

//@run {"grid": 1, "block": 32, "args": ["s8=-7", "u8=250", "s16=-30000", "u16=65000", "s32=-2000000000", "u32=4000000000", "s64=-9000000000000000000", "u64=17000000000000000000", "f32=3.5", "f64=-2.25", "s64*32", "u64*32", "f64*32"]}
extern "C" __global__ void scalar_widths(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f, int64_t g,
                                         uint64_t h, float fl, double db, int64_t* __restrict__ out_s,
                                         uint64_t* __restrict__ out_u, double* __restrict__ out_d) {
  int t = threadIdx.x;
  int64_t s = (int64_t)a * t + (int64_t)c * b - (int64_t)e + g / (t + 1) + (g >> (t & 63));
  uint64_t u = h * (uint64_t)(t + 3) + (uint64_t)f * d + (h >> (t & 15)) - ((uint64_t)b << 40);
  out_s[t] = s ^ (int64_t)(u >> 7);
  out_u[t] = u + (uint64_t)(int64_t)a + __umul64hi(h, u) + (uint64_t)__mul64hi(g, s);
  out_d[t] = db * t + fl * (double)a + (double)g * 1e-18 + (double)h * 1e-19 + (double)(uint8_t)(b + t);
}
