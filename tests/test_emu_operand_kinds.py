"""The emulator on ptxas's cubins whatever kind of operand ptxas chose: a constant bank, a
uniform register, an immediate or a register (tools/operand_kinds.py).

Every operation of `operand_kinds.OPS` is compiled once per combination of source kinds;
each kernel's words must decode with our codec, run without a hazard, and compute what the
all-register kernel of the same operation computes on the same values (the register forms
are what the rest of the suite validates). Random chains of the operations must decode and
run hazard-free. Before the encoding tables learnt these forms, 139 distinct words of these
kernels did not decode (POPC/FLO/SHF/PRMT/SEL/IMNMX/IDP/ISETP.EX/PLOP3/LEA.HI.X with
constants, I2F/F2I/F2F/MUFU/FCHK from constants or immediates, USHF/UIADD3.X/ULEA/UBREV …).

PTX2SASS_SAMPLE=all checks every operation and all seed chains; the default takes every third
operation and 40 chains."""
from __future__ import annotations

import os

import pytest

from tools import operand_kinds as ok

ALL = os.environ.get("PTX2SASS_SAMPLE") == "all"
OPS = ok.OPS if ALL else ok.OPS[::3]
CHAINS = range(ok.SEED_CHAINS if ALL else 40)


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_every_operand_kind_decodes_and_computes_as_registers_do(op):
    module = ok.op_module(op)
    assert ok.undecodable_words(module) == {}
    assert ok.check_op(op) == []


def test_chains_decode_and_run_without_hazards():
    assert ok.undecodable_words(ok.chain_module(CHAINS)) == {}
    assert ok.check_chains(CHAINS) == []


@pytest.mark.parametrize("body", [
    # ptxas's softmax over a row of a parameter's length: `LEA.HI R0, R0, c[0x0][0x174], RZ, 0x5`
    "ld.param.u32 %x0, [in];\ncvt.u32.u64 %x1, %a0;\nshr.s32 %x2, %x0, 31;\nshr.u32 %x2, %x2, 27;\n"
    "add.s32 %x2, %x0, %x2;\nshr.s32 %x2, %x2, 5;\nadd.s32 %x2, %x2, %x1;\ncvt.u64.u32 %o, %x2;",
    # a kernel with many scalar parameters: 64-bit shifts by a parameter
    # (`SHF.R.S64 R2, R15, R8, c[0x0][0x17c]`)
    "ld.param.u64 %rd3, [in];\ncvt.u32.u64 %x0, %a0;\nshr.s64 %o, %rd3, %x0;",
    "ld.param.u64 %rd3, [in];\ncvt.u32.u64 %x0, %a0;\nshl.b64 %o, %rd3, %x0;",
    # shared memory read at an index from a parameter, as a softmax's reduction reads its
    # partial results (`LDS.64 R10, [UR4]`, `LDS.U16 R5, [UR4+0x2]`)
    ".shared .align 16 .b8 sh[512];\n.reg .b32 %y<8>;\nld.param.u32 %y5, [in];\nand.b32 %y5, %y5, 63;\n"
    "shl.b32 %y5, %y5, 2;\nmov.u32 %y6, sh;\nadd.u32 %y6, %y6, %y5;\ncvt.u32.u64 %y1, %a0;\nmov.u32 %y2, %tid.x;\n"
    "shl.b32 %y3, %y2, 2;\nmov.u32 %y4, sh;\nadd.u32 %y4, %y4, %y3;\nst.shared.u32 [%y4], %y1;\n"
    "st.shared.u32 [%y4+256], %y1;\nbar.sync 0;\nld.shared.u32 %y2, [%y6+4];\n"
    "ld.shared.v4.u32 {%y0, %y1, %y4, %y7}, [%y6+32];\nld.shared.u16 %y3, [%y6+2];\nadd.u32 %y2, %y2, %y0;\n"
    "add.u32 %y2, %y2, %y7;\nadd.u32 %y2, %y2, %y3;\ncvt.u64.u32 %o, %y2;",
])
def test_forms_of_plain_cuda_kernels_decode(body):
    """Forms nvcc's softmax and a many-parameter kernel made ptxas write (a constant-bank
    operand on LEA.HI and SHF, a uniform-register address on LDS) decode, and the kernel computes what it computes when its
    instructions come from nvdisasm's listing instead of our decoder."""
    import numpy as np

    from codegen_harness import inputs, kernel
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    from tools.emu_testing import cubin_listing_decoder
    ptx = kernel(body, 64, 1, 64)
    assert ok.undecodable_words(ptx) == {}
    cubin = oracle.ptxas(ptx).output
    outs = []
    for decoder in (None, cubin_listing_decoder(cubin)):
        out = np.zeros(64, dtype=np.uint64)
        res = run(cubin, "k", 1, 64, [out, inputs(64, 1)], decoder=decoder)
        assert not res.hazards
        outs.append(out)
    assert (outs[0] == outs[1]).all()
