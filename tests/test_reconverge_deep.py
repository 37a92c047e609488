"""More nested divergent regions than convergence barriers (B0..B15): ptxas compiles any
depth (it moves masks between barriers and general registers with BMOV), and so must we
(ptx2sass/reconverge.py: a region inside 16 others borrows an enclosing region's barrier
and keeps that mask in a register meanwhile). Each kernel runs in the emulator with
explicit reconvergence: ours must give ptxas's outputs with no hazard of either kind, and a
warp collective at each region's end whose member mask is exactly the lanes that should
have met there."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

HEAD = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<400>; .reg .b32 %r<1000>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd1, %rd1, %rd2;
  mov.u32 %r1, 1;
"""
TAIL = """  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
  add.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


def nested_ifs(depth: int) -> str:
    """`if (tid > k)` nested `depth` deep; at the end of region k the lanes > k - 1 meet
    again, and a shuffle whose member mask is those lanes checks that they did."""
    s = HEAD
    for k in range(depth):
        s += f"  setp.gt.u32 %p{k}, %r0, {k};\n  @!%p{k} bra E{k};\n  mad.lo.u32 %r1, %r1, 3, {k + 1};\n"
    for k in reversed(range(depth)):
        mask = (0xFFFFFFFF << min(k, 31)) & 0xFFFFFFFF    # (deeper than a warp: bench only)
        s += (f"E{k}:\n  shfl.sync.idx.b32 %r{300 + k}, %r1, 31, 31, {mask};\n"
              f"  xor.b32 %r1, %r1, %r{300 + k};\n  mul.lo.u32 %r1, %r1, 7;\n")
    return s + TAIL


def nested_loops(depth: int) -> str:
    """`depth` nested do-while loops, loop k running 1 + bit k of the lane's id times: each
    loop's exit is lane-varying."""
    s = HEAD
    for k in range(depth):
        s += (f"  shr.u32 %r{600 + k}, %r0, {k};\n  and.b32 %r{600 + k}, %r{600 + k}, 1;\n"
              f"  add.u32 %r{600 + k}, %r{600 + k}, 1;\n  mov.u32 %r{300 + k}, 0;\nH{k}:\n")
    s += "  mad.lo.u32 %r1, %r1, 5, 1;\n"
    for k in reversed(range(depth)):
        s += (f"  add.u32 %r{300 + k}, %r{300 + k}, 1;\n  setp.lt.u32 %p{k}, %r{300 + k}, %r{600 + k};\n"
              f"  @%p{k} bra H{k};\n  xor.b32 %r1, %r1, {k + 11};\n")
    return s + TAIL


def _run(cubin: bytes, check: bool) -> np.ndarray:
    out = np.zeros(32, np.uint32)
    res = run(cubin, "k", 1, 32, [out], hazard_check=check, reconverge="explicit")
    if check:
        assert res.hazards == [], [str(h) for h in res.hazards[:3]]
        assert res.convergence_hazards == [], [str(h) for h in res.convergence_hazards[:3]]
    return out


@pytest.mark.parametrize("make,depth", [(nested_ifs, 16), (nested_ifs, 17), (nested_ifs, 24),
                                        (nested_loops, 17), (nested_loops, 20)])
def test_deeper_than_the_barriers_runs_as_ptxas(make, depth):
    ptx = make(depth)
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.returncode == 0, theirs.stderr
    ours = codegen.compile_ptx(ptx)
    listing = oracle.nvdisasm(ours)
    assert listing.count("BSSY") >= depth          # a region each: none merged away
    if depth > 16:
        assert "BMOV.32.CLEAR" in listing
    np.testing.assert_array_equal(_run(ours, True), _run(theirs.output, False))


CALLEE = """.func (.reg .b32 r) g(.reg .b32 x)
{
  .reg .pred p; .reg .b32 y;
  mov.b32 y, x;
  setp.gt.u32 p, y, 1000;
  @p bra D;
  mad.lo.u32 y, y, 5, 1;
  call (y), g, (y);
D:
  mov.b32 r, y;
  ret;
}
"""


def test_regions_around_calls_leave_b15_to_tex_grad():
    """Ten nested regions with a call (of a recursive function: not inlined) inside take
    B6..B15 by ptxas's callee-saved rule, but a callee's tex.grad quad sequence overwrites
    B15 without saving it (ptxas's callee does not save it either): the caller keeps B15's
    mask in a register around the CALL (BMOV.32.CLEAR / BMOV.32), and the kernel still
    gives ptxas's outputs with every region's lanes meeting."""
    ptx = nested_ifs(10).replace(".address_size 64\n", ".address_size 64\n" + CALLEE)
    ptx = ptx.replace("E9:\n", "  call (%r1), g, (%r1);\nE9:\n")
    ours = codegen.compile_ptx(ptx, "sm_89")
    listing = oracle.cuobjdump_sass(ours)
    lines = listing.splitlines()
    at = next(i for i, line in enumerate(lines) if "BSSY B15" in line)
    call = next(i for i in range(at, len(lines)) if "CALL" in lines[i])
    assert "BMOV.32.CLEAR" in lines[call - 2] and "B15" in lines[call - 2]
    assert "BMOV.32 B15" in lines[call + 2] or "BMOV.32 B15" in lines[call + 4]
    theirs = oracle.ptxas(ptx, "sm_89").output
    np.testing.assert_array_equal(_run(ours, True), _run(theirs, False))


GRAD3D = """  cvt.rn.f32.u32 %f1, %r0;
  mul.f32 %f1, %f1, 0f3E000000;
  mov.f32 %f2, 0f3F000000;
  mov.f32 %f3, 0f3FA00000;
  mov.f32 %f4, 0f00000000;
  mov.f32 %f5, 0f3D800000;
  tex.grad.3d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [tex0, {%f1, %f2, %f3, %f4}], {%f5, %f4, %f5, %f4}, {%f4, %f5, %f4, %f4};
  mov.b32 %r5, %f10;
  mov.b32 %r6, %f13;
  add.u32 %r1, %r1, %r5;
  xor.b32 %r1, %r1, %r6;
"""


def test_own_tex_grad_inside_a_region_holding_b15():
    """A function's own tex.grad (its quad steps keep the active lanes in B15) inside 16
    nested regions, the innermost of which holds B15: the region's mask goes to a register
    across each quad step (BMOV.32.CLEAR before, BMOV.32 B15 after; before, the step
    overwrote it and the region's BSYNC waited on the wrong lanes: a deadlock). ptxas's
    outputs, no hazard; the only convergence findings, for ours and ptxas's alike, are the
    quad steps' full-mask SHFLs run by the region's lanes (the emulator's check does not
    know quad shuffles), so every region's own shuffle finds its lanes met."""
    from ptx2sass.emu.textures import Texture
    from test_emu_texture import texels
    ptx = nested_ifs(16).replace(".address_size 64\n", ".address_size 64\n.global .texref tex0;\n")
    ptx = ptx.replace(".reg .b64 %rd<4>;", ".reg .b64 %rd<4>; .reg .f32 %f<20>;")
    ptx = ptx.replace("E15:\n", GRAD3D + "E15:\n")
    tex = Texture(texels((3, 4, 5), 3), "3d", address=("clamp",) * 3, filter="linear")
    got, findings = [], []
    for cubin, check in ((codegen.compile_ptx(ptx, "sm_89"), True), (oracle.ptxas(ptx, "sm_89").output, False)):
        out = np.zeros(32, np.uint32)
        res = run(cubin, "k", 1, 32, [out], textures={"tex0": tex}, hazard_check=True, reconverge="explicit")
        if check:
            assert res.hazards == [], [str(h) for h in res.hazards[:3]]
        findings.append({h.message for h in res.convergence_hazards})
        got.append(out)
    assert findings[0] <= findings[1] == {"convergence hazard: SHFL run by lanes 0xffff0000 without member "
                                          "lanes 0x0000ffff"}, findings
    np.testing.assert_array_equal(got[0], got[1])
