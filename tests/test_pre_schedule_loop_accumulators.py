"""A loop carrying many accumulators, each updated with a load of its own, keeps loads in
flight (sched/pre_schedule.py SHARED_COPIES, PRESSURE_ORDER_PREDICATES, CAP_ABOVE_SOURCE).
The shape of the real-world register_pressure many_accumulators: 40 f32 accumulators, each
trip `a[k] = fma(a[k], a[(k + 7) % 40] * 0.25, in[(i*40 + k + 3*tid) & 4095])`, the sum of
the accumulators after the loop, `.maxntid 1024` (64 registers). Each new value is copied
into its loop register and read after the loop as well, so the pressure estimate counted
it twice (82 where 49 were allocated); every capped order's cap was then below what the
loop keeps live and the loop ran one load at a time (SM-model cycles 18654 against
ptxas's 10081). Results = ptxas's cubin's in the emulator, bit for bit; ours hazard-free."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.timing.model import from_result
from ptx2sass.emu.timing.trace import Tee

ACC = 40
THREADS = 128
TRIPS = 6


def _ptx() -> str:
    body = ["ld.param.u64 %rd1, [in];", "ld.param.u64 %rd2, [out];", "ld.param.u32 %r1, [trips];",
            "cvta.to.global.u64 %rd1, %rd1;", "cvta.to.global.u64 %rd2, %rd2;",
            "mov.u32 %r2, %tid.x;", "mul.lo.u32 %r3, %r2, 3;", "shl.b32 %r4, %r2, 5;"]
    for k in range(ACC):
        body += [f"add.u32 %t, %r4, {k};", "and.b32 %t, %t, 4095;", "mul.wide.u32 %ra, %t, 4;",
                 "add.s64 %ra, %rd1, %ra;", f"ld.global.nc.f32 %a{k}, [%ra];"]
    body += ["mov.u32 %i, 0;", "LOOP:", "mad.lo.u32 %r5, %i, 40, %r3;"]
    for k in range(ACC):
        body += [f"add.u32 %t, %r5, {k};", "and.b32 %t, %t, 4095;", "mul.wide.u32 %ra, %t, 4;",
                 "add.s64 %ra, %rd1, %ra;", "ld.global.nc.f32 %x, [%ra];",
                 f"mul.f32 %m, %a{(k + 7) % ACC}, 0f3E800000;", f"fma.rn.f32 %a{k}, %a{k}, %m, %x;"]
    body += ["add.u32 %i, %i, 1;", "setp.lt.u32 %p, %i, %r1;", "@%p bra LOOP;", "mov.f32 %s, 0f00000000;"]
    for k in range(ACC):
        body += [f"cvt.rn.f32.u32 %m, {k + 1};", f"fma.rn.f32 %s, %a{k}, %m, %s;"]
    body += ["mul.wide.u32 %ra, %r2, 4;", "add.s64 %ra, %rd2, %ra;", "st.global.f32 [%ra], %s;", "ret;"]
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 in, .param .u64 out, .param .u32 trips)\n.maxntid 1024, 1, 1\n{\n"
            f".reg .pred %p;\n.reg .b32 %r<6>, %t, %i;\n.reg .b64 %rd<3>, %ra;\n"
            f".reg .f32 %a<{ACC}>, %x, %m, %s;\n" + "\n".join(body) + "\n}\n")


def _launch(cubin: bytes):
    data = np.random.default_rng(7).uniform(-1, 1, 4096).astype(np.float32)
    out = np.zeros(THREADS, np.float32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [data, out, np.uint32(TRIPS)], hazard_check=True,
              timing=Tee.checked)
    return out, res


def test_loop_accumulators_keep_loads_in_flight():
    ptx = _ptx()
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, "sm_89")
    mine, my_run = _launch(ours)
    ref, their_run = _launch(theirs.output)
    assert not my_run.hazards
    assert mine.tobytes() == ref.tobytes()
    my_sm, their_sm = (from_result(r, "sm_89").cycles for r in (my_run, their_run))
    assert my_sm <= 1.25 * their_sm, (my_sm, their_sm)
