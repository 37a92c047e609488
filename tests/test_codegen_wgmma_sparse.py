"""`wgmma.mma_async.sp` (sparse A) on sm_90a (isel/wgmma.py, branch wgmma24) against ptxas 13.5.

* Per form (tools/wgmma_forms.py `sparse_forms`: f16/bf16/tf32 with f32/f16 accumulators,
  e4m3/e5m2, s8/u8 (mixed, .satfinite), N = 8/64, A from a descriptor or registers, scale-d
  predicate/immediate 0/1, selectors 0/1, negations, transposes): our WARPGROUP/xGMMA.SP
  instructions equal ptxas's (opcode, modifiers, operand shapes; register numbers aside),
  and nvdisasm reads our words back as meant. Before: every form refused ("Illegal
  instruction types ... with shape '.m64n8k32'").
* Refusals in ptxas's words: selector range, register selector, immediate metadata, K of
  the dense shape, the dense instruction with the sparse K, b1, PTX versions, `.target sm_90`.
* The emulator does not model sparse wgmma: HGMMA.SP stops with a fault rather than
  computing a dense product (no values are checked here).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError
from ptx2sass.encoder.sass_text import format_instruction
from tools.wgmma_forms import Form, kernel, sparse_forms

ARCH = "sm_90a"
FORMS = {f.name: f for f in sparse_forms()}
REFUSED_BY_PTXAS = {"n64_s32_u8_s8_areg_sdp_sa1_sb1_ta0_tb0_sat_sp1"}   # selector 1 of 8-bit types


def _ours(ptx: str, arch: str = ARCH):
    return codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")


def _lines(cubin: bytes, numbers: bool = False) -> list[str]:
    out = []
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m and re.search(r"GMMA|WARPGROUP", m.group(1)):
            out.append(m.group(1) if numbers else re.sub(r"\b(U?R|UP)\d+\b", r"\1", m.group(1)))
    return out


# N = 64 of every type family and A source, the extras, and two N = 8 (ptxas: 37 forms, the
# same 7 table forms; all 37 were compared while writing this: 37/37)
CHECKED = sorted(n for n in set(FORMS) - REFUSED_BY_PTXAS
                 if n.startswith("n64") or n in ("n8_f16_e5m2_e5m2_areg_sdp_sa1_sb1_ta0_tb0_sp0",
                                                 "n8_s32_s8_s8_sdp_sa1_sb1_ta0_tb0_sp0"))


@pytest.mark.parametrize("name", CHECKED)
def test_sparse_instructions_equal_ptxas(name):
    ptx = kernel(FORMS[name])
    theirs = oracle.ptxas(ptx.encode(), ARCH)
    assert theirs.ok, theirs.stderr
    expected = _lines(theirs.output)
    assert len(expected) == 3 and ".SP." in expected[1]
    assert _lines(_ours(ptx)[0]) == expected


@pytest.mark.parametrize("name", ["n64_f32_f16_f16_sd1_sa1_sb1_ta0_tb0_sp1",
                                  "n64_f32_bf16_bf16_areg_sdp_sam1_sb1_ta0_tb1_sp1",
                                  "n8_f16_e5m2_e5m2_areg_sdp_sa1_sb1_ta0_tb0_sp0"])
def test_sparse_words_read_back(name):
    """nvdisasm prints what we encoded (the metadata register and selector included)."""
    cubin, kernels = _ours(kernel(FORMS[name]))
    ours = [re.sub(r"\s+", " ", format_instruction(i)) for i in kernels[0].instructions
            if i.opcode.endswith("GMMA") or i.opcode == "WARPGROUP"]
    assert _lines(cubin, numbers=True) == ours


def _errors(stderr: str) -> list[str]:
    return [line.split("error   : ", 1)[1] for line in stderr.splitlines() if "error   :" in line]


F16 = Form(8, "f32", "f16", "f16", sparse=True)
BAD = {
    "f16_selector_2": (F16, ("e, 0,", "e, 2,")),
    "tf32_selector_2": (Form(8, "f32", "tf32", "tf32", sparse=True), ("e, 0,", "e, 2,")),
    "e4m3_selector_1": (Form(8, "f32", "e4m3", "e4m3", sparse=True, selector=1), None),
    "s8_selector_1": (Form(8, "s32", "s8", "s8", sparse=True, selector=1), None),
    "mixed_int_selector_1": (Form(8, "s32", "u8", "s8", sparse=True, selector=1), None),
    "selector_register": (F16, ("e, 0,", "e, f,")),
    "metadata_immediate": (F16, ("e, 0,", "5, 0,")),
    "dense_k": (F16, ("m64n8k32", "m64n8k16")),
    "dense_with_sparse_k": (Form(8, "f32", "f16", "f16"), ("m64n8k16", "m64n8k32")),
    "b1": (Form(8, "s32", "b1", "b1"), ("wgmma.mma_async.sync.aligned.m64n8k256",
                                       "wgmma.mma_async.sp.sync.aligned.m64n8k512")),
    "version_f16": (F16, (".version 8.4", ".version 8.1")),
    "version_e4m3": (Form(8, "f32", "e4m3", "e4m3", sparse=True), (".version 8.4", ".version 8.0")),
    "version_mixed_int": (Form(8, "s32", "s8", "u8", sparse=True), (".version 8.4", ".version 8.3")),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_sparse_refusals_in_ptxas_words(case):
    form, sub = BAD[case]
    ptx = kernel(form)
    if sub:
        assert sub[0] in ptx
        ptx = ptx.replace(*sub)
    theirs = oracle.ptxas(ptx.encode(), ARCH)
    assert not theirs.ok
    with pytest.raises(CompileError) as e:
        _ours(ptx)
    assert str(e.value).split("error   : ", 1)[-1] == _errors(theirs.stderr)[0]


@pytest.mark.parametrize("types", [("f32", "f16"), ("s32", "s8", "u8"), ("f32", "e4m3")])
def test_sparse_on_sm90_refused_as_ptxas(types):
    form = Form(8, types[0], types[1], types[-1], sparse=True)
    ptx = kernel(form, target="sm_90")
    theirs = oracle.ptxas(ptx.encode(), "sm_90")
    with pytest.raises(CompileError) as e:
        _ours(ptx, "sm_90")
    assert [d.message for d in e.value.diagnostics] == _errors(theirs.stderr)


def test_emulator_stops_at_sparse_wgmma():
    """HGMMA.SP is not modelled: a fault naming it, not a dense product."""
    ptx = kernel(FORMS["n8_f32_f16_f16_sdp_sa1_sb1_ta0_tb0_sp0"])
    cubin = oracle.ptxas(ptx.encode(), ARCH).output
    regs = FORMS["n8_f32_f16_f16_sdp_sa1_sb1_ta0_tb0_sp0"].d_regs + 5
    with pytest.raises(Exception, match="sparse wgmma not modelled"):
        run(cubin, "k", (1, 1, 1), (128, 1, 1),
            [np.zeros((128, regs), np.uint32), np.zeros((128, regs), np.uint32), np.uint64(0),
             np.uint64(0), np.uint32(1)])
