// Microscaling (OCP MX) and narrow float formats through CUDA's own headers: FP4 e2m1,
// FP6 e2m3/e3m2 and the e8m0 shared scale (cuda_fp4.h, cuda_fp6.h, cuda_fp8.h), which before
// sm_100 are conversions in software. MXFP4 quantisation of 32-element blocks (amax, e8m0
// scale, packed nibbles), an MXFP4 x MXFP8 block-scaled GEMV, FP6 round trips with both
// encodings and rounding/saturation, an NVFP4-style two-level scale (e4m3 per 16, f32 per
// tensor), and packed x2/x4 conversions from half/bf16.
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

// One warp per 32-value block: the block's amax by shuffles, an e8m0 scale (round up, so the
// largest value fits e2m1's 6.0), each value to e2m1 (round to nearest even), nibbles packed
// pairwise by the even lanes.
//@run {"grid": 4, "block": 64, "args": ["f32*256", "u8*128", "u8*8", "f32*256"]}
extern "C" __global__ void mxfp4_quantize(const float* __restrict__ x, uint8_t* __restrict__ packed,
                                          uint8_t* __restrict__ scales, float* __restrict__ dequant) {
  int lane = threadIdx.x & 31;
  int block = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  float v = x[block * 32 + lane] * (block & 1 ? 37.0f : 0.01f);
  float amax = fabsf(v);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  __nv_fp8_storage_t e = __nv_cvt_float_to_e8m0(amax / 6.0f, __NV_SATFINITE, cudaRoundPosInf);
  __nv_bfloat16_raw sraw = __nv_cvt_e8m0_to_bf16raw(e);
  float scale = __bfloat162float(__nv_bfloat16(sraw));
  float q = scale > 0.0f ? v / scale : 0.0f;
  __nv_fp4_storage_t nib = __nv_cvt_float_to_fp4(q, __NV_E2M1, cudaRoundNearest);
  unsigned other = __shfl_down_sync(0xffffffffu, (unsigned)nib, 1);
  if ((lane & 1) == 0) packed[block * 16 + lane / 2] = (uint8_t)((nib & 0xf) | ((other & 0xf) << 4));
  if (lane == 0) scales[block] = e;
  __half_raw hr = __nv_cvt_fp4_to_halfraw(nib, __NV_E2M1);
  dequant[block * 32 + lane] = __half2float(__half(hr)) * scale;
}

// y = W x with W in MXFP4 (16 bytes of nibbles + one e8m0 scale per 32 weights) and x in
// MXFP8 e4m3 (32 bytes + one e8m0 scale per 32): one warp per row, a lane per block.
//@run {"grid": 2, "block": 64, "args": ["u8*2048", "u8*128", "u8*1024", "u8*32", "f32*4"]}
extern "C" __global__ void mxfp4_mxfp8_gemv(const uint8_t* __restrict__ w, const uint8_t* __restrict__ w_scale,
                                            const uint8_t* __restrict__ x, const uint8_t* __restrict__ x_scale,
                                            float* __restrict__ y) {
  constexpr int COLS = 1024, BLOCKS = COLS / 32;
  int lane = threadIdx.x & 31;
  int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const uint8_t* wr = w + (size_t)row * (COLS / 2);
  float acc = 0.0f;
  for (int b = lane; b < BLOCKS; b += 32) {
    float ws = __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw(w_scale[row * BLOCKS + b] & 0x7f | 0x38)));
    float xs = __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw(x_scale[b] & 0x7f | 0x38)));
    float part = 0.0f;
#pragma unroll 4
    for (int j = 0; j < 16; ++j) {
      uint8_t pair = wr[b * 16 + j];
      __half2_raw wh = __nv_cvt_fp4x2_to_halfraw2(pair, __NV_E2M1);
      float2 wf = __half22float2(__half2(wh));
      __half2_raw xh = __nv_cvt_fp8x2_to_halfraw2(*reinterpret_cast<const __nv_fp8x2_storage_t*>(x + b * 32 + 2 * j), __NV_E4M3);
      float2 xf = __half22float2(__half2(xh));
      part = fmaf(wf.x, xf.x, part);
      part = fmaf(wf.y, xf.y, part);
    }
    acc = fmaf(part, ws * xs, acc);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0) y[row] = acc;
}

// FP6 round trips: e2m3 and e3m2, round-to-nearest with saturation, from float, half2 and
// bf16; the decoded values and the raw codes.
//@run {"grid": 1, "block": 128, "args": ["f32*128", "u8*512", "f32*512"]}
extern "C" __global__ void fp6_round_trips(const float* __restrict__ x, uint8_t* __restrict__ codes,
                                           float* __restrict__ back) {
  int t = threadIdx.x;
  float v = x[t] * (t < 64 ? 2.0f : 9.0f);
  __nv_fp6_storage_t a = __nv_cvt_float_to_fp6(v, __NV_E2M3, cudaRoundNearest);
  __nv_fp6_storage_t b = __nv_cvt_float_to_fp6(v, __NV_E3M2, cudaRoundNearest);
  __half2_raw h2 = __half2(__float2half_rn(v), __float2half_rn(-0.5f * v));
  __nv_fp6x2_storage_t c = __nv_cvt_halfraw2_to_fp6x2(h2, __NV_E3M2, cudaRoundNearest);
  __nv_fp6_storage_t d = __nv_cvt_bfloat16raw_to_fp6(__nv_bfloat16_raw(__float2bfloat16(v * 0.25f)), __NV_E2M3, cudaRoundNearest);
  codes[4 * t] = a;
  codes[4 * t + 1] = b;
  codes[4 * t + 2] = (uint8_t)(c & 0xff);
  codes[4 * t + 3] = d;
  __nv_fp6_e2m3 ta(v);
  __nv_fp6_e3m2 tb(v);
  back[4 * t] = __half2float(__half(__nv_cvt_fp6_to_halfraw(a, __NV_E2M3)));
  back[4 * t + 1] = __half2float(__half(__nv_cvt_fp6_to_halfraw(b, __NV_E3M2)));
  back[4 * t + 2] = static_cast<float>(ta) - static_cast<float>(tb);
  float2 pair = __half22float2(__half2(__nv_cvt_fp6x2_to_halfraw2(c, __NV_E3M2)));
  back[4 * t + 3] = pair.x + pair.y;
}

// NVFP4-style two-level scaling: per 16 values an e4m3 scale of amax/6 (relative to a
// per-tensor f32 scale), values to e2m1 by the x2 conversion from float2; decoded back.
//@run {"grid": 2, "block": 64, "args": ["f32*256", "f32=0.03125", "u8*128", "u8*16", "f32*256"]}
extern "C" __global__ void nvfp4_two_level(const float* __restrict__ x, float tensor_scale, uint8_t* __restrict__ packed,
                                           uint8_t* __restrict__ block_scales, float* __restrict__ dequant) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;   // two values per thread
  int lane = threadIdx.x & 31;
  float2 v = reinterpret_cast<const float2*>(x)[t];
  float amax = fmaxf(fabsf(v.x), fabsf(v.y));
#pragma unroll
  for (int off = 4; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  __nv_fp8_storage_t s8 = __nv_cvt_float_to_fp8(amax / (6.0f * tensor_scale), __NV_SATFINITE, __NV_E4M3);
  float s = __half2float(__half(__nv_cvt_fp8_to_halfraw(s8, __NV_E4M3))) * tensor_scale;
  float inv = s > 0.0f ? 1.0f / s : 0.0f;
  __nv_fp4x2_storage_t p = __nv_cvt_float2_to_fp4x2(make_float2(v.x * inv, v.y * inv), __NV_E2M1, cudaRoundNearest);
  packed[t] = p;
  if ((lane & 7) == 0) block_scales[t >> 3] = s8;
  float2 d = __half22float2(__half2(__nv_cvt_fp4x2_to_halfraw2(p, __NV_E2M1)));
  reinterpret_cast<float2*>(dequant)[t] = make_float2(d.x * s, d.y * s);
}

// Packed conversions from half2/bf162 to fp4x2, fp8x2 e5m2 and e8m0x2, and the fp4x4 /
// fp6x4 class types' float4 round trips.
//@run {"grid": 1, "block": 64, "args": ["f16*128", "bf16*128", "u32*64", "f32*256"]}
extern "C" __global__ void packed_narrow_conversions(const __half* __restrict__ h, const __nv_bfloat16* __restrict__ bf,
                                                     uint32_t* __restrict__ codes, float* __restrict__ back) {
  int t = threadIdx.x;
  __half2 hv = reinterpret_cast<const __half2*>(h)[t];
  __nv_bfloat162 bv = reinterpret_cast<const __nv_bfloat162*>(bf)[t];
  __nv_fp4x2_storage_t f4 = __nv_cvt_halfraw2_to_fp4x2(__half2_raw(hv), __NV_E2M1, cudaRoundNearest);
  __nv_fp4x2_storage_t g4 = __nv_cvt_bfloat16raw2_to_fp4x2(__nv_bfloat162_raw(bv), __NV_E2M1, cudaRoundNearest);
  __nv_fp8x2_storage_t e52 = __nv_cvt_halfraw2_to_fp8x2(__half2_raw(hv), __NV_SATFINITE, __NV_E5M2);
  __nv_fp8x2_storage_t e80 = __nv_cvt_bfloat162raw_to_e8m0x2(__nv_bfloat162_raw(bv), __NV_SATFINITE, cudaRoundZero);
  codes[t] = (uint32_t)f4 | ((uint32_t)g4 << 8) | ((uint32_t)(e52 ^ e80) << 16);
  float2 hf = __half22float2(hv);
  float2 bff = __bfloat1622float2(bv);
  float4 quad = make_float4(hf.x, hf.y, bff.x, bff.y);
  __nv_fp4x4_e2m1 q4(quad);
  __nv_fp6x4_e2m3 q6(quad);
  float4 r4 = static_cast<float4>(q4);
  float4 r6 = static_cast<float4>(q6);
  back[4 * t] = r4.x + r6.y;
  back[4 * t + 1] = r4.y - r6.x;
  back[4 * t + 2] = r4.z * r6.w;
  back[4 * t + 3] = r4.w + r6.z;
}
