"""sm_120 spells a two-input add as IADD (`Target.two_input_iadd`; encoder/target_spelling.py
respells IADD3 before the list scheduler runs). The list scheduler's set of pure opcodes
lacked IADD, so every address add ended a region and nothing moved across it: the loop of
40 accumulators (tests/test_pre_schedule_loop_accumulators.py's, its addresses as NVVM
writes them) issued each load just before the FFMA reading it (real-world register_pressure
many_accumulators on sm_120: single-warp cycles 10875 against ptxas's 3830; sm_89, whose
adds are IADD3, batched them).
The bound is ptxas 13.5's sm_120 cubin's single-warp cycles (x 2: ours still waits
more than ptxas's, as on sm_89). Results = ptxas's cubin's in the emulator; ours hazard-free."""
from __future__ import annotations

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

ARCH = "sm_120"
ACC = 40
THREADS = 128
TRIPS = 6


def _ptx() -> str:
    """NVVM's shape of the real-world kernel: each address a zero-extended 32-bit byte
    offset added to the 64-bit base (`cvt.u64.u32; add.s64`: IADD + IADD.X with a carry)."""
    body = ["ld.param.u64 %rd1, [in];", "ld.param.u64 %rd2, [out];", "ld.param.u32 %r1, [trips];",
            "cvta.to.global.u64 %rd1, %rd1;", "cvta.to.global.u64 %rd2, %rd2;",
            "mov.u32 %r2, %tid.x;", "mul.lo.u32 %r3, %r2, 3;", "shl.b32 %r4, %r2, 5;"]

    def load(dst: str, index: str, k: int) -> list[str]:
        return [f"add.u32 %t, {index}, {k};", "and.b32 %t, %t, 4095;", "shl.b32 %t, %t, 2;",
                "cvt.u64.u32 %ra, %t;", "add.s64 %ra, %rd1, %ra;", f"ld.global.nc.f32 {dst}, [%ra];"]
    for k in range(ACC):
        body += load(f"%a{k}", "%r4", k)
    body += ["mov.u32 %i, 0;", "LOOP:", "mad.lo.u32 %r5, %i, 40, %r3;"]
    for k in range(ACC):
        body += load("%x", "%r5", k)
        body += [f"mul.f32 %m, %a{(k + 7) % ACC}, 0f3E800000;", f"fma.rn.f32 %a{k}, %a{k}, %m, %x;"]
    body += ["add.u32 %i, %i, 1;", "setp.lt.u32 %p, %i, %r1;", "@%p bra LOOP;", "mov.f32 %s, 0f00000000;"]
    for k in range(ACC):
        body += [f"cvt.rn.f32.u32 %m, {k + 1};", f"fma.rn.f32 %s, %a{k}, %m, %s;"]
    body += ["mul.wide.u32 %ra, %r2, 4;", "add.s64 %ra, %rd2, %ra;", "st.global.f32 [%ra], %s;", "ret;"]
    return (f".version 8.7\n.target {ARCH}\n.address_size 64\n"
            ".visible .entry k(.param .u64 in, .param .u64 out, .param .u32 trips)\n.maxntid 1024, 1, 1\n{\n"
            f".reg .pred %p;\n.reg .b32 %r<6>, %t, %i;\n.reg .b64 %rd<3>, %ra;\n"
            f".reg .f32 %a<{ACC}>, %x, %m, %s;\n" + "\n".join(body) + "\n}\n")


def _launch(cubin: bytes):
    data = np.random.default_rng(7).uniform(-1, 1, 4096).astype(np.float32)
    out = np.zeros(THREADS, np.float32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [data, out, np.uint32(TRIPS)], hazard_check=True)
    return out, res


def test_sm120_loop_loads_pass_address_adds():
    ptx = _ptx()
    theirs = oracle.ptxas(ptx, ARCH)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, ARCH)
    assert "IADD " in oracle.nvdisasm(ours)          # the two-input spelling is in play
    mine, my_run = _launch(ours)
    ref, their_run = _launch(theirs.output)
    assert not my_run.hazards
    assert mine.tobytes() == ref.tobytes()
    # single-warp cycles: 13125 before the fix, 6909 after, ptxas 4031
    assert my_run.cycles <= 2.0 * their_run.cycles, (my_run.cycles, their_run.cycles)
