"""wgmma in GEMM mainloops on sm_90a (branch wgmma24), against ptxas 13.5 and NumPy.

* Accumulators carried around a K loop (tools/wgmma_kloop.py: plain loads to shared memory,
  bar.sync or an mbarrier wait loop, wgmma.fence, one or two mma_async, commit, wait) stay
  in one register group across the back edge, as in ptxas's cubin: no register moves in the
  loop (ptxas: none either). Before, every iteration copied the group in before the MMA and
  out after it (2 x N/2 MOVs: 32 for N = 32), because isel/loop_groups.py planned only
  `mma`'s groups and only for loops of one or two blocks.
* Both cubins in the emulator give NumPy's A @ B (exact: small integers).
* scale-d from a kernel parameter: `UISETP` into UP0 as ptxas writes it (was ISETP +
  VOTEU.ANY), the complement with `!UP0` where ptxas uses it (eq, lt, le); the MMA still
  obeys it (D = the last tile's product where scale-d is false).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from tools import wgmma_kloop as W
from tools.wgmma_forms import Form, kernel

ARCH = "sm_90a"


def _cubins(ptx: str) -> dict[str, bytes]:
    theirs = oracle.ptxas(ptx, ARCH)
    assert theirs.ok, theirs.stderr
    return {"ptxas": theirs.output, "ours": ptx2sass.compile(ptx, ARCH)}


def _run(cubin: bytes, case: W.Case, acc: int = 1):
    a = W.launch_args(case)
    res = run(cubin, "kloop", (1, 1, 1), (W.THREADS, 1, 1),
              [a["img"].view(np.uint32).copy(), a["d"], np.uint32(a["ktiles"]), np.uint64(a["da"]),
               np.uint64(a["db"]), np.uint32(acc)], hazard_check=True)
    return a["d"], res


def _loops_with_mma(cubin: bytes) -> list[list[str]]:
    """The instructions of each backward branch's range (label .. branch) that holds an
    xGMMA, as nvdisasm prints them."""
    labels, code = {}, []
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(code)
            continue
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m:
            code.append(m.group(1))
    loops = []
    for i, text in enumerate(code):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", text)
        if m and labels.get(m.group(1), i + 1) <= i:
            body = code[labels[m.group(1)]:i + 1]
            if any("GMMA" in t for t in body):
                loops.append(body)
    return loops


def _register_moves(body: list[str]) -> list[str]:
    return [t for t in body if re.match(r"(@!?P\d\s+)?(MOV|IMAD\.MOV(\.U32)?)\s+R\d+", t)]


@pytest.mark.parametrize("case", W.CASES, ids=lambda c: c.name)
def test_kloop_values_equal_numpy(case):
    """ptxas's cubin and ours in the emulator: NumPy's D; ours hazard-free."""
    cubins = _cubins(W.ptx(case))
    want = W.expected(case)
    for who, cubin in cubins.items():
        got, res = _run(cubin, case)
        np.testing.assert_array_equal(got, want, err_msg=who)
        if who == "ours":
            assert res.hazards == [], res.hazards


@pytest.mark.parametrize("case", W.CASES, ids=lambda c: c.name)
def test_kloop_accumulators_not_copied(case):
    """The K loop's register moves = ptxas's (none), and the loop writes D's registers only
    with the MMAs: the group stays in place across the back edge."""
    cubins = _cubins(W.ptx(case))
    theirs, ours = _loops_with_mma(cubins["ptxas"]), _loops_with_mma(cubins["ours"])
    assert theirs and ours
    assert {len(_register_moves(b)) for b in ours} == {len(_register_moves(b)) for b in theirs} == {0}
    for body in ours:
        mma = next(t for t in body if "GMMA" in t)
        d = int(re.search(r"GMMA\S*\s+R(\d+)", mma).group(1))
        group = set(range(d, d + case.nd))
        for t in body:
            m = re.match(r"(@!?P\d\s+)?([A-Z0-9.]+)\s+R(\d+)", t)
            if m and "GMMA" not in m.group(2):
                assert int(m.group(3)) not in group, t


# scale-d from a parameter `f` (and a second one, `a0`): the compare ptxas writes
SCALE_COMPARES = ["setp.ne.u32 p, f, 0;", "setp.eq.u32 p, f, 0;", "setp.gt.s32 p, f, 5;",
                  "setp.le.s32 p, f, 3;", "setp.lt.u32 p, f, 3;", "setp.ge.s32 p, f, 3;",
                  "setp.lo.u32 p, f, 3;", "setp.ls.u32 p, 3, f;", "setp.gt.s32 p, 3, f;",
                  "setp.eq.u32 p, f, a0;", "setp.le.s32 p, f, a0;", "setp.hi.u32 p, f, 7;"]


def _scale_lines(cubin: bytes) -> list[str]:
    out = []
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m and re.search(r"SETP|VOTEU|GMMA", m.group(1)):
            out.append(re.sub(r"\b(U?R|UP)\d+\b", r"\1", m.group(1)))
    return out


@pytest.mark.parametrize("compare", SCALE_COMPARES)
def test_uniform_scale_d_as_ptxas(compare):
    """A parameter's compare as scale-d: ptxas's UISETP (ours was ISETP + VOTEU.ANY)."""
    ptx = kernel(Form(8, "f32", "f16", "f16")).replace(
        "ld.param.u32 f, [flag];", "ld.param.u32 f, [flag];\n  ld.param.u32 a0, [da];").replace(
        "setp.ne.u32 p, f, 0;", compare)
    cubins = _cubins(ptx)
    assert _scale_lines(cubins["ours"]) == _scale_lines(cubins["ptxas"])
    assert not any("VOTEU" in t for t in _scale_lines(cubins["ours"]))


@pytest.mark.parametrize("compare", ["setp.ne.u32 %p3, %r10, 0;", "setp.eq.u32 %p3, %r10, 0;"])
@pytest.mark.parametrize("acc", [0, 1])
def test_uniform_scale_d_values(compare, acc):
    """The K loop with scale-d = a parameter's compare (UP0 or !UP0): where it is false each
    step overwrites D, leaving the last tile's product; both cubins give NumPy's."""
    case = W.Case(n=16, ktiles=3, scale="param", seed=3)
    ptx = W.ptx(case).replace("setp.ne.u32 %p3, %r10, 0;", compare)
    a, b = W.matrices(case)
    accumulate = (acc != 0) == ("ne" in compare)
    want = W.fragment(a @ b if accumulate else a[:, -16:] @ b[-16:, :])
    for who, cubin in _cubins(ptx).items():
        got, res = _run(cubin, case, acc)
        np.testing.assert_array_equal(got, want, err_msg=who)
