"""`tex.grad` on 3d and cube textures (sm_8x): TXD takes 1D/2D gradients only, so ptxas 13.5
runs the sample once per lane of each quad with the quad's coordinates made c, c+dx, c+dy,
c+dx+dy (BMOV.32.PQUAD MACTIVE, SHFL.IDX, FSWZADD.NDV, TEX.SCR[.B].NDV, `MOV d, r, 1 << j`;
with a handle in a register, each step behind a branch on quad lane j being active);
ptx2sass writes the same sequence (refused before: "`tex.grad.3d` not supported yet").

Expected values: the emulator's textures have one mip level, so a gradient sample is the
plain sample at the coordinates: for 3d the NumPy model of tests/test_emu_texture.py, for
cube ptxas's own cubin of the plain `tex.cube` at the same coordinates. ptxas's tex.grad
cubin must give them too (which checks the emulator's FSWZADD lane signs: any other reading
of ZPPPZPPP moves quad lane 0, whose sample every lane takes, off c)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError
from test_emu_texture import KIND_BIT, THREADS, Texture, coordinates, model_sample, texels, texture_kernel

GRAD = ("mul.f32 %f5, %f1, 0f3D800000;\nmul.f32 %f6, %f2, 0f3E000000;\nmov.f32 %f7, 0f3F000000;\n"
        "mov.f32 %f8, 0f00000000;\n"
        "tex.grad.GEO.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2, %f3, %f4}], "
        "{%f5, %f6, %f7, %f8}, {%f6, %f5, %f7, %f8};\n"
        "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
PLAIN = ("tex.GEO.v4.f32.f32 {%f10, %f11, %f12, %f13}, [HANDLE, {%f1, %f2, %f3, %f4}];\n"
         "mov.b32 %r10, %f10;\nmov.b32 %r11, %f11;\nmov.b32 %r12, %f12;\nmov.b32 %r13, %f13;")
MODES = ("clamp", "border", "border")


def _line(text, geo):
    """The PTX line for `geo`: an array cube takes the layer (%r1) first."""
    text = text.replace("GEO", geo)
    return text.replace("[HANDLE, {%f1,", "[HANDLE, {%r1,") if geo == "acube" else text


def _texture(geo):
    if geo in ("cube", "acube"):
        shape = (6, 4, 4) if geo == "cube" else (12, 4, 4)      # acube: two layers
        return Texture(texels(shape, 3), geo, normalized=True, filter="linear"), shape
    shape = (3, 4, 5)
    return Texture(texels(shape, 3), "3d", address=MODES, filter="linear"), shape


def _coords(geo, shape):
    rng = np.random.default_rng(5)
    c = np.zeros((THREADS, 4))
    first = geo == "acube"              # acube: %f1 is not a coordinate (%r1 the layer)
    for a in range(3):
        lo, hi = (-1, 1) if geo != "3d" else (-1.5, shape[::-1][a] + 1.5)
        c[:, a + first] = coordinates(rng, THREADS, lo, hi, 1 / 16)
    return c


def _run(cubin, tex, handle, c, hazards=False):
    inp = np.zeros((THREADS, 8), np.uint32)
    inp[:, :4] = c.astype(np.float32).view(np.uint32)
    inp[:, 4] = np.random.default_rng(9).integers(0, 2, THREADS)     # acube's layer, per lane
    value = KIND_BIT["texture"] | 1
    inp[:, 6], inp[:, 7] = value & 0xFFFFFFFF, value >> 32
    out = np.zeros((THREADS, 4), np.uint32)
    r = run(cubin, "k", 1, THREADS, [out, inp, tex], textures={"tex0": tex} if handle == "module" else None,
            hazard_check=hazards)
    if hazards:
        assert not r.hazards, [str(h) for h in r.hazards[:3]]
    return out


def _ptxas(ptx):
    res = oracle.ptxas(ptx, "sm_89")
    assert res.ok, res.stderr
    return res.output


def _quad_sequence(cubin):
    """The listing's quad instructions, one sorted list per quad lane (from one `BMOV.32
    B15, MACTIVE` to the next): opcode.modifiers, SHFL's lane, FSWZADD's signs, the MOV
    lane mask; registers and the order inside a step (the schedules differ) aside."""
    steps = []
    for line in oracle.cuobjdump_sass(cubin).splitlines():
        m = re.search(r"\*/\s+((BMOV|SHFL|FSWZADD|TEX|MOV|FMNMX|MUFU)\S*)\s+([^;]*?)\s*;", line)
        if not m or (m.group(2) == "MOV" and not re.search(r", 0x[1248]$", m.group(3))):
            continue
        if m.group(0).endswith("BMOV.32 B15, MACTIVE ;") or "B15, MACTIVE" in m.group(3):
            steps.append([])
        ops = m.group(3).split(", ")
        steps[-1].append(m.group(1) + {"SHFL": " " + ops[-2], "FSWZADD": " " + ops[-1],
                                       "MOV": " " + ops[-1], "BMOV": " " + m.group(3)}.get(m.group(2), ""))
    assert len(steps) == 4
    return [sorted(step) for step in steps]


@pytest.mark.parametrize("handle", ["param", "module", "reg"])
@pytest.mark.parametrize("geo", ["3d", "cube", "acube"])
def test_tex_grad_by_quad_lanes(geo, handle):
    tex, shape = _texture(geo)
    c = _coords(geo, shape)
    ptx = texture_kernel(_line(GRAD, geo), handle)
    ours, theirs = codegen.compile_ptx(ptx, "sm_89"), _ptxas(ptx)
    if geo == "3d":
        want = np.asarray(model_sample(tex.data, [c[:, a] for a in range(3)], "linear", MODES, False),
                          np.float32).view(np.uint32)
    else:
        want = _run(_ptxas(texture_kernel(_line(PLAIN, geo), handle)), tex, handle, c)
    np.testing.assert_array_equal(_run(theirs, tex, handle, c), want, err_msg="ptxas")
    np.testing.assert_array_equal(_run(ours, tex, handle, c, hazards=True), want, err_msg="ours")
    assert _quad_sequence(ours) == _quad_sequence(theirs)


@pytest.mark.parametrize("line,arch,why", [
    (GRAD.replace("GEO", "3d"), "sm_90", "on sm_90: ptxas calls a driver routine .__cuda_syscall_tex_grad_3d_"),
    (GRAD.replace("GEO", "cube"), "sm_90", "on sm_90: ptxas calls a driver routine .__cuda_syscall_tex_grad_cube_"),
    (GRAD.replace("GEO", "3d"), "sm_120", "on sm_120: ptxas calls a driver routine"),
])
def test_tex_grad_refusals_name_the_line(line, arch, why):
    """sm_90+: ptxas calls `__cuda_syscall_tex_grad_<geo>_...` (CALL.ABS.NOINC through a bank-4
    slot), a driver routine: refused at the line, saying so (was 'not supported yet')."""
    ptx = texture_kernel(line, "param").replace("sm_89", arch).replace(".version 8.5", ".version 8.8")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok and "CALL.ABS.NOINC" in oracle.cuobjdump_sass(theirs.output)
    assert f"__cuda_syscall_tex_grad_{'3d' if '3d' in line else 'cube'}" in oracle.cuobjdump_elf(theirs.output)
    with pytest.raises(CompileError, match=rf"line \d+; error.*{why}"):
        codegen.compile_ptx(ptx, arch)


def _mactive_stalls(cubin):
    """The stall count of each BMOV that sets MACTIVE (control bits 41..44 of the word)."""
    lines = oracle.cuobjdump_sass(cubin).splitlines()
    return [int(re.search(r"0x([0-9a-f]{16})", lines[i + 1]).group(1), 16) >> 41 & 0xF
            for i, line in enumerate(lines) if re.search(r"BMOV\S* MACTIVE,", line)]


def test_setting_the_active_lanes_stalls_as_ptxas():
    """ptxas gives `BMOV.32[.PQUAD] MACTIVE, B15` 2 stall cycles (sched/control.py)."""
    ptx = texture_kernel(_line(GRAD, "3d"), "param")
    ours, theirs = _mactive_stalls(codegen.compile_ptx(ptx, "sm_89")), _mactive_stalls(_ptxas(ptx))
    assert len(ours) == len(theirs) == 8
    assert ours == theirs == [2] * 8
