// Image processing: 2-D convolution, grayscale from uchar4, Sobel, box blur with clamping.
//@run {"grid": [2, 2, 1], "block": [16, 16, 1], "args": ["f32*1024", "f32*9", "f32*1024", "s32=32", "s32=32"]}
extern "C" __global__ void conv2d_3x3(const float* img, const float* w, float* out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  float acc = 0.0f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      int xx = min(max(x + dx, 0), W - 1), yy = min(max(y + dy, 0), H - 1);
      acc += img[yy * W + xx] * w[(dy + 1) * 3 + dx + 1];
    }
  out[y * W + x] = acc;
}

//@run {"grid": 2, "block": 64, "args": ["u8*512", "u8*128"]}
extern "C" __global__ void rgba_to_gray(const uchar4* rgba, unsigned char* gray) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  uchar4 p = rgba[i];
  float g = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
  gray[i] = (unsigned char)__float2uint_rn(fminf(g, 255.0f));
}

//@run {"grid": [2, 2, 1], "block": [16, 16, 1], "args": ["u8*1024", "u8*1024", "s32=32", "s32=32"]}
extern "C" __global__ void sobel(const unsigned char* in, unsigned char* out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= W - 1 || y >= H - 1) { if (x < W && y < H) out[y * W + x] = 0; return; }
  int gx = -in[(y-1)*W+x-1] - 2*in[y*W+x-1] - in[(y+1)*W+x-1] + in[(y-1)*W+x+1] + 2*in[y*W+x+1] + in[(y+1)*W+x+1];
  int gy = -in[(y-1)*W+x-1] - 2*in[(y-1)*W+x] - in[(y-1)*W+x+1] + in[(y+1)*W+x-1] + 2*in[(y+1)*W+x] + in[(y+1)*W+x+1];
  out[y * W + x] = (unsigned char)min(255, abs(gx) + abs(gy));
}
