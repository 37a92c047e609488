"""st.async.mbarrier::complete_tx::bytes.shared::cluster (sm_90): one STAS[.64|.128] on the
register pair (shared::cluster address, mbarrier address) as ptxas writes it (was refused
'vector st of 3 x b32': the mbarrier operand read as data). A block's threads each store
their values asynchronously, thread 0 expects the bytes on an mbarrier, everyone waits on the
phase and reads the shared buffer back: ours and ptxas's cubin in the emulator equal NumPy."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program

THREADS = 64


def _kernel(vec: str, ty: str, n: int, bits: int,
            spelling: str = "st.async.mbarrier::complete_tx::bytes.shared::cluster") -> str:
    size = n * bits // 8
    regs = [f"%v{k}" for k in range(n)]
    data = "{" + ", ".join(regs) + "}" if n > 1 else regs[0]
    loads = "\n".join(f"ld.global.b{bits} %v{k}, [%rd4+{k * bits // 8}];" for k in range(n))
    reads = "\n".join(f"ld.shared.b{bits} %v{k}, [%r6+{k * bits // 8}];\nst.global.b{bits} [%rd5+{k * bits // 8}], %v{k};"
                      for k in range(n))
    return f""".version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pout, .param .u64 pin)
{{
.reg .b64 %rd<8>; .reg .b32 %r<10>; .reg .pred %p<3>; .reg .b{bits} %v<4>;
.shared .align 16 .b8 sb[{THREADS * size}];
.shared .align 8 .b64 bar;
ld.param.u64 %rd1, [pout]; ld.param.u64 %rd2, [pin];
cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, {size};
add.s64 %rd4, %rd2, %rd3;
add.s64 %rd5, %rd1, %rd3;
{loads}
mov.u32 %r2, bar;
mov.u32 %r3, sb;
mul.lo.u32 %r4, %r1, {size};
add.u32 %r6, %r3, %r4;
setp.ne.u32 %p1, %r1, 0;
@%p1 bra SYNC;
mbarrier.init.shared.b64 [%r2], 1;
mbarrier.arrive.expect_tx.shared.b64 %rd6, [%r2], {THREADS * size};
SYNC:
bar.sync 0;
{spelling}{vec}.{ty} [%r6], {data}, [%r2];
WAIT:
mbarrier.try_wait.parity.shared.b64 %p2, [%r2], 0;
@!%p2 bra WAIT;
{reads}
ret;
}}
"""


# sm_100/sm_120: the same STAS (blackwell table forms from tools/isa_seeds/st_async_sm90.ptx;
# before branch isa12 an internal error, 'cannot encode STAS')
@pytest.mark.parametrize("vec,ty,n,bits,arch", [("", "b32", 1, 32, "sm_90"), (".v2", "b32", 2, 32, "sm_90"),
                                                (".v4", "u32", 4, 32, "sm_90"), ("", "b64", 1, 64, "sm_90"),
                                                (".v2", "b64", 2, 64, "sm_90"), ("", "b32", 1, 32, "sm_120"),
                                                (".v4", "u32", 4, 32, "sm_120"), (".v2", "b64", 2, 64, "sm_100")])
def test_st_async_completes_the_transaction_as_ptxas(vec, ty, n, bits, arch):
    ptx = _kernel(vec, ty, n, bits)
    if arch != "sm_90":
        ptx = ptx.replace(".target sm_90", f".target {arch}").replace(".version 8.1", ".version 8.7")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, arch, "k.ptx")
    size = n * bits // 8
    src = np.random.default_rng(n * bits).integers(0, 256, THREADS * size, dtype=np.uint8)
    for cubin, hazards in ((theirs.output, False), (ours, True)):
        out = np.zeros(THREADS * size, np.uint8)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, src.copy()], hazard_check=hazards)
        assert not (hazards and res.hazards), res.hazards[:2]
        assert (out == src).all()
    kinds = lambda c: sorted(" ".join((i.opcode,) + tuple(i.modifiers))      # noqa: E731
                             for _, i in load_program(c).instructions if i.opcode == "STAS")
    assert kinds(ours) == kinds(theirs.output)


# branch reject28: a `.shared`/`.shared::cta` space with the mbarrier operand but no completion
# mechanism: ptxas 13.5.37 accepts it and writes the same STAS (ours refused it)
@pytest.mark.parametrize("spelling,vec,ty,n,bits", [("st.async.shared", "", "b32", 1, 32),
                                                    ("st.async.shared::cta", ".v2", "b64", 2, 64),
                                                    ("st.async.weak.shared", ".v4", "f32", 4, 32)])
def test_st_async_without_the_mechanism_as_ptxas(spelling, vec, ty, n, bits):
    ptx = _kernel(vec, ty, n, bits, spelling)
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, "sm_90", "k.ptx")
    size = n * bits // 8
    src = np.random.default_rng(7 * n).integers(0, 256, THREADS * size, dtype=np.uint8)
    for cubin in (theirs.output, ours):
        out = np.zeros(THREADS * size, np.uint8)
        run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, src.copy()], hazard_check=cubin is ours)
        assert (out == src).all()


@pytest.mark.parametrize("ins", ["st.async.b32 [%rd1], %r1;", "st.async.weak.u64 [%rd1], %rd2;",
                                 "st.async.shared.b16 [%rd1], %h1;",
                                 "st.async.mbarrier::complete_tx::bytes.shared::cluster.f32 [%rd1], %r1;"])
def test_weak_st_async_without_mbarrier_as_ptxas(ins):
    """A weak st.async with two operands (the PTX ISA's two-operand form is sm_100's
    `.release`; ptxas 13.5.37 takes this one on sm_90 and writes no instruction for it; ours
    refused it, 'not supported yet'): the word is left as it was, by both cubins."""
    ptx = f""".version 8.7
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pout)
{{
.reg .b64 %rd<4>; .reg .b32 %r<3>; .reg .b16 %h<2>;
ld.param.u64 %rd1, [pout];
mov.u32 %r1, 77; mov.u64 %rd2, 78; mov.b16 %h1, 79;
{ins}
ret;
}}"""
    theirs = oracle.ptxas(ptx, "sm_90")
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, "sm_90", "k.ptx")
    for cubin in (theirs.output, ours):
        out = np.full(8, 0xAB, np.uint8)
        run(cubin, "k", (1, 1, 1), (32, 1, 1), [out])
        assert (out == 0xAB).all()
        assert not any(i.opcode.startswith(("ST", "STAS")) for _, i in load_program(cubin).instructions)


def test_st_bulk_compiles_to_ptxas_memset():
    """`st.bulk` (sm_100+; was an internal error, KeyError None, then refused at its line):
    one UMEMSETS.64 as ptxas writes (values: tests/test_codegen_st_bulk.py)."""
    ptx = """.version 8.7
.target sm_120
.address_size 64
.visible .entry k(.param .u64 p)
{
.reg .u64 %rd0;
ld.param.u64 %rd0, [p];
st.bulk [%rd0], 256, 0;
ret;
}"""
    theirs = oracle.ptxas(ptx, "sm_120")
    ours = ptx2sass.compile(ptx, "sm_120", "k.ptx")
    for cubin in (ours, theirs.output):
        assert oracle.cuobjdump_sass(cubin).count("UMEMSETS.64") == 1
