// Batched small dense linear algebra as solver and robotics codes write it, one problem per
// thread or per block: LU with partial pivoting of 6x6 doubles (a data-dependent pivot row
// swapped through a local array), Cholesky of 5x5 SPD floats built from the input (sqrtf,
// forward and back substitution), the Thomas algorithm on diagonally dominant tridiagonal
// systems read with a batch stride, parallel cyclic reduction of one system per block in
// shared memory, and cyclic Jacobi rotations for the eigenvalues of symmetric 3x3 matrices.

#define LU_N 6

//@run {"grid": 1, "block": 64, "args": ["f64*2304", "f64*2304", "s32*384", "f64*64"]}
extern "C" __global__ void lu_partial_pivot_f64(const double* __restrict__ a_in, double* __restrict__ lu_out,
                                                int* __restrict__ perm_out, double* __restrict__ det_out) {
  unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
  double a[LU_N][LU_N];
  int perm[LU_N];
  for (int i = 0; i < LU_N; ++i) {
    perm[i] = i;
    for (int j = 0; j < LU_N; ++j) a[i][j] = a_in[(b * LU_N + i) * LU_N + j];
  }
  double det = 1.0;
  for (int k = 0; k < LU_N; ++k) {
    int p = k;
    double best = fabs(a[k][k]);
    for (int i = k + 1; i < LU_N; ++i) {
      double v = fabs(a[i][k]);
      if (v > best) { best = v; p = i; }
    }
    if (p != k) {
      for (int j = 0; j < LU_N; ++j) { double t = a[k][j]; a[k][j] = a[p][j]; a[p][j] = t; }
      int t = perm[k]; perm[k] = perm[p]; perm[p] = t;
      det = -det;
    }
    double piv = a[k][k];
    det *= piv;
    if (piv == 0.0) continue;
    double inv = 1.0 / piv;
    for (int i = k + 1; i < LU_N; ++i) {
      double l = a[i][k] * inv;
      a[i][k] = l;
      for (int j = k + 1; j < LU_N; ++j) a[i][j] = fma(-l, a[k][j], a[i][j]);
    }
  }
  for (int i = 0; i < LU_N; ++i) {
    perm_out[b * LU_N + i] = perm[i];
    for (int j = 0; j < LU_N; ++j) lu_out[(b * LU_N + i) * LU_N + j] = a[i][j];
  }
  det_out[b] = det;
}

#define CH_N 5

// A = M M^T + N I (symmetric positive definite), then A x = r by Cholesky.
//@run {"grid": 2, "block": 32, "args": ["f32*1600", "f32*320", "f32*320", "f32*1600"]}
extern "C" __global__ void cholesky_solve_f32(const float* __restrict__ m_in, const float* __restrict__ rhs,
                                              float* __restrict__ x_out, float* __restrict__ l_out) {
  unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
  float m[CH_N][CH_N], l[CH_N][CH_N];
  for (int i = 0; i < CH_N; ++i)
    for (int j = 0; j < CH_N; ++j) m[i][j] = m_in[b * CH_N * CH_N + i * CH_N + j];
  for (int i = 0; i < CH_N; ++i) {
    for (int j = 0; j <= i; ++j) {
      float s = i == j ? (float)CH_N : 0.0f;
      for (int k = 0; k < CH_N; ++k) s += m[i][k] * m[j][k];
      for (int k = 0; k < j; ++k) s -= l[i][k] * l[j][k];
      if (i == j) l[i][i] = sqrtf(s);
      else l[i][j] = s / l[j][j];
    }
    for (int j = i + 1; j < CH_N; ++j) l[i][j] = 0.0f;
  }
  float y[CH_N], x[CH_N];
  for (int i = 0; i < CH_N; ++i) {
    float s = rhs[b * CH_N + i];
    for (int k = 0; k < i; ++k) s -= l[i][k] * y[k];
    y[i] = s / l[i][i];
  }
  for (int i = CH_N - 1; i >= 0; --i) {
    float s = y[i];
    for (int k = i + 1; k < CH_N; ++k) s -= l[k][i] * x[k];
    x[i] = s / l[i][i];
  }
  for (int i = 0; i < CH_N; ++i) {
    x_out[b * CH_N + i] = x[i];
    for (int j = 0; j < CH_N; ++j) l_out[b * CH_N * CH_N + i * CH_N + j] = l[i][j];
  }
}

// Thomas algorithm: systems interleaved (element i of system s at i * batch + s), so a warp's
// loads coalesce; the modified coefficients live in a local array.
//@run {"grid": 2, "block": 32, "args": ["f64*2048", "f64*2048", "f64*2048", "f64*2048", "s32=32"]}
extern "C" __global__ void thomas_tridiag_f64(const double* __restrict__ lower, const double* __restrict__ upper,
                                              const double* __restrict__ rhs, double* __restrict__ x, int n) {
  const int batch = gridDim.x * blockDim.x;
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  double cp[32], dp[32];
  for (int i = 0; i < n; ++i) {
    double a = i > 0 ? lower[i * batch + s] : 0.0, c = i + 1 < n ? upper[i * batch + s] : 0.0;
    double bdiag = 4.0 + fabs(a) + fabs(c);                         // diagonally dominant
    double denom = i > 0 ? bdiag - a * cp[i - 1] : bdiag;
    double d = rhs[i * batch + s];
    cp[i] = c / denom;
    dp[i] = (i > 0 ? d - a * dp[i - 1] : d) / denom;
  }
  double xi = dp[n - 1];
  x[(n - 1) * batch + s] = xi;
  for (int i = n - 2; i >= 0; --i) {
    xi = dp[i] - cp[i] * xi;
    x[i * batch + s] = xi;
  }
}

// Parallel cyclic reduction: one 64-equation system per block, one equation per thread.
//@run {"grid": 4, "block": 64, "args": ["f32*256", "f32*256", "f32*256", "f32*256"]}
extern "C" __global__ void pcr_tridiag_smem(const float* __restrict__ lower, const float* __restrict__ upper,
                                            const float* __restrict__ rhs, float* __restrict__ x) {
  __shared__ float a[2][64], b[2][64], c[2][64], d[2][64];
  int i = threadIdx.x, n = blockDim.x, g = blockIdx.x * n + i;
  a[0][i] = i > 0 ? lower[g] : 0.0f;
  c[0][i] = i + 1 < n ? upper[g] : 0.0f;
  b[0][i] = 4.0f + fabsf(a[0][i]) + fabsf(c[0][i]);
  d[0][i] = rhs[g];
  __syncthreads();
  int cur = 0;
  for (int stride = 1; stride < n; stride <<= 1) {
    int lo = i - stride, hi = i + stride;
    float k1 = lo >= 0 ? a[cur][i] / b[cur][lo] : 0.0f;
    float k2 = hi < n ? c[cur][i] / b[cur][hi] : 0.0f;
    float na = lo >= 0 ? -a[cur][lo] * k1 : 0.0f;
    float nc = hi < n ? -c[cur][hi] * k2 : 0.0f;
    float nb = b[cur][i] - (lo >= 0 ? c[cur][lo] * k1 : 0.0f) - (hi < n ? a[cur][hi] * k2 : 0.0f);
    float nd = d[cur][i] - (lo >= 0 ? d[cur][lo] * k1 : 0.0f) - (hi < n ? d[cur][hi] * k2 : 0.0f);
    a[cur ^ 1][i] = na; b[cur ^ 1][i] = nb; c[cur ^ 1][i] = nc; d[cur ^ 1][i] = nd;
    cur ^= 1;
    __syncthreads();
  }
  x[g] = d[cur][i] / b[cur][i];
}

// Eigenvalues of symmetric 3x3 matrices by cyclic Jacobi rotations (6 sweeps), sorted.
//@run {"grid": 1, "block": 128, "args": ["f32*768", "f32*384", "s32*128"]}
extern "C" __global__ void jacobi_eig_sym3(const float* __restrict__ sym, float* __restrict__ eig,
                                           int* __restrict__ rotations) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const float* s = sym + 6 * t;                          // xx yy zz xy xz yz
  float m[3][3] = {{s[0], s[3], s[4]}, {s[3], s[1], s[5]}, {s[4], s[5], s[2]}};
  int rot = 0;
  for (int sweep = 0; sweep < 6; ++sweep) {
#pragma unroll
    for (int pq = 0; pq < 3; ++pq) {
      const int p = pq == 2 ? 1 : 0, q = pq == 0 ? 1 : 2;
      float apq = m[p][q];
      if (fabsf(apq) < 1e-12f) continue;
      ++rot;
      float theta = (m[q][q] - m[p][p]) / (2.0f * apq);
      float tn = copysignf(1.0f, theta) / (fabsf(theta) + sqrtf(theta * theta + 1.0f));
      float cs = rsqrtf(tn * tn + 1.0f), sn = tn * cs;
#pragma unroll
      for (int k = 0; k < 3; ++k) {                      // columns p, q
        float mkp = m[k][p], mkq = m[k][q];
        m[k][p] = cs * mkp - sn * mkq;
        m[k][q] = sn * mkp + cs * mkq;
      }
#pragma unroll
      for (int k = 0; k < 3; ++k) {                      // rows p, q
        float mpk = m[p][k], mqk = m[q][k];
        m[p][k] = cs * mpk - sn * mqk;
        m[q][k] = sn * mpk + cs * mqk;
      }
    }
  }
  float e0 = m[0][0], e1 = m[1][1], e2 = m[2][2], tmp;
  if (e0 > e1) { tmp = e0; e0 = e1; e1 = tmp; }
  if (e1 > e2) { tmp = e1; e1 = e2; e2 = tmp; }
  if (e0 > e1) { tmp = e0; e0 = e1; e1 = tmp; }
  eig[3 * t] = e0; eig[3 * t + 1] = e1; eig[3 * t + 2] = e2;
  rotations[t] = rot;
}
