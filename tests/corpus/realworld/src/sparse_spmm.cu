// Sparse kernels past SpMV as GNN and sparse-solver libraries write them: CSR SpMM with a warp
// per row and the lanes across the dense columns (row extents as 64-bit offsets), SDDMM (a
// dense dot product sampled at the nonzeros, warp-reduced), a merge-path SpMV whose row
// offsets come from an in-block scan and whose threads split rows and nonzeros evenly by a
// binary search on the diagonal, column counts for a CSR -> CSC transpose with atomics, and
// a blocked-ELL product with __ldg. Integer-valued data where atomics add in any order.

#define MAXNNZ 8

// Row r holds nonzeros [r*MAXNNZ, r*MAXNNZ + len[r]) (a padded CSR).
//@run {"grid": 2, "block": 128, "args": ["s32*16%9", "s32*128%32", "f32*128", "f32*1024", "f32*512"]}
extern "C" __global__ void csr_spmm_warp_row(const int* __restrict__ row_len, const int* __restrict__ cols,
                                             const float* __restrict__ vals, const float* __restrict__ dense,
                                             float* __restrict__ out) {
  const int ncols = 32;
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  long long begin = (long long)warp * MAXNNZ, end = begin + __ldg(row_len + warp);
  float acc = 0.0f;
  for (long long k = begin; k < end; ++k) {
    int c = __ldg(cols + k);
    acc = fmaf(__ldg(vals + k), __ldg(dense + (long long)c * ncols + lane), acc);
  }
  out[(long long)warp * ncols + lane] = acc;
}

// out[k] = vals[k] * dot(A[row(k), :], B[col(k), :]) over 32 features, a warp per nonzero.
//@run {"grid": 2, "block": 128, "args": ["s32*8%9", "s32*64%16", "f32*64", "f32*256", "f32*512", "f32*64"]}
extern "C" __global__ void sddmm_csr(const int* __restrict__ row_len, const int* __restrict__ cols,
                                     const float* __restrict__ vals, const float* __restrict__ a,
                                     const float* __restrict__ b, float* __restrict__ out) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  int row = warp / 2, slot_base = (warp & 1) * 4;        // two warps per row, 4 slots each
  int len = row_len[row];
  for (int slot = slot_base; slot < slot_base + 4; ++slot) {
    int k = row * MAXNNZ + slot;
    float p = 0.0f;
    if (slot < len) p = a[row * 32 + lane] * b[cols[k] * 32 + lane];
    for (int d = 16; d > 0; d >>= 1) p += __shfl_down_sync(0xffffffffu, p, d);
    if (lane == 0) out[k] = slot < len ? p * vals[k] : 0.0f;
  }
}

__device__ int merge_path_search(int diagonal, const int* row_end, int rows, int nnz) {
  int lo = max(diagonal - nnz, 0), hi = min(diagonal, rows);
  while (lo < hi) {                                       // first row i with row_end[i] > diagonal - i - 1
    int mid = (lo + hi) >> 1;
    if (row_end[mid] <= diagonal - mid - 1) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// One block: 128 rows with lengths 0..8, values and x small integers (exact sums).
//@run {"grid": 1, "block": 128, "args": ["s32*128%9", "s32*1024%128", "s32*1024%7", "s32*128%5", "s32*129"]}
extern "C" __global__ void merge_path_spmv(const int* __restrict__ row_len, const int* __restrict__ cols,
                                           const int* __restrict__ vals, const int* __restrict__ x,
                                           int* __restrict__ y) {
  __shared__ int row_end[128], ycarry[128], chunk[4];
  const int rows = blockDim.x, t = threadIdx.x;
  int len = row_len[t], incl = len;
  for (int d = 1; d < 32; d <<= 1) {
    int u = __shfl_up_sync(0xffffffffu, incl, d);
    if ((t & 31) >= d) incl += u;
  }
  if ((t & 31) == 31) chunk[t >> 5] = incl;
  __syncthreads();
  int warp_off = 0;
  for (int w = 0; w < (t >> 5); ++w) warp_off += chunk[w];
  int nnz = chunk[0] + chunk[1] + chunk[2] + chunk[3];
  row_end[t] = warp_off + incl;
  ycarry[t] = 0;
  __syncthreads();
  // the dense nonzero array of this CSR: nonzero j of row r is the padded entry r*8 + j
  int items = rows + nnz, per = (items + blockDim.x - 1) / blockDim.x;
  int d0 = min(t * per, items), d1 = min(d0 + per, items);
  int r = merge_path_search(d0, row_end, rows, nnz), k = d0 - r;
  int sum = 0;
  for (int step = d0; step < d1; ++step) {
    if (r < rows && k < row_end[r]) {                      // consume a nonzero of row r
      int row_start = r > 0 ? row_end[r - 1] : 0, j = k - row_start, e = r * MAXNNZ + j;
      sum += vals[e] * x[cols[e]];
      ++k;
    } else {                                              // row r ends here
      atomicAdd(&ycarry[r], sum);
      sum = 0;
      ++r;
    }
  }
  if (r < rows) atomicAdd(&ycarry[r], sum);
  __syncthreads();
  y[t] = ycarry[t];
  if (t == 0) y[rows] = nnz;
}

// Column counts of a CSR matrix (the first pass of a transpose), then an exclusive scan.
//@run {"grid": 4, "block": 64, "args": ["s32*256%9", "s32*2048%64", "s32*65"]}
extern "C" __global__ void csr_column_counts(const int* __restrict__ row_len, const int* __restrict__ cols,
                                             int* __restrict__ col_ptr) {
  __shared__ int counts[64];
  if (threadIdx.x < 64) counts[threadIdx.x] = 0;
  __syncthreads();
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < row_len[row]; ++j) atomicAdd(&counts[cols[row * MAXNNZ + j]], 1);
  __syncthreads();
  if (threadIdx.x < 64) atomicAdd(&col_ptr[threadIdx.x + 1], counts[threadIdx.x]);
}

// Blocked ELL: 4x4 dense blocks, a fixed count of block columns per block row.
//@run {"grid": 2, "block": 64, "args": ["s32*96%8", "f32*1536", "f32*32", "f32*128"]}
extern "C" __global__ void blocked_ell_spmv(const int* __restrict__ block_cols, const float* __restrict__ blocks,
                                            const float* __restrict__ x, float* __restrict__ y) {
  const int per_row = 3;
  int row = blockIdx.x * blockDim.x + threadIdx.x, brow = row >> 2, r = row & 3;
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < per_row; ++j) {
    int bc = __ldg(block_cols + brow * per_row + j);
    const float4 w = __ldg(reinterpret_cast<const float4*>(blocks) + (brow * per_row + j) * 4 + r);
    const float4 v = __ldg(reinterpret_cast<const float4*>(x) + bc);
    acc += w.x * v.x + w.y * v.y + w.z * v.z + w.w * v.w;
  }
  y[row] = acc;
}
