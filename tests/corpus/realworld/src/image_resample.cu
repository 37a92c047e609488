// Image pipeline kernels as camera and video codes write them (8-bit pixels, no textures):
// bilinear resize with half-pixel centres (floorf, clamped taps, __float2uint_rn), NV12 ->
// RGBA with BT.601 fixed-point coefficients and saturation, 3x3 erosion/dilation over a
// shared tile with a clamped halo, a 3x3 median by a min/max exchange network, an integral
// image (row then column scans in shared memory), and histogram equalisation (shared
// histogram, a scanned CDF, a lookup table).

//@run {"grid": [3, 5, 1], "block": [16, 8, 1], "args": ["u8*1024", "u8*1920", "s32=32", "s32=32", "s32=48", "s32=40"]}
extern "C" __global__ void resize_bilinear_u8(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                              int sw, int sh, int dw, int dh) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= dw || y >= dh) return;
  float fx = (x + 0.5f) * ((float)sw / dw) - 0.5f, fy = (y + 0.5f) * ((float)sh / dh) - 0.5f;
  float x0f = floorf(fx), y0f = floorf(fy);
  float ax = fx - x0f, ay = fy - y0f;
  int x0 = max((int)x0f, 0), y0 = max((int)y0f, 0);
  int x1 = min((int)x0f + 1, sw - 1), y1 = min((int)y0f + 1, sh - 1);
  x0 = min(x0, sw - 1); y0 = min(y0, sh - 1);
  float p00 = src[y0 * sw + x0], p01 = src[y0 * sw + x1], p10 = src[y1 * sw + x0], p11 = src[y1 * sw + x1];
  float top = p00 + ax * (p01 - p00), bot = p10 + ax * (p11 - p10);
  float v = top + ay * (bot - top);
  dst[y * dw + x] = (unsigned char)min(__float2uint_rn(v), 255u);
}

__device__ __forceinline__ unsigned char clamp_u8(int v) { return (unsigned char)max(0, min(255, v)); }

// NV12: a W x H luma plane, then W/2 x H/2 interleaved (U, V) pairs. Two pixels per thread.
//@run {"grid": [1, 4, 1], "block": [16, 8, 1], "args": ["u8*1536", "u8*4096", "s32=32", "s32=32"]}
extern "C" __global__ void nv12_to_rgba(const unsigned char* __restrict__ nv12, uchar4* __restrict__ rgba, int w, int h) {
  int px = (blockIdx.x * blockDim.x + threadIdx.x) * 2, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= w || y >= h) return;
  const unsigned char* uv = nv12 + w * h + (y >> 1) * w + px;
  int u = uv[0] - 128, v = uv[1] - 128;
  int rd = 409 * v + 128, gd = -100 * u - 208 * v + 128, bd = 516 * u + 128;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    int c = 298 * (nv12[y * w + px + k] - 16);
    rgba[y * w + px + k] = make_uchar4(clamp_u8((c + rd) >> 8), clamp_u8((c + gd) >> 8), clamp_u8((c + bd) >> 8), 255);
  }
}

#define TW 16
#define TH 8

// Erosion (min) and dilation (max) with a 3x3 cross-free square; halo clamped to the image.
//@run {"grid": [2, 4, 1], "block": [16, 8, 1], "args": ["u8*1024", "u8*1024", "u8*1024", "s32=32", "s32=32"]}
extern "C" __global__ void erode_dilate_3x3(const unsigned char* __restrict__ img, unsigned char* __restrict__ eroded,
                                            unsigned char* __restrict__ dilated, int w, int h) {
  __shared__ unsigned char tile[TH + 2][TW + 2];
  int gx0 = blockIdx.x * TW - 1, gy0 = blockIdx.y * TH - 1;
  for (int i = threadIdx.y * TW + threadIdx.x; i < (TW + 2) * (TH + 2); i += TW * TH) {
    int ty = i / (TW + 2), tx = i % (TW + 2);
    int gx = min(max(gx0 + tx, 0), w - 1), gy = min(max(gy0 + ty, 0), h - 1);
    tile[ty][tx] = img[gy * w + gx];
  }
  __syncthreads();
  int x = blockIdx.x * TW + threadIdx.x, y = blockIdx.y * TH + threadIdx.y;
  unsigned lo = 255, hi = 0;
#pragma unroll
  for (int dy = 0; dy < 3; ++dy)
#pragma unroll
    for (int dx = 0; dx < 3; ++dx) {
      unsigned p = tile[threadIdx.y + dy][threadIdx.x + dx];
      lo = min(lo, p);
      hi = max(hi, p);
    }
  if (x < w && y < h) { eroded[y * w + x] = lo; dilated[y * w + x] = hi; }
}

__device__ __forceinline__ void sort2(unsigned& a, unsigned& b) {
  unsigned t = min(a, b);
  b = max(a, b);
  a = t;
}

//@run {"grid": [2, 4, 1], "block": [16, 8, 1], "args": ["u8*1024", "u8*1024", "s32=32", "s32=32"]}
extern "C" __global__ void median_3x3(const unsigned char* __restrict__ img, unsigned char* __restrict__ out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  unsigned p[9];
#pragma unroll
  for (int k = 0; k < 9; ++k) {
    int sx = min(max(x + k % 3 - 1, 0), w - 1), sy = min(max(y + k / 3 - 1, 0), h - 1);
    p[k] = img[sy * w + sx];
  }
  // the 19-exchange median network of 9 values
  sort2(p[1], p[2]); sort2(p[4], p[5]); sort2(p[7], p[8]); sort2(p[0], p[1]); sort2(p[3], p[4]);
  sort2(p[6], p[7]); sort2(p[1], p[2]); sort2(p[4], p[5]); sort2(p[7], p[8]); sort2(p[0], p[3]);
  sort2(p[5], p[8]); sort2(p[4], p[7]); sort2(p[3], p[6]); sort2(p[1], p[4]); sort2(p[2], p[5]);
  sort2(p[4], p[7]); sort2(p[4], p[2]); sort2(p[6], p[4]); sort2(p[4], p[2]);
  out[y * w + x] = (unsigned char)p[4];
}

// A 32x32 integral image per block: each thread scans a row, then a column.
//@run {"grid": 2, "block": 32, "args": ["u8*2048", "u32*2048"]}
extern "C" __global__ void integral_image_32(const unsigned char* __restrict__ img, unsigned* __restrict__ sat) {
  __shared__ unsigned s[32][33];
  const unsigned char* im = img + blockIdx.x * 1024;
  unsigned t = threadIdx.x, run = 0;
  for (int x = 0; x < 32; ++x) { run += im[t * 32 + x]; s[t][x] = run; }
  __syncthreads();
  run = 0;
  for (int y = 0; y < 32; ++y) { run += s[y][t]; s[y][t] = run; }
  __syncthreads();
  for (int y = 0; y < 32; ++y) sat[blockIdx.x * 1024 + y * 32 + t] = s[y][t];
}

// Histogram equalisation of one 64x64 8-bit image per block.
//@run {"grid": 2, "block": 256, "args": ["u8*8192", "u8*8192", "u32*512"]}
extern "C" __global__ void histogram_equalise(const unsigned char* __restrict__ img, unsigned char* __restrict__ out,
                                              unsigned* __restrict__ cdf_out) {
  __shared__ unsigned hist[256];
  __shared__ unsigned char lut[256];
  const int n = 4096;
  const unsigned char* im = img + blockIdx.x * n;
  unsigned t = threadIdx.x;
  hist[t] = 0;
  __syncthreads();
  for (int i = t; i < n; i += blockDim.x) atomicAdd(&hist[im[i]], 1u);
  __syncthreads();
  for (unsigned d = 1; d < 256; d <<= 1) {                 // inclusive scan -> the CDF
    unsigned add = t >= d ? hist[t - d] : 0u;
    __syncthreads();
    hist[t] += add;
    __syncthreads();
  }
  unsigned cdf = hist[t];
  unsigned cdf_min = n;                                   // the first non-zero CDF value
  for (int k = 0; k < 256; ++k) if (hist[k]) { cdf_min = hist[k]; break; }
  lut[t] = cdf_min == (unsigned)n ? (unsigned char)t
                                  : (unsigned char)(((unsigned long long)(cdf - min(cdf, cdf_min)) * 255u) / (n - cdf_min));
  cdf_out[blockIdx.x * 256 + t] = cdf;
  __syncthreads();
  for (int i = t; i < n; i += blockDim.x) out[blockIdx.x * n + i] = lut[im[i]];
}
