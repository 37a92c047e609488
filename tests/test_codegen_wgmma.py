"""`wgmma.*` on sm_90a (isel/wgmma.py) against ptxas 13.5.

* Per form (tools/wgmma_forms.py: f16/bf16 with f32/f16 accumulators, N = 8..256, A from a
  descriptor or registers, scale-d immediate 0/1 or a predicate, scales -1, transposes;
  tf32, e4m3/e5m2, s8/u8 [.satfinite], b1): our WARPGROUP/xGMMA instructions equal
  ptxas's, in order: opcode, modifiers, operand shapes (register numbers aside). Before the
  module every form was refused ("PTX instruction `wgmma` not supported yet").
* nvdisasm reads our cubin back as the instructions we meant (the words re-decode to the
  same text), and the accumulator is one group aligned to 8 registers.
* Refusals: sm_90 without `a`, shapes, types, immediates and vector sizes ptxas refuses,
  in ptxas's words.

Values of our cubins in the emulator (NumPy's D, hazard-free): tests/test_emu_gmma.py
`test_our_cubins_give_numpys_d`.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptx2sass import codegen, oracle
from ptx2sass.encoder.model import Mem, Reg
from ptx2sass.encoder.sass_text import format_instruction
from ptx2sass.errors import CompileError
from tools.wgmma_forms import Form, f16_forms, kernel, other_forms

FORMS = {f.name: f for f in f16_forms() + other_forms()}
ARCH = "sm_90a"


def _ours(ptx: str, arch: str = ARCH):
    return codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")


def warpgroup_lines(cubin: bytes, numbers: bool = False) -> list[str]:
    """The WARPGROUP.* and xGMMA instructions nvdisasm prints, register numbers replaced by
    their file unless `numbers`."""
    out = []
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m and re.search(r"GMMA|WARPGROUP", m.group(1)):
            text = m.group(1)
            out.append(text if numbers else re.sub(r"\b(U?R|UP)\d+\b", r"\1", text))
    return out


@pytest.mark.parametrize("name", sorted(FORMS))
def test_warpgroup_instructions_equal_ptxas(name):
    ptx = kernel(FORMS[name])
    theirs = oracle.ptxas(ptx.encode(), ARCH)
    assert theirs.ok, theirs.stderr
    expected = warpgroup_lines(theirs.output)
    assert len(expected) == 3           # ARRIVE, the MMA, DEPBAR
    assert warpgroup_lines(_ours(ptx)[0]) == expected


@pytest.mark.parametrize("name", ["n256_f32_f16_f16_sdp_sa1_sb1_ta0_tb0",
                                  "n256_f32_bf16_bf16_areg_sdp_sa1_sb1_ta0_tb0",
                                  "n24_f16_f16_f16_areg_sdp_sa1_sb1_ta0_tb0",
                                  "n64_f32_f16_f16_sdp_sam1_sbm1_ta1_tb1"])
def test_read_back_and_accumulator_group(name):
    """nvdisasm prints what we encoded; D = C is one group starting at a multiple of 8."""
    form = FORMS[name]
    cubin, kernels = _ours(kernel(form))
    ours = [format_instruction(i) for i in kernels[0].instructions
            if i.opcode in ("HGMMA", "WARPGROUP")]
    assert warpgroup_lines(cubin, numbers=True) == [re.sub(r"\s+", " ", t) for t in ours]
    mma = next(i for i in kernels[0].instructions if i.opcode == "HGMMA")
    d = mma.operands[0]
    assert d.index % 8 == 0 and d.index + form.d_regs <= 255
    assert mma.operands[-3 if "UP" in str(mma.operands[-2]) else -2] == d    # C is D


def _first_error(stderr: str) -> str:
    return next(line.split("error   : ", 1)[1] for line in stderr.splitlines() if "error   :" in line)


BASE = kernel(Form(8, "f32", "f16", "f16"))
BAD = {
    "unknown_shape": ("m64n8k16.f32.f16.f16", "m64n12k16.f32.f16.f16"),
    "bf16_f16_accumulator": ("m64n8k16.f32.f16.f16", "m64n8k16.f16.bf16.bf16"),
    "k_of_another_type": ("m64n8k16.f32.f16.f16", "m64n8k8.f32.f16.f16"),
    "mixed_f16_bf16": ("m64n8k16.f32.f16.f16", "m64n8k16.f32.f16.bf16"),
    "scale_a_2": ("ad, bd, p, 1, 1, 0, 0", "ad, bd, p, 2, 1, 0, 0"),
    "scale_b_0": ("ad, bd, p, 1, 1, 0, 0", "ad, bd, p, 1, 0, 0, 0"),
    "trans_b_2": ("ad, bd, p, 1, 1, 0, 0", "ad, bd, p, 1, 1, 0, 2"),
    "three_accumulators": ("{d0, d1, d2, d3}", "{d0, d1, d2}"),
    "wait_group_register": ("wgmma.wait_group.sync.aligned 0", "wgmma.wait_group.sync.aligned f"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_refusals_in_ptxas_words(case):
    old, new = BAD[case]
    ptx = BASE.replace(old, new)
    assert ptx != BASE
    theirs = oracle.ptxas(ptx.encode(), ARCH)
    assert not theirs.ok
    with pytest.raises(CompileError) as e:
        _ours(ptx)
    assert str(e.value).split("error   : ", 1)[-1] == _first_error(theirs.stderr)


@pytest.mark.parametrize("name", ["n8_f32_f16_f16_sdp_sa1_sb1_ta0_tb0", "n8_f32_tf32_tf32_sdp_sa1_sb1_ta0_tb0",
                                  "n8_f32_e4m3_e4m3_sdp_sa1_sb1_ta0_tb0", "n8_s32_s8_s8_sdp_sa1_sb1_ta0_tb0",
                                  "n8_s32_b1_b1_sdp_sa1_sb1_ta0_tb0"])
@pytest.mark.parametrize("target", ["sm_90", "sm_100", "sm_100a", "sm_120a"])
def test_other_targets_refused_as_ptxas(name, target):
    """`.target sm_90` (no `a`): each wgmma instruction refused, mma_async named by its kind;
    sm_100[a]/sm_120a: also "cannot be compiled for architecture" (before: sm_100a tried
    to encode WARPGROUP.ARRIVE and failed with an internal error)."""
    ptx = kernel(FORMS[name], target=target)
    if target != "sm_90":
        ptx = re.sub(r"\.version \d+\.\d+", ".version 8.7", ptx)
    arch = target
    theirs = oracle.ptxas(ptx.encode(), arch)
    assert not theirs.ok
    expected = [line.split("error   : ", 1)[1] for line in theirs.stderr.splitlines() if "error   :" in line]
    with pytest.raises(CompileError) as e:
        _ours(ptx, arch)
    ours = [d.message for d in e.value.diagnostics]
    assert ours == expected


SEEDS = Path(__file__).resolve().parent.parent / "tools" / "isa_seeds"


def test_chain_in_one_group():
    """Eight mma_asyncs (f16/bf16/tf32/e4m3 x e5m2, A from registers and descriptors, negated
    and transposed) in one commit group: only the last carries gsb0, as in ptxas's code."""
    ptx = (SEEDS / "wgmma_chain_sm90.ptx").read_text()
    theirs = oracle.ptxas(ptx.encode(), ARCH)
    expected = warpgroup_lines(theirs.output)
    assert sum("gsb0" in t for t in expected) == 2          # the last MMA and the DEPBAR
    assert warpgroup_lines(_ours(ptx)[0]) == expected


def test_a_registers_live_until_the_wait():
    """The tensor core reads A's registers after issue: nothing between an MMA reading them
    and the WARPGROUP.DEPBAR that waits for it may write them (loads, adds and a store
    between the commit and the wait; before the DEPBAR kept them live, a load took them)."""
    ptx = (SEEDS / "wgmma_live_a_sm90.ptx").read_text()
    _, kernels = _ours(ptx)
    pending: set[int] = set()
    for ins in kernels[0].instructions:
        if ins.opcode == "HGMMA" and not ins.operands[1].gdesc:
            pending |= set(range(ins.operands[1].index, ins.operands[1].index + 4))
        elif ins.opcode == "WARPGROUP" and "DEPBAR" in ins.modifiers:
            pending = set()
        elif pending and ins.operands and isinstance(ins.operands[0], Reg) and ins.operands[0].file == "R":
            width = 4 if "128" in ins.modifiers else 2 if {"64", "WIDE"} & set(ins.modifiers) else 1
            written = set(range(ins.operands[0].index, ins.operands[0].index + width))
            assert not written & pending, format_instruction(ins)


def test_values_live_across_the_mma_stay_out_of_d():
    """A value defined before the MMA and read after it never shares D's registers (with
    2-bit part units in regalloc/liveness.py a 16-register accumulator's parts aliased other
    registers' and the constant 64 of the output address was put in R12, inside D)."""
    _, kernels = _ours((SEEDS / "wgmma_live_across_sm90.ptx").read_text())
    code = kernels[0].instructions
    at = next(i for i, ins in enumerate(code) if ins.opcode == "HGMMA")
    d = code[at].operands[0]
    inside = set(range(d.index, d.index + 16))
    for ins in code[at + 1:]:
        sources = ins.operands[1:] if ins.opcode != "STG" else ins.operands[:1]
        for op in sources:
            regs = [op.base] if isinstance(op, Mem) and op.base is not None else [op]
            for r in regs:
                if isinstance(r, Reg) and r.file == "R" and not r.is_zero:
                    assert not set(range(r.index, r.index + (2 if "64" in r.suffix else 1))) & inside, \
                        format_instruction(ins)


@pytest.mark.parametrize("n", [16, 24, 208])
def test_integer_n_beyond_the_first_seeds_equal_ptxas(n):
    """IGMMA N other than 8 and 64 (the hopper table's IGMMA forms since branch gmma_emu's
    seeds hold every N; before, they were refused here): the same instructions as ptxas's."""
    ptx = kernel(Form(n, "s32", "s8", "u8"))
    theirs = oracle.ptxas(ptx.encode(), ARCH)
    assert theirs.ok, theirs.stderr
    assert warpgroup_lines(_ours(ptx)[0]) == warpgroup_lines(theirs.output)
