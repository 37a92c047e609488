"""A GEMM mainloop on sm_90a's warpgroup MMA (`wgmma`), with its NumPy reference: one warpgroup
(128 threads) computes D = A @ B (64 x N, f16 inputs, f32 accumulators) over `ktiles` K steps.
Each step copies its tile (A: 64 x 16·chain, B: 16·chain x N, K-major, no swizzle) from
global into one shared buffer with plain loads and stores, synchronises (bar.sync, or an
mbarrier every thread arrives on and waits for: a wait loop inside the K loop), fences the
async proxy, and issues `chain` wgmma.mma_async into the same accumulators in one commit
group, then waits for it. The accumulators stay in one register group across the back edge
(ptxas 13.5 copies nothing; tests/test_wgmma_loops.py).

scale-d: "one" (accumulators zeroed before the loop), "param" (a kernel parameter's
`!= 0`, zeroed before the loop: the parameter is 1) or "first" (CUTLASS's form: `k != 0`,
the accumulators undefined before the loop; the first step's MMA ignores them).

Used by tests/test_wgmma_loops.py (the emulator) and tools/gpu_check's `wgmma` corpus (the
GPU). Layouts: the PTX ISA's canonical K-major layout without swizzle (8 x 16-byte core
matrices; LBO between the two core matrices along K, SBO between 8-row groups), and wgmma's
D fragment (warp w rows 16w.., lane l = 4g + t: rows g and g + 8, columns 8j + 2t, +1)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

THREADS = 128
K_STEP = 16                     # K of one f16 wgmma


@dataclass(frozen=True)
class Case:
    n: int = 32                 # N of the MMA (a multiple of 16)
    ktiles: int = 4             # K steps of the loop
    chain: int = 1              # wgmma per step (each K = 16), one commit group
    scale: str = "one"          # scale-d: "one", "param" or "first"
    wait: str = "bar"           # "bar" (bar.sync) or "mbarrier" (arrive + try_wait loop)
    seed: int = 0

    @property
    def name(self) -> str:
        return f"kloop_n{self.n}_k{self.ktiles}_c{self.chain}_{self.scale}_{self.wait}"

    @property
    def nd(self) -> int:
        return self.n // 2

    @property
    def sub_bytes(self) -> int:
        """One K-16 slice: A (64 x 16 f16, 2048 bytes), then B (N x 16 f16)."""
        return 2048 + 32 * self.n

    @property
    def tile_bytes(self) -> int:
        return self.chain * self.sub_bytes


def descriptors(case: Case) -> tuple[int, int]:
    """A's and B's descriptors for slice 0 at shared offset 0 (the kernel adds the buffer's
    address >> 4): start >> 4 | LBO >> 4 << 16 | SBO >> 4 << 32, no swizzle."""
    def desc(start, lbo, sbo):
        return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32
    return desc(0, 1024, 128), desc(2048, 16 * case.n, 128)


def ptx(case: Case) -> str:
    nd = case.nd
    d = ", ".join(f"%d{i}" for i in range(nd))
    words = case.tile_bytes // (4 * THREADS)
    loads = "\n".join(f"ld.global.u32 %c{j}, [%rd3+{4 * THREADS * j}];" for j in range(words))
    stores = "\n".join(f"st.shared.u32 [%r4+{4 * THREADS * j}], %c{j};" for j in range(words))
    init = "" if case.scale == "first" else \
        "\n".join(f"mov.f32 %d{i}, 0f00000000;" for i in range(nd))
    sd = {"one": "1", "param": "%p3", "first": "%p2"}[case.scale]
    mmas = []
    for c in range(case.chain):
        a, b = ("%rd5", "%rd6") if c == 0 else (f"%ra{c}", f"%rb{c}")
        if c:
            mmas.append(f"add.u64 %ra{c}, %rd5, {c * case.sub_bytes >> 4};\n"
                        f"add.u64 %rb{c}, %rd6, {c * case.sub_bytes >> 4};")
        mmas.append(f"wgmma.mma_async.sync.aligned.m64n{case.n}k16.f32.f16.f16 {{{d}}}, {a}, {b}, "
                    f"{sd if c == 0 else 1}, 1, 1, 0, 0;")
    mmas = "\n".join(mmas)
    if case.wait == "mbarrier":
        setup = ("mov.u32 %r11, mbar;\nsetp.eq.u32 %p4, %r0, 0;\n"
                 f"@%p4 mbarrier.init.shared.b64 [%r11], {THREADS};\nbar.sync 0;\nmov.u32 %r12, 0;")
        sync = ("mbarrier.arrive.shared.b64 %rd10, [%r11];\nWAIT:\n"
                "mbarrier.try_wait.parity.shared.b64 %p5, [%r11], %r12;\n@!%p5 bra WAIT;\n"
                "xor.b32 %r12, %r12, 1;")
    else:
        setup, sync = "", "bar.sync 0;"
    out = "\n".join(f"st.global.f32 [%rd8+{4 * i}], %d{i};" for i in range(nd))
    return f""".version 8.5
.target sm_90a
.address_size 64
.visible .entry kloop(.param .u64 pimg, .param .u64 pd, .param .u32 ktiles, .param .u64 da,
                      .param .u64 db, .param .u32 acc)
{{
.reg .b32 %r<16>, %c<{max(words, 1)}>;
.reg .f32 %d<{nd}>;
.reg .b64 %rd<12>, %ra<{case.chain}>, %rb<{case.chain}>;
.reg .pred %p<6>;
.shared .align 1024 .b8 smem[{case.tile_bytes}];
.shared .align 8 .b64 mbar;
mov.u32 %r0, %tid.x;
ld.param.u64 %rd0, [pimg];
cvta.to.global.u64 %rd0, %rd0;
ld.param.u32 %r9, [ktiles];
ld.param.u32 %r10, [acc];
setp.ne.u32 %p3, %r10, 0;
mov.u32 %r1, smem;
shl.b32 %r2, %r0, 2;
add.u32 %r4, %r1, %r2;
cvt.u64.u32 %rd1, %r2;
add.u64 %rd2, %rd0, %rd1;
shr.u32 %r5, %r1, 4;
cvt.u64.u32 %rd4, %r5;
ld.param.u64 %rd5, [da];
add.u64 %rd5, %rd5, %rd4;
ld.param.u64 %rd6, [db];
add.u64 %rd6, %rd6, %rd4;
{setup}
{init}
mov.u32 %r7, 0;
KLOOP:
mul.wide.u32 %rd7, %r7, {case.tile_bytes};
add.u64 %rd3, %rd2, %rd7;
{loads}
{stores}
{sync}
fence.proxy.async.shared::cta;
setp.ne.u32 %p2, %r7, 0;
wgmma.fence.sync.aligned;
{mmas}
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
bar.sync 0;
add.u32 %r7, %r7, 1;
setp.lt.u32 %p1, %r7, %r9;
@%p1 bra KLOOP;
ld.param.u64 %rd8, [pd];
cvta.to.global.u64 %rd8, %rd8;
mul.wide.u32 %rd9, %r0, {4 * nd};
add.u64 %rd8, %rd8, %rd9;
{out}
ret;
}}
"""


def matrices(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """A (64 x K) and B (K x N): small integers, every product and sum exact in f32."""
    rng = np.random.default_rng(20261128 + case.seed)
    k = case.ktiles * case.chain * K_STEP
    return (rng.integers(-3, 4, (64, k)).astype(np.float64),
            rng.integers(-3, 4, (k, case.n)).astype(np.float64))


def _place(img: np.ndarray, base: int, mat: np.ndarray, lbo: int) -> None:
    """An MN x 16 f16 operand at `base`, K-major without swizzle (SBO 128)."""
    mn, k = np.meshgrid(np.arange(mat.shape[0]), np.arange(mat.shape[1]), indexing="ij")
    off = base + (mn // 8) * 128 + (mn % 8) * 16 + (k // 8) * lbo + (k % 8) * 2
    bits = mat.astype(np.float16).view(np.uint16)
    img[off] = (bits & 0xFF).astype(np.uint8)
    img[off + 1] = (bits >> 8).astype(np.uint8)


def image(case: Case) -> np.ndarray:
    """The global image the kernel copies tile by tile into shared memory (bytes)."""
    a, b = matrices(case)
    img = np.zeros(case.ktiles * case.tile_bytes, dtype=np.uint8)
    for s in range(case.ktiles * case.chain):
        base = s * case.sub_bytes
        ks = slice(K_STEP * s, K_STEP * (s + 1))
        _place(img, base, a[:, ks], 1024)
        _place(img, base + 2048, b[ks, :].T, 16 * case.n)
    return img


def fragment(d: np.ndarray) -> np.ndarray:
    """64 x N f32 D as the 128 threads' registers (u32 words, thread-major)."""
    n = d.shape[1]
    out = np.zeros((THREADS, n // 2), dtype=np.uint32)
    for tid in range(THREADS):
        w, lane = divmod(tid, 32)
        g, t = divmod(lane, 4)
        for j in range(n // 8):
            for h in range(2):
                for e in range(2):
                    out[tid, 4 * j + 2 * h + e] = np.float32(d[16 * w + g + 8 * h, 8 * j + 2 * t + e]).view(np.uint32)
    return out


def expected(case: Case) -> np.ndarray:
    """NumPy's D in fragment order."""
    a, b = matrices(case)
    return fragment(a @ b)


def launch_args(case: Case) -> dict:
    """Buffers and parameters: img, d (output), ktiles, da, db, acc."""
    da, db = descriptors(case)
    return {"img": image(case), "d": np.zeros((THREADS, case.nd), dtype=np.uint32),
            "ktiles": case.ktiles, "da": da, "db": db, "acc": 1}


CASES = (Case(), Case(n=64, chain=2, scale="param", seed=1), Case(n=16, ktiles=3, scale="first",
                                                               wait="mbarrier", seed=2))
