// Sparse matrix-vector products: CSR with one thread per row and one warp per row (row
// extents from a row-length array, column indices and x through __ldg), and COO with atomics
// on integer-valued floats and doubles (exact sums, so the order of the atomics is free).

//@run {"grid": 2, "block": 64, "args": ["s32*128%9", "s32*1024%128", "f32*1024", "f32*128", "f32*128", "s32=128", "s32=8"]}
extern "C" __global__ void spmv_csr_scalar(const int* __restrict__ rowlen, const int* __restrict__ cols,
                                           const float* __restrict__ vals, const float* __restrict__ x,
                                           float* __restrict__ y, int nrows, int maxnz) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  int start = r * maxnz, end = start + __ldg(&rowlen[r]);
  float sum = 0.0f;
  for (int j = start; j < end; ++j) sum = fmaf(__ldg(&vals[j]), __ldg(&x[__ldg(&cols[j])]), sum);
  y[r] = sum;
}

//@run {"grid": 4, "block": 128, "args": ["s32*16%33", "s32*512%256", "f32*512", "f32*256", "f32*16", "s32=16", "s32=32"]}
extern "C" __global__ void spmv_csr_vector(const int* __restrict__ rowlen, const int* __restrict__ cols,
                                           const float* __restrict__ vals, const float* __restrict__ x,
                                           float* __restrict__ y, int nrows, int maxnz) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (warp >= nrows) return;
  int start = warp * maxnz, end = start + rowlen[warp];
  float sum = 0.0f;
  for (int j = start + lane; j < end; j += 32) sum += __ldg(&vals[j]) * __ldg(&x[cols[j]]);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if (lane == 0) y[warp] = sum;
}

//@run {"grid": 4, "block": 128, "args": ["s32*512%64", "s32*512%64", "s32*512%16", "s32*64%16", "u32*64%1", "u64*64%1", "u32*128"]}
extern "C" __global__ void spmv_coo_atomic(const int* __restrict__ rows, const int* __restrict__ cols,
                                           const int* __restrict__ ivals, const int* __restrict__ ix,
                                           float* y, double* yd, unsigned* colcount) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int r = rows[i], c = cols[i];
  float v = (float)(ivals[i] - 8), xv = (float)__ldg(&ix[c]);
  atomicAdd(&y[r], v * xv);            // y and yd start at zero (a zero-filled buffer)
  atomicAdd(&yd[r], (double)v * 0.5);
  atomicAdd(&colcount[c], 1u);
  atomicMax(&colcount[64 + ((c + 1) & 63)], (unsigned)i);
}

//@run {"grid": 1, "block": 128, "args": ["s32*1024%129", "f32*1024", "f32*128", "f32*128", "s32=8"]}
extern "C" __global__ void spmv_ell(const int* __restrict__ cols, const float* __restrict__ vals,
                                    const float* __restrict__ x, float* __restrict__ y, int width) {
  // ELLPACK, column-major; column index 128 is padding
  int r = threadIdx.x, n = blockDim.x;
  float sum = 0.0f;
  for (int k = 0; k < width; ++k) {
    int c = cols[k * n + r];
    if (c < n) sum += vals[k * n + r] * __ldg(&x[c]);
  }
  y[r] = sum;
}
