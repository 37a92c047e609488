"""Every generated vector store of bytes stores registers an integer `and` just wrote.

ptxas 13.5.37 stores a 16-bit register that holds an f16 as F2I.U8.F16 of its value in the
vector form (`st.v2.u8`; the manual: the low byte; pinned in
tests/test_fuzz_ptxas_departures.py -k vector_byte_store). The ISA-inventory path stored such
registers unmasked (campaign 9, seed 20001436: `cvt.rp.f16.u64` then `st.v2.s8`)."""
import re

from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.program import render

STORE = re.compile(r"^\s*st(?:\.\w+)*\.v[24]\.[bsu]8 \[[^\]]+\], \{([^}]*)\};")


def test_vector_byte_store_sources_are_masked():
    seen = 0
    for seed in range(20001400, 20001560):
        lines = render(generate(seed)).text.split("\n")
        for i, line in enumerate(lines):
            m = STORE.match(line)
            if not m:
                continue
            seen += 1
            before = "\n".join(lines[max(0, i - 12):i])
            for reg in {r.strip() for r in m.group(1).split(",")}:
                if reg.startswith("%"):
                    assert re.search(rf"and\.b(16|32) {re.escape(reg)}, [^,]+, 255;", before), \
                        f"seed {seed}: {line.strip()} ({reg} not masked)"
    assert seen >= 3
