"""64-bit tests whose high words ptxas reads with LOP3's predicate result (issue 20,
text_scan's tokenize_counts: NVVM's `1 << c` class masks, `and.b64 t, m, C;
setp.ne.s64 p, t, 0`): ptxas 13.5 writes `LOP3.LUT P0, RZ, lo, C_lo, RZ, 0xc0, !PT` and,
where C's high word is not zero, `LOP3.LUT P0, RZ, hi, C_hi, RZ, 0xc0, P0`; a compare of two
values whose high words are both known zero needs no second ISETP. Expectations from ptxas's
own SASS and outputs in the emulator; fails on main 249cc2a9 (28 instructions, ptxas 23,
no LOP3 predicate result)."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

PTX = (Path(__file__).parent / "lop3_predicates" / "wide_nonzero_tests.ptx").read_text()


def _ours(ptx: str, arch: str) -> bytes:
    return codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")[0]


def _predicate_lop3s(listing: list[str]) -> int:
    return sum(o.startswith("LOP3.LUT P") for o in listing)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_wide_nonzero_tests_as_ptxas(arch):
    ptx = PTX.replace("sm_89", arch)
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours = _ours(ptx, arch)
    mine, ref = (_instructions(sass_listing(c)) for c in (ours, theirs))
    assert _predicate_lop3s(ref) == 3
    assert _predicate_lop3s(mine) == _predicate_lop3s(ref), mine
    assert len(mine) <= len(ref), (mine, ref)
    data = np.arange(64, dtype=np.uint32) + np.uint32(64 * 7)     # each shift 0..63 once
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(64 * 4, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        assert not res.hazards
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert outs[0].reshape(64, 4)[:, 1].any() and outs[0].reshape(64, 4)[:, 0].any()
