"""A loop counter on the uniform datapath that the loop's own branch reads (isel/uniform_datapath.py;
docs/STATUS.md, branch q100_29).

ptxas 13.5 keeps Triton's 64-bit K counters in URs (`UIADD3 UR4, UP0, UPT, UR4, 0x1, URZ;
UIADD3.X`), compares them with `UISETP.NE.U32.AND(.EX) UP0` and branches on the uniform predicate
(`BRA.U UP0, loop`) on sm_100 and sm_120 (`Target.uniform_predicate_branch`); a compare of the
counter with a uniform bound that vector code reads (a `selp`) is `UISETP` + `PLOP3.LUT P, PT,
PT, PT, UP0, 0x80, 0x8`. The counter is incremented in place (no back-edge `UMOV` of the pair). The bound here is a 32-bit parameter's `(k + 31) >> 5`, loaded with
LDC before (its reader `IADD3 R, R, 0x1f, RZ` takes no UR in place; as a uniform value it is
`UIADD3`). Expected values: ptxas's cubin of the same PTX and NumPy, both in the emulator."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

PTX = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 dst, .param .u32 kdim)
{{
.reg .b32 %r<12>; .reg .b64 %rd<12>; .reg .pred %p<4>;
ld.param.u64 %rd1, [src];
ld.param.u64 %rd2, [dst];
ld.param.u32 %r1, [kdim];
mov.u32 %r2, %tid.x;
add.s32 %r3, %r1, 31;
shr.u32 %r4, %r3, 5;
setp.lt.s32 %p1, %r3, 32;
mov.u32 %r10, 0;
mul.wide.u32 %rd6, %r2, 4;
@%p1 bra DONE;
cvt.u64.u32 %rd3, %r4;
add.s64 %rd4, %rd3, -1;
mov.b64 %rd5, 0;
add.s64 %rd7, %rd1, %rd6;
LOOP:
setp.lt.u64 %p2, %rd5, %rd4;
add.s64 %rd5, %rd5, 1;
ld.global.u32 %r5, [%rd7];
selp.b32 %r6, 3, 1, %p2;
mad.lo.s32 %r10, %r5, %r6, %r10;
add.s64 %rd7, %rd7, 128;
setp.ne.s64 %p3, %rd5, %rd3;
@%p3 bra LOOP;
DONE:
add.s64 %rd8, %rd2, %rd6;
st.global.u32 [%rd8], %r10;
ret;
}}
"""
BLOCK = 32


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in oracle.nvdisasm(cubin, ("-c",)).splitlines()
            if re.search(r"/\*[0-9a-f]{4}\*/", line)]


def _regs(cubin: bytes) -> int:
    (k,) = read_cubin(cubin).kernels
    return k.regcount


def _launch(cubin: bytes, src: np.ndarray, kdim: int) -> np.ndarray:
    dst = np.full(BLOCK, 0xDEADBEEF, dtype=np.uint32)
    res = run(cubin, "k", (1, 1, 1), (BLOCK, 1, 1), [src, dst, np.uint32(kdim)], hazard_check=True)
    assert not res.hazards, [str(h) for h in res.hazards[:3]]
    return dst


def _expect(src: np.ndarray, kdim: int) -> np.ndarray:
    trips = ((kdim + 31) & 0xFFFFFFFF) >> 5 if kdim + 31 >= 32 else 0
    out = np.zeros(BLOCK, dtype=np.uint64)
    for t in range(trips):
        out = (out + src[t * BLOCK:(t + 1) * BLOCK].astype(np.uint64) * (3 if t < trips - 1 else 1)) & 0xFFFFFFFF
    return out.astype(np.uint32)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_loop_counter_compared_on_the_uniform_datapath(arch, monkeypatch):
    # the loop as a loop: ptxas also copies it 4 times per exit test (opt/runtime_unroll.py),
    # keeping BRA.U on sm_100/sm_120; ours copied (a `!=` exit: exit tests cloned, remainders
    # branched to) compares the counters in vector registers
    from ptx2sass.opt import runtime_unroll
    monkeypatch.setattr(runtime_unroll, "ENABLED", False)
    ptx = PTX.format(arch=arch)
    ref = oracle.ptxas(ptx, arch)
    assert ref.ok, ref.stderr
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, {}, filename="k.ptx")[0]
    theirs_ops, ours_ops = _ops(ref.output), _ops(ours)
    if arch != "sm_90":        # BRA.U on a UP: sm_100 and later (sm_90 keeps ptxas's compares vector)
        for ops in (theirs_ops, ours_ops):
            assert any(re.match(r"BRA\.U !?UP\d", o) for o in ops), ops
            assert any(o.startswith("UISETP.NE.") for o in ops), ops
        assert not any(o.startswith(("ISETP", "@P", "@!P")) for o in ours_ops), ours_ops
    # the counter is incremented in place: no `UMOV URa, URb` back-edge copy of the pair (the
    # pre-scheduler sank the compares of the old value below the increment, branch q100_29)
    assert not any(re.match(r"UMOV UR\d+, UR\d+$", o) for o in ours_ops), ours_ops
    assert _regs(ours) <= _regs(ref.output), (_regs(ours), _regs(ref.output))
    rng = np.random.default_rng(29)
    src = rng.integers(0, 1 << 32, 8 * BLOCK, dtype=np.uint64).astype(np.uint32)
    for kdim in (200, 1, 0, 33):
        got, want = _launch(ours, src, kdim), _launch(ref.output, src, kdim)
        assert got.tobytes() == want.tobytes(), kdim
        assert np.array_equal(got, _expect(src, kdim)), kdim
