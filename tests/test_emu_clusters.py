"""Thread-block cluster launches in the emulator (sm_90+): `run(..., cluster=(x, y, z))`, or
the shape a kernel declares (`.reqnctapercluster`, EIATTR_CTA_PER_CLUSTER) by default. The
CTAs of a cluster run together on one machine, SR_CgaCtaId reads the CTA's rank, the
driver's cluster words hold the shape, a shared::cluster address with another rank (from
`mapa`) reaches that CTA's shared memory (loads, stores, atomics), and UCGABAR_ARV/WAIT are
a split barrier over every thread of the cluster.

Each kernel is compiled by ptxas and by ptx2sass, both cubins run in the emulator and are
compared with a NumPy reference (ours with the hazard checker: no hazards). The CUDA
kernels (cooperative_groups: `this_cluster`, `map_shared_rank`, `sync`) need CCCL's headers
(`pip install .[harvest]`); without them those tests skip, the PTX ones do not."""
from __future__ import annotations

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run

ARCHS = ["sm_90", "sm_100"]
ALL_ARCHS = ARCHS + ["sm_120"]


def _version(arch: str) -> str:
    return "8.6" if arch == "sm_90" else "8.7"


def _both(ptx: str, arch: str):
    """(name, cubin, check hazards) of ptxas's and our compilation."""
    return (("ptxas", oracle.ptxas(ptx, arch).output, False),
            ("ours", ptx2sass.compile(ptx, arch, "k.ptx"), True))


def _run_both(ptx, arch, entry, grid, block, make_params, **kw):
    outs = {}
    for name, cubin, check in _both(ptx, arch):
        params = make_params()
        result = run(cubin, entry, grid, block, params, hazard_check=check, **kw)
        assert not (check and result.hazards), [str(h) for h in result.hazards[:3]]
        outs[name] = params
    return outs


# --------------------------------------------------------------------------- PTX kernels

def _exchange_ptx(arch: str, split: bool = True, barrier: bool = True) -> str:
    """Each CTA fills its array, then (after barrier.cluster) every thread reads word tid of
    the next rank's array through `mapa` and adds to it with `atom.shared::cluster`, and
    (after a second barrier) stores what its own array holds, %cluster_ctarank, getctarank
    of the mapped address and %cluster_nctarank."""
    sync = ("barrier.cluster.arrive; barrier.cluster.wait;" if split else "barrier.cluster.arrive.aligned; "
            "barrier.cluster.wait.aligned;") if barrier else ""
    return f""".version {_version(arch)}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 info)
{{
 .reg .b32 %r<24>; .reg .b64 %rd<8>; .reg .pred %p<2>;
 .shared .align 4 .b32 buf[64];
 ld.param.u64 %rd1, [out]; ld.param.u64 %rd5, [info];
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %ctaid.x; mov.u32 %r20, %ctaid.y;
 mov.u32 %r3, %cluster_ctarank;
 mov.u32 %r4, %cluster_nctarank;
 mov.u32 %r21, %nctaid.x; mad.lo.u32 %r2, %r20, %r21, %r2;
 mov.u32 %r5, buf; shl.b32 %r6, %r1, 2; add.u32 %r7, %r5, %r6;
 mad.lo.u32 %r8, %r2, 1000, %r1;
 st.shared.u32 [%r7], %r8;
 {sync}
 add.u32 %r9, %r3, 1; rem.u32 %r9, %r9, %r4;
 mapa.shared::cluster.u32 %r10, %r7, %r9;
 ld.shared::cluster.u32 %r11, [%r10];
 atom.shared::cluster.add.u32 %r14, [%r10], 100000;
 getctarank.shared::cluster.u32 %r15, %r10;
 {sync}
 ld.shared.u32 %r16, [%r7];
 mov.u32 %r17, %ntid.x; mad.lo.u32 %r18, %r2, %r17, %r1;
 mul.wide.u32 %rd2, %r18, 4; add.u64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r11;
 mul.wide.u32 %rd2, %r18, 16; add.u64 %rd4, %rd5, %rd2;
 st.global.v4.u32 [%rd4], {{%r16, %r3, %r15, %r4}};
 ret;
}}
"""


def _exchange_reference(grid, cluster, block):
    """(out, info) per CTA (linear id y * gx + x) and thread, as the kernel defines them."""
    gx, gy = grid
    cx, cy = cluster
    n = cx * cy
    out = np.zeros((gx * gy, block), np.uint32)
    info = np.zeros((gx * gy, block, 4), np.uint32)

    def linear(x, y):
        return y * gx + x
    for y in range(gy):
        for x in range(gx):
            rank = x % cx + cx * (y % cy)
            bx, by = x - x % cx, y - y % cy
            cta_of = {r: linear(bx + r % cx, by + r // cx) for r in range(n)}
            nxt = cta_of[(rank + 1) % n]
            t = np.arange(block)
            c = linear(x, y)
            out[c] = nxt * 1000 + t
            info[c, :, 0] = c * 1000 + t + 100000   # its predecessor in rank order adds once
            info[c, :, 1] = rank
            info[c, :, 2] = (rank + 1) % n
            info[c, :, 3] = n
    return out.reshape(-1), info.reshape(-1)


@pytest.mark.parametrize("arch", ALL_ARCHS)
@pytest.mark.parametrize("grid,cluster", [((4, 1), (2, 1)), ((8, 1), (4, 1)), ((4, 4), (2, 2))])
def test_ptx_exchange_through_mapa(arch, grid, cluster):
    block = 64
    ptx = _exchange_ptx(arch)
    ncta = grid[0] * grid[1]

    def params():
        return [np.zeros(ncta * block, np.uint32), np.zeros(ncta * block * 4, np.uint32)]
    outs = _run_both(ptx, arch, "k", (*grid, 1), (block, 1, 1), params, cluster=(*cluster, 1))
    want_out, want_info = _exchange_reference(grid, cluster, block)
    for name, (out, info) in outs.items():
        assert (out == want_out).all(), name
        assert (info == want_info).all(), name


@pytest.mark.parametrize("reconverge", ["optimistic", "explicit"])
def test_aligned_barrier_form(reconverge):
    block = 64
    ptx = _exchange_ptx("sm_90", split=False)

    def params():
        return [np.zeros(4 * block, np.uint32), np.zeros(4 * block * 4, np.uint32)]
    outs = _run_both(ptx, "sm_90", "k", (4, 1, 1), (block, 1, 1), params, cluster=(2, 1, 1),
                     reconverge=reconverge)
    want_out, want_info = _exchange_reference((4, 1), (2, 1), block)
    for name, (out, info) in outs.items():
        assert (out == want_out).all() and (info == want_info).all(), name


def test_without_the_cluster_barrier_the_result_differs():
    """The negative: with no barrier.cluster, a CTA reads its partner's array before that
    CTA has written it (the emulator runs lower ranks first), so the exchange is wrong."""
    block = 64
    ptx = _exchange_ptx("sm_90", barrier=False)
    want_out, _ = _exchange_reference((4, 1), (2, 1), block)
    for name, cubin, check in _both(ptx, "sm_90"):
        out, info = np.zeros(4 * block, np.uint32), np.zeros(4 * block * 4, np.uint32)
        run(cubin, "k", (4, 1, 1), (block, 1, 1), [out, info], hazard_check=False, cluster=(2, 1, 1))
        assert not (out == want_out).all(), name


def test_rank_outside_the_cluster_faults():
    ptx = _exchange_ptx("sm_90")
    cubin = oracle.ptxas(ptx, "sm_90").output
    out, info = np.zeros(4 * 64, np.uint32), np.zeros(4 * 64 * 4, np.uint32)
    # a launch without clusters: %cluster_nctarank 1, so every mapa names rank 0: fine
    run(cubin, "k", (4, 1, 1), (64, 1, 1), [out, info], hazard_check=False)
    with pytest.raises(EmuFault, match="not a whole number"):
        run(cubin, "k", (3, 1, 1), (64, 1, 1), [out, info], hazard_check=False, cluster=(2, 1, 1))


def _remote_mbarrier_ptx(arch: str) -> str:
    """Rank 0's threads arrive on rank 1's mbarrier (`mbarrier.arrive.shared::cluster` at a
    `mapa` address), nobody on rank 0's: after barrier.cluster, rank 1's phase 0 is
    complete and rank 0's is not."""
    return f""".version {_version(arch)}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
 .reg .b32 %r<24>; .reg .b64 %rd<8>; .reg .pred %p<3>;
 .shared .align 8 .b64 bar;
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x;
 mov.u32 %r3, %cluster_ctarank;
 mov.u32 %r5, bar;
 setp.eq.u32 %p1, %r1, 0;
 @%p1 mbarrier.init.shared::cta.b64 [%r5], 64;
 barrier.cluster.arrive; barrier.cluster.wait;
 setp.eq.u32 %p2, %r3, 0;
 mapa.shared::cluster.u32 %r10, %r5, 1;
 @%p2 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r10];
 barrier.cluster.arrive; barrier.cluster.wait;
 mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r5], 0;
 selp.u32 %r11, 1, 0, %p1;
 mov.u32 %r2, %ctaid.x; mov.u32 %r17, %ntid.x; mad.lo.u32 %r18, %r2, %r17, %r1;
 mul.wide.u32 %rd2, %r18, 4; add.u64 %rd3, %rd1, %rd2;
 st.global.u32 [%rd3], %r11;
 ret;
}}
"""


@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_remote_mbarrier_arrive(arch):
    outs = _run_both(_remote_mbarrier_ptx(arch), arch, "k", (4, 1, 1), (64, 1, 1),
                     lambda: [np.zeros(4 * 64, np.uint32)], cluster=(2, 1, 1))
    want = np.repeat(np.array([0, 1, 0, 1], np.uint32), 64)
    for name, (out,) in outs.items():
        assert (out == want).all(), name


def _generic_atomic_ptx(arch: str, ty: str) -> str:
    """Every thread adds its index with a generic `atom.add` into word tid % 32 of the
    partner CTA's array, at a generic address `mapa.u64` made: ptxas tests it with QSPC.E.S
    and QSPC.E.D (another CTA's shared memory) and loops there with a CAS."""
    w = 8 if ty == "f64" else 4
    return f""".version {_version(arch)}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
 .reg .b32 %r<24>; .reg .b64 %rd<12>; .reg .{ty} %f<4>; .reg .pred %p<2>;
 .shared .align 8 .b{8*w} acc[32];
 ld.param.u64 %rd1, [out];
 mov.u32 %r1, %tid.x; mov.u32 %r3, %cluster_ctarank;
 and.b32 %r4, %r1, 31;
 mov.u32 %r5, acc; mad.lo.u32 %r6, %r4, {w}, %r5;
 setp.lt.u32 %p1, %r1, 32;
 mov.{ty} %f1, 0.0;
 @%p1 st.shared.{ty} [%r6], %f1;
 barrier.cluster.arrive; barrier.cluster.wait;
 cvta.shared.u64 %rd2, acc; cvt.u64.u32 %rd3, %r4; mul.lo.u64 %rd3, %rd3, {w}; add.u64 %rd2, %rd2, %rd3;
 xor.b32 %r7, %r3, 1;
 mapa.u64 %rd4, %rd2, %r7;
 cvt.rn.{ty}.u32 %f2, %r1;
 atom.add.{ty} %f3, [%rd4], %f2;
 barrier.cluster.arrive; barrier.cluster.wait;
 @%p1 ld.shared.{ty} %f1, [%r6];
 mov.u32 %r2, %ctaid.x; shl.b32 %r8, %r2, 5; add.u32 %r8, %r8, %r4;
 mul.wide.u32 %rd5, %r8, {w}; add.u64 %rd6, %rd1, %rd5;
 @%p1 st.global.{ty} [%rd6], %f1;
 ret;
}}
"""


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_generic_float_atomic_on_another_ctas_shared_memory(arch, ty):
    ptx = _generic_atomic_ptx(arch, ty)
    assert "QSPC.E.D" in oracle.nvdisasm(oracle.ptxas(ptx, arch).output)
    dt = np.float64 if ty == "f64" else np.float32
    outs = _run_both(ptx, arch, "k", (4, 1, 1), (128, 1, 1), lambda: [np.zeros(4 * 32, dt)], cluster=(2, 1, 1))
    t = np.arange(128)
    want = np.array([t[t % 32 == i].sum() for i in range(32)], dt)
    for name, (out,) in outs.items():
        assert (out.reshape(4, 32) == want).all(), name


CLUSTER_REGS = ["%clusterid.x", "%clusterid.y", "%clusterid.z", "%nclusterid.x", "%nclusterid.y",
                "%nclusterid.z", "%cluster_ctaid.x", "%cluster_ctaid.y", "%cluster_ctaid.z",
                "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z", "%cluster_ctarank",
                "%cluster_nctarank", "%is_explicit_cluster"]


def _regs_ptx(arch: str, directive: str = "") -> str:
    body = "\n".join(f"mov.u32 %r1, {r};\nst.global.u32 [%rd2+{4 * i}], %r1;" if r != "%is_explicit_cluster" else
                     f"mov.pred %p1, {r}; selp.u32 %r1, 1, 0, %p1;\nst.global.u32 [%rd2+{4 * i}], %r1;"
                     for i, r in enumerate(CLUSTER_REGS))
    return f""".version {_version(arch)}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out) {directive}
{{
.reg .b64 %rd<8>; .reg .b32 %r<16>; .reg .pred %p<2>;
ld.param.u64 %rd1, [out];
mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ctaid.y; mov.u32 %r4, %ctaid.z;
mov.u32 %r6, %nctaid.x; mov.u32 %r7, %nctaid.y;
mad.lo.u32 %r5, %r4, %r7, %r3;
mad.lo.u32 %r5, %r5, %r6, %r2;
mul.wide.u32 %rd3, %r5, {4 * len(CLUSTER_REGS)};
add.s64 %rd2, %rd1, %rd3;
{body}
ret;
}}"""


def _regs_reference(grid, cluster):
    rows = []
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                c = (x, y, z)
                cid = [c[i] // cluster[i] for i in range(3)]
                ncid = [grid[i] // cluster[i] for i in range(3)]
                cc = [c[i] % cluster[i] for i in range(3)]
                rank = cc[0] + cluster[0] * (cc[1] + cluster[1] * cc[2])
                rows.append([*cid, *ncid, *cc, *cluster, rank, cluster[0] * cluster[1] * cluster[2], 1])
    return np.array(rows, np.uint32)


@pytest.mark.parametrize("arch", ALL_ARCHS)
@pytest.mark.parametrize("grid,cluster", [((6, 3, 2), (3, 1, 1)), ((4, 6, 2), (2, 3, 2)), ((2, 2, 4), (1, 2, 4))])
def test_cluster_registers_in_a_cluster_launch(arch, grid, cluster):
    ptx = _regs_ptx(arch)
    ncta = grid[0] * grid[1] * grid[2]

    def params():
        return [np.zeros(ncta * len(CLUSTER_REGS), np.uint32)]
    outs = _run_both(ptx, arch, "k", grid, (32, 1, 1), params, cluster=cluster)
    want = _regs_reference(grid, cluster)
    for name, (out,) in outs.items():
        assert (out.reshape(ncta, -1) == want).all(), name


def test_declared_cluster_shape_is_the_default_launch():
    """`.reqnctapercluster 2, 2, 1` (EIATTR_CTA_PER_CLUSTER): launched as 2x2x1 clusters
    without saying so; a different shape is refused."""
    ptx = _regs_ptx("sm_90", ".reqnctapercluster 2, 2, 1")
    grid = (4, 2, 1)

    def params():
        return [np.zeros(8 * len(CLUSTER_REGS), np.uint32)]
    outs = _run_both(ptx, "sm_90", "k", grid, (32, 1, 1), params)
    want = _regs_reference(grid, (2, 2, 1))
    for name, (out,) in outs.items():
        assert (out.reshape(8, -1) == want).all(), name
    cubin = oracle.ptxas(ptx, "sm_90").output
    with pytest.raises(EmuFault, match="differs"):
        run(cubin, "k", grid, (32, 1, 1), params(), cluster=(4, 1, 1))


# --------------------------------------------------------------------------- CUDA kernels

CUDA = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void __cluster_dims__(2, 1, 1) swap2(const int* in, int* out) {
  __shared__ int buf[64];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  buf[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
  cluster.sync();
  int* other = cluster.map_shared_rank(buf, rank ^ 1);
  int v = other[63 - threadIdx.x];
  cluster.sync();
  out[blockIdx.x * 64 + threadIdx.x] = v * 10 + (int)rank;
}

// every CTA sums word t of each CTA of its 4-CTA cluster, and counts itself into rank 0's
// counter with an atomic on distributed shared memory
extern "C" __global__ void __cluster_dims__(4, 1, 1) sum4(const int* in, int* out) {
  __shared__ int buf[128];
  __shared__ unsigned count;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) count = 0;
  buf[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
  cluster.sync();
  int s = 0;
  for (unsigned r = 0; r < cluster.num_blocks(); ++r)
    s += cluster.map_shared_rank(buf, r)[threadIdx.x] * (int)(r + 1);
  if (threadIdx.x % 32 == 0) atomicAdd(cluster.map_shared_rank(&count, 0), 1u);
  cluster.sync();
  out[blockIdx.x * 128 + threadIdx.x] = s + (int)(cluster.block_rank() == 0 ? count : 0);
}

// a 2x2 cluster: each CTA reads the transposed CTA's word in its cluster
extern "C" __global__ void __cluster_dims__(2, 2, 1) transpose22(const float* in, float* out) {
  __shared__ float buf[32];
  cg::cluster_group cluster = cg::this_cluster();
  dim3 b = cluster.block_index();
  unsigned cta = blockIdx.y * gridDim.x + blockIdx.x;
  buf[threadIdx.x] = in[cta * 32 + threadIdx.x];
  cluster.sync();
  unsigned partner = b.y + b.x * cluster.dim_blocks().x;
  float v = cluster.map_shared_rank(buf, partner)[threadIdx.x];
  cluster.sync();
  out[cta * 32 + threadIdx.x] = v;
}
"""


def _cuda_ptx(arch: str) -> str:
    from tools.harvest_realworld import BASE_OPTIONS, HarvestError, cccl_include
    try:
        inc = cccl_include()
    except HarvestError as e:
        pytest.skip(str(e))
    got = oracle.nvcc_ptx(CUDA, arch, (*BASE_OPTIONS, f"-I{inc}"), name="clusters.cu")
    assert got.ok, got.stderr
    return got.output.decode()


@pytest.fixture(scope="module", params=ARCHS)
def cuda(request):
    arch = request.param
    ptx = _cuda_ptx(arch)
    return arch, _both(ptx, arch)


def _launch_each(cubins, entry, grid, block, make_params):
    outs = {}
    for name, cubin, check in cubins:
        params = make_params()
        result = run(cubin, entry, grid, block, params, hazard_check=check)
        assert not (check and result.hazards), [str(h) for h in result.hazards[:3]]
        outs[name] = params
    return outs


def test_cuda_swap_pairs(cuda):
    arch, cubins = cuda
    rng = np.random.default_rng(1)
    inp = rng.integers(-1000, 1000, 6 * 64).astype(np.int32)
    outs = _launch_each(cubins, "swap2", (6, 1, 1), (64, 1, 1), lambda: [inp.copy(), np.zeros(6 * 64, np.int32)])
    want = np.stack([inp.reshape(6, 64)[b ^ 1][::-1] * 10 + (b & 1) for b in range(6)]).reshape(-1)
    for name, (_, out) in outs.items():
        assert (out == want).all(), name


def test_cuda_sum_over_a_cluster_of_four(cuda):
    arch, cubins = cuda
    rng = np.random.default_rng(2)
    inp = rng.integers(-1000, 1000, 8 * 128).astype(np.int32)
    outs = _launch_each(cubins, "sum4", (8, 1, 1), (128, 1, 1), lambda: [inp.copy(), np.zeros(8 * 128, np.int32)])
    x = inp.reshape(2, 4, 128)
    s = (x * np.arange(1, 5)[None, :, None]).sum(axis=1)        # (cluster, thread)
    want = np.repeat(s[:, None, :], 4, axis=1)
    want[:, 0, :] += 4 * 4                                        # 4 CTAs x 4 warps counted
    for name, (_, out) in outs.items():
        assert (out == want.reshape(-1)).all(), name


def test_cuda_two_dimensional_cluster(cuda):
    arch, cubins = cuda
    inp = np.arange(4 * 4 * 32, dtype=np.float32) * 0.5
    outs = _launch_each(cubins, "transpose22", (4, 4, 1), (32, 1, 1),
                        lambda: [inp.copy(), np.zeros(16 * 32, np.float32)])
    want = np.zeros((4, 4, 32), np.float32)
    x = inp.reshape(4, 4, 32)                                      # [y, x, t]
    for y in range(4):
        for xx in range(4):
            bx, by = xx % 2, y % 2
            want[y, xx] = x[y - by + bx, xx - bx + by]
    for name, (_, out) in outs.items():
        assert (out == want.reshape(-1)).all(), name


# --------------------------------------------------------------------------- every access kind

def _access_ptx(body: str, partner: bool) -> str:
    """tests/test_cluster_shared_access.py's kernel with the filled words depending on the
    CTA too, a barrier.cluster around the access, and the address `mapa`'d to the partner
    rank (rank ^ 1) or to the CTA's own."""
    rank = "xor.b32 %r10, %r10, 1;" if partner else ""
    return f""".version 8.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
 .reg .b32 %r<20>; .reg .b64 %rd<6>; .reg .f32 %f<4>;
 .shared .align 16 .b32 buf[512];
 ld.param.u64 %rd1, [out];
 mov.u32 %r9, %tid.x; mov.u32 %r13, %ctaid.x;
 mov.u32 %r8, buf; shl.b32 %r11, %r9, 5; add.u32 %r8, %r8, %r11;
 mad.lo.u32 %r12, %r13, 7919, %r9; mul.lo.u32 %r12, %r12, 2654435761;
 add.u32 %r14, %r9, %r13; mad.lo.u32 %r16, %r13, 3, %r11;
 st.shared.v4.u32 [%r8], {{%r12, %r14, %r16, %r12}};
 st.shared.v4.u32 [%r8+16], {{%r14, %r12, %r16, %r14}};
 mov.u32 %r3, 0; mov.u32 %r4, 0; mov.u32 %r5, 0;
 mov.u32 %r10, %cluster_ctarank; {rank}
 mapa.shared::cluster.u32 %r1, %r8, %r10;
 barrier.cluster.arrive; barrier.cluster.wait;
 {body}
 barrier.cluster.arrive; barrier.cluster.wait;
 add.u32 %r2, %r2, %r3; add.u32 %r2, %r2, %r4; add.u32 %r2, %r2, %r5;
 mad.lo.u32 %r15, %r13, 64, %r9;
 mul.wide.u32 %rd2, %r15, 4; add.u64 %rd2, %rd1, %rd2;
 st.global.u32 [%rd2], %r2;
 ret;
}}
"""


def _remote_accesses():
    from test_cluster_shared_access import ACCESSES
    # (the st_*/red_* bodies read the word back with ld.shared, a shared::cta access, which
    # may not name another CTA)
    return {n: b for n, b in ACCESSES.items() if n.startswith(("ld_", "atom_"))}


@pytest.mark.parametrize("name", sorted(_remote_accesses()))
def test_every_access_kind_reaches_the_partner(name):
    """Through the partner's address, CTA c sees what CTA c ^ 1 sees through its own (each
    CTA's words differ), for ptxas's cubin and ours."""
    body = _remote_accesses()[name]
    results = {}
    for partner in (False, True):
        for who, cubin, check in _both(_access_ptx(body, partner), "sm_90"):
            out = np.zeros(4 * 64, np.uint32)
            res = run(cubin, "k", 4, 64, [out], hazard_check=check, cluster=(2, 1, 1))
            assert not (check and res.hazards), [str(h) for h in res.hazards[:3]]
            results[who, partner] = out.reshape(4, 64)
    for who in ("ptxas", "ours"):
        own, remote = results[who, False], results[who, True]
        assert (remote == own[[1, 0, 3, 2]]).all(), who
        assert not (own[0] == own[1]).all()
    assert (results["ptxas", True] == results["ours", True]).all()
