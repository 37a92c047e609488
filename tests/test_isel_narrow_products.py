"""A wide product whose high word nothing reads is a 32-bit IMAD, as ptxas writes it
(isel/narrow_products.py), and a LOP3 left passing one input through (`x | 0` where an
input folded to zero) is a COPY (isel/lop3_copies.py). The kernel is real-world bits_hash
morton_gray's first Morton spreading steps: `mul.wide.u32 %rd, %r, 65536` masked with
0xff000000 (ours: IMAD.WIDE.U32 writing a pair; ptxas: IMAD.U32) and an `or.b64` whose
high word ORs a masked-away zero (ours: `LOP3.LUT R5, R7, RZ, RZ, 0xfc`). Outputs are
ptxas's cubin's on every thread's word, hazard-checked; sm_75/sm_90 too."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

BODY = """.visible .entry k(.param .u64 a, .param .u64 o)
{
.reg .u32 %r<4>; .reg .u64 %rd<24>;
ld.param.u64 %rd1, [a];
ld.param.u64 %rd2, [o];
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd3, %r2, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.u32 %r1, [%rd4];
cvt.u64.u32 %rd9, %r1;
and.b64 %rd10, %rd9, 2031616;
mul.wide.u32 %rd11, %r1, 65536;
and.b64 %rd12, %rd11, 4278190080;
and.b64 %rd13, %rd9, 255;
bfi.b64 %rd14, %rd10, %rd13, 32, 32;
or.b64 %rd15, %rd14, %rd12;
shl.b64 %rd16, %rd15, 8;
or.b64 %rd17, %rd16, %rd15;
and.b64 %rd18, %rd17, 1157144660301377551;
mul.wide.u32 %rd5, %r2, 8;
add.s64 %rd6, %rd2, %rd5;
st.global.u64 [%rd6], %rd18;
ret;
}
"""


def _ptx(arch: str) -> str:
    return f".version 8.0\n.target {arch}\n.address_size 64\n" + BODY


def _outputs(cubin: bytes, check: bool) -> np.ndarray:
    words = np.array([0, 1, 0xFF, 0x1FFFFF, 0xFFFFFFFF, 0x12345678, 0x80000000, 0x0001F0FF]
                     + list(np.random.default_rng(3).integers(0, 1 << 32, 24, dtype=np.uint64)),
                     dtype=np.uint64).astype(np.uint32)
    out = np.zeros(32, dtype=np.uint64)
    result = run(cubin, "k", 1, 32, [words, out], hazard_check=True)
    if check:
        assert result.hazards == []
    return out


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90"])
def test_masked_wide_product_and_zero_or_as_ptxas_writes_them(arch, monkeypatch):
    from ptx2sass.isel import narrow_products
    monkeypatch.setattr(narrow_products, "ENABLED", True)      # off by default (its docstring)
    ptx = _ptx(arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    their_text, our_text = oracle.nvdisasm(theirs.output), oracle.nvdisasm(ours)
    wide_product = r"IMAD\.WIDE\.U32 R\d+, R\d+, 0x10000"
    zero_or = r"LOP3\.LUT R\d+, R\d+, RZ, RZ, 0xfc"
    assert not re.search(wide_product, their_text) and not re.search(zero_or, their_text)   # the premise
    assert not re.search(wide_product, our_text)
    assert not re.search(zero_or, our_text)
    np.testing.assert_array_equal(_outputs(ours, True), _outputs(theirs.output, False))


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90"])
@pytest.mark.parametrize("factor", [1, 2, 0x10000])
def test_imad_spelling_encodes_as_nvdisasm_prints_it(arch, factor):
    """The alias the encoder needs for a plain IMAD by an immediate (nvdisasm's spelling of the
    bits): `.IADD` by 1, `.SHL` by a power of two with RZ, but plain by 2^16 (found when a
    window-narrowed `mul.wide x, 1` came out as `IMAD R, R, 0x1, R`: 'cannot encode')."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.model import Imm, Reg
    from ptx2sass.isel.integer import imad_spelling
    for c, text_c in ((Reg("R", 255), "RZ"), (Reg("R", 3), "R3")):
        mods = imad_spelling(Imm(factor), c)
        codec.encode_text(f"IMAD{''.join('.' + m for m in mods)} R0, R1, {hex(factor)}, {text_c}", arch)
