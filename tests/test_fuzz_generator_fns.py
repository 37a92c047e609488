"""Every generated `fns` with a register offset reads it clamped at -33.

ptxas 13.5.37 gives 0 for an offset far below -32 where the manual finds no bit (0xffffffff;
tests/test_fuzz.py -k fns); below -33 nothing is found either way, so the generator clamps
(`max.s32 t, off, -33`). The hand-written bit group did; the ISA-inventory paths did not
(campaign 9, seed 20001033: an inventory `fns.b32` whose offset a `suld` returned)."""
import re

from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.program import render

FNS = re.compile(r"^\s*(?:@!?%\w+ )?fns\.b32 %\w+, [^,]+, [^,]+, (%\w+);")


def test_fns_register_offsets_are_clamped():
    seen = 0
    for seed in range(20001000, 20001120):
        lines = render(generate(seed)).text.split("\n")
        for i, line in enumerate(lines):
            m = FNS.match(line)
            if not m:
                continue
            seen += 1
            prev = lines[i - 1].strip()
            assert prev.startswith(f"max.s32 {m.group(1)}, ") and prev.endswith(", -33;"), \
                f"seed {seed}: {prev} then {line.strip()}"
    assert seen >= 3


IMMEDIATE_FNS = re.compile(r"^\s*(?:@!?%\w+ )?fns\.b32 %\w+, [^,]+, [^,]+, (-?(?:0x)?[0-9a-fA-F]+);")


def test_fns_immediate_offsets_are_not_below_minus_33():
    """Campaign 23, seed 34002033: an inventory-path `fns.b32 d, m, 3, -2147483648`."""
    from ptx2sass.fuzz.campaign import Options, make_program
    text = render(make_program(34002033, Options(arch="sm_89"))).text
    offsets = [int(m.group(1), 0) for line in text.split("\n") if (m := IMMEDIATE_FNS.match(line))]
    assert offsets and min(offsets) >= -33
