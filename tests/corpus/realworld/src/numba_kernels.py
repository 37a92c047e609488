"""Numba CUDA kernels of the kinds Python users write (compiled by tools/harvest_realworld.py
with numba.cuda.compile_ptx; no GPU needed). KERNELS: name -> (function, signature, launch
annotation or None); an array argument `f32*N` is passed as Numba's array structure."""
import math

from numba import cuda, float32, int32


def compile_ptx(fn, signature, cc):
    return cuda.compile_ptx(fn, signature, cc=cc)


def vec_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def grid_stride_scale(x, out, factor):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):
        out[i] = x[i] * factor


def clamp_where(x, out, lo, hi):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = lo if v < lo else (hi if v > hi else v)


def math_funcs(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.sin(v) + math.exp(v * 0.5) + math.log(abs(v) + 1.0) + math.sqrt(abs(v)) + math.tanh(v)


def math_funcs_f64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.cos(v) * math.atan2(v, 1.5) + math.erf(v) + math.pow(abs(v), 1.5)


def int_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        out[i] = (x // (y | 1)) + (x % (y | 1)) + (x << 3) - (y >> 2) + (x & y) ^ (x | y)


def shared_reduce(x, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 128 + t
    s[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = 64
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def atomic_histogram(keys, hist):
    i = cuda.grid(1)
    if i < keys.size:
        cuda.atomic.add(hist, keys[i] % hist.size, 1)


def atomic_minmax(x, mm):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.max(mm, 0, x[i])
        cuda.atomic.min(mm, 1, x[i])


def matmul_naive(a, b, c):
    row, col = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


def matmul_tiled(a, b, c):
    sa = cuda.shared.array((16, 16), float32)
    sb = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.grid(2)
    acc = float32(0.0)
    for t in range(a.shape[1] // 16):
        sa[ty, tx] = a[row, t * 16 + tx]
        sb[ty, tx] = b[t * 16 + ty, col]
        cuda.syncthreads()
        for k in range(16):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    c[row, col] = acc


def warp_shuffle_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


def ballot_count(x, out):
    i = cuda.grid(1)
    m = cuda.ballot_sync(0xFFFFFFFF, x[i] > 0)
    out[i] = cuda.popc(m) + cuda.clz(m) * 100


def fp16_axpy(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.fp16.hfma(x[i], y[i], x[i])


def local_array_sort(x, out):
    tmp = cuda.local.array(8, int32)
    t = cuda.grid(1)
    for j in range(8):
        tmp[j] = x[t * 8 + j]
    for j in range(8):
        for k in range(7 - j):
            if tmp[k] > tmp[k + 1]:
                tmp[k], tmp[k + 1] = tmp[k + 1], tmp[k]
    for j in range(8):
        out[t * 8 + j] = tmp[j]


def stencil_1d(x, out):
    i = cuda.grid(1)
    n = x.size
    if 0 < i < n - 1:
        out[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1]


def normalize(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = v / math.sqrt(v * v + 1.0) + out[i] * 0.5


def int64_prefix_blocks(x, out):
    s = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    if t == 0:
        acc = 0
        for j in range(64):
            acc += s[j]
            s[j] = acc
    cuda.syncthreads()
    out[cuda.grid(1)] = s[t]


def cbrt_and_fma(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.cbrt(x[i]) + cuda.fma(x[i], 2.0, 1.0)


def _run(grid, block, *args):
    return {"grid": grid, "block": block, "args": list(args), "numba": True}


KERNELS = {
    "vec_add": (vec_add, "float32[:], float32[:], float32[:]", _run(2, 64, "f32*128", "f32*128", "f32*128")),
    "saxpy": (saxpy, "float32, float32[:], float32[:]", _run(2, 64, "f32=1.5", "f32*100", "f32*100")),
    "grid_stride_scale": (grid_stride_scale, "float64[:], float64[:], float64",
                          _run(2, 32, "f64*300", "f64*300", "f64=0.75")),
    "clamp_where": (clamp_where, "float32[:], float32[:], float32, float32",
                    _run(1, 128, "f32*128", "f32*128", "f32=-1.0", "f32=2.0")),
    "math_funcs": (math_funcs, "float32[:], float32[:]", _run(1, 64, "f32*64", "f32*64")),
    "math_funcs_f64": (math_funcs_f64, "float64[:], float64[:]", _run(1, 64, "f64*64", "f64*64")),
    "int_ops": (int_ops, "int32[:], int32[:], int32[:]", _run(1, 64, "s32*64", "s32*64", "s32*64")),
    "shared_reduce": (shared_reduce, "float32[:], float32[:]", _run(2, 128, "f32*256", "f32*2")),
    "atomic_histogram": (atomic_histogram, "int32[:], int32[:]", _run(2, 64, "s32*128%1000", "s32*16")),
    "atomic_minmax": (atomic_minmax, "int32[:], int32[:]", _run(2, 64, "s32*128", "s32*2")),
    "matmul_naive": (matmul_naive, "float32[:, :], float32[:, :], float32[:, :]", None),
    "matmul_tiled": (matmul_tiled, "float32[:, :], float32[:, :], float32[:, :]", None),
    "warp_shuffle_sum": (warp_shuffle_sum, "float32[:], float32[:]", _run(1, 64, "f32*64", "f32*2")),
    "ballot_count": (ballot_count, "int32[:], int32[:]", _run(1, 64, "s32*64", "s32*64")),
    "fp16_axpy": (fp16_axpy, "float16[:], float16[:], float16[:]", _run(1, 64, "f16*64", "f16*64", "f16*64")),
    "local_array_sort": (local_array_sort, "int32[:], int32[:]", _run(1, 16, "s32*128", "s32*128")),
    "stencil_1d": (stencil_1d, "float32[:], float32[:]", _run(1, 128, "f32*128", "f32*128")),
    "normalize": (normalize, "float32[:], float32[:]", _run(1, 64, "f32*64", "f32*64")),
    "int64_prefix_blocks": (int64_prefix_blocks, "int32[:], int32[:]", _run(2, 64, "s32*128%1000", "s32*128")),
    "cbrt_and_fma": (cbrt_and_fma, "float32[:], float32[:]", _run(1, 64, "f32*64", "f32*64")),
}
