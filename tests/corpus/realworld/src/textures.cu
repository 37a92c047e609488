// Texture and surface objects.
extern "C" __global__ void tex1d_fetch(cudaTextureObject_t tex, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(tex, i) * 2.0f;
}

extern "C" __global__ void tex2d_bilinear(cudaTextureObject_t tex, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.25f);
}

extern "C" __global__ void surf2d_invert(cudaSurfaceObject_t surf, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) {
    uchar4 p = surf2Dread<uchar4>(surf, x * 4, y);
    surf2Dwrite(make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, p.w), surf, x * 4, y);
  }
}
