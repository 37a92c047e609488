"""Lanes of one warp that wait on each other through memory, as ptxas compiles them, in the
emulator's optimistic reconvergence mode (the default): running the lowest PC first alone
livelocks where the lanes at the lowest PC spin on what a sibling lane has still to do.
Once a warp's paths have spun (run loops with a YIELD, which ptxas puts in loops that may
wait on other threads) for `SPIN_LIMIT` instructions while other lanes wait, the machine
gives the next ready path a turn, or lets lanes waiting at a BSYNC go when the members they
wait for have all executed YIELD since joining the barrier (emu/machine.py: `_spun`,
`Warp.release_yielded`). Divergent loops without YIELD keep lowest-PC-first, so every other
kernel's schedule (and instruction count) is unchanged. The expected counts follow from
mutual exclusion and the kernels' meaning, not from the emulator."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu import machine
from ptx2sass.emu.launch import run

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"

# The classic per-thread lock: every thread takes the lock on one global word, increments a
# plain counter, releases. ptxas puts a BSSY before the acquiring loop (with a YIELD in it)
# and the BSYNC after it, so the lane that wins waits at the BSYNC for its spinning siblings.
SPIN_LOCK = HEADER + """
.visible .entry spin(.param .u64 lock, .param .u64 count)
{
  .reg .pred p;
  .reg .b32 r<4>;
  .reg .b64 a<3>;
  ld.param.u64 a0, [lock];
  ld.param.u64 a1, [count];
  cvta.to.global.u64 a0, a0;
  cvta.to.global.u64 a1, a1;
spin:
  atom.global.cas.b32 r0, [a0], 0, 1;
  setp.ne.u32 p, r0, 0;
  @p bra spin;
  ld.volatile.global.u32 r1, [a1];
  add.u32 r1, r1, 1;
  st.volatile.global.u32 [a1], r1;
  fence.acq_rel.gpu;
  atom.global.exch.b32 r2, [a0], 0;
  ret;
}
"""

# Thread 0 writes 1 to the counter and then raises a flag; every other thread polls the
# flag and then adds 1. ptxas places thread 0's path after the polling loop: the pollers
# stand at the lower PC while thread 0 waits ready at a higher one.
FLAG_HANDOFF = HEADER + """
.visible .entry flag(.param .u64 flag, .param .u64 count)
{
  .reg .pred p, q;
  .reg .b32 r<4>, tid;
  .reg .b64 a<3>;
  ld.param.u64 a0, [flag];
  ld.param.u64 a1, [count];
  cvta.to.global.u64 a0, a0;
  cvta.to.global.u64 a1, a1;
  mov.u32 tid, %tid.x;
  setp.eq.u32 p, tid, 0;
  @p bra producer;
wait:
  ld.volatile.global.u32 r0, [a0];
  setp.eq.u32 q, r0, 0;
  @q bra wait;
  atom.global.add.u32 r1, [a1], 1;
  ret;
producer:
  st.volatile.global.u32 [a1], 1;
  fence.acq_rel.gpu;
  st.volatile.global.u32 [a0], 1;
  ret;
}
"""

BUDGET = 100_000      # the lock for 32 threads needs ~57k; before the turns: exceeded (a livelock)


def _cubin(ptx: str, compiler: str) -> bytes:
    if compiler == "ours":
        return codegen.compile_ptx(ptx)
    build = oracle.ptxas(ptx, "sm_89", name="spin.ptx")
    assert build.ok, build.stderr
    return build.output


def _launch(cubin: bytes, threads: int, hazard_check: bool = False):
    word = np.zeros(1, np.uint32)
    count = np.zeros(1, np.uint32)
    result = run(cubin, None, (1, 1, 1), (threads, 1, 1), [word, count], hazard_check=hazard_check,
                 budget=BUDGET)
    return int(word[0]), int(count[0]), result


@pytest.mark.parametrize("compiler", ["ptxas", "ours"])
@pytest.mark.parametrize("threads", [8, 32])
def test_spin_lock_in_one_warp_counts_every_thread(compiler, threads):
    cubin = _cubin(SPIN_LOCK, compiler)
    lock, count, result = _launch(cubin, threads, hazard_check=compiler == "ptxas" and threads == 8)
    assert (lock, count) == (0, threads)
    assert not result.hazards


def test_spin_lock_code_waits_at_a_bsync_with_a_yield_in_the_loop():
    """What makes the test above mean something: ptxas's winner waits at a BSYNC (not ready)
    while its siblings loop through a YIELD."""
    from ptx2sass.emu.loader import load_program
    ops = [ins.opcode for _, ins in load_program(_cubin(SPIN_LOCK, "ptxas"), "spin").instructions]
    assert {"BSSY", "BSYNC", "YIELD"} <= set(ops)
    assert ops.index("YIELD") < ops.index("BSYNC")


@pytest.mark.parametrize("compiler, threads", [("ptxas", 32), ("ptxas", 64), ("ours", 32), ("ours", 64)])
def test_flag_handoff_within_a_warp(compiler, threads):
    flag, count, result = _launch(_cubin(FLAG_HANDOFF, compiler), threads, hazard_check=threads == 32)
    assert (flag, count) == (1, threads)      # thread 0's 1, then one per other thread
    assert not result.hazards


def test_without_the_turn_the_handoff_livelocks(monkeypatch):
    """The turn comes only after SPIN_LIMIT steps: with a limit beyond the budget the lowest
    PC keeps the warp and the handoff livelocks, as it did before."""
    monkeypatch.setattr(machine, "SPIN_LIMIT", 10 * BUDGET)
    from ptx2sass.emu.errors import EmuFault
    with pytest.raises(EmuFault, match="budget"):
        _launch(_cubin(FLAG_HANDOFF, "ptxas"), 32)
