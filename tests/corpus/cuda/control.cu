// Control flow: switch statements, an explicit jump table (brx.idx), loops whose trip
// count is only known at run time, local arrays indexed dynamically, 3-D grids and blocks.
// Pure C apart from inline PTX, so the -G build is reproducible.

//@launch {"grid": [2,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "s32", "count": 256, "init": "random", "seed": 30, "low": -100000, "high": 100000}, "out": {"dtype": "s32", "count": 256}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_switch_c"}
__global__ void switch_c(const int *v, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = v[i];
    int r;
    switch ((unsigned)x % 11u) {
    case 0: r = x * 5; break;
    case 1: r = x + 17; break;
    case 2: r = x ^ 0x55; break;
    case 3: r = x - 3; break;
    case 4: r = x << 2; break;
    case 5: r = x >> 1; break;
    case 6: r = ~x; break;
    case 7: r = x & 0xff0; break;
    case 8: r = x | 0x10001; break;
    case 9: r = -x; break;
    default: r = 42; break;
    }
    out[i] = r;
}

// nvcc 13.5 lowers C switches to compare trees, so the jump table is written in PTX:
// a .branchtargets list and brx.idx, with labels scoped to the asm block.
//@launch {"grid": [1,1,1], "block": [256,1,1], "buffers": {"sel": {"dtype": "u32", "count": 256, "init": "random", "seed": 31, "low": 0, "high": 6}, "v": {"dtype": "u32", "count": 256, "init": "random_bits", "seed": 32}, "out": {"dtype": "u32", "count": 256}}, "params": [{"buffer": "sel"}, {"buffer": "v"}, {"buffer": "out"}], "reference": "ref_switch_brx"}
__global__ void switch_brx(const unsigned *sel, const unsigned *v, unsigned *out)
{
    int i = threadIdx.x;
    unsigned s = sel[i], x = v[i], r;
    asm volatile(
        "{\n\t"
        ".reg .pred p;\n\t"
        "setp.gt.u32 p, %1, 4;\n\t"
        "@p bra Ldefault;\n\t"
        "Ltable: .branchtargets L0, L1, L2, L3, L4;\n\t"
        "brx.idx %1, Ltable;\n"
        "L0:\n\tadd.u32 %0, %2, 1000;\n\tbra.uni Ldone;\n"
        "L1:\n\tmul.lo.u32 %0, %2, 3;\n\tbra.uni Ldone;\n"
        "L2:\n\tshr.u32 %0, %2, 3;\n\tbra.uni Ldone;\n"
        "L3:\n\txor.b32 %0, %2, 0x5a5a5a5a;\n\tbra.uni Ldone;\n"
        "L4:\n\tnot.b32 %0, %2;\n\tbra.uni Ldone;\n"
        "Ldefault:\n\tmov.u32 %0, 7;\n"
        "Ldone:\n\t"
        "}"
        : "=r"(r) : "r"(s), "r"(x));
    out[i] = r;
}

//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"start": {"dtype": "u32", "count": 128, "init": "random", "seed": 33, "low": 1, "high": 2000}, "steps": {"dtype": "u32", "count": 128}}, "params": [{"buffer": "start"}, {"buffer": "steps"}], "reference": "ref_loop_collatz"}
__global__ void loop_collatz(const unsigned *start, unsigned *steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = start[i], n = 0;
    while (x != 1) {
        x = (x & 1) ? 3 * x + 1 : x >> 1;
        n++;
    }
    steps[i] = n;
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"len": {"dtype": "s32", "count": 128, "init": "random", "seed": 34, "low": -2, "high": 40}, "data": {"dtype": "s32", "count": 64, "init": "random", "seed": 35, "low": -1000, "high": 1000}, "out": {"dtype": "s32", "count": 128}}, "params": [{"buffer": "len"}, {"buffer": "data"}, {"buffer": "out"}, {"type": "s32", "value": 64, "name": "n"}], "reference": "ref_loop_break_continue"}
__global__ void loop_break_continue(const int *len, const int *data, int *out, int n)
{
    int i = threadIdx.x;
    int acc = 0;
    for (int j = 0; j < len[i]; j++) {
        int d = data[(i + j) % n];
        if (d < -900) break;
        if ((d & 3) == 0) continue;
        acc += d * (j + 1);
    }
    out[i] = acc;
}

// A per-thread array indexed with run-time values stays in local memory.
//@launch {"grid": [2,1,1], "block": [64,1,1], "buffers": {"v": {"dtype": "u32", "count": 1024, "init": "random_bits", "seed": 36}, "out": {"dtype": "u32", "count": 1024}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_local_sort"}
__global__ void local_sort(const unsigned *v, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a[8];
    for (int k = 0; k < 8; k++) a[k] = v[8 * i + k];
    for (int k = 1; k < 8; k++) {          // insertion sort
        unsigned key = a[k];
        int j = k - 1;
        while (j >= 0 && a[j] > key) { a[j + 1] = a[j]; j--; }
        a[j + 1] = key;
    }
    for (int k = 0; k < 8; k++) out[8 * i + k] = a[k];
}

//@launch {"grid": [1,1,1], "block": [128,1,1], "buffers": {"v": {"dtype": "u8", "count": 2048, "init": "random", "seed": 37, "low": 0, "high": 256}, "out": {"dtype": "u32", "count": 2048}}, "params": [{"buffer": "v"}, {"buffer": "out"}], "reference": "ref_local_histogram"}
__global__ void local_histogram(const unsigned char *v, unsigned *out)
{
    int i = threadIdx.x;
    unsigned h[16];
    for (int k = 0; k < 16; k++) h[k] = 0;
    for (int k = 0; k < 16; k++) h[v[16 * i + k] >> 4]++;
    for (int k = 0; k < 16; k++) out[16 * i + k] = h[(k + i) & 15];
}

//@launch {"grid": [2,3,2], "block": [4,2,3], "buffers": {"out": {"dtype": "u32", "count": 1152}}, "params": [{"buffer": "out"}], "reference": "ref_grid3d"}
__global__ void grid3d(unsigned *out)
{
    unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned nthreads = blockDim.x * blockDim.y * blockDim.z;
    unsigned g = block * nthreads + thread;
    out[4 * g] = threadIdx.x | threadIdx.y << 8 | threadIdx.z << 16;
    out[4 * g + 1] = blockIdx.x | blockIdx.y << 8 | blockIdx.z << 16;
    out[4 * g + 2] = blockDim.x | blockDim.y << 8 | blockDim.z << 16;
    out[4 * g + 3] = gridDim.x | gridDim.y << 8 | gridDim.z << 16;
}

//@launch {"grid": [3,1,1], "block": [96,1,1], "buffers": {"x": {"dtype": "s32", "count": 300, "init": "random", "seed": 38, "low": -1000, "high": 1000}, "out": {"dtype": "s32", "count": 300}}, "params": [{"buffer": "x"}, {"buffer": "out"}, {"type": "s32", "value": 250, "name": "n"}], "reference": "ref_guarded_exit"}
__global__ void guarded_exit(const int *x, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = x[i];
    if (v < 0) { out[i] = -v * 2; return; }
    out[i] = v + 1;
}
