"""When ptxas 13.5 keeps a dynamically indexed `.local` array in registers (issue 20, Triton
unary_math's 28-byte Payne-Hanek table: a predicated move per `ISETP.EQ` of the index for
each store, a chain of them per load). Probes (sm_89, `tests/local_tables`): a 7-word array
written in a `nounroll` loop through a pointer and read at a masked index.
Rule found: promoted when the array is at most 28 bytes (32 is not, even with only 7
words touched) and at least one access has a constant address (`[%SPL+24]`, a store or a
load); with every access through a computed address it stays in memory at any size.
We keep every such table in memory: the xfail below is the target."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

DIR = Path(__file__).parent / "local_tables"
PROMOTED = {"promoted_7_words": True, "promoted_constant_load": True,
            "memory_no_constant_access": False, "memory_32_bytes": False}


def _local_accesses(listing: list[str]) -> int:
    return sum(o.split()[0].startswith(("LDL", "STL")) for o in listing)


@pytest.mark.parametrize("name", list(PROMOTED))
def test_ptxas_s_promotion_rule(name):
    ref = _instructions(sass_listing(oracle.ptxas((DIR / f"{name}.ptx").read_text()).output))
    assert (_local_accesses(ref) == 0) == PROMOTED[name], ref


@pytest.mark.xfail(strict=True, reason="dynamically indexed .local tables stay in memory (issue 20)")
def test_seven_word_table_in_registers_as_ptxas():
    ptx = (DIR / "promoted_7_words.ptx").read_text()
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    data = np.random.default_rng(3).integers(0, 1 << 30, 64, dtype=np.uint32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(32, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), np.uint32(5)], hazard_check=True)
        assert not res.hazards
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()         # the values hold either way
    assert _local_accesses(_instructions(sass_listing(ours))) == 0
