"""ptxas's known departures from the PTX ISA manual, recognised in a fuzz mismatch.

Each entry is one miscompile that `tests/test_fuzz_ptxas_departures.py` pins (ptx2sass
gives the manual's value, ptxas's cubin the pinned other one). A mismatch is reported as
`ptxas_wrong` instead of `mismatch` only when every part of an entry's rule holds for the
first differing output: the instruction that last wrote it (`key`), statements the program
holds (`ptx`, each a regex that must match), an instruction ptxas's listing holds (`sass`),
a test of the program and the listing together where one needs the other (`both`), and the
relation of the two values that the departure produces (`values(ours, theirs,
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
    both: Callable[[str, str], bool] | None = None    # a test of (ptx, listing)
    # (function, address) of the listing's instructions whose read the departure is: a
    # hazard the emulator finds on one of them is the departure seen again (it ranks first)
    reads: Callable[[str], set[tuple[str, int]]] | None = None
    # whether it may explain a contended counter (the sum of every thread's atomics): only a
    # departure in which threads run an atomic or not, not one in a value some thread adds
    counters: bool = False


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


_INS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_PRED = re.compile(r"\b(U?P)([0-6])\b")
_TARGET = re.compile(r"\b0x([0-9a-f]+)\s*$")
_STOPS = ("EXIT", "RET", "BRA", "JMP", "KILL")


def _instructions(listing: str) -> dict[int, tuple[bool, str, list[str]]]:
    """address -> (guarded, mnemonic, operands) of cuobjdump's SASS text."""
    out = {}
    for line in listing.splitlines():
        m = _INS.search(line)
        if not m:
            continue
        text = m.group(2)
        guard = re.match(r"@!?U?P[0-6T]\s+", text)
        parts = text[guard.end() if guard else 0:].split(None, 1)
        if not parts:
            continue
        ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
        out[int(m.group(1), 16)] = (guard is not None, parts[0], ops, text)
    return out


def reads_undefined_predicate(listing: str) -> bool:
    """Whether `undefined_predicate_read` finds one (per cuobjdump's `Function :` section)."""
    return any(undefined_predicate_read(part) for part in re.split(r"Function :", listing))


def undefined_predicate_read(listing: str) -> tuple[int, str] | None:
    """(address, text) where some function of ptxas's listing (the kernel, or a CALL's target) reads a predicate
    (Pn or UPn: a guard, or an operand after the first three) that no path from the
    function's entry writes. Predicates are neither parameters nor results of a call (the
    ABI passes values in registers R4.., R12..), so such a read is of an undefined value
    (ptxas's fn2 of fuzz seed 22005165 returns `SEL R31, RZ, 0xffffffff, P6`; P6 is the
    caller's). Writes are over-approximated so that a doubt never makes a read undefined:
    any predicate among an instruction's first three operands (ISETP's two destinations,
    IADD3's carry-outs), everything for R2P/CALL (a callee may write any predicate), and an
    indirect branch makes the listing undecided (None)."""
    ins = _instructions(listing)
    if not ins:
        return None
    entries = {0} | {int(m.group(1), 16) for _, op, ops, _t in ins.values()
                     if op.startswith("CALL") and ops and (m := _TARGET.search(ops[-1]))}
    order = sorted(ins)
    after = {a: b for a, b in zip(order, order[1:])}
    everything = frozenset(f"{f}{i}" for f in ("P", "UP") for i in range(7))
    for entry in entries:
        written: dict[int, frozenset] = {entry: frozenset()}
        work = [entry]
        while work:
            pc = work.pop()
            if pc not in ins:
                continue
            guarded, op, ops, text = ins[pc]
            base = op.split(".")[0]
            if base in ("BRX", "JMX", "RETURN"):
                return None
            have = written[pc]
            reads = {"".join(m.groups()) for m in _PRED.finditer(text.split(op, 1)[0])}
            reads |= {"".join(m.groups()) for o in ops[3:] for m in _PRED.finditer(o)}
            if reads - have:
                return pc, text
            if base in ("R2P", "R2UR") or base.startswith("CALL"):
                new = everything
            else:
                new = have | {"".join(m.groups()) for o in ops[:3] for m in _PRED.finditer(o)}
            succ = []
            if base in ("BRA", "JMP") and ops and (m := _TARGET.search(ops[-1])):
                succ.append(int(m.group(1), 16))
            if guarded or base not in _STOPS:
                succ.append(after.get(pc))
            for s in succ:
                if s is None:
                    continue
                old = written.get(s)
                merged = new if old is None else old | new
                if merged != old:
                    written[s] = merged
                    work.append(s)
    return None


def video_reads_a_uniform_index_as_a_register(listing: str) -> bool:
    """Whether `video_uniform_index_reads` finds one."""
    return bool(video_uniform_index_reads(listing))


def video_uniform_index_reads(listing: str) -> set[tuple[str, int]]:
    """(function, address) of each VABSDIFF4/VABSDIFF with a source Rn where a uniform
    instruction writes URn before it and either the instruction just before writes Rn, or
    URn is written after Rn's last write and nothing but the video op reads that write (in
    address order). sm_89 has no VABSDIFF4 form with a uniform source; ptxas 13.5.37 keeps
    such an operand in URn and encodes it as Rn: the reduced fuzz 29102974 computes
    `ULOP3.LUT UR8, UR8, 0xffff` and reads R8 one cycle after `IMAD.MOV.U32 R8, RZ, RZ,
    0x120` (an unrelated constant, read too early for the IMAD's latency: the emulator's
    hazard on that read is this departure, not a gap of its own); the whole program computes
    `ULOP3.LUT UR21, UR19, 0xffff` (the u16 parameter) and reads R21, the high half of an
    address `IMAD.WIDE.U32 R20, ...` wrote and nothing else read yet. (Its `VABSDIFF.U32
    R51, R51, R51, R9` after `UMOV UR9, 0x1` reads the R9 of `S2R R9, SR_CTAID.X`, read
    before by an IADD3: not it.)"""
    found = set()
    for name, part in _functions(listing):
        written: dict[str, int] = {}       # register -> index of its last write
        read: set[str] = set()             # registers read since their last write
        previous = None
        for i, (pc, (_g, op, ops, _t)) in enumerate(sorted(_instructions(part).items())):
            if op.split(".")[0] in ("VABSDIFF4", "VABSDIFF"):
                for src in ops[1:]:
                    m = re.fullmatch(r"R(\d+)", src)
                    uniform = f"UR{m.group(1)}" if m else None
                    if uniform in written and (previous == src or (
                            written[uniform] > written.get(src, -1) and src not in read)):
                        found.add((name, pc))
            for o in ops[1:] + ops[:1] * ("[" in "".join(ops[:1])):
                for m in re.finditer(r"\b(U?R)(\d+)(\.64)?", o):
                    n = int(m.group(2))
                    read.update(f"{m.group(1)}{k}" for k in ((n, n + 1) if m.group(3) else (n,)))
            if ops and "[" not in ops[0]:
                d = re.fullmatch(r"(U?R)(\d+)", ops[0])
                n = 4 if ".128" in op else 2 if (".64" in op or "WIDE" in op) else 1
                for reg in ([f"{d.group(1)}{int(d.group(2)) + k}" for k in range(n)] if d else [ops[0]]):
                    written[reg] = i
                    read.discard(reg)
            previous = ops[0] if ops else None
    return found


def _functions(listing: str) -> list[tuple[str, str]]:
    """(name, text) of each `Function : name` section of cuobjdump's listing (text before
    the first header: name "")."""
    parts = re.split(r"Function :\s*(\S+)", listing)
    return [("", parts[0]), *zip(parts[1::2], parts[2::2])]


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


def ftz_dropped_before_branch(listing: str) -> bool:
    """An `FSETP` without `.FTZ` whose predicate is the source operand of a `BRA P, target`
    (ptxas's fold of `setp.<op>.<bool>.ftz.f32 p, a, b, q; @p bra` drops the flush)."""
    written = {m.group(1) for m in re.finditer(r"\bFSETP\.(?![\w.]*\bFTZ\b)[\w.]+ (P[0-6]), ", listing)}
    return any(m.group(1) in written for m in re.finditer(r"\bBRA !?(P[0-6]), ", listing))


_LD16 = re.compile(r"\bld\.global(?:\.\w+)*\.[bus]16 (%\w+), \[(%\w+)(?:\+(\d+))?\];")
_REG32 = re.compile(r"\.reg \.[bfsu]32 (%[A-Za-z_]\w*?)(<\d+>)?;")
_LDG = re.compile(r"\bLDG\.E((?:\.\w+)*) R\d+, (?:desc\[UR\d+\])?\[R\d+(?:\.64)?(?:\+0x([0-9a-f]+))?\]")
_NARROW = {"U8", "S8", "U16", "S16", "64", "128"}


def merged_narrow_loads(ptx: str, listing: str) -> set[str]:
    """32-bit registers the program loads with a 16-bit `ld.global` (the manual: zero- or
    sign-extended to 32 bits) whose aligned 4-byte word ptxas loads whole with one 32-bit
    LDG, the other half being another 16-bit load from the same base. ptxas 13.5.37 then
    takes the register's upper half from the neighbouring half or from an unrelated register
    (`PRMT R, Rword, 0x7632, Rother`), so the extension is lost wherever the whole register
    is read (an f16x2 operand, an mma fragment)."""
    wide = [re.compile(re.escape(name) + (r"\d+" if vector else "")) for name, vector in _REG32.findall(ptx)]
    is_wide = lambda reg: any(w.fullmatch(reg) for w in wide)
    loads = [(reg, base, int(off or 0)) for reg, base, off in _LD16.findall(ptx)]
    words = set()
    for m in _LDG.finditer(listing):
        if not _NARROW & set(m.group(1).split(".")):
            words.add(int(m.group(2) or "0", 16))
    merged = set()
    for reg, base, off in loads:
        partner = off - 2 if off % 4 else off + 2
        if is_wide(reg) and off & ~3 in words and any(b == base and o == partner for _r, b, o in loads):
            merged.add(reg)
    return merged


def _read_by(ptx: str, regs: set[str], statement: str) -> bool:
    """Whether a statement matching `statement` reads one of `regs` (after its destination)."""
    for line in ptx.splitlines():
        line = line.strip()
        if not re.match(statement, line):
            continue
        sources = line.split("}", 1)[1] if line.startswith("mma.") else line.split(",", 1)[-1]
        if any(re.search(re.escape(r) + r"\b", sources) for r in regs):
            return True
    return False


def merged_load_read_as_f16x2(ptx: str, listing: str) -> bool:
    return _read_by(ptx, merged_narrow_loads(ptx, listing), r"\w+(\.\w+)*\.f16x2 ")


def merged_load_read_by_mma(ptx: str, listing: str) -> bool:
    return _read_by(ptx, merged_narrow_loads(ptx, listing), r"mma\.")


_INTEGER_SET = re.compile(r"^\s*(?:@!?%\w+\s+)?set\.\w+(?:\.ftz)?\.[su]32\.f(?:16|32|64) (%\w+),", re.M)
_CNOT = re.compile(r"^\s*(?:@!?%\w+\s+)?cnot\.b32 (%\w+),", re.M)


def ne_of_an_integer_set_result(ptx: str, listing: str) -> bool:
    """An f32 `set`/`setp.ne` reads a `set.<cmp>.s32` result (0 or -1: -1 is a NaN as f32).
    ptxas 13.5.37 folds such a compare as an integer one, so `ne(0.0, -1)` is true where the
    manual's ordered `ne` with a NaN operand is false (campaign 23, seed 34003205)."""
    return _read_by(ptx, set(_INTEGER_SET.findall(ptx)), r"setp?\.ne(\.\w+)*\.f32 ")


def shift16_by_a_cnot_result(ptx: str, listing: str) -> bool:
    """A 16-bit shift that reads a `cnot.b32` result (the departure below)."""
    return _read_by(ptx, set(_CNOT.findall(ptx)), r"sh[lr]\.[bus]16 ")


_SATURATED_S32 = re.compile(r"^\s*(?:@!?%\w+\s+)?\w+(?:\.\w+)*\.sat\.s32 (%\w+),", re.M)
_FLOAT_MINMAX = re.compile(r"^\s*(?:@!?%\w+\s+)?(?:min|max)(?:\.\w+)*\.f32 %\w+, ([^;]*);", re.M)


# a definition of a constant ptxas folds: a move of an immediate, or a product with 0
# (campaign 28's 40001184: `mul.lo.u32 %r3, %r0, 0x0`, then `max.f32 %r4, %r3, %r4`)
_FOLDED_CONSTANT = re.compile(r"^\s*(?:mov\.[bfsu]32 %\w+, (?:0[fFxX][0-9a-fA-F]+|-?\d+)"
                              r"|mul\.lo\.[bsu]32 %\w+, %\w+, (?:0x0+|0));")
_DEFINITION = re.compile(r"^\s*(?:@!?%\w+\s+)?[a-z]\w*(?:\.\w+)* (%\w+),")


def minmax_of_saturated_left_out(ptx: str, listing: str) -> bool:
    """A `min`/`max.f32` of a saturating s32 result and an immediate (or a register whose last
    definition before it is a constant ptxas folds), and ptxas's listing has no FMNMX with an
    immediate operand at all (it left that one out)."""
    saturated = set(_SATURATED_S32.findall(ptx))
    constant: dict[str, bool] = {}          # register -> its latest definition is a constant
    found = False
    for line in ptx.splitlines():
        m = _FLOAT_MINMAX.match(line)
        if m:
            ops = m.group(1)
            folded = "0f" in ops.lower() or any(
                is_constant and re.search(re.escape(r) + r"\b", ops) for r, is_constant in constant.items())
            found |= folded and any(re.search(re.escape(r) + r"\b", ops) for r in saturated)
        d = _DEFINITION.match(line)
        if d:
            constant[d.group(1)] = bool(_FOLDED_CONSTANT.match(line))
    if not found:
        return False
    return not re.search(r"\bFMNMX(\.\w+)* R\d+, [^,]+, -?(\d|INF|\+INF|QNAN)", listing)


def _is_nan32(bits: int) -> bool:
    return bits & 0x7F800000 == 0x7F800000 and bits & 0x7FFFFF != 0


# an immediate shift amount of 64 or more, decimal or hexadecimal
_AT_LEAST_64 = r"(?:6[4-9]|[7-9]\d|[1-9]\d{2,}|0[xX]0*(?:[4-9a-fA-F][\da-fA-F]|[1-9a-fA-F][\da-fA-F]{2,}))"


def uniform_half_from_next_register(listing: str) -> bool:
    """`UPRMT URn, URn+1, 0x7610, URn`: the high half of URn kept, the low half taken from the
    next uniform register (the pair's other word) where the half the PTX names is URn's own
    high half."""
    if any(int(b) == int(a) + 1 for a, b in re.findall(r"\bUPRMT UR(\d+), UR(\d+), 0x7610, UR\1\b", listing)):
        return True
    return _pair_read_of_a_word(listing)


_ULOP3_WORD = re.compile(r"\bULOP3\.LUT UR(\d+), ")
_DEST = re.compile(r"^\s*(?:/\*\w+\*/)?\s*(?:@!?U?P\w+\s+)?[A-Z][\w.]*\s+(U?R\w+)")


def _pair_read_of_a_word(listing: str, window: int = 24) -> bool:
    """The other form (the whole program of seed 35000635): a 32-bit `ULOP3.LUT URk` (the
    xor) read as a pair, `MOV.64 Rn, URk`, and its high half then taken as `MOV Rm, URk+1`,
    a register the xor did not write and nothing between wrote either."""
    lines = [ln for ln in listing.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/\s+\S", ln)]
    for i, line in enumerate(lines):
        m = _ULOP3_WORD.search(line)
        if not m:
            continue
        k = int(m.group(1))
        seen_pair = False
        for later in lines[i + 1:i + 1 + window]:
            if re.search(rf"\bMOV\.64 R\d+, UR{k} ;", later):
                seen_pair = True
            elif seen_pair and re.search(rf"\bMOV R\d+, UR{k + 1} ;", later):
                return True
            d = _DEST.match(later)
            if d and d.group(1) in (f"UR{k}", f"UR{k + 1}"):
                break
    return False


_UNPACK64 = re.compile(r"\bmov\.b64 \{(%\w+), (%\w+)\}, %\w+;")
_MMA_LINE = re.compile(r"\bmma\.[\w.:]+ \{([^}]*)\}, \{([^}]*)\}, \{([^}]*)\}, \{([^}]*)\};")
_HMMA = re.compile(r"\bHMMA\.[\w.]+ R\d+, R\d+, R(\d+), R(\d+)\b")


def mma_c_from_its_b_register(ptx: str, listing: str) -> bool:
    """An `mma` reads the low half of a `mov.b64 {lo, hi}` unpack as its B fragment and the
    high half at C[k], and ptxas's listing copies HMMA's B register into C's k-th register
    (`MOV Rc+k, Rb`): C[k] took the low half (ptxas 13.5.37, held-out sm_120a seed 45200124;
    test_mma_c_fragment_of_an_unpacked_high_half)."""
    unpacks = _UNPACK64.findall(ptx)
    spots = set()
    for m in _MMA_LINE.finditer(ptx):
        b = [r.strip() for r in m.group(3).split(",")]
        c = [r.strip() for r in m.group(4).split(",")]
        for lo, hi in unpacks:
            if lo in b and hi not in b:
                spots |= {k for k, r in enumerate(c) if r == hi}
    if not spots:
        return False
    for m in _HMMA.finditer(listing):
        rb, rc = int(m.group(1)), int(m.group(2))
        if any(re.search(rf"\bMOV R{rc + k}, R{rb}\b", listing) for k in spots):
            return True
    return False



_NARROW_PAIR = re.compile(r"\bcvt(?:\.\w+)*\.(?:e4m3x2|e5m2x2|e2m3x2|e3m2x2|ue8m0x2)\.\w+ (%\w+),")
_PACK32 = re.compile(r"\bmov\.b32 %\w+, \{(%\w+), (%\w+)\};")
_MERGE_C = re.compile(r"\bF2FP\.[\w.]*MERGE_C[\w.]* (R\d+), [^;]*\b(R\d+) ;")


def merge_c_keeps_the_high_half(ptx: str, listing: str) -> bool:
    """A narrow pair conversion's 16-bit result is the low half of a `mov.b32 {lo, hi}`
    pack, and ptxas's listing copies the result of an F2FP...MERGE_C into the register of its
    merged source (the pack's high half; a copy onto itself where the F2FP wrote there):
    ptxas 13.5.37 goes on reading that register as the high half's 16-bit value, so that
    value (and whatever reads it) is the pack's low half (fuzz seed 1012 of branch fuzz35's
    corner group; test_narrow_pair_packed_under_a_16bit_value_keeps_that_value)."""
    lows = set(_NARROW_PAIR.findall(ptx))
    if not any(lo in lows for lo, _ in _PACK32.findall(ptx)):
        return False
    for m in _MERGE_C.finditer(listing):
        d, c = m.group(1), m.group(2)
        if re.search(rf"\b(?:IMAD\.MOV\.U32 {c}, RZ, RZ, {d}|MOV {c}, {d}) ;", listing[m.end():]):
            return True
    return False

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
    # neg.f16 of a cnot.b16 result (0 or 1) written as the integer negation where the kernel
    # has a call (campaign 14 seed 26000131, sm_120; sm_89 alike): +0 or 0xffff (a NaN the
    # generator canonicalises to 0x7fff) for -0.0 or -subnormal; seen through a later
    # neg(.ftz).f16: +0 (ftz flushes -subnormal too) or 0x0001 against -0 or that NaN.
    Departure(
        "neg.f16 of a cnot.b16 result as integer negation",
        "test_neg_f16_of_a_cnot_result_flips_the_sign_bit",
        r"^neg(\.ftz)?\.f16$",
        (r"\bcnot\.b16\b", r"\bneg\.f16\b"),
        r"\bSEL R\d+, RZ, 0xffffffff, !P\d",
        lambda ours, theirs, width: width == 16 and (ours, theirs) in (
            (0x8000, 0x0000), (0x8001, 0xFFFF), (0x8001, 0x7FFF),
            (0x0000, 0x8000), (0x0000, 0xFFFF), (0x0000, 0x7FFF), (0x0001, 0xFFFF), (0x0001, 0x7FFF))),
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
    # the same with an integer `set` (-1 or 0) of the half set result: a true half set compares
    # as 0x3c003c00, so `set.gt.s32.u16` of 1.0 and 2.0 gives -1 (campaign 22's 33003906 on
    # sm_110, seen through an `mma.sp` that took the set's register as a source: any value there).
    Departure(
        "16-bit integer set of a half set result reads both halves",
        "test_u16_set_of_a_half_set_result_compares_its_16_bits",
        r"^(set\.\w+(\.(and|or|xor))?\.[su]32\.[usb]16|mma(\.\w+)+\.[su](8|4)(\.\w+)*)$",
        (r"\bset\.\w+(\.\w+)*\.f16\.f16 (%\w+),[^;]*;[\s\S]*\bset\.\w+(\.(and|or|xor))?\.[su]32\.[usb]16 %\w+, (\2\b|[^;]*, \2;)",),
        r"\bHSET2\.BF\b",
        lambda ours, theirs, width: ours != theirs),
    # the same read by a 16-bit multiply: `mad.wide.u16 d, a, h, c` of a half set result h
    # (1.0: 0x3c00) is a 32-bit IMAD of the whole register, whose upper half holds 0x3c00 too
    # (the sm_75 run of branch fuzz29, seed 39000353; sm_80/89 alike): the product gains
    # (a * 0x3c00) << 16, so the low halves agree.
    Departure(
        "16-bit multiply of a half set result reads both halves",
        "test_u16_multiply_of_a_half_set_result_reads_its_16_bits",
        r"^(mad|mul)\.wide\.[su]16$",
        (r"\bset\.\w+(\.\w+)*\.f16\.f16 (%\w+),[^;]*;[\s\S]*\b(mad|mul)\.wide\.[su]16 %\w+, [^;]*\2\b",),
        r"\bHSET2\.BF\b",
        lambda ours, theirs, width: width == 32 and ours != theirs and ours & 0xFFFF == theirs & 0xFFFF),
    # an integer read of a `set.*.f16` result where the kernel has a CALL (a division's or
    # a 16-bit remainder's slow path): ptxas writes the set as `SEL R, RZ, 0x1` (the integer
    # 1) where the manual's 1.0 is 0x3c00 (campaign 22's 33002318 on sm_110; as
    # 28001234/30003385): a cvt.s64.s16 of it; an s16 `set...f16.s16` compare of it beside a
    # `rem.s16` (campaign 25's 36000303: 1.0 against 0x3c00 unequal, against 1 equal); its
    # low byte through `cvt.s32.s8` then abs.s32 beside an `rcp.rn.f32` (36001306: 1, not 0)
    # or through `cvt.u16.u8` beside a `div.rp.f32` (36004301)
    Departure(
        "half set result as the integer 1 where the kernel calls",
        "test_s64_of_a_half_set_result_is_its_bits_when_the_kernel_calls",
        r"^(cvt(\.r[nzmp])?\.[suf](16|32|64)\.[su](8|16)|set\.\w+(\.(and|or|xor))?\.f16\.[su]16|abs\.s32)$",
        (r"\bset\.\w+(\.\w+)*\.f16\.[bfsu](16|32|64)\b", r"\b((div|sqrt|rcp)(\.\w+)*\.f(32|64)|rem\.[su]16)\b"),
        r"\b(SEL R\d+, RZ, 0x1|FSEL R\d+, RZ, 1\.875), !?P[0-6] ",      # (1.875: 1.0's f64 high word)
        # (the integer, or 15360.0 against 1.0 where the cvt's result is a float: campaign
        # 24's 35002285, `cvt.rn.f64.s16` of `set.eq.xor.f16.b16` beside a `sqrt.rp.f64`)
        lambda ours, theirs, width: (ours, theirs) in ((0x3C00, 1), (0x40CE000000000000, 0x3FF0000000000000),
                                                       (0x46700000, 0x3F800000))
        or width == 16 and {ours, theirs} == {0, 0x3C00} or (ours, theirs) == (0, 1)),
    # the same with an `.f32` destination, read by a 64-bit (or float) conversion: ptxas writes
    # the set as `SEL R, RZ, 0x1` where the manual's 1.0f is 0x3f800000, so `cvt.s64.u32` of
    # it gives 1 and `cvt.rn.f32.u32` 1.0f (branch fuzz31's held-out sm_75 run, seed 43300190:
    # `set.ls.and.f32.u16` after a loop with `rem.s32`; by hand, a `sqrt.rm.f64` in the kernel
    # is enough). A 32-bit read of the same set is right, so the rule asks for the conversion
    # of the set's own register.
    Departure(
        "64-bit convert of an f32 set result converts the integer 1",
        "test_s64_of_an_f32_set_result_is_one_point_zero_when_the_kernel_has_a_sqrt",
        r"^cvt(\.rn)?\.([su]64|f32)\.[su]32$",
        (r"\bset\.\w+(\.(and|or|xor))?(\.ftz)?\.f32\.\w+ (%\w+),[^;]*;[\s\S]*\bcvt(\.rn)?\.([su]64|f32)\.[su]32 %\w+, \4;",),
        r"\bSEL R\d+, RZ, 0x1, !?P[0-6] ",
        lambda ours, theirs, width: (ours, theirs) in ((0x3F800000, 1), (0x4E7E0000, 0x3F800000))),
    # ... read through its low byte (`cvt.{u,s}N.{u,s}8` of the set's own register): the
    # manual's 1.0f has a zero low byte, ptxas's integer 1 does not (branch fuzz35's sm_75
    # tuning seed 47300172: `set.eq.or.f32.b16` beside a `.func` with `rcp.rm.f64`).
    Departure(
        "byte of an f32 set result is the integer 1's where the kernel calls",
        "test_byte_of_an_f32_set_result_is_zero_when_the_kernel_has_a_sqrt",
        r"^cvt\.[su](16|32|64)\.[su]8$",
        (r"\bset\.\w+(\.(and|or|xor))?(\.ftz)?\.f32\.\w+ (%\w+),[^;]*;[\s\S]*\bcvt\.[su](16|32|64)\.[su]8 %\w+, \4;",
         r"\b((div|sqrt|rcp)(\.\w+)*\.f(32|64)|rem\.[su]16)\b"),
        r"\bSEL R\d+, RZ, 0x1, !?P[0-6] ",
        lambda ours, theirs, width: (ours, theirs) == (0, 1)),
    # `sad.s16` of a `set.*.f16` result where the kernel has a `sqrt.rm.f64` (branch fuzz31's
    # held-out sm_100 run, seed 43200298; sm_75 alike): ptxas takes the set as the integer 1,
    # so |1 - b| + c where the manual's 0x3c00 gives |0x3c00 - b| + c. The two differ by an
    # odd amount of at most 0x3bff (either operand of the absolute difference).
    Departure(
        "sad.s16 of a half set result as the integer 1 where the kernel calls",
        "test_sad_s16_of_a_half_set_result_is_its_bits_when_the_kernel_has_a_sqrt",
        r"^sad\.[su]16$",
        (r"\bset\.\w+(\.\w+)*\.f16\.\w+ (%\w+),[^;]*;[\s\S]*\bsad\.[su]16 %\w+, (\2,|%\w+, \2,)",
         r"\b(div|sqrt|rcp)(\.\w+)*\.f(32|64)\b"),
        r"\bSEL R\d+, RZ, 0x1, !?P[0-6] ",
        lambda ours, theirs, width: width == 16 and (ours - theirs) & 1 == 1
        and min((ours - theirs) & 0xFFFF, (theirs - ours) & 0xFFFF) <= 0x3BFF),
    # a result computed from a predicate ptxas never writes (it dropped the computation that
    # should have set it): a uniform one no instruction writes, or one no path of its
    # function writes (fn2 of seed 22005165 reads the caller's P6): any value, any instruction.
    Departure(
        "ptxas reads a predicate it never writes",
        "test_func_result_does_not_come_from_an_unwritten_uniform_predicate",
        r".",
        (),
        lambda listing: reads_unwritten_uniform_predicate(listing) or reads_undefined_predicate(listing),
        lambda ours, theirs, width: True, counters=True),
    # a 16-bit shift by a cnot.b32 result (0 or 1): ptxas shifts by a constant 0 (shl.b16,
    # seed 25000673) or by the stack pointer (shr.u16, seed 8900344): the value shifted by
    # one place differs from ptxas's unshifted (or zero) one.
    Departure(
        "16-bit shift by a cnot result does not shift by it",
        "test_16bit_left_shift_by_a_cnot_result_shifts_by_it",
        r"^sh[lr]\.[bus]16$",
        (r"\bcnot\.b32\b",),
        "",
        lambda ours, theirs, width: width == 16 and (
            ours == (theirs << 1) & 0xFFFF or ours == theirs >> 1 or theirs == 0) and ours != theirs),
    # the same shift read by later instructions (campaign 23, seed 34006593: `cvt.rm.sat.f32.u8`
    # of `shr.b16 h1, h0, cnot(r)`: 1.0 from ours, 0 from ptxas): any value downstream of a
    # shift whose amount a cnot wrote.
    Departure(
        "16-bit shift by a cnot result does not shift by it (downstream)",
        "test_16bit_left_shift_by_a_cnot_result_shifts_by_it",
        r"^(?!sh[lr]\.[bus]16$)",
        (r"\bcnot\.b32\b", r"\bsh[lr]\.[bus]16\b"),
        "",
        lambda ours, theirs, width: ours != theirs,
        shift16_by_a_cnot_result),
    # an fp8/fp6/ue8m0 pair conversion packed by `mov.b32 {pair, h}` under a 16-bit value h
    # that an ALU instruction wrote: ptxas merges h into the F2FP (MERGE_C) in h's own
    # register and then reads that register as h, i.e. the pack's low half (seed 1012 of
    # `--features int32,corner,fp6` on sm_100a; sm_89/sm_90 fp8 alike): any value.
    Departure(
        "a narrow pair merged under a 16-bit value leaves that value's register holding the pack",
        "test_narrow_pair_packed_under_a_16bit_value_keeps_that_value",
        r".",
        (r"\bmov\.b32 %\w+, \{%\w+, %\w+\};",),
        r"MERGE_C",
        lambda ours, theirs, width: ours != theirs,
        merge_c_keeps_the_high_half),
    # fp8 mma on sm_90 (no QMMA: widened to f16, two HMMAs, C added by FADD/HADD2) whose D
    # shares a register with C: ptxas writes D[k] before it adds that register as a later
    # C[j] (seeds 25000665/724/761; 25000778 sees it through a later vabsdiff): any value.
    Departure(
        "sm_90 fp8 mma adds an already written D register as C",
        "test_fp8_mma_on_sm90_reads_c_before_writing_d",
        r".",
        (r"\.e[45]m[23]\.f(?:16|32) \{[^}]*?(%r\d+)\b[^}]*\}, \{[^}]*\}, \{[^}]*\}, \{[^}]*\1\b",),
        r"\bF2FP\.F16\.E[45]M[23]\.UNPACK_B\b",
        lambda ours, theirs, width: True),
    # shl.b64 by an immediate of 64 or more: the manual clamps the amount to 64, so the
    # result is 0 (ours); ptxas (sm_75 and sm_89) stores the operand unshifted (campaign 15's
    # 27001629, sm_75: `shl.b64 %d1, %d0, 200` then `red.global.xor.b64`). Seen as the shift's
    # own slot (ours 0), or as a private atomic word the shifted register itself updates.
    Departure(
        "shl.b64 by an immediate of 64 or more leaves the value unshifted",
        "test_64bit_left_shift_by_an_immediate_of_64_or_more_is_zero",
        r"^shl\.b64$",
        (rf"\bshl\.b64 %\w+, %\w+, {_AT_LEAST_64};",),
        "",
        lambda ours, theirs, width: width == 64 and ours == 0 and theirs != 0),
    Departure(
        "shl.b64 by an immediate of 64 or more leaves the value unshifted",
        "test_64bit_left_shift_by_an_immediate_of_64_or_more_is_zero",
        r"^private atomic word$",
        (rf"\bshl\.b64 (%\w+), %\w+, {_AT_LEAST_64};[\s\S]*\b(red|atom)\.\w+(\.\w+)*\.[bus]64 (%\w+, )?\[[^\]]*\], \1[,;]",),
        "",
        lambda ours, theirs, width: ours != theirs),
    # a 16-bit load into a 32-bit register merged by ptxas with the neighbouring 16-bit load
    # into one 32-bit LDG: the register's upper half (+0, or the sign for ld.s16) comes from
    # the neighbour or another register. Read as f16x2 (campaign 16's 28001354, sm_100,
    # `set.eq.ftz.s32.f16x2` of an `ld.global.s16`): the low lanes agree, the upper differ.
    Departure(
        "f16x2 operand from a merged 16-bit load loses its extension",
        "test_f16x2_compare_reads_the_sign_extended_upper_half_of_an_s16_load",
        r"\.f16x2$",
        (r"\bld\.global(\.\w+)*\.[us]16 %\w+,",),
        "",
        lambda ours, theirs, width: width == 32 and ours != theirs and ours & 0xFFFF == theirs & 0xFFFF,
        merged_load_read_as_f16x2),
    # ... read as an mma fragment (campaign 16's 28001020, sm_80..sm_100: m8n8k4's a1 from an
    # `ld.global.u16` is the next half's value): any value downstream.
    Departure(
        "mma fragment from a merged 16-bit load loses its extension",
        "test_m8n8k4_reads_the_zero_upper_half_of_a_u16_load",
        r".",
        (r"\bmma\.", r"\bld\.global(\.\w+)*\.[us]16 %\w+,"),
        "",
        lambda ours, theirs, width: ours != theirs,
        merged_load_read_by_mma),
    # ... an mma whose B fragment is the low half of a `mov.b64 {lo, hi}` unpack and whose C
    # has the high half: ptxas copies the low half into C (`MOV Rc, Rb`; held-out sm_120a
    # seed 45200124, seen on sm_80..sm_120a): any value downstream.
    Departure(
        "mma C fragment from an unpacked high half takes the low half",
        "test_mma_c_fragment_of_an_unpacked_high_half",
        r".",
        (r"\bmma\.", r"\bmov\.b64 \{%\w+, %\w+\}, %\w+;"),
        "",
        lambda ours, theirs, width: ours != theirs,
        mma_c_from_its_b_register),
    # neg.f32 of an integer or f32 `set` result folded into the set's select where the kernel
    # has a CALL (a division's slow path): ptxas negates the integer (all ones -> `SEL R, RZ,
    # 0x1`, 1 where the manual's neg of a NaN is a NaN) or drops the sign of zero (false ->
    # +0 where the manual gives -0; `FSEL R, RZ, -1` for set.f32). Campaign 16's 28001234.
    Departure(
        "neg.f32 of a set result folded into the set's select",
        "test_neg_f32_of_an_integer_set_result_is_a_nan",
        r"^neg(\.ftz)?\.f32$",
        (r"\bset\.[\w.]+\.[usf]32\.\w+ (%\w+), [^;]*;[\s\S]*\bneg(\.ftz)?\.f32 %\w+, \1;",),
        r"\b(SEL R\d+, RZ, 0x1|FSEL R\d+, RZ, -1), !?P[0-6] ",
        lambda ours, theirs, width: width == 32 and (
            (ours, theirs) == (0x80000000, 0) or (theirs == 1 and _is_nan32(ours)))),
    # cvt.rzi to an integer of a cnot.b16 result read as f16 (1 is the f16 2^-24, which
    # truncates to 0): where the kernel has a CALL (a division's slow path) ptxas keeps the
    # cnot's integer (`SEL R, RZ, 0x1, !P`) and stores 1 (campaign 19's 30003385, sm_90).
    Departure(
        "cvt.rzi of a cnot.b16 result read as f16 keeps the integer",
        "test_cvt_rzi_of_a_cnot_result_as_f16_truncates_to_zero",
        r"^cvt\.rzi\.[us](8|16|32|64)\.f16$",
        (r"\bcnot\.b16\b", r"\bcvt\.rzi\.[us](8|16|32|64)\.f16\b"),
        r"\bSEL R\d+, RZ, 0x1, !?P[0-6]",
        lambda ours, theirs, width: ours == 0 and theirs == 1),
    # min/max.f32 of a saturating s32 result (sub.sat, mad.hi.sat): ptxas leaves the FMNMX
    # out, as if the saturated value were in range (campaign 18's 29100833 on sm_89, campaign
    # 19's 30001065 on sm_90): any value downstream.
    Departure(
        "min/max.f32 of a saturated s32 result left out",
        "test_max_f32_of_a_saturated_mad_hi_is_the_maximum",
        r".",
        (r"\.sat\.s32\b", r"\b(min|max)(\.\w+)*\.f32\b"),
        "",
        lambda ours, theirs, width: ours != theirs,
        minmax_of_saturated_left_out),
    # vabsdiff4 whose register operand ptxas keeps in a uniform register: sm_89 has no such
    # VABSDIFF4 form and ptxas writes URn's index as Rn (fuzz campaign 18's 29102974).
    Departure(
        "vabsdiff4 reads a uniform register's index as a register",
        "test_vabsdiff4_of_a_uniform_operand_reads_that_operand",
        r"^vabsdiff4?\.",
        (r"\bvabsdiff4?\.",),
        video_reads_a_uniform_index_as_a_register,
        lambda ours, theirs, width: ours != theirs,
        reads=video_uniform_index_reads),
    # `cvt.rn.satfinite.e5m2x2.f16x2 h3, r` packed beside another 16-bit value h1 (`mov.b64
    # d, {., ., h3, h1}` then unpacked again, or stored as a `.v2`/`.v4` of 16-bit values):
    # ptxas computes h3 with `F2FP...UNPACK_B_MERGE_C R, c, Rh1` (h1 merged into the same
    # register) and then reads one half of that register for both values (campaign 23,
    # seed 34003432, sm_89: the unpacked h1 is the pair; campaign 24, seed 35001701, sm_121:
    # `st.v2.u16 {h0, h1}` stores one half twice): any value downstream.
    Departure(
        "half beside an FP8 pair merged by F2FP is read from the wrong half",
        "test_half_unpacked_beside_an_fp8_pair_is_its_own",
        r".",
        (r"\bcvt\.rn(\.\w+)*\.e[45]m[23]x2\.f16x2\b",
         r"\bmov\.b64 \{%\w+, %\w+, %\w+, %\w+\}, %\w+;|\bst(\.\w+)*\.v[24]\.[bus]16 "),
        r"\bF2FP(\.\w+)*\.UNPACK_B_MERGE_C R\d+, [^,]+, R(?!Z)\d+",
        lambda ours, theirs, width: ours != theirs),
    # an e4m3x2/e5m2x2 pair read from a store-initialised `.local` array by a vector 16-bit
    # load: ptxas folds the stores into the conversion and writes `F2FP...UNPACK_B R, imm`
    # with a wrong immediate (campaign 24, seed 35002150: 0x24 for 0x8ff3; a `cvt.u32.u16` of
    # the same load is forwarded right): the converted pair differs.
    Departure(
        "FP8 pair of a local array's 16-bit element folded to a wrong immediate",
        "test_e4m3_pair_of_a_local_array_half_is_its_value",
        r"^cvt\.rn(\.\w+)*\.f16x2\.e[45]m[23]x2$",
        (r"\bst(\.\w+)*\.local\.", r"\bld(\.\w+)*\.local(\.\w+)*\.v[24]\.[bus]16 "),
        r"\bF2FP\.F16\.E[45]M[23]\.UNPACK_B R\d+, -?\d",
        lambda ours, theirs, width: ours != theirs),
    # `cvt.<rnd>.f32.u32` of a sign-extended `ld...s8`/`.s16` result: ptxas converts the
    # narrow signed value (`I2F.S8`), so a negative byte is a negative float where the manual's
    # u32 is above 2^31 (campaign 23, seed 34008588: through `.sat`, 0 for 1.0).
    Departure(
        "u32 conversion of a sign-extended narrow load converts it as signed",
        "test_u32_conversion_of_a_sign_extended_byte_is_unsigned",
        r"^cvt(\.\w+)*\.f(16|32|64)\.u(32|64)$",
        (r"\bld(\.\w+)*\.s(8|16) ",),
        r"\bI2F(\.\w+)*\.S(8|16)\b",
        lambda ours, theirs, width: ours != theirs),
    # `cvt.sat.u64.s32` of an `abs.s32` result: abs(INT_MIN) stays 0x80000000 (negative), which
    # saturates to 0; ptxas takes abs as never negative and zero-extends it, 2^31 (fuzz36,
    # sm_90a seed 48200467: ours 0, ptxas 0x80000000), as the two rules beside this one.
    Departure(
        "saturating u64 widening of an abs.s32 result takes it as non-negative",
        "test_saturating_u64_widening_of_abs_of_int_min_is_zero",
        r"^cvt\.sat\.u64\.s32$",
        (r"\babs\.s32 ",),
        "",
        lambda ours, theirs, width: ours == 0 and theirs == 0x80000000),
    # `cvt.<rnd>.f(16|32|64).u32` of an `abs.s32` result: ptxas converts the IABS result as
    # signed (`I2F.RM R, R`, no .U32), so abs(INT_MIN) = 0x80000000 becomes -2^31 where the
    # manual's u32 is 2^31 (campaign 28, seed 40003608 on sm_90: 0xcf000000 for 0x4f000000).
    Departure(
        "u32 conversion of an abs.s32 result converts it as signed",
        "test_u32_conversion_of_abs_of_int_min_is_two_to_the_31",
        r"^cvt(\.\w+)*\.f(16|32|64)\.u32$",
        (r"\babs\.s32 ",),
        r"\bIABS R(\d+), [^;]+;[\s\S]*?\bI2F(?:\.F(?:16|64))?(?:\.R[MPZN])? R\d+, R\1 ;",
        lambda ours, theirs, width: ours != theirs),
    # `sad.s16 d, a, b, c` with c an `ld.param.s8` result: ptxas masks the parameter word to
    # its low byte (`LOP3.LUT ..., 0xff`) for the VABSDIFF addend, so a negative byte adds
    # 0x100 more than the sign-extended value (seed 843656; campaign 27, sm_86, 38000021).
    Departure(
        "sad.s16 adds a signed byte parameter zero-extended",
        "test_sad_s16_adds_the_sign_extended_byte",
        r"^sad\.s16$",
        (r"\bld\.param\.s8 ",),
        lambda listing: bool(re.search(r"\bVABSDIFF\b", listing)
                             and re.search(r"\bLOP3\.LUT R\d+, R\d+, 0xff, RZ, 0xc0\b", listing)),
        lambda ours, theirs, width: width == 16 and (theirs - ours) % (1 << 16) == 0x100),
    # `set.ne.f32` of a `set.<cmp>.s32` result (0 or -1, which is a NaN as f32): ptxas
    # compares the integers, true for -1 != 0.0 where the manual's ordered ne is false
    # (campaign 23, seed 34003205 on sm_89): any value downstream.
    Departure(
        "f32 ne of an integer set result compares the integers",
        "test_f32_ne_of_an_integer_set_result_is_ordered",
        r".",
        (r"\bset\.\w+(\.ftz)?\.[su]32\.f(16|32|64)\b", r"\bsetp?\.ne(\.\w+)*\.f32\b"),
        "",
        lambda ours, theirs, width: ours != theirs,
        ne_of_an_integer_set_result),
    # `setp.<op>.<and|or|xor>.ftz.f32 p, a, b, q` feeding a branch: ptxas folds the boolean
    # into `@!Q BRA P, target` and writes the compare without .FTZ, so subnormal inputs
    # take the other path (seed 25000269): any value downstream of the branch.
    Departure(
        "ftz compare folded into a predicated branch loses .ftz",
        "test_ftz_compare_feeding_a_branch_flushes_subnormals",
        r".",
        (r"\bsetp\.\w+\.(and|or|xor)\.ftz\.f32\b",),
        ftz_dropped_before_branch,
        lambda ours, theirs, width: True),
    # `bfe.s32 d, a, pos, len` with `a` a kernel parameter and `pos` per lane, in a kernel
    # with calls and an mma (campaign 25, seed 36000184 on sm_100/sm_103): ptxas computes
    # `a >> pos` per lane, then moves it into a uniform register (`R2UR UR7, R14`) before
    # the SGXT, so every lane gets one lane's shifted value.
    Departure(
        "bfe's per-lane shift moved into a uniform register",
        "test_bfe_of_a_parameter_by_a_per_lane_position_is_per_lane",
        r"^bfe\.[su]32$",
        (r"\bbfe\.[su]32\b",),
        # (the shift by a register, then its result moved into a uniform register)
        r"SHF\.R\.[SU]32\.HI (R\d+), RZ, R\d+, R\d+ ;(?:.*\n){0,16}?.*\bR2UR UR\d+, \1 ;",
        lambda ours, theirs, width: ours != theirs),
    # two `cvt.rn.satfinite.relu.{e4m3x2,e5m2x2}.f16x2` into 16-bit registers stored together
    # by a `sust...v4.b16` (campaign 25, seed 36002701; sm_89 to sm_120 alike): ptxas builds
    # the pair with `F2FP.SATFINITE.RELU.E5M2.F16.UNPACK_B_MERGE_C R14, R6, R11` (the first
    # value in R11) and then copies R14 over R11, so a later read of the first value's low
    # half gets the second's (its `sust.b.a2d.b16` and the end value).
    Departure(
        "an FP8 pair merged into a 16-bit register's copy reads the other value",
        "test_fp8_pairs_stored_together_keep_their_own_values",
        r".",
        (r"\bcvt\.rn\.satfinite(\.relu)?\.e[45]m[23]x2\.f16x2\b", r"\bsust\.\w+(\.\w+)*\.v[24]\.b16\b"),
        # (the pair narrowed into Rd above Rc's low half, then Rd copied over Rc)
        r"F2FP\.\S*UNPACK_B_MERGE_C (R\d+), R\d+, (R\d+) ;(?:.*\n){0,12}?.*\bIMAD\.MOV\.U32 \2, RZ, RZ, \1 ;",
        lambda ours, theirs, width: ours != theirs),
    # `mov.b32 {%h2, %h1}, %tr0` of an XOR of a `.u16` kernel parameter loaded with its
    # neighbours by one `LDCU.64 UR4` (campaign 24, seed 35000635 on sm_121; sm_100/120 alike):
    # ptxas moves %h1 (UR4's high half) into a low half with `UPRMT UR4, UR5, 0x7610, UR4`,
    # taking UR5's low half (the next parameter) instead.
    Departure(
        "a uniform word's high half taken from the next uniform register",
        "test_high_half_of_a_uniform_parameter_xor_is_its_own",
        r".",
        (r"\bmov\.b32 \{%\w+, %\w+\}, %\w+;", r"\bld\.param\.u16\b"),
        uniform_half_from_next_register,
        lambda ours, theirs, width: ours != theirs),
    # `neg.s16` of a `set.<cmp>.f16.<type>` result (0x3c00 when true) beside a division's call
    # (campaign 25, seed 36004785; sm_89 alike): ptxas negates it as a half (0xbc00) where
    # the integer negation is 0xc400.
    Departure(
        "neg.s16 of a half set result negated as a half",
        "test_neg_s16_of_a_half_set_result_is_the_integer_negation",
        r"^neg\.s16$",
        (r"\bset\.\w+(\.(and|or|xor))?\.f16\.\w+",),
        "",
        lambda ours, theirs, width: width == 16 and (ours, theirs) == (0xC400, 0xBC00)),
    # `cvt.rn.f32.f64` of a `cnot.b64` result (0 or 1: 1 is the least subnormal double, 0.0f
    # once rounded), in a kernel with a loop after it (campaign 25, seed 36003549 on sm_103):
    # ptxas converts the integer 1 to 1.0f.
    Departure(
        "f32 convert of a cnot.b64 result converts the integer",
        "test_f32_of_a_cnot_b64_result_is_zero",
        r"^cvt\.rn\.f32\.f64$",
        (r"\bcnot\.b64\b",),
        "",
        lambda ours, theirs, width: (ours, theirs) == (0, 0x3F800000)),
    # `cvt.sat.f32.f16` of a `cvt.sat.s16.u32` result (0x7fff for any large u32: a NaN as a
    # half) (campaign 25, seed 36005660; sm_89 alike): .sat flushes a NaN result to +0 (PTX
    # ISA, cvt), ptxas gives the canonical NaN.
    Departure(
        "saturating f32 convert of a saturated s16 keeps the NaN",
        "test_saturating_f32_of_a_saturated_s16_nan_is_zero",
        r"^cvt\.sat\.f32\.f16$",
        (r"\bcvt\.sat\.s16\.u32\b",),
        "",
        lambda ours, theirs, width: (ours, theirs) == (0, 0x7FFFFFFF)),
    # `sin.approx.f32`/`cos.approx.f32` of a value ptxas knows at compile time (a word of a
    # store-initialised local table, 36005150: 1401181199's bits, about 1.1e12): ptxas folds
    # it with an exact sine (no MUFU.SIN in its listing), where the unit (and ours, run on
    # it) gives 0 for an argument of 2^23 or more revolutions; the manual bounds the error
    # only on [-pi, pi].
    Departure(
        "sin/cos.approx of a constant folded exactly",
        "test_sin_approx_of_a_huge_constant_is_the_units",
        r"^(sin|cos)\.approx(\.ftz)?\.f32$",
        (r"\b(sin|cos)\.approx(\.ftz)?\.f32\b",),
        lambda listing: not re.search(r"\bMUFU\.(SIN|COS)\b", listing),
        lambda ours, theirs, width: ours != theirs),
    # `abs.bf16x2` of an `add.rz.sat.f32` result (campaign 25, seed 36001465; sm_89 and sm_103
    # alike): ptxas drops the abs (a saturated f32 is not negative, but its low half's bit
    # 15 is a mantissa bit) and writes `HFMA2.BF16_V2 R0, -RZ, RZ, R0`: the low half keeps
    # its sign bit.
    Departure(
        "abs.bf16x2 of a saturated f32 keeps a half's sign",
        "test_abs_bf16x2_of_a_saturated_f32_clears_both_signs",
        r".",
        (r"\.sat\.f32\b", r"\babs\.bf16x2\b"),
        "",
        lambda ours, theirs, width: ours != theirs and ours & 0x80008000 == 0
        and ours | (theirs & 0x80008000) == theirs),
)


_ENTRY = re.compile(r"\.entry\b")
_PTX_DEST = re.compile(r"^(?:@!?%\w+\s+)?([a-z]\w*(?:\.[\w:]+)*)\s+(\{[^}]*\}|[^,;\s]+)")


def last_writers(ptx: str, reg: str) -> tuple[str, ...]:
    """The instruction keys of the kernel's statements that may have written `reg` last: the
    last one that always runs (unguarded, at the body's outer indentation: not inside an if,
    a loop or a switch case) and every one after it. A slot's key names only the last writer
    in program order, which a uniform branch may skip for every thread (campaign 28's
    40001364: `mad.hi.sat.s32` under `@%p1 bra.uni`, the value from the `set` before it)."""
    m = _ENTRY.search(ptx)
    if not m:
        return ()
    writes, base = [], None
    for line in ptx[ptx.find("{", m.end()) + 1:].splitlines():
        text = line.strip()
        if not text or text.startswith(("//", ".", "{", "}")) or text.endswith(":"):
            continue
        indent = len(line) - len(line.lstrip())
        base = indent if base is None else min(base, indent)
        d = _PTX_DEST.match(text)
        if not d or d.group(1).startswith(("st.", "bra", "ret", "exit", "bar", "red.")):
            continue
        dests = re.split(r"[{},|\s]+", d.group(2))
        if reg in dests:
            writes.append((d.group(1), indent, text.startswith("@")))
    out: list[str] = []
    for key, indent, guarded in writes:
        if indent == base and not guarded:
            out = []
        out.append(key)
    return tuple(out)


def recognise(key: str, ours: int, theirs: int, width: int, ptx: str,
              listing: Callable[[], str], counter: bool = False,
              reg: str | None = None) -> Departure | None:
    """The known departure that explains this first difference, or None. `listing` gives
    ptxas's SASS text (called only when a rule needs it); `counter`: the difference is a
    contended counter, which only departures marked `counters` explain. `reg`: the slot's
    register, whose other possible last writers (`last_writers`) a rule's key may name
    where the last one in program order is conditional."""
    keys = [key]
    if reg is not None:
        keys += [k for k in last_writers(ptx, reg) if k != key]
    for d in DEPARTURES:
        if counter and not d.counters:
            continue
        if not any(re.search(d.key, k) for k in keys) or not d.values(ours, theirs, width):
            continue
        if not all(re.search(p, ptx) for p in d.ptx):
            continue
        if callable(d.sass):
            if not d.sass(listing()):
                continue
        elif d.sass and not re.search(d.sass, listing()):
            continue
        if d.both is not None and not d.both(ptx, listing()):
            continue
        return d
    return None
