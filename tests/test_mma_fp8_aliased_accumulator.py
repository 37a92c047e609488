"""mma.sync m16n8k32 e4m3.e5m2 (sm_90: two HMMA.16816.F32 of unpacked halves, then FADD of C)
whose D overlaps C at another position: `{%r4, %r3, %r1, %r2}` = ... + `{%r2, %r3, %r0, %r3}`.
Every source is read before D is written (PTX ISA), so d3 = P + the old %r3. ptxas 13.5
adds the new %r3 (d1) instead: GPU run 27's fuzz 9500772, where the H200 gave each cubin its
emulator's bits and the two differed. The expected values come from the manual's fragment
layouts with every lane holding the same registers: rows 0-7 of A*B sum 4*(a0.b0 + a2.b1),
rows 8-15 4*(a1.b0 + a3.b1) (4 lanes of a group, 4 bytes a register)."""
import struct

import numpy as np
import pytest

PTX = """
.version 8.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 v0, .param .u32 v2, .param .u32 v3, .param .u32 v4, .param .u32 v5)
{
  .reg .b32 %r<6>; .reg .u32 %t; .reg .u64 %d<2>;
  ld.param.u64 %d0, [p];
  ld.param.u32 %r0, [v0];
  ld.param.u32 %r2, [v2];
  ld.param.u32 %r3, [v3];
  ld.param.u32 %r4, [v4];
  ld.param.u32 %r5, [v5];
  mov.u32 %r1, 0;
  mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%r4, %r3, %r1, %r2}, {%r4, %r0, %r5, %r3}, {%r0, %r3}, {%r2, %r3, %r0, %r3};
  mov.u32 %t, %tid.x;
  mul.wide.u32 %d1, %t, 16;
  add.u64 %d1, %d1, %d0;
  st.global.v4.b32 [%d1], {%r4, %r3, %r1, %r2};
  ret;
}
"""
# e4m3 0x38 = 1.0, 0x3c = 1.5, 0x30 = 0.5, 0x40 = 2.0; e5m2 0x3c = 1.0, 0x40 = 2.0
V = {"v0": 0x3C3C3C3C, "v2": 0x3F800000, "v3": 0x40404040, "v4": 0x38383838, "v5": 0x30303030}


def _f32(u: int) -> float:
    return struct.unpack("<f", struct.pack("<I", u))[0]


def _run(cubin: bytes) -> np.ndarray:
    from ptx2sass.emu.launch import run
    out = np.zeros(32 * 4, dtype=np.uint32)
    run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, *[np.uint32(V[k]) for k in ("v0", "v2", "v3", "v4", "v5")]])
    return out.view(np.float32)[:4]


def _expected() -> np.ndarray:
    # A = {r4: 1.0, r0: 1.5, r5: 0.5, r3: 2.0} (e4m3), B = {r0: 1.0, r3: 2.0} (e5m2)
    top = 4 * (4 * 1.0 * 1.0 + 4 * 0.5 * 2.0)
    bottom = 4 * (4 * 1.5 * 1.0 + 4 * 2.0 * 2.0)
    c = [_f32(V["v2"]), _f32(V["v3"]), _f32(V["v0"]), _f32(V["v3"])]
    return np.array([top + c[0], top + c[1], bottom + c[2], bottom + c[3]], dtype=np.float32)


def test_ours_reads_the_accumulator_before_writing_d():
    import ptx2sass
    assert (_run(ptx2sass.compile(PTX, "sm_90", "k.ptx")) == _expected()).all()


def test_ptxas_adds_the_new_register_to_d3():
    """The departure, pinned: if ptxas is fixed this fails, and 9500772 is no longer one."""
    from ptx2sass import oracle
    theirs = oracle.ptxas(PTX, "sm_90")
    if not theirs.ok:
        pytest.skip(theirs.stderr)
    got, want = _run(theirs.output), _expected()
    assert (got[:3] == want[:3]).all() and got[3] == np.float32(want[2] - _f32(V["v0"]) + want[1])
