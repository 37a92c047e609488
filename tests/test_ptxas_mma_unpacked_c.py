"""A ptxas 13.5.37 departure (held-out sm_120a fuzz seed 45200124: `mismatch:
mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16`). After `mov.b64 {%r1, %r2}, %d0` (PTX ISA,
mov: the first register takes the low half) an `mma` reading %r1 as its B fragment and %r2
as the first register of its C fragment gets, from ptxas, `MOV Rc, Rlo`: C[0] is the low
half (%r1) where the manual gives the high half. The same program with %r1/%r2 loaded as two
words (the same values by the manual) is compiled right by ptxas; ours gives that program's
value for both. Seen on sm_80, sm_89, sm_90a, sm_100a and sm_120a alike (the listing below is
sm_90a's; 45200124's sm_120a listing: `MOV R12, R6` of `LDG.E.64 R6`). Not run on a GPU:
the listing shows the copy."""
import re

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ours
from ptx2sass.emu.launch import run

PROGRAM = """.version 9.1
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in) {{
 .reg .b32 %r<6>; .reg .b64 %d<2>; .reg .b64 %a<4>;
 ld.param.u64 %a0, [in]; ld.param.u64 %a1, [out];
 mov.u32 %r5, %tid.x; mul.wide.u32 %a2, %r5, 32; add.u64 %a0, %a0, %a2;
 mul.wide.u32 %a2, %r5, 16; add.u64 %a1, %a1, %a2;
 ld.global.b32 %r0, [%a0+0]; ld.global.b32 %r3, [%a0+20]; ld.global.b32 %r4, [%a0+24];
 {halves}
 mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {{%r0, %r4}}, {{%r3, %r3}}, {{%r1}}, {{%r2, %r3}};
 st.global.v2.b32 [%a1], {{%r0, %r4}};
 ret;
}}
"""
UNPACKED = "ld.global.b64 %d0, [%a0+8]; mov.b64 {%r1, %r2}, %d0;"
WORDS = "ld.global.b32 %r1, [%a0+8]; ld.global.b32 %r2, [%a0+12];"


def _out(cubin):
    rng = np.random.default_rng(1)
    inp = (rng.integers(0, 2 ** 16, 32 * 8, dtype=np.uint32) * 0x10001) & np.uint32(0x3bff3bff)
    out = np.zeros(32 * 4, np.uint32)
    res = run(cubin, "k", 1, 32, [out, inp])
    return out.tolist(), res


@pytest.mark.parametrize("arch", ["sm_90a", "sm_120a"])
def test_mma_c_fragment_of_an_unpacked_high_half(arch):
    unpacked, words = (PROGRAM.format(arch=arch, halves=h) for h in (UNPACKED, WORDS))
    theirs_words = oracle.ptxas(words, arch)
    theirs_unpacked = oracle.ptxas(unpacked, arch)
    assert theirs_words.ok and theirs_unpacked.ok
    manual, _ = _out(theirs_words.output)          # ptxas is right on the two-word program
    for src in (unpacked, words):
        got, res = _out(compile_ours(src, arch=arch))
        assert not res.hazards
        assert got == manual
    wrong, _ = _out(theirs_unpacked.output)
    assert wrong != manual                          # the departure, pinned
    listing = oracle.nvdisasm(theirs_unpacked.output)
    lo = re.search(r"LDG\.E\.64 R(\d+),", listing)
    hmma = re.search(r"HMMA\.1688\.F16 R\d+, R\d+, R\d+, R(\d+) ", listing)
    assert lo and hmma
    assert re.search(rf"MOV R{hmma.group(1)}, R{lo.group(1)} ", listing)    # C[0] := the low half
