"""Global loads go ahead of a long arithmetic chain (sched/pre_schedule.py's FAR_LOAD): the
pre-allocation scheduler counts a global load's result as arriving from beyond L1, so a
hash chain longer than an L1 hit (Triton's dropout: Philox rounds, then the loads' values
masked) no longer goes first, with the loads' DRAM latency exposed after it. ptxas issues
such loads first; results = ptxas's, bit for bit."""
import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

THREADS = 64
ROUNDS = 12
CHAINS = 8


def hashed_loads() -> str:
    """out[i] = in[i] if the hashes of i agree in bit 0, else 0: eight 12-round multiply-xor
    hashes of the thread index (one per Philox lane, so every issue slot has work); in
    source order the load comes after them."""
    regs, body = [], ""
    for c in range(CHAINS):
        x = f"%h{c}_0"
        regs.append(x)
        body += f"add.u32 {x}, %r9, {c};\n"
        for k in range(ROUNDS):
            hi, nx = f"%m{c}_{k}", f"%h{c}_{k + 1}"
            regs += [hi, nx]
            body += f"mul.hi.u32 {hi}, {x}, {0x9E3779B1 + 7 * k + c};\nxor.b32 {nx}, {hi}, {x};\n"
            x = nx
    ends = [f"%h{c}_{ROUNDS}" for c in range(CHAINS)]
    acc = ends[0]
    for c, e in enumerate(ends[1:]):
        regs.append(f"%x{c}")
        body += f"xor.b32 %x{c}, {acc}, {e};\n"
        acc = f"%x{c}"
    body += f"mov.u32 %a3, {acc};\n"
    return (".version 8.0\n.target sm_89\n.address_size 64\n"
            ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
            f".reg .u32 %r9, %a1, %a2, %a3, %a4, {', '.join(regs)};\n.reg .f32 %f<4>;\n"
            ".reg .u64 %rd<8>;\n.reg .pred %p;\n"
            "ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [in];\nmov.u32 %r9, %tid.x;\n"
            "mul.wide.u32 %rd3, %r9, 4;\nadd.u64 %rd4, %rd2, %rd3;\nadd.u64 %rd5, %rd1, %rd3;\n"
            + body +
            "ld.global.f32 %f1, [%rd4];\n"
            "and.b32 %a4, %a3, 1;\nsetp.ne.u32 %p, %a4, 0;\n"
            "selp.f32 %f2, %f1, 0f00000000, %p;\nst.global.f32 [%rd5], %f2;\nret;\n}\n")


def _first_load_and_last_hash(cubin: bytes) -> tuple[int, int]:
    ops = [line.split(";")[0].split("*/")[-1].strip()
           for line in oracle.nvdisasm(cubin, ()).splitlines() if "/*" in line and ";" in line]
    load = next(i for i, op in enumerate(ops) if "LDG" in op)
    last_hash = max(i for i, op in enumerate(ops) if op.startswith("IMAD.HI"))
    return load, last_hash


def test_the_load_goes_before_the_hash_as_in_ptxas():
    ptx = hashed_loads()
    theirs = oracle.ptxas(ptx, "sm_89").output
    ours = codegen.compile_ptx(ptx, "sm_89")
    load, last_hash = _first_load_and_last_hash(theirs)
    assert load < last_hash // 2, (load, last_hash)          # the premise: ptxas loads first
    load, last_hash = _first_load_and_last_hash(ours)
    assert load < last_hash // 2, (load, last_hash)
    data = np.random.default_rng(5).uniform(-4, 4, THREADS).astype(np.float32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(THREADS, np.float32)
        run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy()], hazard_check=True)
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert 0 < np.count_nonzero(outs[0]) < THREADS
