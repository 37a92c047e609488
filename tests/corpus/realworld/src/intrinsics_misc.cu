// Less common CUDA intrinsics one kernel each, as found in the wild: __prof_trigger,
// __threadfence_system, cache-operator loads/stores (__ldcv/__ldlu/__ldca/__stwb/__stcg/__stwt),
// half/bf16/half2/bf162 and 64-bit atomics, FP8 conversions, bf16x2/half2 math (h2exp, h2rcp,
// __hfma2_relu, __hcmadd), __usad/__sad/__mul24/__mulhi/__hadd/__rhadd, __nanosleep/__activemask/
// clock64, rounded float and double intrinsics (__frcp_rz, __fsqrt_ru, __fmaf_ieee_rd, __ddiv_rd,
// __drcp_rn, rnorm3d, cyl_bessel_i0, erfcinv) and directed-rounding integer conversions.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
//@run {"grid": 1, "block": 32, "args": ["s32*4"]}
extern "C" __global__ void k_prof(int* o) { __prof_trigger(3); o[0] = 1; }
//@run {"grid": 1, "block": 32, "args": ["s32*4"]}
extern "C" __global__ void k_sysfence(int* o) { o[0] = 1; __threadfence_system(); o[1] = 2; }
//@run {"grid": 1, "block": 32, "args": ["s32*8", "s32*8"]}
extern "C" __global__ void k_ldcv(int* o, const int* i) { o[0] = __ldcv(i) + __ldlu(i + 1) + __ldca(i + 2); __stwb(o + 1, 3); __stcg(o + 2, 4); __stwt(o + 3, 5); }
//@run {"grid": 2, "block": 64, "args": ["f16*2%1", "bf16*2%1", "f16*4%1", "bf16*4%1"]}
extern "C" __global__ void k_half_atomics(__half* h, __nv_bfloat16* b, __half2* h2, __nv_bfloat162* b2) { atomicAdd(h, __float2half(1.f)); atomicAdd(b, __float2bfloat16(2.f)); atomicAdd(h2, __floats2half2_rn(1.f, 2.f)); atomicAdd(b2, __floats2bfloat162_rn(1.f, 2.f)); }
//@run {"grid": 1, "block": 64, "args": ["f64*8%1"]}
extern "C" __global__ void k_double_atomics(double* d) { atomicAdd(d, 1.0); atomicExch((unsigned long long*)d + 1, 7ull); atomicMin((long long*)d + 2, -3ll); atomicMax((unsigned long long*)d + 3, 9ull); atomicAnd((unsigned long long*)d + 4, 6ull); }
//@run {"grid": 1, "block": 32, "args": ["f32*64", "u8*32", "u8*32"]}
extern "C" __global__ void k_fp8(float* o, const __nv_fp8_e4m3* a, const __nv_fp8_e5m2* b) { o[threadIdx.x] = float(a[threadIdx.x]) + float(b[threadIdx.x]); __nv_fp8x2_e4m3 p(make_float2(o[0], o[1])); o[40] = float2(p).x; }
//@run {"grid": 1, "block": 64, "args": ["bf16*128", "bf16*128"]}
extern "C" __global__ void k_bf16math(__nv_bfloat162* o, const __nv_bfloat162* a) { __nv_bfloat162 x = a[threadIdx.x]; o[threadIdx.x] = __hfma2(x, h2exp(x), h2sqrt(x)) + h2rcp(x) + __hmax2_nan(x, h2log(x)); }
//@run {"grid": 1, "block": 64, "args": ["f16*128", "f16*128"]}
extern "C" __global__ void k_halfmath(__half2* o, const __half2* a) { __half2 x = a[threadIdx.x]; o[threadIdx.x] = __hfma2_relu(x, h2exp2(x), h2cos(x)) + h2rsqrt(x) + __hcmadd(x, x, x); }
//@run {"grid": 1, "block": 32, "args": ["u32*32", "u32*8"]}
extern "C" __global__ void k_sad(unsigned* o, const unsigned* a) { o[threadIdx.x] = __usad(a[0], a[1], a[2]) + __sad(a[3], a[4], a[5]) + __mul24(a[6], a[7]) + __umul24(a[0], a[2]) + __mulhi(a[1], a[3]) + __umulhi(a[4], a[5]) + __hadd(a[0], a[1]) + __rhadd(a[2], a[3]) + __uhadd(a[4], a[5]) + __urhadd(a[6], a[7]); }
//@run {"grid": 1, "block": 32, "args": ["u32*4"]}
extern "C" __global__ void k_nanosleep(unsigned* o) { __nanosleep(100); o[0] = __activemask(); unsigned long long t = clock64(); o[1] = (unsigned)(t != 0); }
//@run {"grid": 1, "block": 32, "args": ["f32*4", "f32*8"]}
extern "C" __global__ void k_saturate(float* o, const float* a) { o[0] = __saturatef(a[0]) + __fdividef(a[1], a[2]) + __frcp_rz(a[3]) + __fsqrt_ru(a[4]) + __fmaf_ieee_rd(a[0], a[1], a[2]) + __frsqrt_rn(a[5]) + __expf(a[6]) + exp10f(a[7]) + __tanf(a[1]); }
//@run {"grid": 1, "block": 32, "args": ["f64*4", "f64*8"]}
extern "C" __global__ void k_double_intr(double* o, const double* a) { o[0] = __dadd_rz(a[0], a[1]) + __dmul_ru(a[2], a[3]) + __ddiv_rd(a[4], a[5]) + __drcp_rn(a[6]) + __dsqrt_rz(a[7]) + __fma_rd(a[0], a[1], a[2]) + rnorm3d(a[0], a[1], a[2]) + cyl_bessel_i0(a[3]) + erfcinv(a[4] * 0.1 + 1.0); }
//@run {"grid": 1, "block": 32, "args": ["s64*4", "f32*4", "f64*4"]}
extern "C" __global__ void k_int_conv(long long* o, const float* f, const double* d) { o[0] = __float2ll_rd(f[0]) + __double2ll_ru(d[0]) + __float2ull_rz(f[1]) + __double2uint_rd(d[1]) + __half2int_rz(__float2half(f[2])) + __bfloat162int_rn(__float2bfloat16(f[3])); o[1] = __double_as_longlong(__ll2double_rd(o[0])) + __float_as_int(__ll2float_ru(o[0])) + __float_as_int(__ull2float_rz(o[0])); }
