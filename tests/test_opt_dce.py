"""Dead-code elimination (ptx2sass/opt/dce.py): what goes, what stays, and a dead chain of
any length removed in one pass over the function (it took one pass per link: a 4000-line
straight chain of folded adds spent a minute here)."""
from __future__ import annotations

import pytest

from ptx2sass import frontend
from ptx2sass.frontend.to_ssa import lower_module
from ptx2sass.opt import dce

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _function(body: str):
    module = frontend.parse(HEADER + ".visible .entry k(.param .u64 p)\n{\n" + body + "\n}\n",
                            "x.ptx")
    frontend.check(module, "sm_89")
    return lower_module(module).functions[0]


def _opcodes(fn) -> list[str]:
    return [ins.opcode for b in fn.blocks for ins in b.instrs]


def test_dead_chain_goes_in_one_pass(monkeypatch):
    n = 300
    body = (".reg .u32 %r<{0}>;\n.reg .u64 %rd1;\nld.param.u64 %rd1, [p];\n"
            "ld.global.u32 %r0, [%rd1];\n".format(n + 1)
            + "".join(f"add.u32 %r{i + 1}, %r{i}, 3;\n" for i in range(n))
            + "st.global.u32 [%rd1], %r0;\nret;")
    fn = _function(body)
    assert _opcodes(fn).count("add") == n
    calls = []
    real = dce.is_pure       # asked once per instruction by each walk over the function
    monkeypatch.setattr(dce, "is_pure", lambda ins: calls.append(1) or real(ins))
    instructions = len(_opcodes(fn))
    assert dce.remove_dead_code(fn) is True
    assert "add" not in _opcodes(fn) and len(calls) <= instructions
    assert dce.remove_dead_code(fn) is False


def test_live_and_impure_operations_stay():
    body = (".reg .u32 %r<4>;\n.reg .u64 %rd1;\n.reg .pred %p1;\nld.param.u64 %rd1, [p];\n"
            "ld.global.u32 %r0, [%rd1];\n"        # unread: goes, as ptxas deletes it
            "ld.global.u32 %r3, [%rd1+4];\n"
            "add.u32 %r1, %r3, 1;\n"             # read by the store: kept
            "mul.lo.u32 %r2, %r1, %r1;\n"        # unread: goes
            "setp.eq.u32 %p1, %r2, 0;\n"         # only feeds the dead mul's chain: goes
            "st.global.u32 [%rd1], %r1;\nret;")
    fn = _function(body)
    dce.remove_dead_code(fn)
    ops = _opcodes(fn)
    assert ops.count("ld") == 2 and "add" in ops and "mul" not in ops and "setp" not in ops


UNREAD_LOADS = ["ld.u32 %r5, [%rd1+16];", "ld.global.u32 %r5, [%rd1+16];",
                "ld.global.nc.u32 %r5, [%rd1+16];", "ld.global.cg.u32 %r5, [%rd1+16];",
                "ld.global.cv.u32 %r5, [%rd1+16];", "ld.global.relaxed.gpu.u32 %r5, [%rd1+16];",
                "ld.volatile.global.u32 %r5, [%rd1+16];", "ld.shared.u32 %r5, [%r1];",
                "ld.local.u32 %r5, [%r1];", "ldu.global.u32 %r5, [%rd1+16];",
                "ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd1+16];",
                "ld.global.L2::cache_hint.u32 %r5, [%rd1+16], %rd1;"]


@pytest.mark.parametrize("load", UNREAD_LOADS)
def test_unread_loads_go_where_ptxas_deletes_them(load):
    """An unread load: ptxas 13.5 deletes it from every space and with every cache operator
    (a volatile one stays); the count of memory reads in both cubins must agree."""
    import re

    import ptx2sass
    from ptx2sass import oracle
    ptx = (HEADER + ".visible .entry k(.param .u64 p)\n{\n.reg .u32 %r<9>;\n.reg .u64 %rd<3>;\n"
           "ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd1, %rd1;\nld.global.u32 %r1, [%rd1];\n"
           + load + "\nst.global.u32 [%rd1+4], %r1;\nret;\n}\n")
    reads = re.compile(r"\b(LDG|LDS|LDL|LD)\.|\b(LDG|LDS|LDL|LD) ")
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    count = [len(reads.findall(oracle.nvdisasm(c))) for c in (theirs.output, ptx2sass.compile(ptx, "sm_89", "k.ptx"))]
    assert count[0] == count[1], count


DEAD_POLICY = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .f32 frac)
{
.reg .u32 %r<4>;
.reg .f32 %f<2>;
.reg .u64 %rd<8>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
ld.param.f32 %f1, [frac];
cvta.to.global.u64 %rd1, %rd1;
cvta.to.global.u64 %rd2, %rd2;
mov.u32 %r3, %tid.x;
mul.wide.u32 %rd3, %r3, 8;
add.s64 %rd4, %rd2, %rd3;
createpolicy.range.L2::evict_first.b64 %rd6, [%rd2], 4096, 8192;
ld.global.L2::cache_hint.v2.u32 {%r0, %r1}, [%rd4], %rd6;
createpolicy.fractional.L2::evict_last.b64 %rd7, %f1;
ld.global.L2::cache_hint.v2.u32 {%r0, %r2}, [%rd4], %rd7;
ld.global.v2.u32 {%r0, %r1}, [%rd4+256];
add.s64 %rd5, %rd1, %rd3;
st.global.v2.u32 [%rd5], {%r0, %r1};
ret;
}
"""


def test_unread_cache_policy_goes_with_its_loads():
    """`createpolicy` only computes a descriptor (isel/cache_policy.py: ~30 ALU instructions for
    a range); once the loads that read it are dead it goes too, as ptxas deletes it (fuzz seed
    30000498 on sm_90: 18 registers, ptxas 8). Outputs equal ptxas's in the emulator; registers
    no more than ptxas's."""
    import numpy as np

    from codegen_harness import registers_against_ptxas

    data = np.random.default_rng(30000498).integers(0, 1 << 32, (128, 2), dtype=np.uint64)
    ours, theirs = registers_against_ptxas(DEAD_POLICY, "sm_90", (64, 2), data.astype(np.uint32),
                                           np.float32(0.5))
    assert ours <= theirs, (ours, theirs)
