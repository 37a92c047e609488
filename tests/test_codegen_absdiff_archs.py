"""sad / vabsdiff on sm_75, sm_100 and sm_120 (found by the per-arch fuzz campaigns, branch
archfuzz): sm_75's and sm_100's tables lacked VABSDIFF's register/constant forms ("cannot
encode"), and sm_120 has no VABSDIFF (ptxas writes max - min + c). Ours = ptxas's cubin =
Python's arithmetic on the PTX's semantics, in the emulator."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

SEED = Path(__file__).resolve().parent.parent / "tools" / "isa_seeds" / "absdiff.ptx"
A = [0, 1, 7, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x12345678, 0xFFFFFFF7]


def _s32(v):
    return v - (1 << 32) if v >> 31 else v


def _sad(a, b, c, signed):
    f = _s32 if signed else (lambda v: v)
    return (abs(f(a) - f(b)) + c) & 0xFFFFFFFF


@pytest.mark.parametrize("arch", ["sm_75", "sm_100", "sm_120"])
def test_sad_forms_match_ptxas_and_arithmetic(arch):
    ptx = SEED.read_text()
    if arch == "sm_75":
        ptx = ptx.replace(".target sm_89", ".target sm_75")
    k, m = 0x9ABCDEF0, 5
    n = len(A) * len(A)
    outs = []
    for cubin in (oracle.ptxas(ptx, arch).output, compile_ptx(ptx, arch)):
        buf = np.zeros((n, 24), dtype=np.uint32)
        for i, (a, b) in enumerate((a, b) for a in A for b in A):
            buf[i, 0], buf[i, 1], buf[i, 2] = a, b, (a ^ b) & 0xFF
            buf[i, 3] = (a & 0xFFFF) | ((b & 0xFFFF) << 16)
            buf[i, 4] = a & 0xFFFF
        res = run(cubin, "absdiff", (1, 1, 1), (n, 1, 1), [buf, np.uint32(k), np.uint32(m)])
        assert not res.hazards, res.hazards[:3]
        outs.append(buf)
    theirs, ours = outs
    assert (ours == theirs).all()
    for i, (a, b) in enumerate((a, b) for a in A for b in A):
        c = (a ^ b) & 0xFF
        assert ours[i, 0] == _sad(a, b, c, False)           # sad.u32 r, r, r
        assert ours[i, 1] == _sad(a, b, c, True)            # sad.s32 r, r, r
        assert ours[i, 2] == _sad(a, 7, c, False)           # b immediate
        assert ours[i, 3] == _sad(a, 0xFFFFFFF7, c, True)
        assert ours[i, 4] == _sad(a, b, 11, False)          # c immediate
        assert ours[i, 5] == _sad(a, b, 0xFFFFFFFD, True)
        assert ours[i, 8] == _sad(a, k, c, False)           # b a parameter
        assert ours[i, 11] == _sad(a, b, m, True)           # c a parameter
