"""Warp reductions of two values at once (Triton's Welford reduction: mean, M2 and count
shuffled at every step) overlap their steps, as ptxas's code does: a shuffle of a later
step issues before one of an earlier step, where a step's slow arithmetic would otherwise
hold up the other value's next shuffle. Two things kept the steps in source order: shuffles
were ordered among themselves before allocation (sched/pre_schedule.py), and Triton's
`$L__tmpN:` debug labels, which no branch names, split the code into one block per step
(opt/merge_blocks.py now joins such blocks first). A row of REDUXes runs back to back too
(each into its own uniform register). Results: ours = ptxas's, bit for bit."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

THREADS = 32


def reduction(steps: int = 4, labels: bool = True) -> str:
    """Chain A: shuffle, add, ex2, sqrt per step (slow); chain B: shuffle, add (fast); in
    source order each step shuffles A then B."""
    body, decl = "", []
    for k in range(steps):
        d = 16 >> k
        body += (f"$L__tmp{k}:\n" if labels else "") + (
            f"shfl.sync.bfly.b32 %fa{k}s, %fa{k}, {d}, 31, -1;\n"
            f"shfl.sync.bfly.b32 %fb{k}s, %fb{k}, {d}, 31, -1;\n"
            f"add.f32 %fat{k}, %fa{k}, %fa{k}s;\nex2.approx.f32 %fat{k}, %fat{k};\n"
            f"sqrt.approx.f32 %fa{k + 1}, %fat{k};\nadd.f32 %fb{k + 1}, %fb{k}, %fb{k}s;\n")
        decl += [f"%fa{k}s", f"%fb{k}s", f"%fat{k}", f"%fa{k + 1}", f"%fb{k + 1}"]
    return (".version 8.0\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            ".reg .u64 %rd<3>;\n.reg .u32 %r<2>;\n.reg .f32 %fa0, %fb0, " + ", ".join(decl) + ";\n"
            "ld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 8;\n"
            "add.u64 %rd1, %rd1, %rd2;\nld.global.v2.f32 {%fa0, %fb0}, [%rd1];\n" + body
            + f"st.global.v2.f32 [%rd1], {{%fa{steps}, %fb{steps}}};\nret;\n}}\n")


def _shuffle_steps(cubin: bytes) -> list[int]:
    """The lane distance of each SHFL, in program order."""
    out = []
    for line in oracle.nvdisasm(cubin, ()).splitlines():
        if "SHFL.BFLY" in line:
            out.append(int(line.split(";")[0].split(",")[-2], 16))
    return out


def _overlapped(steps: list[int]) -> bool:
    """Some shuffle of a later step (smaller distance) comes before one of an earlier step."""
    return any(later < earlier for k, later in enumerate(steps) for earlier in steps[k + 1:])


@pytest.mark.parametrize("labels", [True, False])
def test_reduction_steps_overlap_as_in_ptxas(labels):
    ptx = reduction(labels=labels)
    theirs = oracle.ptxas(ptx, "sm_89").output
    ours = codegen.compile_ptx(ptx, "sm_89")
    assert _overlapped(_shuffle_steps(theirs)), _shuffle_steps(theirs)     # the premise
    assert _overlapped(_shuffle_steps(ours)), _shuffle_steps(ours)
    data = np.random.default_rng(3).uniform(-1, 1, 2 * THREADS).astype(np.float32)
    results = []
    for cubin in (ours, theirs):
        buf = data.copy()
        run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [buf], hazard_check=True)
        results.append(buf)
    assert results[0].tobytes() == results[1].tobytes()
    assert not np.array_equal(results[0], data)


def reduxes() -> str:
    """Seven `redux.sync` of one loaded value (the realworld corpus's redux_ops), xor-ed."""
    ops = ["add.s32", "max.u32", "min.u32", "or.b32", "and.b32", "xor.b32", "max.s32"]
    body = "".join(f"redux.sync.{op.split('.')[0]}.{op.split('.')[1]} %x{k}, %v, -1;\n"
                   for k, op in enumerate(ops))
    body += "".join(f"xor.b32 %x{k}, %x{k}, %x{k - 1};\n" for k in range(1, len(ops)))
    return (".version 8.0\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            f".reg .u64 %rd<3>;\n.reg .u32 %r1, %v, {', '.join(f'%x{k}' for k in range(len(ops)))};\n"
            "ld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\n"
            "add.u64 %rd1, %rd1, %rd2;\nld.global.u32 %v, [%rd1];\n" + body
            + f"st.global.u32 [%rd1], %x{len(ops) - 1};\nret;\n}}\n")


def _redux_overlap(cubin: bytes) -> int:
    """REDUXes issued before the first read of a REDUX's result (ptxas's row: several)."""
    ops = [line.split(";")[0].split("*/")[-1].strip()
           for line in oracle.nvdisasm(cubin, ()).splitlines() if "/*" in line and ";" in line]
    first_read = next(i for i, op in enumerate(ops) if op.startswith(("IMAD.U32", "MOV")) and ", UR" in op)
    return sum(1 for op in ops[:first_read] if op.startswith("REDUX"))


def test_reduxes_overlap_as_in_ptxas():
    """Each REDUX of a constant mask writes its own uniform register (isel REDUX_URS), so
    the row runs back to back instead of REDUX, read, REDUX, read."""
    ptx = reduxes()
    theirs = oracle.ptxas(ptx, "sm_89").output
    ours = codegen.compile_ptx(ptx, "sm_89")
    assert _redux_overlap(theirs) >= 3, _redux_overlap(theirs)         # the premise
    assert _redux_overlap(ours) >= 3, _redux_overlap(ours)
    data = np.random.default_rng(11).integers(-1000, 1000, THREADS).astype(np.int32)
    results = []
    for cubin in (ours, theirs):
        buf = data.copy()
        run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [buf], hazard_check=True)
        results.append(buf)
    assert results[0].tobytes() == results[1].tobytes()
