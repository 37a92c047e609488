"""ptxas's known departures from the PTX ISA manual, recognised in a fuzz mismatch.

Each entry is one miscompile that `tests/test_fuzz_ptxas_departures.py` pins (ptx2sass
gives the manual's value, ptxas's cubin the pinned other one). A mismatch is reported as
`ptxas_wrong` instead of `mismatch` only when every part of an entry's rule holds for the
first differing output: the instruction that last wrote it (`key`), statements the program
holds (`ptx`, each a regex that must match), an instruction ptxas's listing holds (`sass`),
and the relation of the two values that the departure produces (`values(ours, theirs,
width)`). The rules are narrow on purpose: a departure seen through another instruction
(a merge, a later add) stays a mismatch unless its value relation says which one it is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

TEST_FILE = "tests/test_fuzz_ptxas_departures.py"


@dataclass(frozen=True)
class Departure:
    name: str
    test: str                    # the pinned test in TEST_FILE
    key: str                     # regex on the mismatch's instruction key
    ptx: tuple[str, ...]         # regexes the program's PTX must all match
    sass: str | Callable[[str], bool]   # regex ptxas's listing must match ("" for none), or a test of it
    values: Callable[[int, int, int], bool]


_UP = re.compile(r"\bUP([0-6])\b")


def reads_unwritten_uniform_predicate(listing: str) -> bool:
    """Some instruction reads a uniform predicate UPn (a guard, or a source: an operand after
    the first two) that no instruction of the listing writes (a write: UPn as one of the
    first two operands, the destinations of UISETP/UPLOP3/VOTEU and UIADD3's carry-out)."""
    written, read = set(), set()
    for line in listing.splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?);", line)
        if not m:
            continue
        text = m.group(1)
        guard = re.match(r"@!?UP([0-6])\s+", text)
        if guard:
            read.add(guard.group(1))
            text = text[guard.end():]
        parts = text.split(None, 1)
        ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
        written |= {m.group(1) for o in ops[:2] for m in _UP.finditer(o)}
        read |= {m.group(1) for o in ops[2:] for m in _UP.finditer(o)}
    return bool(read - written)


def _half(bits: int) -> float:
    import numpy as np
    return float(np.array([bits], np.uint16).view(np.float16)[0])


def _saturated_half(bits: int) -> int:
    """The manual's `.sat` of a half: [0.0, 1.0], NaN to +0."""
    x = _half(bits)
    if x != x or x <= 0:
        return 0
    return 0x3C00 if x >= 1 else bits


def _f32(bits: int) -> float:
    import struct
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


DEPARTURES: tuple[Departure, ...] = (
    # -2^15 / -2^31 negated or made absolute, then narrowed with .sat to s8: ptxas clamps
    # the mathematical +2^15 / +2^31 to 127 where the register holds -2^15 / -2^31 (-128).
    # The difference 127 - (-128) = 255 carries through later adds and plain moves.
    Departure(
        "saturating s8 narrow of neg/abs of the most negative value gives +127",
        "test_saturating_narrow_of_neg_of_the_most_negative_s16_is_minus_128",
        r".",
        (r"\b(neg\.s16|abs\.s32)\b", r"\bcvt\.sat\.s8\.s(16|32)\b"),
        "",
        lambda ours, theirs, width: (theirs - ours) % (1 << width) == 0xFF),
    # cvt.sat.f16.f16 of a cvt.sat.u16.u32 result: ptxas drops the .sat (a plain HADD2).
    Departure(
        "cvt.sat.f16.f16 after cvt.sat.u16.u32 loses .sat",
        "test_saturating_f16_move_of_a_saturated_u16_clamps_to_0_1",
        r"^cvt\.sat\.f16\.f16$",
        (r"\bcvt\.sat\.u16\.u32\b",),
        r"\bHADD2 R\d+, R\d+\.H[01]_H[01], -RZ\.H0_H0",
        lambda ours, theirs, width: width == 16 and ours != theirs and ours == _saturated_half(theirs)),
    # neg.f64 of a cnot.b64 result (0 or 1) written as the integer negation: +0 or all ones
    # (a NaN the generator's canonicalisation may turn into 0x7fff...) for -0.0 or -1 ulp.
    Departure(
        "neg.f64 of a cnot.b64 result as integer negation",
        "test_neg_f64_of_a_cnot_result_flips_the_sign_bit",
        r"^neg\.f64$",
        (r"\bcnot\.b64\b",),
        r"\bUSEL UR\d+, URZ, 0xffffffff, !UP\d",
        lambda ours, theirs, width: width == 64 and (ours, theirs) in (
            (1 << 63, 0), (1 << 63 | 1, (1 << 64) - 1), (1 << 63 | 1, (1 << 63) - 1))),
    # min.ftz.f32 of a vmin...sat result written as FADD.FTZ.SAT: clamped to 1.0; also seen
    # through a byte-masked vmax4/vmin4 merging into that result (its bytes 1-3 from c).
    Departure(
        "min.f32 of a saturated vmin result clamped to 1.0",
        "test_float_min_of_a_saturated_vmin_is_not_clamped_to_one",
        r"^(min(\.ftz)?\.f32|vm(ax|in)4\..*)$",
        (r"\bvmin\.[us]32\.[us]32\.[us]32\.sat\b", r"\bmin(\.ftz)?\.f32\b"),
        r"\bFADD\.FTZ\.SAT R\d+, RZ, R\d+",
        lambda ours, theirs, width: width == 32 and any(
            theirs & m == 0x3F800000 and ours & ~m == theirs & ~m and _f32(ours & m) > 1.0
            for m in (0xFFFFFFFF, 0xFFFFFF00))),
    # an f16x2 operand from `ld.u16` into a 32-bit register (upper lane +0) read whole by
    # ptxas, whose upper half is another value (a merged neighbouring load, a dead register):
    # the low lanes agree, the upper ones differ.
    Departure(
        "f16x2 min/max reads a u16 load's upper lane from another value",
        "test_f16x2_min_reads_the_zero_upper_lane_of_a_u16_load",
        r"^(min|max)(\.\w+)*\.f16x2$",
        (r"\bld(\.\w+)*\.u16 %r\d+,",),
        r"\bHMNMX2(\.\w+)* R\d+, \|?R\d+\|?, \|?R\d+\|?,",
        lambda ours, theirs, width: width == 32 and ours != theirs and ours & 0xFFFF == theirs & 0xFFFF),
    # a 16-bit integer compare of a `set.*.f16` result (1.0 or +0 in the low half): ptxas
    # writes the set as HSET2.BF, which puts the value in both halves, and compares the whole
    # 32-bit register, so a true set compares as 0x3c003c00.
    Departure(
        "16-bit compare of a half set result reads both halves",
        "test_u16_compare_of_a_half_set_result_reads_its_16_bits",
        r"^setp\.\w+(\.(and|or|xor))?\.[usb]16$",
        (r"\bset\.\w+(\.\w+)*\.f16\.f16\b",),
        r"\bHSET2\.BF\b",
        lambda ours, theirs, width: {ours, theirs} == {0, 1}),
    # a result computed from a uniform predicate no instruction writes (ptxas dropped the
    # computation that should have set it): any value, any instruction.
    Departure(
        "ptxas reads a uniform predicate it never writes",
        "test_func_result_does_not_come_from_an_unwritten_uniform_predicate",
        r".",
        (),
        reads_unwritten_uniform_predicate,
        lambda ours, theirs, width: True),
)


def recognise(key: str, ours: int, theirs: int, width: int, ptx: str,
              listing: Callable[[], str]) -> Departure | None:
    """The known departure that explains this first difference, or None. `listing` gives
    ptxas's SASS text (called only when a rule needs it)."""
    for d in DEPARTURES:
        if not re.search(d.key, key) or not d.values(ours, theirs, width):
            continue
        if not all(re.search(p, ptx) for p in d.ptx):
            continue
        if callable(d.sass):
            if not d.sass(listing()):
                continue
        elif d.sass and not re.search(d.sass, listing()):
            continue
        return d
    return None
