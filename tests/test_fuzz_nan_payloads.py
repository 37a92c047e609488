"""The generator keeps NaN payloads the PTX manual leaves open out of the comparison.

abs/neg of a NaN ("NaN inputs yield an unspecified NaN") and min/max of two NaNs (which
NaN is not said, except with `.NaN`: the canonical one) may give any NaN; ptxas keeps the
payload where it folds them into FSEL/LOP3 and canonicalises elsewhere, so an integer
instruction reading the result compared ptxas's choice with ours (campaign 7 and C7F:
cvt.rmi.sat.u32.f32, suld coordinates, mma s4 via min.f16, mov.b64 packs). Every such
result is made the canonical NaN of its type (`generator.canonical_nan`)."""
import re

import numpy as np
import pytest

from ptx2sass.fuzz.generator import canonical_nan, generate, unspecified_nan
from ptx2sass.fuzz.program import render

HEAD = ".version 8.5\n.target sm_89\n.address_size 64\n"


class _Temps:
    """The Builder's tmp() for a hand-written kernel: declared registers by kind."""

    NAMES = {"pred": "%tp", "b16": "%th", "b32": "%tw"}

    def __init__(self):
        self.n = {"pred": 0, "b16": 0, "b32": 0}

    def tmp(self, kind):
        self.n[kind] += 1
        return f"{self.NAMES[kind]}{self.n[kind] - 1}"


def _is_nan16(bits, exp_mask):
    return (bits & 0x7FFF) > exp_mask


@pytest.mark.parametrize("t", ["f16x2", "bf16x2", "f32"])
def test_canonical_nan_lines_replace_only_nans(t):
    """Run the lines on words whose halves are NaNs with payloads, infinities, numbers;
    expected: each NaN (per half for the packed types) becomes the canonical NaN, every
    other value keeps its bits (exact model of the IEEE encodings)."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    temps = _Temps()
    lines = canonical_nan(temps, "%r1", t)
    decls = "".join(f"    .reg .{k} {temps.NAMES[k]}<{max(n, 1)}>;\n" for k, n in temps.n.items())
    src = HEAD + f""".visible .entry k(.param .u64 out, .param .u64 in)
{{
    .reg .b32 %r<4>;
    .reg .b64 %d<4>;
{decls}    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %d2, %r2, 4;
    add.s64 %d1, %d1, %d2;
    add.s64 %d0, %d0, %d2;
    ld.global.u32 %r1, [%d1];{lines.replace(chr(10), chr(10) + '    ')}
    st.global.u32 [%d0], %r1;
    ret;
}}
"""
    halves = [0x7C01, 0x7E00, 0xFFFF, 0x7C00, 0xFC00, 0x3C00, 0x0001, 0x7F81, 0x7FC0, 0xFF80, 0x8000, 0x7F80]
    words = [(a << 16) | b for a in halves for b in halves[:8]][:64]
    words += [0x7F800001, 0xFFC00000, 0x7F800000, 0x3F800000]
    words = np.array(words[:64], np.uint32)
    if t == "f32":
        expect = [0x7FFFFFFF if (w & 0x7FFFFFFF) > 0x7F800000 else w for w in words.tolist()]
    else:
        lim = 0x7C00 if t == "f16x2" else 0x7F80
        expect = []
        for w in words.tolist():
            lo, hi = w & 0xFFFF, w >> 16
            lo = 0x7FFF if _is_nan16(lo, lim) else lo
            hi = 0x7FFF if _is_nan16(hi, lim) else hi
            expect.append(hi << 16 | lo)
    out = np.zeros(64, np.uint32)
    run(ptx2sass.compile(src), "k", (1,), (64,), [out, words])
    assert out.tolist() == expect


def test_generated_unspecified_nan_results_are_canonicalised():
    """Over 40 programs, every abs/neg/min/max of a float type without `.NaN` is followed
    by the canonicalisation of its destination."""
    op = re.compile(r"^\s*(?:@!?%\w+ )?((abs|neg|min|max)((?:\.\w+)*)\.(f32|f64|f16x2|f16|bf16x2|bf16)) (%\w+),")
    seen = 0
    for seed in range(100000, 100040):
        lines = render(generate(seed)).text.split("\n")
        for i, line in enumerate(lines):
            m = op.match(line)
            if not m or not unspecified_nan(m.group(2), m.group(3).split("."), m.group(4)):
                continue
            seen += 1
            nxt = lines[i + 1].strip()
            d = m.group(5)
            assert nxt.startswith((f"testp.notanumber.{m.group(4)} ", "and.b16 ", "and.b32 ")) and re.search(rf"{d}[,;]", nxt), \
                f"seed {seed}: {line.strip()} then {nxt}"
    assert seen >= 10


def test_generated_two_nan_f64_arithmetic_is_canonicalised():
    """f64 add/sub/mul/fma/mad/div of two different registers (either may be a NaN) is
    followed by the canonicalisation of its destination: DADD/DMUL/DFMA return the last NaN
    source's payload and ptxas orders the operands by context (GPU run 20, fuzz 9301650:
    `sub.rp.f64` of two NaNs differed between the two compilers on the H200). Also the
    ISA-inventory path; an immediate operand is never a NaN, so one register is left alone."""
    op = re.compile(r"^\s*(?:@!?%\w+ )?((add|sub|mul|fma|mad|div)(?:\.\w+)*\.f64) (%\w+), ([^;]*);")
    seen = 0
    for seed in range(100000, 100060):
        lines = render(generate(seed)).text.split("\n")
        for i, line in enumerate(lines):
            m = op.match(line)
            if not m:
                continue
            regs = {s.strip().lstrip("-") for s in m.group(4).split(",") if s.strip().lstrip("-").startswith("%")}
            if len(regs) < 2:
                continue
            seen += 1
            nxt = lines[i + 1].strip()
            assert nxt.startswith("testp.notanumber.f64 ") and re.search(rf"{m.group(3)}[,;]", nxt), \
                f"seed {seed}: {line.strip()} then {nxt}"
    assert seen >= 10


def test_generated_float_to_float_conversions_are_canonicalised():
    """cvt from one float type to another is followed by the canonicalisation of its
    destination: the manual gives the NaN only with `.relu`, and the two compilers pick
    different instructions (campaign 9, seed 20000241: `cvt.rz.bf16.f32` of a negative NaN,
    ptxas's F2F.BF16.F32 0xffff, our F2FP.BF16.F32.PACK_AB 0x7fff, read by a u16 compare)."""
    floats = "f16|bf16|f32|f64|f16x2|bf16x2"
    op = re.compile(rf"^\s*(?:@!?%\w+ )?cvt(?:\.\w+)*?\.({floats})\.(f16|bf16|f32|f64) (%\w+),")
    seen = 0
    for seed in range(100000, 100060):
        lines = render(generate(seed)).text.split("\n")
        for i, line in enumerate(lines):
            m = op.match(line)
            if not m or m.group(1) == m.group(2):
                continue
            seen += 1
            nxt = lines[i + 1].strip()
            assert nxt.startswith((f"testp.notanumber.{m.group(1)} ", "and.b16 ", "and.b32 ")) \
                and re.search(rf"{m.group(3)}[,;]", nxt), f"seed {seed}: {line.strip()} then {nxt}"
    assert seen >= 10
