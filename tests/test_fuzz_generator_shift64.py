"""The generator never shifts a 64-bit value by a register that has not just been passed
through an integer op: ptxas 13.5.37 converts a float-written amount with F2I instead of
using its bits (tests/test_fuzz.py -k 64bit). The ISA-inventory path drew `shr.b64 d, a, r`
with r an `atom.add.f32` result (held-out campaign 8B, seed 8901422)."""
import re

from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.program import render

SHIFT64 = re.compile(r"^\s*(?:@!?%\w+ )?sh[lr]\.[bsu]64 %\w+, \S+, (%\w+);")


def test_64bit_shift_amounts_are_laundered():
    checked = 0
    for seed in [8901422, *range(300000, 300030)]:
        lines = render(generate(seed)).text.split("\n")
        for i, line in enumerate(lines):
            m = SHIFT64.match(line)
            if not m:
                continue
            checked += 1
            prev = lines[i - 1].strip()
            assert prev.startswith(f"and.b32 {m.group(1)},"), f"seed {seed}: {prev} / {line.strip()}"
    assert checked >= 1
