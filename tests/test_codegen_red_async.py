"""`red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.<op>.<type>`
on sm_90 (was 'operand … of `red` not supported yet'): REDAS.<OP>[.S32/.64] [R.64], b with
the pair holding the word's and the mbarrier's addresses, as ptxas 13.5. Ours and ptxas's
cubins in the emulator (emu/ops_bulk.py's REDAS): 32 lanes reduce into 8 shared words,
each lane's bytes completing a transaction on the mbarrier thread 0 expects them on; the
words after the parity wait = NumPy's reduction; the REDAS forms = ptxas's."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdi, %g, %st, %x64;
.reg .b32 %sa, %sb, %bar, %tx, %w, %x;
.reg .pred %p;
.shared .align 8 .b8 sbuf[64];
.shared .align 8 .b64 mbar;
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mov.u32 %sa, sbuf;
mov.u32 %bar, mbar;
setp.lt.u32 %p, %tx, 8;
@!%p bra L_noinit;
mul.wide.u32 %g, %tx, {size};
add.s64 %g, %rdo, %g;
ld.global.{ty} %{reg}, [%g];
mad.lo.u32 %sb, %tx, {size}, %sa;
st.shared.{ty} [%sb], %{reg};
L_noinit:
setp.ne.u32 %p, %tx, 0;
@%p bra L_go;
mbarrier.init.shared.b64 [%bar], 1;
mbarrier.arrive.expect_tx.shared.b64 %st, [%bar], {total};
L_go:
bar.sync 0;
mul.wide.u32 %g, %tx, {size};
add.s64 %g, %rdi, %g;
ld.global.{ty} %{reg}, [%g];
and.b32 %w, %tx, 7;
mad.lo.u32 %sb, %w, {size}, %sa;
red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.{op}.{ty} [{addr}], %{reg}, [%bar];
L_spin:
mbarrier.try_wait.parity.shared.b64 %p, [%bar], 0;
@!%p bra L_spin;
bar.sync 0;
setp.lt.u32 %p, %tx, 8;
@!%p bra L_end;
mad.lo.u32 %sb, %tx, {size}, %sa;
ld.shared.{ty} %{reg}, [%sb];
mul.wide.u32 %g, %tx, {size};
add.s64 %g, %rdo, %g;
st.global.{ty} [%g], %{reg};
L_end:
ret;
}}
"""
REDAS = re.compile(r"\bREDAS(?:\.\w+)*")
OPS = {
    "add": lambda a, b: a + b, "min": np.minimum, "max": np.maximum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}


def model(op, ty, init, x):
    dt = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64}[ty]
    words = init.view(dt).copy()
    for lane, v in enumerate(x.view(dt)):
        k = lane % 8
        old = int(words[k])
        if op == "inc":
            words[k] = 0 if old >= int(v) else old + 1
        elif op == "dec":
            words[k] = int(v) if old == 0 or old > int(v) else old - 1
        else:
            with np.errstate(over="ignore"):
                words[k] = OPS[op](words[k:k + 1], x.view(dt)[lane:lane + 1])[0]
    return words.view(init.dtype)


@pytest.mark.parametrize("op,ty", [("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"),
                                   ("max", "u32"), ("max", "s32"), ("inc", "u32"), ("dec", "u32"),
                                   ("and", "b32"), ("or", "b32"), ("xor", "b32"), ("add", "u64"),
                                   ("add", "s64")])   # (s64: ptxas's REDAS.ADD.64 too; reject28)
@pytest.mark.parametrize("addr", ["%sb", "%sb+0"])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_red_async(op, ty, addr, arch):
    wide = ty in ("u64", "s64")
    size = 8 if wide else 4
    ptx = KERNEL.format(op=op, ty=ty, size=size, reg="x64" if wide else "x", total=32 * size, addr=addr)
    if arch != "sm_90":   # ptxas 13.5 writes the same instructions there
        ptx = ptx.replace(".version 8.1\n.target sm_90", ".version 8.8\n.target " + arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert REDAS.findall(oracle.nvdisasm(ours)) == REDAS.findall(oracle.nvdisasm(theirs.output))
    rng = np.random.default_rng(len(op) * 7 + size)
    dt = np.uint64 if wide else np.uint32
    x = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(dt)
    init = rng.integers(0, 2**32, 8, dtype=np.uint64).astype(dt)
    if op in ("inc", "dec"):
        x = (x % 5).astype(dt)
        init = (init % 7).astype(dt)
    want = model(op, ty, init, x)
    for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
        out = init.copy()
        res = run(cubin, "k", 1, 32, [out, x.copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out[:8], want, err_msg=name)
