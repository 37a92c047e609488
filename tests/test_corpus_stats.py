"""The corpus report's scanners count what is really there."""
from pathlib import Path

from ptx2sass import oracle
from tools import corpus_stats

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "vecadd.ptx"


def test_ptx_instruction_scan_of_example():
    found = corpus_stats.ptx_instructions(EXAMPLE.read_text())
    # Counted by hand from examples/vecadd.ptx.
    assert found.count("ld.param.u64") == 3
    assert found.count("add.s64") == 3
    assert {"mad.lo.s32", "setp.ge.s32", "bra", "cvta.to.global.u64", "mul.wide.s32",
            "ld.global.f32", "add.f32", "st.global.f32", "ret", "mov.u32"} <= set(found)
    assert len(found) == 22
    assert not any(x.startswith(".") for x in found)


def test_sass_scan_matches_cuobjdump_listing():
    run = oracle.ptxas(EXAMPLE.read_text())
    from_nvdisasm = corpus_stats.sass_mnemonics(oracle.nvdisasm(run.output, ()))
    from_cuobjdump = corpus_stats.sass_mnemonics(oracle.cuobjdump_sass(run.output))
    assert from_nvdisasm == from_cuobjdump
    assert "EXIT" in from_nvdisasm and "FADD" in from_nvdisasm
    assert from_nvdisasm.count("LDG.E") == 2
