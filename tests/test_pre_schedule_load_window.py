"""Loads of an unrolled reduction in flight up to the register budget (sched/pre_schedule.py
LOAD_WINDOW, opt/unroll.py MAX_TRIPS 64).

A tinygrad-style row-max reduction (`ld.global.v4` + four `max` per trip) by one warp is bound
by its loads' latency. ptxas unrolls such a loop fully and keeps 8-20 loads in flight (50
trips of f32: 94 registers). Ours ran 50 trips as 10 copies per exit test (five waits for
memory, SM model 1.68x ptxas's), and a fully unrolled body went at most 40 registers ahead:
the capped latency order let ten 128-bit loads go, then each next load waited for the max of
an earlier one. Narrow elements (`ld.v4.b16`) fared worse: their halves are taken out one
PRMT at a time, each adding a register before the max that frees two, so under the cap
nothing ready freed a register, the priority order issued the next load instead, the block
overran the cap (pressure 103 against 40) and the source order was kept, one load at a time
(SM 7861 against ptxas's 1541; `unroll.py` then kept such loops partial, a guard). A serial
f64 FMA chain over loaded operands gains nothing from loads far ahead (it waits for the
chain): the window's order is taken only where an in-order estimate with far loads says it
is faster. Expected values: NumPy's, ptxas's cubin's outputs and its time on the SM model."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.timing.model import from_result
from ptx2sass.emu.timing.trace import Tee
from ptx2sass.encoder.cubin import read_cubin
from ptx2sass.sched import pre_schedule
from test_pre_schedule_capped import STEPS, _ptx

ELEMENTS = {   # PTX type, load/store type, bytes, NumPy type, -inf
    "f32": ("f32", "f32", 4, np.float32, "0fFF800000"),
    "f16": ("f16", "b16", 2, np.float16, "0xFC00"),
    "u64": ("u64", "u64", 8, np.uint64, "0"),
}


def _reduce(trips: int, elem: str) -> str:
    ty, mem, size, _, ninf = ELEMENTS[elem]
    load = f"ld.global.v4.{mem} {{%f1, %f2, %f3, %f4}}, [%rd3+0];"
    if size == 8:               # 128 bits a load at most: two v2 loads
        load = f"ld.global.v2.{mem} {{%f1, %f2}}, [%rd3+0];\nld.global.v2.{mem} {{%f3, %f4}}, [%rd3+16];"
    return f""".version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
.maxntid 32
{{
.reg .s32 %r<8>;
.reg .u64 %rd<6>;
.reg .{ty} %f<10>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r1, %tid.x;
mov.{mem} %f9, {ninf};
mov.u32 %r2, -1;
bra END;
LOOP:
shl.b32 %r3, %r2, 2;
mad.lo.s32 %r4, %r1, {4 * trips}, %r3;
cvt.s64.s32 %rd3, %r4;
mad.lo.s64 %rd3, %rd3, {size}, %rd2;
{load}
max.{ty} %f5, %f1, %f2;
max.{ty} %f6, %f5, %f3;
max.{ty} %f7, %f6, %f4;
max.{ty} %f9, %f9, %f7;
END:
add.s32 %r2, %r2, 1;
setp.lt.s32 %p1, %r2, {trips};
@%p1 bra LOOP;
cvt.s64.s32 %rd4, %r1;
mad.lo.s64 %rd4, %rd4, {size}, %rd1;
st.global.{mem} [%rd4+0], %f9;
ret;
}}
"""


def _ops(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, options=())
    return [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+([A-Z][A-Z0-9.]*)", text)]


def _regs(cubin: bytes) -> int:
    (k,) = read_cubin(cubin).kernels
    return k.regcount


def _measure(trips: int, elem: str):
    """(ours, ptxas's) SM-model cycles; outputs checked equal to each other and to NumPy."""
    ptx = _reduce(trips, elem)
    npt = ELEMENTS[elem][3]
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    rng = np.random.default_rng(trips)
    data = (rng.integers(0, 1 << 63, 32 * 4 * trips, dtype=np.uint64) if npt is np.uint64
            else rng.standard_normal(32 * 4 * trips).astype(npt))
    expected = data.reshape(32, 4 * trips).max(axis=1)
    sm, outs = [], []
    for cubin in (ours, theirs):
        out = np.zeros(32, dtype=npt)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy()], hazard_check=True,
                  timing=Tee.checked)
        if cubin is ours:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
        sm.append(from_result(res, "sm_89").cycles)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert outs[0].tobytes() == expected.tobytes()
    return ours, sm


@pytest.mark.parametrize("trips, elem, bound", [(50, "f32", 1.10), (25, "f16", 1.10)])
def test_unrolled_reduction_keeps_loads_in_flight(trips, elem, bound):
    """Fully unrolled, as ptxas's: 50 f32 trips were 10 copies per exit test (SM 4787 vs
    ptxas's 2849), 25 f16 trips 5 copies under the narrow-load guard (2796 vs 1541); now
    2923 and 1552."""
    ours, (mine, theirs) = _measure(trips, elem)
    ops = _ops(ours)
    assert sum(op.startswith("LDG") for op in ops) == trips       # no loop left
    assert mine <= bound * theirs, (mine, theirs)


def test_narrow_loads_in_flight_under_the_small_cap(monkeypatch):
    """At the 40-register cap (a kernel without room for the window) the f16 reduction's
    loads still overlap: the least-adding choice takes out the halves of loads that have
    arrived instead of issuing more loads (before: source order, SM 7861 vs ptxas's 1541)."""
    monkeypatch.setattr(pre_schedule, "LOAD_WINDOW", 40)
    _, (mine, theirs) = _measure(25, "f16")
    assert mine <= 1.35 * theirs, (mine, theirs)


def _fma_chain() -> str:
    """test_pre_schedule_capped's 48-step f64 dot product in a kernel that bounds its
    registers (`.maxntid 64`), so the wider window may apply."""
    return _ptx(".maxntid 64\n")


def test_serial_chain_keeps_the_small_cap():
    """A 48-step f64 FMA chain in a 64-thread kernel (room for the window): loads 88
    registers ahead (92 registers) ran 5519 SM cycles against 4461 at the 40-register cap
    (ptxas: 38 registers, 4648); the far-load estimate keeps the cap. Outputs = ptxas's."""
    ptx = _fma_chain()
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]
    theirs = oracle.ptxas(ptx, "sm_89").output
    assert _regs(ours) <= 64, _regs(ours)
    rng = np.random.default_rng(3)
    a = rng.standard_normal(64 * STEPS)
    x = rng.standard_normal(STEPS)
    outs, sm = [], []
    for cubin in (ours, theirs):
        out = np.zeros(64)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, a.copy(), x.copy()], hazard_check=True,
                  timing=Tee.checked)
        if cubin is ours:
            assert not res.hazards
        outs.append(out)
        sm.append(from_result(res, "sm_89").cycles)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert sm[0] <= 1.05 * sm[1], sm


def test_wide_compares_keep_the_predicate_limit():
    """A 25-trip u64 row max (two `ld.v2.u64` and four 64-bit max a trip: ISETP pairs and
    SELs, a predicate each): the least-adding choice took compares while the predicate file
    was full, the capped order needed 12 predicates, was rejected, and the source order ran
    one load at a time (SM 16186 vs ptxas's 3513; now 9985, still 2.8x: not done)."""
    _, (mine, theirs) = _measure(25, "u64")
    assert mine <= 3.2 * theirs, (mine, theirs)
