"""Read-only loads move up into the dominator of the block that runs whenever it runs
(ptx2sass/opt/hoist_loads.py): a `ld.global.nc` after a region one thread runs (a serial
scan between two barriers) is issued in the first block, before the barrier, as ptxas
issues it, and the results are NumPy's and ptxas's."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.opt import hoist_loads

THREADS = 64

# out[t] = inclusive prefix sum of a, at index q[t] & 63; thread 0 scans shared memory
# between the barriers, every thread then loads q[t] (read-only) and reads the scan
SCAN_THEN_LOOKUP = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a, .param .u64 q)
{
.reg .pred %p<4>;
.reg .b32 %r<16>;
.reg .b64 %rd<16>;
.shared .align 4 .b32 s[64];
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [a];
ld.param.u64 %rd3, [q];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 4;
add.s64 %rd5, %rd2, %rd4;
ld.global.nc.u32 %r2, [%rd5];
shl.b32 %r3, %r1, 2;
mov.u32 %r4, s;
add.s32 %r5, %r4, %r3;
st.shared.u32 [%r5], %r2;
bar.sync 0;
setp.ne.s32 %p1, %r1, 0;
@%p1 bra $DONE;
ld.shared.u32 %r6, [s];
mov.u32 %r7, 1;
$LOOP:
shl.b32 %r8, %r7, 2;
add.s32 %r9, %r4, %r8;
ld.shared.u32 %r10, [%r9];
add.s32 %r6, %r6, %r10;
st.shared.u32 [%r9], %r6;
add.s32 %r7, %r7, 1;
setp.lt.u32 %p2, %r7, 64;
@%p2 bra $LOOP;
$DONE:
bar.sync 0;
add.s64 %rd6, %rd3, %rd4;
ld.global.nc.u32 %r11, [%rd6];
and.b32 %r12, %r11, 63;
shl.b32 %r13, %r12, 2;
add.s32 %r14, %r4, %r13;
ld.shared.u32 %r15, [%r14];
add.s64 %rd7, %rd1, %rd4;
st.global.u32 [%rd7], %r15;
ret;
}
"""


def _ours(ptx):
    return codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]


def _run(cubin, a, q):
    out = np.zeros(THREADS, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, a.copy(), q.copy()], hazard_check=True)
    return out, res


def _before_first_barrier(cubin) -> list[str]:
    """The opcodes (with modifiers) before the first BAR of the kernel's SASS."""
    ops = []
    for line in oracle.nvdisasm(cubin, options=()).splitlines():
        if "/*0" not in line or not line.rstrip().endswith(";"):
            continue
        words = [w for w in line.split("*/", 1)[1].split(";")[0].split() if not w.startswith("@")]
        if words[0].startswith("BAR"):
            break
        ops.append(words[0])
    return ops


def _inputs():
    rng = np.random.default_rng(7)
    return rng.integers(0, 1000, THREADS).astype(np.uint32), rng.integers(0, 1 << 30, THREADS).astype(np.uint32)


def test_results_are_numpy_s_and_ptxas_s():
    a, q = _inputs()
    ours, res = _run(_ours(SCAN_THEN_LOOKUP), a, q)
    assert not res.hazards, [str(h) for h in res.hazards[:3]]
    theirs, _ = _run(oracle.ptxas(SCAN_THEN_LOOKUP, "sm_89").output, a, q)
    assert ours.tobytes() == theirs.tobytes()
    np.testing.assert_array_equal(ours, np.cumsum(a).astype(np.uint32)[q & 63])


def test_lookup_load_is_issued_before_the_barrier_as_ptxas():
    """ptxas issues both read-only loads before the first barrier (premise); so do we, and
    the launch takes at most 1.25x ptxas's emulated cycles."""
    theirs, ours = oracle.ptxas(SCAN_THEN_LOOKUP, "sm_89").output, _ours(SCAN_THEN_LOOKUP)
    assert _before_first_barrier(theirs).count("LDG.E.CONSTANT") == 2
    assert _before_first_barrier(ours).count("LDG.E.CONSTANT") == 2
    a, q = _inputs()
    assert _run(ours, a, q)[1].cycles <= 1.25 * _run(theirs, a, q)[1].cycles


@pytest.mark.parametrize("leaving", ["call", "loop"])
def test_loads_stay_where_they_could_run_on_other_lanes_or_more_often(leaving, monkeypatch):
    """Not moved: past a call (it may not return), or out of a loop into a block before it."""
    from ptx2sass import ir
    fn = codegen.lower_ptx(SCAN_THEN_LOOKUP, "sm_89", "k.ptx").functions[0]
    last = fn.blocks[-1]
    load = next(i for i in last.instrs if i.opcode == "ld" and "nc" in i.modifiers)
    if leaving == "call":
        region = next(b for b in fn.blocks if any(i.opcode == "bra" for i in b.instrs) and b is not fn.entry)
        region.instrs.insert(0, ir.Instr("call", attrs={"target": "f"}))
        assert not hoist_loads.hoist_read_only_loads(fn)
    else:
        loop = next(b for b in fn.blocks if b in b.succs)
        loop.instrs.insert(0, load.__class__(load.opcode, dests=list(load.dests), srcs=list(load.srcs),
                                             modifiers=load.modifiers, type=load.type, space=load.space))
        last.instrs.remove(load)
        hoist_loads.hoist_read_only_loads(fn)
        assert any(i.opcode == "ld" and "nc" in i.modifiers for i in loop.instrs)
