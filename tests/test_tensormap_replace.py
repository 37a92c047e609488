"""tensormap.replace / tensormap.cp_fenceproxy (sm_90a+), refused before ("not supported
yet"). ptxas 13.5 writes them as plain loads and stores of the 128-byte map: its cubin, run
in the emulator on a random map, is the oracle for where each field lives. Each test runs
ptxas's cubin and ours on the same random 128 bytes and compares the bytes after."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 v, .param .u32 w)
{{
 .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .pred %p<3>;
 .shared .align 128 .b8 tm[128];
 ld.param.u64 %rd1, [p]; ld.param.u64 %rd2, [v]; ld.param.u32 %r1, [w];
 mov.u32 %r2, tm;
 mov.u32 %r3, %tid.x;
 mov.u32 %r7, {shared};
 shl.b32 %r4, %r3, 2;
 cvt.u64.u32 %rd3, %r4; add.u64 %rd4, %rd1, %rd3;
 ld.global.u32 %r5, [%rd4];
 add.u32 %r6, %r2, %r4;
 st.shared.u32 [%r6], %r5;
 bar.sync 0;
 setp.eq.u32 %p1, %r3, 0;
 @!%p1 bra DONE;
 {body}
DONE:
 bar.sync 0;
 setp.ne.u32 %p2, %r7, 0;
 @%p2 ld.shared.u32 %r5, [%r6];
 @%p2 st.global.u32 [%rd4], %r5;
 ret;
}}
"""

ARCHS = ["sm_90a", "sm_100a", "sm_120a"]
V64 = 0x0000_0A5C_3F21_7E90
V32 = 0x0000_0133


def _forms(arch: str) -> list[tuple[str, str]]:
    """(field, operands) of every field: registers and immediates (the ord immediates)."""
    out = [("global_address", "%rd2"), ("global_address", "0x7fe0012345600"),
           ("rank", "%r1"), ("rank", "3"), ("rank", "0")]
    for ord_ in range(5):
        out += [("box_dim", f"{ord_}, %r1"), ("box_dim", f"{ord_}, {17 + ord_}"),
                ("global_dim", f"{ord_}, %r1"), ("global_dim", f"{ord_}, {1000 + ord_}"),
                ("element_stride", f"{ord_}, %r1"), ("element_stride", f"{ord_}, {1 + ord_}"),
                ("global_stride", f"{ord_}, %rd2"), ("global_stride", f"{ord_}, 0x123456789a0")]
    top = 15 if arch != "sm_90a" else 12
    out += [("elemtype", str(v)) for v in range(top + 1)]
    out += [("interleave_layout", str(v)) for v in range(3)]
    out += [("swizzle_mode", str(v)) for v in range(4)]
    out += [("fill_mode", str(v)) for v in range(2)]
    if arch != "sm_90a":
        out += [("swizzle_atomicity", str(v)) for v in range(4)]
    return out


def _body(field: str, operands: str, space: str) -> str:
    ty = "b64" if field in ("global_address", "global_stride") else "b32"
    addr = "%r2" if space == ".shared::cta" else "%rd1"
    return f"tensormap.replace.tile.{field}{space}.b1024.{ty} [{addr}], {operands};"


def _after(cubin: bytes, desc: np.ndarray, check: bool) -> np.ndarray:
    buf = desc.copy()
    res = run(cubin, "k", 1, 32, [buf, np.uint64(V64), np.uint32(V32)], hazard_check=check)
    assert not check or not res.hazards
    return buf


def _compare(arch: str, field: str, operands: str, space: str, seed: int) -> None:
    src = KERNEL.format(arch=arch, body=_body(field, operands, space), shared=int(space == ".shared::cta"))
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    ours = codegen.compile_ptx(src, arch)
    rand = np.random.default_rng(seed).integers(0, 1 << 32, 32, dtype=np.uint32)
    changed = False
    for desc in (rand, ~rand):          # a field's old bits differ from the new in one of them
        theirs = _after(ref.output, desc, False)
        changed |= not np.array_equal(theirs, desc)
        got = _after(ours, desc, True)
        diff = [f"word {k:#x}: ours {got[k]:#010x} ptxas {theirs[k]:#010x}" for k in range(32)
                if got[k] != theirs[k]]
        assert not diff, "\n".join(diff)
    assert changed, "ptxas's cubin changed nothing"


@pytest.mark.parametrize("arch", ARCHS)
def test_every_field_global(arch):
    """Every field, register and immediate values, every ord, on a map in global memory."""
    for i, (field, operands) in enumerate(_forms(arch)):
        _compare(arch, field, operands, ".global", i)


@pytest.mark.parametrize("space", [".shared::cta", ""])
def test_spaces(space):
    """The shared::cta and generic forms (LDS/STS, LD/ST) of a sample of fields."""
    for i, (field, operands) in enumerate(_forms("sm_90a")[::3]):
        _compare("sm_90a", field, operands, space, 100 + i)


BAD = [
    ("sm_90a", "elemtype.global.b1024.b32 [%rd1], %r1"),
    ("sm_90a", "elemtype.global.b1024.b32 [%rd1], 13"),
    ("sm_100a", "elemtype.global.b1024.b32 [%rd1], 16"),
    ("sm_90a", "swizzle_mode.global.b1024.b32 [%rd1], -1"),
    ("sm_90a", "fill_mode.global.b1024.b32 [%rd1], 2"),
    ("sm_90a", "interleave_layout.global.b1024.b32 [%rd1], 3"),
    ("sm_100a", "swizzle_atomicity.global.b1024.b32 [%rd1], 4"),
    ("sm_90a", "swizzle_atomicity.global.b1024.b32 [%rd1], 1"),
    ("sm_90a", "box_dim.global.b1024.b32 [%rd1], 5, %r1"),
    ("sm_90a", "box_dim.global.b1024.b32 [%rd1], %r1"),
    ("sm_90a", "global_stride.global.b1024.b64 [%rd1], %r1, %rd2"),
    ("sm_90a", "rank.global.b1024.b64 [%rd1], %rd2"),
    ("sm_90a", "global_address.global.b1024.b32 [%rd1], %r1"),
    ("sm_90a", "rank.global.b1024.b32 [%rd1], 1, %r1"),
    ("sm_90a", "rank.global.b1024.b32 [%rd1], %rd2"),
    ("sm_90a", "global_address.global.b1024.b64 [p], %rd2"),
    ("sm_90a", "global_address.shared::cluster.b1024.b64 [%r2], %rd2"),
    ("sm_90a", "global_address.global.b1024.b64 [%rd1], %rd2;\n tensormap.replace.im2col.rank.global.b1024.b32 [%rd1], %r1"),
    ("sm_90", "rank.global.b1024.b32 [%rd1], %r1"),
]


@pytest.mark.parametrize("arch,form", BAD)
def test_refusals_as_ptxas(arch, form):
    """Invalid forms: ours refuses with ptxas's first message, at the line."""
    src = KERNEL.format(arch=arch, body=f"tensormap.replace.tile.{form};", shared=0)
    ref = oracle.ptxas(src, arch)
    assert not ref.ok
    first = next(line for line in ref.stderr.splitlines() if "error" in line)
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(src, arch)
    assert first.split("line", 1)[1].strip() in str(e.value), (first, str(e.value))


CP_FENCEPROXY = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u64 q)
{{
 .reg .b32 %r<12>; .reg .b64 %rd<8>;
 .shared .align 128 .b8 tm[256];
 ld.param.u64 %rd1, [p]; ld.param.u64 %rd2, [q];
 mov.u32 %r2, tm;
 mov.u32 %r3, %tid.x;
 shl.b32 %r4, %r3, 2;
 cvt.u64.u32 %rd3, %r4; add.u64 %rd4, %rd1, %rd3;
 ld.global.u32 %r5, [%rd4];
 add.u32 %r6, %r2, %r4;
 st.shared.u32 [%r6], %r5;
 bar.sync 0;
 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.{scope}.sync.aligned [%rd2+128], [%r2+64], 128;
 ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("scope", ["cta", "cluster", "gpu", "sys"])
def test_cp_fenceproxy_copies_the_map(arch, scope):
    """The 128 bytes at shared tm+64 land at global q+128, nothing else changes: ptxas's
    cubin and ours in the emulator, and NumPy."""
    src = CP_FENCEPROXY.format(arch=arch, scope=scope)
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    ours = codegen.compile_ptx(src, arch)
    rng = np.random.default_rng(7)
    data = rng.integers(0, 1 << 32, 64, dtype=np.uint32)
    start = rng.integers(0, 1 << 32, 96, dtype=np.uint32)
    want = start.copy()
    want[32:64] = data[16:48]
    for cubin in (ref.output, ours):
        out = start.copy()
        res = run(cubin, "k", 1, 64, [data.copy(), out], hazard_check=cubin is ours)
        assert not res.hazards
        assert out.tolist() == want.tolist()


CP = "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic"
BAD_CP = [
    ("sm_90a", f"{CP}.release.gpu.sync.aligned [%rd1], [%r2], 64"),
    ("sm_90a", f"{CP}.release.gpu [%rd1], [%r2], 128"),
    ("sm_90a", f"{CP}.acquire.gpu.sync.aligned [%rd1], [%r2], 128"),
    ("sm_90a", "tensormap.cp_fenceproxy.shared::cta.global.tensormap::generic.release.gpu.sync.aligned "
               "[%rd1], [%r2], 128"),
    ("sm_90a", f"{CP}.release.gpu.sync.aligned [%rd1], [%r2], %r1"),
    ("sm_90a", f"{CP}.release.gpu.sync.aligned [%rd1], [%r2]"),
    ("sm_80", f"{CP}.release.gpu.sync.aligned [%rd1], [%r2], 128"),
    ("sm_90a", f"{CP}.release.gpu.sync.aligned [p], [%r2], 128"),
]


@pytest.mark.parametrize("arch,form", BAD_CP)
def test_cp_fenceproxy_refusals_as_ptxas(arch, form):
    src = KERNEL.format(arch=arch, body=f"{form};", shared=0)
    ref = oracle.ptxas(src, arch)
    assert not ref.ok
    first = next(line for line in ref.stderr.splitlines() if "error" in line)
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(src, arch)
    assert first.split("line", 1)[1].strip() in str(e.value), (first, str(e.value))


MULTICAST_TRY_CANCEL = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p) .explicitcluster .reqnctapercluster 2, 1, 1
{{
 .reg .b32 %r<12>; .reg .b64 %rd<4>; .reg .pred %p<4>; .reg .b128 %q;
 .shared .align 16 .b8 resp[16];
 .shared .align 8 .b64 mb;
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, resp; mov.u32 %r2, mb; mov.u32 %r9, %tid.x;
 mov.u32 %r10, %cluster_ctarank; mov.u32 %r11, %ctaid.x;
 setp.eq.u32 %p2, %r9, 0;
 setp.eq.u32 %p3, %r10, 0;
 and.pred %p3, %p3, %p2;
 st.shared.v4.u32 [%r1], {{%r9, %r9, %r9, %r9}};
 @%p2 mbarrier.init.shared::cta.b64 [%r2], 1;
 barrier.cluster.arrive.release; barrier.cluster.wait.acquire;
 @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 16;
 @%p3 clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 [%r1], [%r2];
WAIT:
 mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 0;
 @!%p1 bra WAIT;
 ld.shared.b128 %q, [%r1];
 clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %q;
 clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {{%r3, %r4, %r5, _}}, %q;
 selp.u32 %r6, 1000, 7, %p1;
 add.u32 %r6, %r6, %r3; add.u32 %r6, %r6, %r4; add.u32 %r6, %r6, %r5;
 mad.lo.u32 %r7, %r11, 64, %r9;
 mul.wide.u32 %rd2, %r7, 4; add.u64 %rd2, %rd1, %rd2;
 barrier.cluster.arrive.release; barrier.cluster.wait.acquire;
 st.global.u32 [%rd2], %r6;
 ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_100a", "sm_120a"])
def test_try_cancel_multicast_as_ptxas(arch):
    """`.multicast::cluster::all` (refused before): UGETNEXTWORKID.BROADCAST as ptxas, one CTA
    of a cluster of 2 asks; the (failed) response reaches both CTAs' shared memory and
    mbarriers: 7 in every thread of both (a CTA it missed would read its tid pattern or hang),
    ptxas's cubin and ours alike."""
    src = MULTICAST_TRY_CANCEL.format(arch=arch)
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    ours = codegen.compile_ptx(src, arch)
    shape = lambda c: re.findall(r"UGETNEXTWORKID\.\w+", oracle.nvdisasm(c, ()))   # noqa: E731
    assert shape(ours) == shape(ref.output) == ["UGETNEXTWORKID.BROADCAST"]
    for cubin in (ref.output, ours):
        out = np.zeros(128, np.uint32)
        res = run(cubin, "k", 2, 64, [out], hazard_check=cubin is ours)
        assert not res.hazards
        assert out.tolist() == [7] * 128


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_try_cancel_multicast_needs_an_arch_specific_target(arch):
    src = MULTICAST_TRY_CANCEL.format(arch=arch)
    ref = oracle.ptxas(src, arch)
    assert not ref.ok
    first = next(line for line in ref.stderr.splitlines() if "error" in line)
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(src, arch)
    assert first.split("line", 1)[1].strip() in str(e.value)


CVTA_SHARED = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
 .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .pred %p1;
 .shared .align 16 .b8 buf[256];
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, %tid.x;
 shl.b32 %r2, %r1, 2;
 mov.u32 %r3, buf;
 add.u32 %r4, %r3, %r2;
 mad.lo.u32 %r9, %r1, 3, 1;
 st.shared.u32 [%r4], %r9;
 bar.sync 0;
 cvt.u64.u32 %rd2, %r4;
 cvta.shared.u64 %rd3, %rd2;
 ld.u32 %r5, [%rd3];
 xor.b32 %r6, %r4, 4;
 cvt.u64.u32 %rd4, %r6;
 setp.lt.u32 %p1, %r1, 40;
 @%p1 cvta.shared.u64 %rd4, %rd4;
 @!%p1 cvta.shared.u64 %rd4, buf;
 ld.u32 %r8, [%rd4];
 cvta.shared.u64 %rd6, buf;
 ld.u32 %r7, [%rd6+8];
 mad.lo.u32 %r5, %r8, 1000, %r5;
 mad.lo.u32 %r5, %r7, 1000000, %r5;
 mul.wide.u32 %rd7, %r1, 4; add.u64 %rd7, %rd1, %rd7;
 st.global.u32 [%rd7], %r5;
 ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_cvta_shared_reads_the_window_once(arch):
    """cvta.shared on sm_90+ (the shared::cluster window): SR_SWINHI read once per function
    (ptxas: one S2R; ours read it at each cvta before), the generic loads' values = ptxas's
    in the emulator and NumPy's."""
    src = CVTA_SHARED.format(arch=arch)
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    ours = codegen.compile_ptx(src, arch)
    count = lambda c: oracle.nvdisasm(c, ()).count("SR_SWINHI")   # noqa: E731
    assert count(ours) == count(ref.output) == 1
    t = np.arange(64)
    v = 3 * t + 1
    want = (v + 1000 * np.where(t < 40, v[t ^ 1], v[0]) + 1000000 * v[2]) & 0xFFFFFFFF
    for cubin in (ref.output, ours):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out], hazard_check=cubin is ours)
        assert not res.hazards
        assert out.tolist() == want.tolist()
