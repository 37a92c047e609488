// Inline PTX as hand-tuned CUDA writes it (CUTLASS/CUB-style helpers): multi-word
// add/sub/mad with carry chains, lop3 with computed-at-compile-time tables, prmt in its
// modes, shf wrap/clamp, bfe/bfi, bfind/brev, vote/ballot through asm, SIMD video
// instructions, predicate logic in asm, and 64-bit registers split and joined with mov.b64.

__device__ __forceinline__ void add192(unsigned r[6], const unsigned a[6], const unsigned b[6]) {
  asm("add.cc.u32 %0, %6, %12;\n\t"
      "addc.cc.u32 %1, %7, %13;\n\t"
      "addc.cc.u32 %2, %8, %14;\n\t"
      "addc.cc.u32 %3, %9, %15;\n\t"
      "addc.cc.u32 %4, %10, %16;\n\t"
      "addc.u32 %5, %11, %17;"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]),
        "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(b[4]), "r"(b[5]));
}

//@run {"grid": 1, "block": 64, "args": ["u32*384", "u32*384", "u32*768"]}
extern "C" __global__ void carry_chains(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
                                        unsigned* __restrict__ out) {
  int t = threadIdx.x;
  unsigned x[6], y[6], s[6];
  for (int i = 0; i < 6; ++i) { x[i] = a[t * 6 + i]; y[i] = b[t * 6 + i]; }
  add192(s, x, y);
  unsigned d0, d1, d2, borrow;
  asm("sub.cc.u32 %0, %4, %7;\n\t"
      "subc.cc.u32 %1, %5, %8;\n\t"
      "subc.cc.u32 %2, %6, %9;\n\t"
      "subc.u32 %3, 0, 0;"
      : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(borrow)
      : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(y[0]), "r"(y[1]), "r"(y[2]));
  unsigned lo, hi, c;
  asm("mad.lo.cc.u32 %0, %3, %4, %5;\n\t"
      "madc.hi.cc.u32 %1, %3, %4, %6;\n\t"
      "addc.u32 %2, 0, 0;"
      : "=r"(lo), "=r"(hi), "=r"(c) : "r"(x[3]), "r"(y[3]), "r"(x[4]), "r"(y[4]));
  for (int i = 0; i < 6; ++i) out[t * 12 + i] = s[i];
  out[t * 12 + 6] = d0; out[t * 12 + 7] = d1; out[t * 12 + 8] = d2; out[t * 12 + 9] = borrow;
  out[t * 12 + 10] = lo ^ c; out[t * 12 + 11] = hi;
}

template <int LUT>
__device__ __forceinline__ unsigned lop3(unsigned a, unsigned b, unsigned c) {
  unsigned d;
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
  return d;
}

//@run {"grid": 1, "block": 128, "args": ["u32*128", "u32*128", "u32*128", "u32*1024"]}
extern "C" __global__ void bit_tricks(const unsigned* __restrict__ a, const unsigned* __restrict__ b,
                                      const unsigned* __restrict__ c, unsigned* __restrict__ out) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t], z = c[t], r;
  out[t * 8 + 0] = lop3<0xE8>(x, y, z) ^ lop3<0x96>(x, y, z) ^ lop3<0x1B>(z, x, y);
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
  out[t * 8 + 1] = r;
  asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z & 3));
  unsigned r2;
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r2) : "r"(x), "r"(y), "r"(z & 1));
  out[t * 8 + 2] = r ^ r2;
  asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z));
  asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(r2) : "r"(x), "r"(y), "r"(z & 63));
  out[t * 8 + 3] = r + r2;
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(z & 31), "r"((z >> 5) & 31));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r2) : "r"(y), "r"(x), "r"(z & 31), "r"((z >> 8) & 31));
  out[t * 8 + 4] = r ^ r2;
  asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(x));
  asm("bfind.shiftamt.s32 %0, %1;" : "=r"(r2) : "r"(y));
  out[t * 8 + 5] = r * 33 + r2;
  asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(z & 0xffff));
  asm("vadd2.s32.s32.s32.sat %0, %1, %2, %3;" : "=r"(r2) : "r"(x), "r"(y), "r"(0));
  out[t * 8 + 6] = r ^ r2;
  unsigned long long w = ((unsigned long long)y << 32) | x, w2;
  unsigned lo, hi;
  asm("{\n\t.reg .u32 l, h;\n\tmov.b64 {l, h}, %2;\n\tadd.u32 l, l, h;\n\tmov.b32 %0, l;\n\tmov.b32 %1, h;\n\t}"
      : "=r"(lo), "=r"(hi) : "l"(w));
  asm("mov.b64 %0, {%1, %2};" : "=l"(w2) : "r"(hi), "r"(lo));
  out[t * 8 + 7] = lo ^ (unsigned)(w2 >> 7);
}

//@run {"grid": 1, "block": 64, "args": ["s32*64", "u32*256"]}
extern "C" __global__ void predicates_in_asm(const int* __restrict__ v, unsigned* __restrict__ out) {
  int t = threadIdx.x;
  int x = v[t];
  unsigned ballot, any, r;
  asm("{\n\t.reg .pred p, q;\n\t"
      "setp.gt.s32 p, %2, 0;\n\t"
      "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
      "setp.lt.s32 q, %2, -1000;\n\t"
      "vote.sync.any.pred q, q, 0xffffffff;\n\t"
      "selp.u32 %1, 1, 0, q;\n\t}"
      : "=r"(ballot), "=r"(any) : "r"(x));
  asm("{\n\t.reg .pred a, b, c;\n\t"
      "setp.ne.s32 a, %1, 0;\n\t"
      "setp.lt.s32.and b, %1, 100, a;\n\t"
      "setp.gt.s32.or c, %1, -100, b;\n\t"
      "@c xor.b32 %0, %1, 0x5a5a;\n\t"
      "@!c mov.b32 %0, 7;\n\t}"
      : "=r"(r) : "r"(x));
  out[t * 4 + 0] = ballot;
  out[t * 4 + 1] = any;
  out[t * 4 + 2] = r;
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  out[t * 4 + 3] = lane * 1000 + __popc(ballot & m);
}

//@run {"grid": 1, "block": 32, "args": ["f32*64", "f16*64", "f32*128"]}
extern "C" __global__ void float_asm(const float* __restrict__ a, const unsigned short* __restrict__ h,
                                     float* __restrict__ out) {
  int t = threadIdx.x;
  float x = a[t], y = a[t + 32], r, r2;
  asm("fma.rz.ftz.f32 %0, %1, %2, %1;" : "=f"(r) : "f"(x), "f"(y));
  asm("add.rp.sat.f32 %0, %1, %2;" : "=f"(r2) : "f"(x), "f"(y));
  out[t * 4 + 0] = r + r2;
  asm("{\n\t.reg .f32 q;\n\tdiv.full.f32 q, %1, %2;\n\tcopysign.f32 %0, %1, q;\n\t}" : "=f"(r) : "f"(x), "f"(y));
  out[t * 4 + 1] = r;
  unsigned hv = ((unsigned)h[2 * t + 1] << 16) | h[2 * t], hr;
  asm("{\n\t.reg .b32 k;\n\tmov.b32 k, 0x3c003c00;\n\tfma.rn.f16x2 %0, %1, %1, k;\n\t}" : "=r"(hr) : "r"(hv));
  out[t * 4 + 2] = __uint_as_float(hr & 0x7fff7fff);
  int cls;
  asm("{\n\t.reg .pred p;\n\ttestp.finite.f32 p, %1;\n\tselp.s32 %0, 1, 0, p;\n\t}" : "=r"(cls) : "f"(x / (y - y)));
  out[t * 4 + 3] = (float)cls;
}
