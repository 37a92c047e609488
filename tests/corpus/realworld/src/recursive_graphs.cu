// Call graphs nvcc cannot flatten: mutual recursion (a recursive-descent expression parser
// over a per-thread token string, Hofstadter's female/male sequences), recursion through a
// function-pointer table (a tree fold whose combiner is picked at run time), a recursive
// quicksort of a local array, and virtual calls inside a recursive visitor over an expression
// tree stored in global memory. ptxas warns that the stack size cannot be determined
// statically; the launches stay within the default stack.
#include <stdint.h>

// --- recursive descent: expr := term (('+'|'-') term)*, term := factor (('*') factor)*,
// factor := digit | '(' expr ')' | '-' factor. Tokens are bytes; a bad token ends parsing.
struct Cursor {
  const uint8_t* s;
  int pos, len, depth;
};
__device__ __noinline__ int parse_expr(Cursor& c);
__device__ __noinline__ int parse_factor(Cursor& c) {
  if (c.pos >= c.len || ++c.depth > 12) return 0;
  uint8_t t = c.s[c.pos];
  if (t < 10) {
    ++c.pos;
    return t;
  }
  if (t == 10) {          // '('
    ++c.pos;
    int v = parse_expr(c);
    if (c.pos < c.len && c.s[c.pos] == 11) ++c.pos;   // ')'
    return v;
  }
  if (t == 13) {          // unary '-'
    ++c.pos;
    return -parse_factor(c);
  }
  ++c.pos;
  return 1;
}
__device__ __noinline__ int parse_term(Cursor& c) {
  int v = parse_factor(c);
  while (c.pos < c.len && c.s[c.pos] == 12) {       // '*'
    ++c.pos;
    v = v * parse_factor(c);
  }
  return v;
}
__device__ __noinline__ int parse_expr(Cursor& c) {
  int v = parse_term(c);
  while (c.pos < c.len && (c.s[c.pos] == 14 || c.s[c.pos] == 13)) {   // '+' or '-'
    bool minus = c.s[c.pos] == 13;
    ++c.pos;
    int r = parse_term(c);
    v = minus ? v - r : v + r;
  }
  return v;
}
//@run {"grid": 1, "block": 64, "args": ["u8*1536%15", "s32*64", "s32*64"]}
extern "C" __global__ void parse_expressions(const uint8_t* __restrict__ tokens, int* __restrict__ value,
                                             int* __restrict__ consumed) {
  int t = threadIdx.x;
  Cursor c{tokens + t * 24, 0, 24, 0};
  int v = parse_expr(c);
  value[t] = v;
  consumed[t] = c.pos | (c.depth << 8);
}

// --- Hofstadter F(n) = n - M(F(n-1)), M(n) = n - F(M(n-1)): exponential mutual recursion, n < 12
__device__ __noinline__ int hof_m(int n);
__device__ __noinline__ int hof_f(int n) { return n == 0 ? 1 : n - hof_m(hof_f(n - 1)); }
__device__ __noinline__ int hof_m(int n) { return n == 0 ? 0 : n - hof_f(hof_m(n - 1)); }
//@run {"grid": 1, "block": 32, "args": ["u32*32%12", "s32*64"]}
extern "C" __global__ void hofstadter_pairs(const unsigned* __restrict__ n, int* __restrict__ out) {
  int t = threadIdx.x;
  int k = n[t];
  out[2 * t] = hof_f(k);
  out[2 * t + 1] = hof_m(k);
}

// --- a fold over an implicit binary tree (heap order, 63 nodes) with the combiner chosen from a
// table of function pointers per level; the fold recurses through the pointer.
typedef float (*Combine)(float, float, float);
__device__ float comb_sum(float node, float l, float r) { return node + l + r; }
__device__ float comb_max(float node, float l, float r) { return fmaxf(node, fmaxf(l, r)); }
__device__ float comb_mix(float node, float l, float r) { return fmaf(0.5f, l - r, node); }
__device__ Combine combiners[3] = {comb_sum, comb_max, comb_mix};
__device__ __noinline__ float tree_fold(const float* tree, int node, int n, const int* choice, int level) {
  if (node >= n) return 0.0f;
  float l = tree_fold(tree, 2 * node + 1, n, choice, level + 1);
  float r = tree_fold(tree, 2 * node + 2, n, choice, level + 1);
  Combine f = combiners[choice[level] % 3];
  return f(tree[node], l, r);
}
//@run {"grid": 2, "block": 32, "args": ["f32*4032", "s32*12%3", "f32*64"]}
extern "C" __global__ void tree_fold_pointers(const float* __restrict__ trees, const int* __restrict__ choice,
                                              float* __restrict__ out) {
  int t = blockIdx.x * 32 + threadIdx.x;
  int n = 31 + (t & 31);
  out[t] = tree_fold(trees + t * 63, 0, n, choice + (t & 1) * 6, 0);
}

// --- recursive quicksort (Lomuto, median of three) of 24 local keys per thread, recursing
// into the smaller side first.
__device__ __noinline__ void quicksort(int* a, int lo, int hi, int depth, int* max_depth) {
  if (depth > *max_depth) *max_depth = depth;
  if (lo >= hi) return;
  int mid = lo + (hi - lo) / 2;
  if (a[mid] < a[lo]) { int x = a[mid]; a[mid] = a[lo]; a[lo] = x; }
  if (a[hi] < a[lo]) { int x = a[hi]; a[hi] = a[lo]; a[lo] = x; }
  if (a[mid] < a[hi]) { int x = a[mid]; a[mid] = a[hi]; a[hi] = x; }
  int pivot = a[hi], i = lo;
  for (int j = lo; j < hi; ++j)
    if (a[j] < pivot) { int x = a[i]; a[i] = a[j]; a[j] = x; ++i; }
  int x = a[i]; a[i] = a[hi]; a[hi] = x;
  if (i - lo < hi - i) {
    quicksort(a, lo, i - 1, depth + 1, max_depth);
    quicksort(a, i + 1, hi, depth + 1, max_depth);
  } else {
    quicksort(a, i + 1, hi, depth + 1, max_depth);
    quicksort(a, lo, i - 1, depth + 1, max_depth);
  }
}
//@run {"grid": 1, "block": 32, "args": ["s32*768%100", "s32*768", "s32*32"]}
extern "C" __global__ void local_quicksort(const int* __restrict__ in, int* __restrict__ out, int* __restrict__ depth) {
  int a[24];
  int t = threadIdx.x;
  for (int i = 0; i < 24; ++i) a[i] = in[t * 24 + i];
  int d = 0;
  quicksort(a, 0, 23, 0, &d);
  for (int i = 0; i < 24; ++i) out[t * 24 + i] = a[i];
  depth[t] = d;
}

// --- an expression tree in global memory (node: op, left, right, value), each thread builds
// objects for its nodes in a local pool and evaluates them through virtual calls, recursively.
struct Node {
  __device__ virtual float eval(const struct Pool& p) const = 0;
  __device__ virtual int height(const struct Pool& p) const = 0;
};
struct Pool;
struct Leaf : Node {
  float v;
  __device__ Leaf(float x = 0.0f) : v(x) {}
  __device__ float eval(const Pool&) const override { return v; }
  __device__ int height(const Pool&) const override { return 1; }
};
struct Binary : Node {
  int op, l, r;
  __device__ Binary(int o = 0, int a = 0, int b = 0) : op(o), l(a), r(b) {}
  __device__ float eval(const Pool& p) const override;
  __device__ int height(const Pool& p) const override;
};
struct Pool {
  const Node* nodes[16];
};
__device__ float Binary::eval(const Pool& p) const {
  float a = p.nodes[l]->eval(p), b = p.nodes[r]->eval(p);
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    default: return fmaxf(a, b);
  }
}
__device__ int Binary::height(const Pool& p) const {
  int a = p.nodes[l]->height(p), b = p.nodes[r]->height(p);
  return 1 + (a > b ? a : b);
}
//@run {"grid": 1, "block": 32, "args": ["s32*512%4", "f32*512", "f32*32", "s32*32"]}
extern "C" __global__ void virtual_expression_tree(const int* __restrict__ ops, const float* __restrict__ leaves,
                                                   float* __restrict__ value, int* __restrict__ height) {
  int t = threadIdx.x;
  // node i < 7 is binary with children 2i+1, 2i+2 (a full tree of 15 nodes); the rest leaves
  Leaf leaf_store[15];
  Binary bin_store[7];
  Pool pool;
  int shape = ops[t * 16 + 15];          // 0..3: how many of the deepest binaries become leaves
  for (int i = 0; i < 15; ++i) {
    bool binary = i < 7 - shape;
    if (binary) {
      bin_store[i] = Binary(ops[t * 16 + i], 2 * i + 1, 2 * i + 2);
      pool.nodes[i] = &bin_store[i];
    } else {
      leaf_store[i] = Leaf(leaves[t * 16 + i]);
      pool.nodes[i] = &leaf_store[i];
    }
  }
  value[t] = pool.nodes[0]->eval(pool);
  height[t] = pool.nodes[0]->height(pool);
}
