"""`mov.b32 {lo, hi}, r` in generated programs: r never holds a value an 8/16-bit load
left in it. ptxas 13.5.37 unpacks the upper half of such a register as the loaded value
itself, not its zero/sign extension (tests/test_fuzz_ptxas_departures.py -k
unpack_high_half; seed 101007 of branch fuzz10's sample run was a mismatch from it: an
`ld.global.s8` register unpacked for a call argument). The generator unpacks an xor of the
source with a constant whose upper half is not zero."""
import re

from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.program import render

UNPACK = re.compile(r"^\s*mov\.b32 \{%\w+, %\w+\}, (%\w+);")


def test_generated_unpacks_read_an_xor_with_a_high_constant():
    seen = 0
    for seed in range(60):
        lines = render(generate(seed, {"int32", "int16"})).text.split("\n")
        for i, line in enumerate(lines):
            m = UNPACK.match(line)
            if not m:
                continue
            seen += 1
            xor = re.match(rf"^\s*xor\.b32 {re.escape(m.group(1))}, [^,]+, (0x[0-9a-f]+);", lines[i - 1])
            assert xor and int(xor.group(1), 16) >> 16, f"seed {seed}: {lines[i - 1].strip()} / {line.strip()}"
    assert seen >= 3
