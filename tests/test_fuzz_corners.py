"""The fuzz generator's `corner` group (ptx2sass/fuzz/corners.py, branch fuzz35): narrow-float
conversions and packed half arithmetic fed each format's corner values on sm_100a/sm_120a,
and the ue8m0 sources made positive and at least 2^-127 (the values the PTX manual leaves
open into ue8m0: zero, negatives, and below 2^-127 with .rz)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass.fuzz import corners, newarch
from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.inputs import case_from_program
from ptx2sass.fuzz.program import render
from ptx2sass.fuzz.runner import run_case


def _run(prog, arch: str):
    case = case_from_program(prog)
    case.arch = arch
    return run_case(case)


def _f32(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


@pytest.mark.parametrize("fmt,top,tie_above,sub", [
    ("e2m1", 6.0, 7.0, 0.5), ("e2m3", 7.5, 7.75, 0.125), ("e3m2", 28.0, 30.0, 0.0625),
    ("e4m3", 448.0, 464.0, 2.0 ** -9), ("e5m2", 57344.0, 61440.0, 2.0 ** -16), ("f16", 65504.0, 65520.0, 2.0 ** -24)])
def test_corners_of_each_format(fmt, top, tie_above, sub):
    """The largest value (either sign), the tie between it and the next step, the smallest
    subnormal and the ties beside it (half of it, one and a half of it), the signed zeros,
    infinities and NaNs of either sign (the OCP/IEEE definitions of each format)."""
    got = set(corners.f32_corners(fmt))
    want = {_f32(top), _f32(-top), _f32(tie_above), _f32(sub), _f32(-sub), _f32(sub / 2), _f32(1.5 * sub),
            0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000}
    assert want <= got, sorted(hex(w) for w in want - got)


def test_half_corners_are_exact_in_the_half_format():
    """e4m3's corners as f16 and bf16 halves: each converts back to the f32 corner it stands for."""
    f32 = set(corners.f32_corners("e4m3"))
    for h in corners.half_corners("e4m3", "bf16"):
        assert h << 16 in f32 or h in (0x7F80, 0xFF80, 0x7FC0, 0xFFC1)
    for h in corners.half_corners("e4m3", "f16"):
        v = np.uint16(h).view(np.float16).astype(np.float32)
        assert np.isnan(v) or int(v.view(np.uint32)) in f32 or h in (0x7C00, 0xFC00)


def test_corner_group_is_the_fp6_group_s_targets():
    for arch in ("sm_100a", "sm_120a"):
        assert "corner" in newarch.groups_on(arch)
    for arch in ("sm_90a", "sm_100", "sm_120", "sm_89"):
        assert "corner" not in newarch.groups_on(arch)


@pytest.mark.parametrize("arch,seed", [("sm_100a", 1003), ("sm_120a", 1005)])
def test_corner_programs_pass(arch, seed):
    """Programs of the group (and int32 around it) compile with both compilers and agree in
    the emulator, the canonicalised NaNs included."""
    prog = generate(seed, features={"int32", "corner"}, arch=arch)
    keys = render(prog).keys
    assert any(re.search(r"\b(e[2-5]m[1-3]x2|ue8m0x2|[bf]16x2)\b", k) for k in keys), keys
    out = _run(prog, arch)
    assert out.cls == "pass", (out.sig, out.detail)


# tuning seeds of branch fuzz35's sm_100a run whose fp6-group `cvt...ue8m0x2` of zero or a
# negative (47000014, 47000072) or of a value below 2^-127 with .rz (47000094) stopped the
# emulator on ptxas's cubin ("not modelled"): with the sources made positive they pass
@pytest.mark.parametrize("seed", [47000014, 47000094])
def test_ue8m0_sources_are_positive_and_at_least_the_smallest_scale(seed):
    prog = generate(seed, arch="sm_100a")
    text = render(prog).text
    for m in re.finditer(r"cvt\.r[zp](?:\.satfinite)?\.ue8m0x2\.f32 %\w+, (%\w+), (%\w+);", text):
        for reg in m.groups():
            assert re.search(rf"max\.u32 {re.escape(reg)}, {re.escape(reg)}, 0x00400000;", text), reg
    out = _run(prog, "sm_100a")
    assert out.cls == "pass", (out.sig, out.detail)
