"""The SIMD video instructions (vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2 vset2 and their
4-way forms, with .sat, .add, lane masks and operand selectors): our cubin against ptxas's
in the emulator, bit for bit, on edge-value pairs and random bits; ptxas against an
independent model of the PTX manual's pseudo-code (tests/simd_video_reference.py).

The default run takes every 10th form of the matrix (every 24th for the manual);
PTX2SASS_SAMPLE=all runs all of it."""
import os

import numpy as np
import pytest

from codegen_harness import kernel, registers_against_ptxas, run_both
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from test_codegen_video import data32
import simd_video_reference as ref

TYPES = ("u32.u32.u32", "s32.s32.s32", "s32.u32.s32", "u32.s32.u32")
LANES = {2: (("h0", "h1"), ("h01", "h21", "h33"), ("h20", "h13", "h02")),
         4: (("b0", "b31", "b210", "b320"), ("b0123", "b7250", "b4444"), ("b3210", "b1357", "b6420"))}


def _matrix() -> list[str]:
    out = []
    for n, (masks, asels, bsels) in LANES.items():
        for op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax"):
            for i, ty in enumerate(TYPES):
                for j, mods in enumerate(("", ".sat", ".add")):
                    out.append(f"{op}{n}.{ty}{mods} %o, %a0, %a1, %a2;")
                    k = i + j
                    out.append(f"{op}{n}.{ty}{mods} %o.{masks[k % len(masks)]}, %a0.{asels[k % 3]}, "
                               f"%a1.{bsels[(k + 1) % 3]}, %a2;")
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
            for i, ty in enumerate(("u32.u32", "s32.s32", "s32.u32", "u32.s32")):
                for mods in ("", ".add"):
                    out.append(f"vset{n}.{ty}.{cmp}{mods} %o, %a0, %a1, %a2;")
                k = i + len(cmp)
                out.append(f"vset{n}.{ty}.{cmp}{'.add' if i % 2 else ''} %o.{masks[k % len(masks)]}, "
                           f"%a0.{asels[k % 3]}, %a1.{bsels[(k + 2) % 3]}, %a2;")
    # selectors that are the defaults, spelled out; the same register twice
    out += ["vadd2.s32.s32.s32 %o.h10, %a0.h10, %a1.h32, %a2;",
            "vmax4.u32.u32.u32 %o.b3210, %a0.b3210, %a1.b7654, %a2;",
            "vabsdiff4.u32.u32.u32.add %o.b21, %a0, %a1, %a2;", "vabsdiff4.s32.u32.u32.sat %o, %a0, %a1, %a2;",
            "vabsdiff4.u32.u32.u32.sat %o.b30, %a0, %a1.b5410, %a2;", "vsub2.s32.s32.s32.sat %o, %a0, %a0, %a2;"]
    return out


MATRIX = _matrix()
ALL = os.environ.get("PTX2SASS_SAMPLE") == "all"
SAMPLE = MATRIX if ALL else MATRIX[::10] + MATRIX[-6:]


def parse(body: str):
    """(op, types, mods, (asel, bsel), mask) of one matrix line."""
    head, rest = body.rstrip(";").split(None, 1)
    op, *parts = head.split(".")
    split = 2 if op.startswith("vset") else 3
    ops = [o.strip().split(".") for o in rest.split(",")]
    pick = [o[1] if len(o) > 1 else None for o in ops]
    return op, tuple(parts[:split]), tuple(parts[split:]), (pick[1], pick[2]), pick[0]


def _assert_same(ours, theirs, data):
    bad = (ours != theirs).nonzero()[0]
    rows = data.reshape(-1, 3)
    assert not len(bad), [([hex(x) for x in rows[i]], hex(ours[i]), hex(theirs[i])) for i in bad[:5]]


@pytest.mark.parametrize("body", SAMPLE)
def test_simd_video_against_ptxas(body):
    ours, theirs, data = run_both(body, 32, 3, 32, data=data32())
    _assert_same(ours, theirs, data)


# ptxas writes VABSDIFF4.U8 (merge) and VABSDIFF4.U8.ACC (.add) for these on sm_75..sm_90;
# the turing and hopper tables lacked both (tools/isa_seeds/simd_video.ptx seeds them).
# sm_120 has no video unit (ptxas: VIMNMX.U8x4 max and min, VIADD.U8x4 of their difference):
# we selected VABSDIFF4 there too, an internal "unknown mnemonic" error.
OTHER_ARCHS = [(body, arch) for arch in ("sm_75", "sm_90", "sm_120")
               for body in ("vabsdiff4.u32.u32.u32 %o, %a0, %a1, %a2;",
                            "vabsdiff4.u32.u32.u32.add %o, %a0, %a1, %a2;",
                            "vadd2.s32.s32.s32.sat %o, %a0, %a1, %a2;")]


@pytest.mark.parametrize("body,arch", OTHER_ARCHS)
def test_simd_video_on_other_archs(body, arch):
    ours, theirs, data = run_both(body, 32, 3, 32, data=data32(), arch=arch)
    _assert_same(ours, theirs, data)


# The model reads a, b and c from the three inputs: not the form naming %a0 twice.
MANUAL = [b for b in MATRIX if "%a0, %a0" not in b]


@pytest.mark.parametrize("body", MANUAL if ALL else MANUAL[3::24])
def test_ptxas_agrees_with_the_manual(body):
    data = data32(1)
    cubin = oracle.ptxas(kernel(body, 32, 3, 32)).output
    got = np.zeros(len(data) // 3, dtype=np.uint32)
    run(cubin, "k", (1, 1, 1), (len(got), 1, 1), [got, data.copy()])
    op, types, mods, sel, mask = parse(body)
    want = [ref.simd(op, types, mods, a, b, c, sel, mask) for a, b, c in data.reshape(-1, 3).tolist()]
    _assert_same(got, np.array(want, dtype=np.uint32), data)



VSET_MIX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
.reg .u32 %r<16>;
.reg .u64 %rd<8>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
cvta.to.global.u64 %rd1, %rd1;
cvta.to.global.u64 %rd2, %rd2;
mov.u32 %r15, %tid.x;
mul.wide.u32 %rd3, %r15, 16;
add.s64 %rd4, %rd2, %rd3;
add.s64 %rd5, %rd1, %rd3;
ld.global.v4.u32 {%r0, %r1, %r2, %r3}, [%rd4];
vset4.u32.s32.ge.add %r4, %r0, %r1, %r2;
vset4.s32.u32.eq %r5, %r1, %r2, %r3;
vset4.u32.u32.lt %r6, %r2, %r3, %r0;
vset2.s32.s32.ne.add %r7, %r3, %r0, %r1;
vset.u32.s32.gt %r8, %r0, %r3;
st.global.v4.u32 [%rd5], {%r4, %r5, %r6, %r7};
st.global.u32 [%rd5+4096], %r8;
ret;
}
"""


def test_video_compares_select_an_immediate_one():
    """A video compare's lane result is `SEL d, RZ, 1, !p`: the 1 is an immediate, not a
    register per lane (the lanes' `MOV R, 0x1`, scheduled ahead of the compares, held 13
    more registers than ptxas: fuzz seed 30000991 on sm_90). Outputs equal ptxas's;
    registers no more than ptxas's."""
    data = np.random.default_rng(30000991).integers(0, 1 << 32, (64, 4), dtype=np.uint64)
    data[::3, 1] = data[::3, 0]                     # equal lanes too
    ours, theirs = registers_against_ptxas(VSET_MIX, "sm_90", (64 + 256, 4), data.astype(np.uint32))
    assert ours <= theirs, (ours, theirs)
