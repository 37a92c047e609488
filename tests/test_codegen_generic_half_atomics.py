"""Atomics and reductions of half and bf16 pairs through a generic address (no state
space), found by the archfuzz campaigns: sm_100/sm_120 "cannot encode ATOM.E.ADD.F16x2.RN"
(the blackwell table lacked the generic forms; probed from
tools/isa_seeds/generic_half_atomics_blackwell.ptx), and on sm_89 ours compiled the bf16 ones,
which ptxas refuses there, then could not encode them. Ours = ptxas's cubin in the emulator;
on sm_89 ours refuses with ptxas's words."""
import re
from pathlib import Path

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError

SEED = Path(__file__).resolve().parent.parent / "tools" / "isa_seeds" / "generic_half_atomics_blackwell.ptx"


def _ptx(arch: str) -> str:
    # scalar bf16 atomics are not compiled by ptx2sass yet: left out here
    text = SEED.read_text().replace(".target sm_100", f".target {arch}")
    text = text.replace(" atom.add.noftz.bf16 %h3, [%rd3+6], %h1;\n", "")
    return text.replace(" cvt.u32.u16 %r8, %h3;\n", "").replace("{%r7, %r8}", "{%r7, %r7}")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_generic_half_atomics_match_ptxas(arch):
    ptx = _ptx(arch)
    rng = np.random.default_rng(3)
    start = rng.integers(0x3000, 0x4000, (64, 4)).astype(np.uint32)
    start = start | (rng.integers(0x3000, 0x4000, (64, 4)).astype(np.uint32) << 16)
    outs = []
    for cubin in (oracle.ptxas(ptx, arch).output, ptx2sass.compile(ptx, arch)):
        a, b = start.copy(), np.zeros((64, 4), np.uint32)
        res = run(cubin, "half_atomics", (1, 1, 1), (64, 1, 1), [a, b])
        assert not res.hazards, res.hazards[:3]
        outs.append((a, b))
    (ta, tb), (oa, ob) = outs
    assert (oa == ta).all() and (ob == tb).all()
    assert (oa != start).any()


def test_generic_bf16_atomics_refused_below_sm_90_as_ptxas():
    ptx = SEED.read_text().replace(".target sm_100", ".target sm_89").replace(".version 8.8", ".version 8.5")
    theirs = oracle.ptxas(ptx, "sm_89")
    assert not theirs.ok
    want = sorted(re.findall(r"line \d+; error\s*: (.*)", theirs.stderr))
    with pytest.raises(CompileError) as err:
        ptx2sass.compile(ptx, "sm_89")
    got = sorted(d.message for d in err.value.diagnostics if d.severity == "error")
    assert want and got == want
