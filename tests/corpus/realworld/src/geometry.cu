// Geometry kernels as ray tracers and robotics codes write them: Moller-Trumbore ray/triangle
// tests over a small mesh, a BVH walk with a per-thread stack in local memory (indexed by a
// run-time depth), quaternion rotations, polar/spherical conversions (atan2f, acosf, sincosf,
// hypotf), a point-in-polygon crossing test, and an angle-wrapping kernel (fmodf, remainderf,
// copysignf, signbit) that mixes float special values.
#include <stdint.h>
#include <math.h>

struct Tri { float v0[3], v1[3], v2[3]; };

__device__ __forceinline__ void cross3(const float* a, const float* b, float* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

__device__ __forceinline__ float dot3(const float* a, const float* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

//@run {"grid": 2, "block": 64, "args": ["f32*768", "f32*144", "f32*128", "u32*128", "s32=16"]}
extern "C" __global__ void ray_triangles(const float* rays, const Tri* tris, float* t_hit,
                                         unsigned* which, int ntris) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* r = rays + 6 * i;
  float o[3] = {r[0], r[1], r[2]}, d[3] = {r[3], r[4], r[5] + 0.5f};
  float best = INFINITY;
  unsigned id = 0xffffffffu;
  for (int k = 0; k < ntris && k < 16; ++k) {
    Tri t = tris[k % 4 == 3 ? k - 1 : k];
    float e1[3] = {t.v1[0] - t.v0[0], t.v1[1] - t.v0[1], t.v1[2] - t.v0[2]};
    float e2[3] = {t.v2[0] - t.v0[0], t.v2[1] - t.v0[1], t.v2[2] - t.v0[2]};
    float p[3], q[3], s[3];
    cross3(d, e2, p);
    float det = dot3(e1, p);
    if (fabsf(det) < 1e-7f) continue;
    float inv = 1.0f / det;
    s[0] = o[0] - t.v0[0]; s[1] = o[1] - t.v0[1]; s[2] = o[2] - t.v0[2];
    float u = dot3(s, p) * inv;
    if (u < 0.f || u > 1.f) continue;
    cross3(s, e1, q);
    float v = dot3(d, q) * inv;
    if (v < 0.f || u + v > 1.f) continue;
    float tt = dot3(e2, q) * inv;
    if (tt > 1e-4f && tt < best) { best = tt; id = k; }
  }
  t_hit[i] = best;
  which[i] = id;
}

// A complete binary BVH of 31 nodes (boxes as min/max pairs), leaves 15..30; walk it with an
// explicit stack in local memory, counting the leaves whose boxes the ray's slab test hits.
//@run {"grid": 1, "block": 64, "args": ["f32*186", "f32*384", "u32*64", "f32*64"]}
extern "C" __global__ void bvh_walk(const float* boxes, const float* rays, unsigned* hits,
                                    float* nearest) {
  int i = threadIdx.x;
  const float* r = rays + 6 * i;
  float o[3] = {r[0], r[1], r[2]};
  float inv[3];
  for (int a = 0; a < 3; ++a) inv[a] = 1.0f / (r[3 + a] + (r[3 + a] >= 0.f ? 0.25f : -0.25f));
  int stack[16];
  int sp = 0;
  stack[sp++] = 0;
  unsigned count = 0;
  float near = INFINITY;
  while (sp > 0) {
    int n = stack[--sp];
    const float* b = boxes + 6 * n;
    float tmin = -INFINITY, tmax = INFINITY;
    for (int a = 0; a < 3; ++a) {
      float lo = fminf(b[a], b[a + 3]), hi = fmaxf(b[a], b[a + 3]);
      float t0 = (lo - o[a]) * inv[a], t1 = (hi - o[a]) * inv[a];
      tmin = fmaxf(tmin, fminf(t0, t1));
      tmax = fminf(tmax, fmaxf(t0, t1));
    }
    if (tmax < fmaxf(tmin, 0.f)) continue;
    if (n >= 15) {
      ++count;
      near = fminf(near, fmaxf(tmin, 0.f));
    } else if (sp < 15) {
      stack[sp++] = 2 * n + 2;
      stack[sp++] = 2 * n + 1;
    }
  }
  hits[i] = count;
  nearest[i] = near;
}

//@run {"grid": 2, "block": 64, "args": ["f32*512", "f32*384", "f32*384"]}
extern "C" __global__ void quat_rotate(const float4* quats, const float* pts, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 q = quats[i];
  float n = rsqrtf(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w + 1e-12f);
  q.x *= n; q.y *= n; q.z *= n; q.w *= n;
  float px = pts[3 * i], py = pts[3 * i + 1], pz = pts[3 * i + 2];
  // v' = v + 2 w (q x v) + 2 q x (q x v)
  float tx = 2.f * (q.y * pz - q.z * py), ty = 2.f * (q.z * px - q.x * pz), tz = 2.f * (q.x * py - q.y * px);
  out[3 * i] = px + q.w * tx + (q.y * tz - q.z * ty);
  out[3 * i + 1] = py + q.w * ty + (q.z * tx - q.x * tz);
  out[3 * i + 2] = pz + q.w * tz + (q.x * ty - q.y * tx);
}

//@run {"grid": 2, "block": 64, "args": ["f32*384", "f32*384", "f32*384"]}
extern "C" __global__ void spherical_roundtrip(const float* xyz, float* sph, float* back) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = xyz[3 * i], y = xyz[3 * i + 1], z = xyz[3 * i + 2];
  float rho = hypotf(x, y);
  float r = sqrtf(rho * rho + z * z);
  float theta = acosf(fminf(fmaxf(z / fmaxf(r, 1e-20f), -1.f), 1.f));
  float phi = atan2f(y, x);
  sph[3 * i] = r; sph[3 * i + 1] = theta; sph[3 * i + 2] = phi;
  float st, ct, sp, cp;
  sincosf(theta, &st, &ct);
  sincosf(phi, &sp, &cp);
  back[3 * i] = r * st * cp;
  back[3 * i + 1] = r * st * sp;
  back[3 * i + 2] = r * ct;
}

// Even-odd crossing test of each point against one 12-vertex polygon kept in shared memory.
//@run {"grid": 2, "block": 64, "args": ["f32*24", "f32*256", "u8*128"]}
extern "C" __global__ void point_in_polygon(const float* poly, const float2* pts, unsigned char* inside) {
  __shared__ float2 v[12];
  if (threadIdx.x < 12) v[threadIdx.x] = make_float2(poly[2 * threadIdx.x] * 2.f - 1.f,
                                                     poly[2 * threadIdx.x + 1] * 2.f - 1.f);
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float2 p = pts[i];
  p.x = p.x * 2.f - 1.f; p.y = p.y * 2.f - 1.f;
  bool in = false;
  for (int a = 0, b = 11; a < 12; b = a++) {
    if ((v[a].y > p.y) != (v[b].y > p.y) &&
        p.x < (v[b].x - v[a].x) * (p.y - v[a].y) / (v[b].y - v[a].y) + v[a].x)
      in = !in;
  }
  inside[i] = in;
}

//@run {"grid": 2, "block": 64, "args": ["f32*128", "f32*128", "f32*128", "u32*128"]}
extern "C" __global__ void wrap_angles(const float* a, float* wrapped, float* rem, unsigned* flags) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = (a[i] - 0.5f) * 40.f;
  if (i % 16 == 5) x = -0.0f;
  if (i % 32 == 9) x = INFINITY;
  if (i % 32 == 10) x = __int_as_float(0x7fc00001);
  const float two_pi = 6.28318530718f;
  float w = fmodf(x, two_pi);
  w = w < 0.f ? w + two_pi : w;
  wrapped[i] = w;
  rem[i] = remainderf(x, two_pi) + copysignf(1e-3f, x);
  flags[i] = (signbit(x) ? 1u : 0u) | (isnan(w) ? 2u : 0u) | (isinf(x) ? 4u : 0u) |
             (isfinite(rem[i]) ? 8u : 0u) | ((unsigned)ilogbf(fabsf(x) + 1.f) << 8);
}
