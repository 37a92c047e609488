"""Values every lane shares on the uniform datapath (isel/uniform_datapath.py): chains from
kernel parameters, %ctaid and immediates become U-instructions in allocated UR/UP registers,
vector instructions read them in their uniform slot, a uniform predicate a guard needs is
copied into a P (PLOP3), loop-carried uniform values stay uniform, and values merged after a
divergent branch stay vector. Expected values: NumPy, and ptxas's cubin for the same module
run in the emulator on the same inputs (outputs bit-identical, no hazards). The pass is on
with `--uniform-datapath=true` (by default on sm_90 and later); each check also compiles
without it, which must give the vector code."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"
REGS = ".reg .b32 %r<40>; .reg .b64 %rd<20>; .reg .pred %p<8>;"
GRID, BLOCK = 3, 64


def _kernel(body: str) -> str:
    return (HEAD + ".visible .entry k(.param .u64 out, .param .u32 n, .param .u32 m)\n{\n" + REGS + "\n"
            "ld.param.u64 %rd1, [out];\nld.param.u32 %r1, [n];\nld.param.u32 %r2, [m];\n"
            "mov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %tid.x;\nmov.u32 %r5, %ntid.x;\n"
            "mad.lo.s32 %r6, %r3, %r5, %r4;\nmul.wide.u32 %rd2, %r6, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
            + body + "\nret;\n}\n")


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in sass_listing(cubin).splitlines()
            if "/*" in line and "*/" in line and "Function" not in line]


def _ours(ptx: str, arch: str = "sm_89", uniform: bool = True) -> bytes:
    options = {"uniform_datapath": "true" if uniform else "false"}
    return codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, options, filename="k.ptx")[0]


def _run(cubin: bytes, n: int, m: int) -> np.ndarray:
    out = np.full(GRID * BLOCK, 0xDEADBEEF, dtype=np.uint32)
    res = run(cubin, "k", (GRID, 1, 1), (BLOCK, 1, 1), [out, np.uint32(n), np.uint32(m)], hazard_check=True)
    assert not res.hazards, [str(h) for h in res.hazards[:3]]
    return out


def _check(ptx: str, expected, cases=((5, 3), (0, 9), (0xFFFFFFF0, 7)), arch: str = "sm_89"):
    """Ours (with and without the pass) against ptxas and NumPy on every (n, m)."""
    ref = oracle.ptxas(ptx.replace("sm_89", arch), arch)
    assert ref.ok, ref.stderr
    ptx = ptx.replace("sm_89", arch)
    ours, off = _ours(ptx, arch), _ours(ptx, arch, uniform=False)
    for n, m in cases:
        want = _run(ref.output, n, m)
        got = _run(ours, n, m)
        assert got.tobytes() == want.tobytes(), (n, m)
        assert got.tobytes() == _run(off, n, m).tobytes()
        ctaid = np.repeat(np.arange(GRID, dtype=np.uint64), BLOCK)
        tid = np.tile(np.arange(BLOCK, dtype=np.uint64), GRID)
        assert np.array_equal(got, np.asarray(expected(np.uint64(n), np.uint64(m), ctaid, tid),
                                              dtype=np.uint64).astype(np.uint32)), (n, m)
    return _ops(ours), _ops(off)


def _u32(x):
    return np.asarray(x, dtype=np.uint64) & 0xFFFFFFFF


def _s32(x):
    x = _u32(x).astype(np.int64)
    return np.where(x >= 1 << 31, x - (1 << 32), x)


def _uniform_ops(ops: list[str]) -> list[str]:
    """Uniform-datapath instructions but the descriptor load every kernel has."""
    return [o for o in ops if o.split(" ")[0].startswith(("UIADD3", "UIMAD", "ULEA", "USHF", "ULOP3",
                                                           "UISETP", "USEL", "UMOV", "S2UR", "ULDC"))
            and "0x118" not in o]


CHAIN = """
mul.lo.s32 %r10, %r3, %r1;
add.s32 %r11, %r10, 7;
shl.b32 %r12, %r11, 2;
xor.b32 %r13, %r12, %r2;
setp.lt.s32 %p1, %r11, %r2;
selp.b32 %r14, %r13, %r1, %p1;
add.s32 %r15, %r14, %r4;
st.global.u32 [%rd3], %r15;
"""


def _chain(n, m, ctaid, tid):
    r11 = _u32(ctaid * n + 7)
    r13 = _u32(r11 << np.uint64(2)) ^ m
    r14 = np.where(_s32(r11) < _s32(m), r13, n)
    return _u32(r14 + tid)


def test_uniform_chain_becomes_u_instructions():
    ours, off = _check(_kernel(CHAIN), _chain)
    uops = [o.split(" ")[0] for o in _uniform_ops(ours)]
    for want in ("S2UR", "UIMAD", "USHF.L.U32", "ULOP3.LUT", "UISETP", "USEL"):
        assert any(u.startswith(want) for u in uops), (want, ours)
    assert not _uniform_ops(off), off
    # the lane-dependent add reads the uniform value in its uniform slot
    assert any(o.startswith("IADD3 ") and ", UR" in o for o in ours), ours


@pytest.mark.parametrize("arch", ["sm_80", "sm_86"])
def test_uniform_chain_on_other_ampere_targets(arch):
    ours, off = _check(_kernel(CHAIN), _chain, arch=arch)
    assert _uniform_ops(ours) and not _uniform_ops(off)


def test_uniform_predicate_copied_for_a_guard():
    """`%p1` guards a store (a vector guard takes a P) and feeds a USEL: computed by
    UISETP, copied into a P with PLOP3 for the store."""
    body = """
add.s32 %r10, %r3, %r1;
setp.lt.u32 %p1, %r10, %r2;
selp.b32 %r11, %r10, %r2, %p1;
mul.lo.s32 %r12, %r11, 3;
xor.b32 %r14, %r12, %r1;
add.s32 %r13, %r14, %r4;
st.global.u32 [%rd3], %r13;
@%p1 st.global.u32 [%rd3], %r11;
"""

    def expected(n, m, ctaid, tid):
        r10 = _u32(ctaid + n)
        p = r10 < m
        r11 = np.where(p, r10, m)
        return np.where(p, r11, _u32((_u32(r11 * 3) ^ n) + tid))
    ours, off = _check(_kernel(body), expected, cases=((1, 3), (0, 0), (2, 100)))
    assert any(o.startswith("UISETP") for o in ours), ours
    assert any(o.startswith("PLOP3") and "UP" in o for o in ours), ours
    assert not any(o.startswith("PLOP3") for o in off), off


def test_loop_carried_uniform_values():
    """A trip count from a parameter and a stage index advanced each iteration
    (`UIADD3 +1; UISETP; USEL`, matmul_w8s4's pipelined stage) stay uniform across the
    back edge; the lanes' accumulator reads them."""
    body = """
mov.u32 %r10, 0;
mov.u32 %r11, 0;
mov.u32 %r12, %r4;
setp.eq.s32 %p2, %r1, 0;
@%p2 bra DONE;
LOOP:
add.s32 %r13, %r11, 1;
setp.gt.s32 %p1, %r13, 2;
selp.b32 %r11, 0, %r13, %p1;
shl.b32 %r14, %r11, 4;
add.s32 %r12, %r12, %r14;
add.s32 %r10, %r10, 1;
setp.lt.u32 %p3, %r10, %r1;
@%p3 bra LOOP;
DONE:
add.s32 %r15, %r12, %r11;
st.global.u32 [%rd3], %r15;
"""

    def expected(n, m, ctaid, tid):
        stage, acc = 0, tid.copy()
        for _ in range(int(n)):
            stage = 0 if stage + 1 > 2 else stage + 1
            acc = acc + (stage << 4)
        return _u32(acc + stage)
    ours, off = _check(_kernel(body), expected, cases=((0, 0), (1, 0), (7, 0), (12, 0)))
    assert any(o.startswith("USEL") for o in ours), ours
    assert not _uniform_ops(off), off


def test_values_merged_after_a_divergent_branch_stay_vector():
    """Each side of a branch on %tid writes a uniform-looking value; after the join they
    differ between lanes, so neither side's write may go to a uniform register."""
    body = """
and.b32 %r20, %r4, 1;
setp.eq.s32 %p1, %r20, 0;
@%p1 bra EVEN;
add.s32 %r21, %r1, 5;
bra.uni JOIN;
EVEN:
shl.b32 %r21, %r2, 3;
JOIN:
add.s32 %r22, %r21, %r3;
st.global.u32 [%rd3], %r22;
"""

    def expected(n, m, ctaid, tid):
        return _u32(np.where(tid & np.uint64(1), n + 5, m << np.uint64(3)) + ctaid)
    ours, _ = _check(_kernel(body), expected)
    assert not any(o.split(" ")[0] in ("UIADD3", "USHF.L.U32") for o in ours), ours


def test_off_on_targets_without_it():
    """sm_75 (Target.uniform_datapath off) compiles the chain as before."""
    ptx = _kernel(CHAIN).replace("sm_89", "sm_75")
    assert _ops(_ours(ptx, "sm_75")) == _ops(_ours(ptx, "sm_75", uniform=False))


def test_default_per_target():
    """Without the option the pass runs on sm_90 and later (Target.uniform_datapath_default,
    branch q100_28) and not on sm_89."""
    for arch, on in (("sm_89", False), ("sm_90", True), ("sm_100", True), ("sm_120", True)):
        ptx = _kernel(CHAIN).replace("sm_89", arch).replace(".version 8.0", ".version 8.8")
        default = _ops(codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {},
                                               filename="k.ptx")[0])
        assert default == _ops(_ours(ptx, arch, uniform=on)), arch


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_pointer_parameter_read_by_vector_code_stays_vector(arch):
    """sm_8x loads a 64-bit parameter as two `MOV R, c[]` halves; a pointer only vector
    instructions read gains nothing from ULDC + `MOV R, UR` per half (zluda's shr on sm_89 with
    the pass: 10 -> 14 instructions; ptxas: MOV c[] pair). Branch u89_28."""
    ptx = _kernel("st.global.u32 [%rd1+4], %r1;")
    ours, off = _check(ptx, lambda n, m, ctaid, tid: np.where(ctaid * BLOCK + tid == 1, n, 0xDEADBEEF),
                       cases=((5, 3), (7, 0)), arch=arch)
    assert len(ours) <= len(off), (ours, off)
    assert not any(o.startswith("ULDC UR") and "0x160" in o for o in ours), ours
    ref = oracle.ptxas(ptx.replace("sm_89", arch), arch)
    assert not any("ULDC" in o and "0x160" in o for o in _ops(ref.output))
