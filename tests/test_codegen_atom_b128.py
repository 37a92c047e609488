"""128-bit `atom.cas.b128` / `atom.exch.b128` on sm_90 (was '`atom.cas.b128` not supported
yet'): ATOMG/ATOM .E.CAS/EXCH.128.STRONG.<scope> and ATOMS.CAS/EXCH.128 on register quads,
as ptxas 13.5. Ours and ptxas's cubins in the emulator: each thread swaps its own 16-byte
slot in global, shared or generic (shared) memory, half the lanes' compares matching;
the slots and old values = NumPy's model; the ATOM forms = ptxas's."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.3
.target sm_90
.address_size 64
.visible .entry k(.param .u64 mem, .param .u64 in, .param .u64 res)
{{
.reg .b64 %rm, %ri, %rr, %g, %a, %b, %c, %d, %e, %f, %sg;
.reg .b32 %tx, %sa, %sb;
.reg .b128 %q0, %q1, %q2;
.shared .align 16 .b8 sbuf[512];
ld.param.u64 %rm, [mem];
ld.param.u64 %ri, [in];
ld.param.u64 %rr, [res];
mov.u32 %tx, %tid.x;
mul.wide.u32 %g, %tx, 16;
add.s64 %rm, %rm, %g;
add.s64 %rr, %rr, %g;
mul.wide.u32 %g, %tx, 32;
add.s64 %ri, %ri, %g;
ld.global.v2.u64 {{%a, %b}}, [%ri];
ld.global.v2.u64 {{%c, %d}}, [%ri+16];
mov.b128 %q0, {{%a, %b}};
mov.b128 %q1, {{%c, %d}};
mov.u32 %sa, sbuf;
mad.lo.u32 %sb, %tx, 16, %sa;
ld.global.v2.u64 {{%e, %f}}, [%rm];
st.shared.v2.u64 [%sb], {{%e, %f}};
cvta.shared.u64 %sg, sbuf;
add.s64 %sg, %sg, %g;
sub.s64 %sg, %sg, %g;
mul.wide.u32 %g, %tx, 16;
add.s64 %sg, %sg, %g;
{op}
mov.b128 {{%e, %f}}, %q2;
st.global.v2.u64 [%rr], {{%e, %f}};
ld.shared.v2.u64 {{%e, %f}}, [%sb];
{copy_back}
ret;
}}
"""
ATOM = re.compile(r"\bATOM\w*(?:\.\w+)*")
SPACES = {"global": ("[%rm]", ""), "shared": ("[%sb]", "st.global.v2.u64 [%rm], {%e, %f};"),
          "generic": ("[%sg]", "st.global.v2.u64 [%rm], {%e, %f};")}


@pytest.mark.parametrize("space", ["global", "shared", "generic"])
@pytest.mark.parametrize("op", ["cas", "exch"])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_atom_b128(space, op, arch):
    addr, copy_back = SPACES[space]
    sp = "" if space == "generic" else "." + space
    text = (f"atom{sp}.cas.b128 %q2, {addr}, %q0, %q1;" if op == "cas"
            else f"atom{sp}.exch.b128 %q2, {addr}, %q1;")
    ptx = KERNEL.format(op=text, copy_back=copy_back)
    if arch != "sm_90":   # ptxas 13.5 writes the same instructions there
        ptx = ptx.replace(".version 8.3\n.target sm_90", ".version 8.8\n.target " + arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert ATOM.findall(oracle.nvdisasm(ours)) == ATOM.findall(oracle.nvdisasm(theirs.output))
    rng = np.random.default_rng(17)
    mem = rng.integers(0, 2**63, (32, 2), dtype=np.uint64)
    inp = rng.integers(0, 2**63, (32, 4), dtype=np.uint64)
    inp[::2, :2] = mem[::2]               # even lanes: the compare value matches
    inp[1::4, 0] = mem[1::4, 0]           # some odd lanes: only the low half does
    new_mem = mem.copy()
    if op == "cas":
        hit = (inp[:, :2] == mem).all(axis=1)
        new_mem[hit] = inp[hit, 2:]
    else:
        new_mem[:] = inp[:, 2:]
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        m, res = mem.copy(), np.zeros((32, 2), np.uint64)
        r = run(cubin, "k", 1, 32, [m, inp.copy(), res], hazard_check=name == "ours")
        assert not r.hazards
        np.testing.assert_array_equal(res, mem, err_msg=name)
        np.testing.assert_array_equal(m, new_mem, err_msg=name)
