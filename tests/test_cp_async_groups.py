"""cp.async groups (LDGSTS, LDGDEPBAR, DEPBAR) as ptxas keeps them, and as the emulator runs them.

The H200 returned only the first K-stage's product for our sm_90 cubins of triton matmul_f16,
matmul_int8 and matmul_w8s4 (docs/gpu/2026-11-26-h200-sm90-run4-triton.md) while ptxas's were
right. Two differences remained in their cp.async bookkeeping: ours gave LDGDEPBAR's
scoreboard (SB0) to LDC/LDSM/LDS too and waited on it at block starts, and ours issued the
instruction after a DEPBAR 1 cycle after it; every ptxas cubin keeps that scoreboard for the
groups alone and stalls 4 or more after DEPBAR. And the emulator landed each copy at issue, so
no missing or mis-timed wait could ever show."""
import re

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program
from ptx2sass.sched import control
from tests import triton_corpus

KERNELS = ["matmul_f16.ptx", "matmul_int8.ptx", "matmul_w8s4.ptx"]


def _ptx(name):
    return open(f"tests/corpus/triton/{name}").read()


def _groups_usage(cubin: bytes) -> tuple[set, list, list]:
    """(LDGDEPBAR's scoreboards, instructions that set or wait on one of them, DEPBAR stalls)."""
    p = load_program(cubin)
    groups = {i.control.wr_sb for _, i in p.instructions if i.opcode == "LDGDEPBAR"}
    others = [(hex(o), i.opcode) for o, i in p.instructions if i.opcode != "LDGDEPBAR" and any(
        i.control.wr_sb == sb or i.control.rd_sb == sb or i.control.wait >> sb & 1 for sb in groups)]
    stalls = [i.control.stall for _, i in p.instructions if i.opcode == "DEPBAR"]
    return groups, others, stalls


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", KERNELS)
def test_groups_scoreboard_and_depbar_stall_as_ptxas(name, arch):
    build = oracle.ptxas(_ptx(name), arch, name=name)
    assert build.ok
    theirs = _groups_usage(build.output)
    ours = _groups_usage(ptx2sass.compile(_ptx(name), arch, name))
    assert theirs[0] == ours[0] == {0}
    assert theirs[1] == [] and ours[1] == []
    assert min(theirs[2]) >= control.MIN_STALL["DEPBAR"] and min(ours[2]) >= control.MIN_STALL["DEPBAR"]


def _entry(name):
    return next(e for e in triton_corpus.manifest() if e["file"] == name)


def _patch_controls(cubin: bytes, edit) -> bytes:
    """`cubin` with the control bits of each instruction `edit(ins)` names replaced by the
    fields it returns, found by its 16 bytes (every copy of the word: the same instruction)."""
    p = load_program(cubin)
    out = bytearray(cubin)
    for off, ins in p.instructions:
        change = edit(ins)
        if not change:
            continue
        word = p.words[off]
        old = word.to_bytes(16, "little")
        for field, (lo, width) in {"stall": (105, 4), "wr_sb": (110, 3), "rd_sb": (113, 3),
                                   "wait": (116, 6)}.items():
            if field in change:
                word = word & ~(((1 << width) - 1) << lo) | change[field] << lo
        out = bytearray(bytes(out).replace(old, word.to_bytes(16, "little")))
    return bytes(out)


def _group_hazards(result):
    return [str(h) for h in result.hazards if "DEPBAR stalls" in str(h) or "cp.async groups" in str(h)]


def test_emulator_flags_a_short_depbar_stall_and_a_shared_groups_scoreboard():
    name = "matmul_f16.ptx"
    ours = ptx2sass.compile(_ptx(name), "sm_90", name)
    clean, _ = triton_corpus.launch(_entry(name), ours)
    assert not _group_hazards(clean)
    short = _patch_controls(ours, lambda i: {"stall": 1} if i.opcode == "DEPBAR" else None)
    result, _ = triton_corpus.launch(_entry(name), short)
    assert any("DEPBAR stalls 1" in h for h in _group_hazards(result))
    first_ldsm = []

    def to_sb0(i):
        if i.opcode == "LDSM" and not first_ldsm:
            first_ldsm.append(i)
            return {"rd_sb": 0}
        return None
    shared = _patch_controls(ours, to_sb0)
    result, _ = triton_corpus.launch(_entry(name), shared)
    assert any("LDSM sets SB0" in h for h in _group_hazards(result))


@pytest.mark.parametrize("name", KERNELS)
def test_ptxas_cubins_keep_the_conventions(name):
    build = oracle.ptxas(_ptx(name), "sm_90", name=name)
    result, _ = triton_corpus.launch(_entry(name), build.output)
    assert not _group_hazards(result)


# A thread copies three words with cp.async, one group each, over a shared word it first
# filled with a sentinel, and records what it reads back at each step: before any wait,
# after wait_group 2 (the first group is done), wait_group 1 (two), wait_group 0 (all).
_WAITS = r"""
.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 16 .b32 buf[4];
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, buf;
    st.shared.u32 [%r1], 0x7777;
    st.shared.u32 [%r1+4], 0x7777;
    st.shared.u32 [%r1+8], 0x7777;
    cp.async.ca.shared.global [%r1], [%rd1], 4;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r1+4], [%rd1+4], 4;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r1+8], [%rd1+8], 4;
    cp.async.commit_group;
    {steps}
    ret;
}}
"""


def _waits_kernel(arch: str) -> str:
    steps, slot = [], 0
    for wait in (None, 2, 1, 0):
        if wait is not None:
            steps.append(f"cp.async.wait_group {wait};")
        for k in range(3):
            steps.append(f"ld.shared.u32 %r2, [%r1+{4 * k}];")
            steps.append(f"st.global.u32 [%rd2+{4 * slot}], %r2;")
            slot += 1
    return _WAITS.format(arch=arch, steps="\n    ".join(steps))


@pytest.mark.parametrize("compiler", ["ptxas", "ours"])
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_copies_land_when_their_group_is_waited_for(compiler, arch):
    ptx = _waits_kernel(arch)
    if compiler == "ptxas":
        build = oracle.ptxas(ptx, arch, name="waits.ptx")
        assert build.ok, build
        cubin = build.output
    else:
        cubin = ptx2sass.compile(ptx, arch, "waits.ptx")
    src = np.array([11, 22, 33], np.uint32)
    out = np.zeros(12, np.uint32)
    result = run(cubin, "k", (1, 1, 1), (1, 1, 1), [src, out])
    assert not result.hazards, [str(h) for h in result.hazards]
    s = 0x7777
    # By cp.async's definition (PTX ISA, cp.async.wait_group): before a wait covers a copy,
    # its destination may still hold the old bytes; the emulator takes that strictest view.
    assert out.tolist() == [s, s, s,  11, s, s,  11, 22, s,  11, 22, 33]
