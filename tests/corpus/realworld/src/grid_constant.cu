// Kernel parameters as structs: a __grid_constant__ aggregate read with run-time indices and
// through a pointer to it (a generic address of the parameter space), a by-value aggregate
// written by the kernel (so it needs a local copy), and a large parameter list.

struct Params {
  float scale[16];
  int offsets[32];
  long long base;
  int n;
  short tag[6];
};

__device__ __noinline__ float pick(const Params* p, int i) {
  return p->scale[i & 15] * (float)(p->offsets[(i * 5) & 31] & 1023) + (float)p->tag[i % 6];
}

//@run {"grid": 1, "block": 128, "args": ["bytes*216", "f32*256", "f32*128"]}
extern "C" __global__ void grid_const_indexed(const __grid_constant__ Params p, const float* __restrict__ in,
                                              float* __restrict__ out) {
  int t = threadIdx.x;
  out[t] = in[(t + p.offsets[t & 31]) & 255] * p.scale[(t >> 2) & 15] + (float)(p.base >> (t & 7) & 0xffff) +
           (float)(p.n & 1023);
}

//@run {"grid": 1, "block": 64, "args": ["bytes*216", "f32*64"]}
extern "C" __global__ void grid_const_address(const __grid_constant__ Params p, float* __restrict__ out) {
  out[threadIdx.x] = pick(&p, threadIdx.x) + pick(&p, threadIdx.x * 7 + 3);
}

//@run {"grid": 1, "block": 64, "args": ["bytes*216", "f32*64"]}
extern "C" __global__ void byvalue_written(Params p, float* __restrict__ out) {
  int t = threadIdx.x;
  p.scale[t & 15] = (float)t;
  p.offsets[(t * 3) & 31] += t;
  out[t] = pick(&p, t) + p.scale[(t + 1) & 15];
}

//@run {"grid": 1, "block": 32, "args": ["s8=-5", "u8=200", "s16=-300", "f32=1.5", "s64=-1234567890123", "f64=2.25", "u32=77", "bytes*216", "f32*32", "u16=65000", "f32*64"]}
extern "C" __global__ void mixed_long_list(signed char a, unsigned char b, short c, float d, long long e, double f,
                                           unsigned g, const __grid_constant__ Params p, const float* __restrict__ in,
                                           unsigned short h, float* __restrict__ out) {
  int t = threadIdx.x;
  float v = in[t] * d + (float)a + (float)b + (float)c + (float)(e >> (t & 15) & 0xfff) + (float)(f * t);
  out[t] = v + (float)(g ^ t) + (float)h + p.scale[t & 15];
  out[t + 32] = (float)(p.offsets[t] & 0xff) + (float)(p.base & 0xff);
}
