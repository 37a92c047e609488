"""`szext` of a parameter width: ptxas 13.5.37's sm_89 word, and the generator's way round it.

ptxas writes `szext.{clamp,wrap}.{s32,u32} d, a, n` with `n` a kernel parameter as SGXT with
a constant operand; nvdisasm reads its bank/offset as `c[0x1c..0x1e][..]` (no such bank is
bound: the emulator faults, "constant read outside the bank": campaign 8 seeds 8900342/462,
campaign 9 seeds 20000037, 20000083, 20000905, 20000909, 20001009 ...) and the word is the
same for .s32 and .u32, so it cannot be both sign and zero extension. Not checked on a GPU
(an sm_8x one is needed: sm_90's ptxas writes other forms). The generator passes a register
width through `and.b32 t, n, 63` (what .wrap reads, and every width .clamp treats apart)."""
import re

from ptx2sass import oracle
from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.program import render

SZEXT_OF_PARAM = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 pad, .param .u32 pad2, .param .u32 n)
{{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    szext.{mode} %r3, %r2, %r1;
    st.global.u32 [%d0], %r3;
    ret;
}}
"""


def _sgxt_words(mode):
    listing = oracle.nvdisasm(oracle.ptxas(SZEXT_OF_PARAM.format(mode=mode)).output)
    return [(m.group(1), m.group(2)) for m in re.finditer(r"(SGXT[^;]*);\s*/\* (0x[0-9a-f]+) \*/", listing)]


def test_ptxas_writes_one_word_for_signed_and_unsigned_szext_of_a_parameter():
    signed, unsigned = _sgxt_words("clamp.s32"), _sgxt_words("clamp.u32")
    assert len(signed) == 1 and signed == unsigned
    text, _ = signed[0]
    assert re.search(r"c\[0x1[c-e]\]", text), text        # not the parameter bank c[0x0]


SZEXT = re.compile(r"^\s*(?:@!?%\w+ )?szext\.\w+\.[su]32 %\w+, [^,]+, (%\w+);")


def test_generated_szext_register_widths_are_masked():
    seen = 0
    for seed in range(20000000, 20000160):
        lines = render(generate(seed)).text.split("\n")
        for i, line in enumerate(lines):
            m = SZEXT.match(line)
            if not m:
                continue
            seen += 1
            prev = "\n".join(lines[max(0, i - 3):i])
            assert re.search(rf"and\.b32 {re.escape(m.group(1))}, [^,]+, 63;", prev), \
                f"seed {seed}: {line.strip()}"
    assert seen >= 3
