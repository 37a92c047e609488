// Dynamic programming over sequences as bioinformatics and speech codes write it: edit
// distance of string pairs by anti-diagonals in shared memory (one pair per block, three
// rolling diagonals), bit-parallel LCS length (Hyyro/Allison-Dix on 64-bit words: add with
// carry across bits, __popcll), Viterbi decoding of an 8-state HMM in log space with a
// backtrace through a local array indexed by the data, and the HMM forward algorithm with a
// log-sum-exp (expf, log1pf, fmaxf) over states.

#define ED_LEN 64

// Strings over a 4-letter alphabet (bytes % 4); block b compares a[b] with b[b].
//@run {"grid": 4, "block": 64, "args": ["u8*256%4", "u8*256%4", "s32*4"]}
extern "C" __global__ void edit_distance_antidiag(const unsigned char* __restrict__ sa, const unsigned char* __restrict__ sb,
                                                  int* __restrict__ dist) {
  __shared__ unsigned char a[ED_LEN], b[ED_LEN];
  __shared__ int diag[3][ED_LEN + 1];                      // diag[d % 3][i] = D[i][d - i]
  int t = threadIdx.x;
  a[t] = sa[blockIdx.x * ED_LEN + t];
  b[t] = sb[blockIdx.x * ED_LEN + t];
  __syncthreads();
  for (int d = 0; d <= 2 * ED_LEN; ++d) {
    int *cur = diag[d % 3], *prev = diag[(d + 2) % 3], *prev2 = diag[(d + 1) % 3];
    for (int i = t; i <= ED_LEN; i += blockDim.x) {
      int j = d - i;
      if (j < 0 || j > ED_LEN) continue;
      int v;
      if (i == 0) v = j;
      else if (j == 0) v = i;
      else {
        int sub = prev2[i - 1] + (a[i - 1] != b[j - 1]);
        int del = prev[i - 1] + 1, ins = prev[i] + 1;
        v = min(sub, min(del, ins));
      }
      cur[i] = v;
    }
    __syncthreads();
  }
  if (t == 0) dist[blockIdx.x] = diag[(2 * ED_LEN) % 3][ED_LEN];
}

// LCS length of a 64-symbol pattern against a 96-symbol text, one pair per thread.
//@run {"grid": 1, "block": 64, "args": ["u8*4096%4", "u8*6144%4", "s32*64"]}
extern "C" __global__ void lcs_bit_parallel(const unsigned char* __restrict__ pat, const unsigned char* __restrict__ txt,
                                            int* __restrict__ lcs) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long match[4] = {0ull, 0ull, 0ull, 0ull};
  for (int i = 0; i < 64; ++i) match[pat[t * 64 + i]] |= 1ull << i;
  unsigned long long v = ~0ull;
  for (int j = 0; j < 96; ++j) {
    unsigned long long m = match[txt[t * 96 + j]];
    unsigned long long u = v & m;
    v = (v + u) | (v - u);
  }
  lcs[t] = 64 - __popcll(v);
}

#define HS 8
#define HT 24

// Emission and transition log-probabilities from the inputs (negated magnitudes); 24 steps.
//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*512", "u8*1536%8", "s32*1536", "f32*64"]}
extern "C" __global__ void viterbi_log8(const float* __restrict__ trans_in, const float* __restrict__ emit_in,
                                        const unsigned char* __restrict__ obs, int* __restrict__ path,
                                        float* __restrict__ best_score) {
  __shared__ float trans[HS][HS], emit[HS][64];
  unsigned t = threadIdx.x;
  trans[t / HS][t % HS] = -fabsf(trans_in[t]);
  for (int k = t; k < HS * 64; k += blockDim.x) emit[k / 64][k % 64] = -fabsf(emit_in[k]);
  __syncthreads();
  float score[HS];
  unsigned char back[HT][HS];
  const unsigned char* o = obs + t * HT;
#pragma unroll
  for (int s = 0; s < HS; ++s) score[s] = emit[s][o[0] * 8 + (t & 7)];
  for (int step = 1; step < HT; ++step) {
    float next[HS];
#pragma unroll
    for (int s = 0; s < HS; ++s) {
      float best = score[0] + trans[0][s];
      int arg = 0;
#pragma unroll
      for (int p = 1; p < HS; ++p) {
        float c = score[p] + trans[p][s];
        if (c > best) { best = c; arg = p; }
      }
      next[s] = best + emit[s][o[step] * 8 + (t & 7)];
      back[step][s] = (unsigned char)arg;
    }
#pragma unroll
    for (int s = 0; s < HS; ++s) score[s] = next[s];
  }
  int state = 0;
  for (int s = 1; s < HS; ++s) if (score[s] > score[state]) state = s;
  best_score[t] = score[state];
  for (int step = HT - 1; step >= 0; --step) {
    path[t * HT + step] = state;
    if (step > 0) state = back[step][state];
  }
}

__device__ __forceinline__ float log_add(float x, float y) {
  float m = fmaxf(x, y);
  return m == -INFINITY ? m : m + log1pf(expf(-fabsf(x - y)));
}

//@run {"grid": 1, "block": 64, "args": ["f32*64", "f32*512", "u8*1536%8", "f32*64"]}
extern "C" __global__ void hmm_forward_logsumexp(const float* __restrict__ trans_in, const float* __restrict__ emit_in,
                                                 const unsigned char* __restrict__ obs, float* __restrict__ loglik) {
  __shared__ float trans[HS][HS], emit[HS][64];
  unsigned t = threadIdx.x;
  trans[t / HS][t % HS] = -fabsf(trans_in[t]);
  for (int k = t; k < HS * 64; k += blockDim.x) emit[k / 64][k % 64] = -fabsf(emit_in[k]);
  __syncthreads();
  float alpha[HS];
  const unsigned char* o = obs + t * HT;
#pragma unroll
  for (int s = 0; s < HS; ++s) alpha[s] = emit[s][o[0] * 8 + (t & 7)] - 2.0794415f;   // log(1/8)
  for (int step = 1; step < HT; ++step) {
    float next[HS];
#pragma unroll
    for (int s = 0; s < HS; ++s) {
      float acc = -INFINITY;
#pragma unroll
      for (int p = 0; p < HS; ++p) acc = log_add(acc, alpha[p] + trans[p][s]);
      next[s] = acc + emit[s][o[step] * 8 + (t & 7)];
    }
#pragma unroll
    for (int s = 0; s < HS; ++s) alpha[s] = next[s];
  }
  float total = -INFINITY;
#pragma unroll
  for (int s = 0; s < HS; ++s) total = log_add(total, alpha[s]);
  loglik[t] = total;
}
