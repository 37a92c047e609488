"""`.pragma "nounroll"` (PTX ISA, "Descriptions of .pragma Strings"): at module or entry-function
scope no loop is unrolled; at statement level, the loop headed by the block the pragma is in.
Before, the pragma was parsed and dropped, and every short counted loop was unrolled (Triton's
unary_math unrolled its Payne-Hanek loop, written `nounroll`). Expectations: ptxas's cubin
(its load count: one per unrolled copy) and its outputs in the emulator."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import REDUCTION, _instructions

# two counted loops of 12 trips: both unrolled fully unless a pragma says otherwise
BASE = REDUCTION.replace("RTRIPS", "12").replace("TRIPS", "12")
PRAGMA = '.pragma "nounroll";\n'
VARIANTS = {
    "none": BASE,
    "statement, header of the one-block loop": BASE.replace("BODY:\n", "BODY:\n" + PRAGMA),
    "statement, after the header's first instruction": BASE.replace(
        "BODY:\nmul.wide.u32 %rd5, %r5, 4;\n", "BODY:\nmul.wide.u32 %rd5, %r5, 4;\n" + PRAGMA),
    "statement, header of the rotated loop": BASE.replace("END:\n", "END:\n" + PRAGMA),
    "entry function": BASE.replace("(.param .u64 out, .param .u64 in)\n",
                                   "(.param .u64 out, .param .u64 in)\n" + PRAGMA),
    "module": BASE.replace(".address_size 64\n", ".address_size 64\n" + PRAGMA),
}


@pytest.mark.parametrize("where", list(VARIANTS))
def test_nounroll_keeps_the_loop_as_ptxas_does(where):
    ptx = VARIANTS[where]
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    mine, ref = _instructions(sass_listing(ours)), _instructions(sass_listing(theirs))
    loads = lambda listing: sum(o.startswith("LDG") for o in listing)   # noqa: E731
    assert loads(mine) == loads(ref), (mine, ref)
    assert any("BRA" in o for o in mine) == any("BRA" in o for o in ref), (mine, ref)
    data = np.random.default_rng(7).standard_normal(64 * 12 + 1024).astype(np.float32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(64, dtype=np.float32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, data.copy()], hazard_check=True)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()


def test_nounroll_is_what_keeps_the_loops():
    """The variants differ from BASE only by the pragma: without it both loops unroll (24 loads)."""
    ours, _ = codegen.generate_module(codegen.lower_ptx(BASE, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    assert sum(o.startswith("LDG") for o in _instructions(sass_listing(ours))) == 24
