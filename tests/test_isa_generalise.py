"""The encoding tables on ptxas cubins the probe never saw: held-back real-world modules and
fuzzer programs, every arch with a table. Every word whose bits nvdisasm's text determines
must encode bit-exactly from that text (the expected bits are ptxas's own words), and every
word must decode to the instruction the text names.

PTX2SASS_SAMPLE bounds it: default 2 held-back real-world modules and 3 fuzzer seeds per
arch; `all`: every held-back module and 40 seeds; a number N: N modules and N seeds.
The full figure over every module: `py -m tools.isa_generalise --arch all`.
"""
from __future__ import annotations

import os

import pytest

from tools.isa_generalise import ARCHS, check_arch, fuzz_files, realworld_files

# Opcodes with forms the tables still miss or mis-encode on these cubins (measured with
# `py -m tools.isa_generalise --arch sm_80 sm_86 sm_89 --fuzz-seeds 0:60`; issue 16 item 3's
# remaining work). A failure on any other opcode fails the test.
SM8X_GAPS = frozenset({
    "ATOMG", "STG",                   # bit 101 of desc[UR] forms: not printed, not determined
    "BRXU", "MOVM", "SULD", "SUST", "TEX", "TLD", "UBMSK", "USGXT",   # opcode/form unknown
    "DSETP",                          # f64 immediate printed in nvdisasm's e-notation
    "F2FP", "HFMA2", "HMNMX2", "HMUL2", "HSET2", "HSETP2", "I2F", "I2I", "IABS", "IMAD",
    "UIADD3", "ULDC", "ULEA", "USHF", "VABSDIFF",   # operand kinds no corpus showed
})
# sm_90: measured by branch hopper6 (2026-11-27) with `py -m tools.isa_generalise --arch sm_90
# --held-back-only --fuzz-seeds 900000:900040` (this test's inputs at PTX2SASS_SAMPLE=all):
# 12847/12849 determined words; the three failing words (LDL.64 [RZ] decoding as [0x0],
# USHF.R.S64 with an immediate 0x80000000, IMAD.SHL.U32 by 0x800) were probed into the table
# since (tools/isa_seeds/ushf_ldl_sm90.words, imad_shl_pow2_sm90.words). The 49 opcodes listed
# before were gaps of the tables of 2026-11-26.
SM90_GAPS: frozenset = frozenset()
# sm_120 and sm_75 (`--arch sm_120 sm_75`): the opcodes with a failing form when measured.
SM120_GAPS = frozenset({
    "ARRIVES", "ATOM", "ATOMS", "BRA", "BRXU", "CS2UR", "DSETP", "ENDCOLLECTIVE", "F2FP",
    "F2I", "FADD", "FENCE", "FSEL", "HADD2", "HFMA2", "HMMA", "HSET2", "HSETP2", "I2F", "I2FP",
    "I2I", "IABS", "IADD", "IMAD", "LDCU", "LDG", "MOVM", "QSPC", "SEL", "SHF", "SULD", "SUST",
    "SYNCS", "TEX", "TLD", "UBMSK", "UBREV", "UFFMA", "UFMUL", "UFSEL", "UI2F", "UIADD3",
    "UIMNMX", "ULEA", "ULOP3", "UMOV", "UPLOP3", "USEL", "USGXT", "USHF", "UVIMNMX", "VIADD",
    "VIMNMX", "WARPSYNC",
})
SM75_GAPS = frozenset({
    "ATOM", "ATOMG", "ATOMS", "DADD", "DSETP", "F2I", "FSEL", "HFMA2", "HSET2", "HSETP2",
    "I2F", "IMAD", "IMNMX", "LDG", "LDS", "LEA", "MOVM", "MUFU", "PLOP3", "SEL", "SHF", "SULD",
    "SUST", "TEX", "TLD", "UBMSK", "UIADD3", "UIMAD", "ULEA", "USGXT", "USHF", "VABSDIFF",
    "VABSDIFF4",
    "FCHK",          # FCHK P, R, c[b][o]: first seen after the fuzzer's session-3 generator changes
})
KNOWN_GAPS = {"sm_75": SM75_GAPS, "sm_80": SM8X_GAPS, "sm_86": SM8X_GAPS, "sm_89": SM8X_GAPS,
              "sm_90": SM90_GAPS, "sm_120": SM120_GAPS}

# Seeds far from the ones `tools.isa_generalise`'s default reports on (0:100), which the
# tables' fixes were made from: these stay held back.
HELD_BACK_SEEDS = 900_000


def _sample() -> tuple[int, int]:
    s = os.environ.get("PTX2SASS_SAMPLE", "")
    if s == "all":
        return 10_000, 40
    if s.isdigit():
        return int(s), int(s)
    return 2, 3


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHS)
def test_held_back_ptxas_cubins_reassemble_bit_exactly(arch):
    modules, seeds = _sample()
    files = realworld_files(arch, held_back_only=True)
    step = max(1, len(files) // modules)
    files = files[::step][:modules]
    files += fuzz_files(range(HELD_BACK_SEEDS, HELD_BACK_SEEDS + seeds))
    st = check_arch(arch, files)
    assert st["words"] > 50, f"too few words ({st['words']}) to mean anything"
    failing = {k: v[:2] for k, v in st["determined_failures"].items()
               if _opcode(k) not in KNOWN_GAPS[arch]}
    assert not failing, failing


def _opcode(form_key: str) -> str:
    return form_key.split(" ", 1)[0].split(".", 1)[0]


def test_uniform_register_branch_reads_as_nvdisasm_prints_it():
    """nvdisasm writes `BRXU UR4 -0x940` (ptxas's cubin of a fuzzer switch, sm_89): no comma
    before a register-relative target, as for BRX."""
    from encoder.sass_text import format_instruction, parse_instruction
    text = "BRXU UR4 -0x940"
    ins = parse_instruction(text)
    assert [type(o).__name__ for o in ins.operands] == ["Reg", "Imm"]
    assert format_instruction(ins) == text
