"""Derive the per-arch SASS encoding tables by probing nvdisasm with raw instruction words.

Why: the encoder and decoder in `ptx2sass.encoder.codec` are driven only by data; this tool
produces that data, with NVIDIA's disassembler as the oracle, so a new arch is a re-run, not
new code.

How: every distinct word ptxas emits for the corpora is a seed. For a seed, each of the data
bits (0..104, 126, 127) is flipped on its own and the 107 variants disassembled in one batch;
how the text changes says what the bit is:

* the opcode, the operand count or an operand's kind changes, or nvdisasm rejects the word:
  the bit selects the *form*, so it is part of the form's match pattern;
* nothing changes: a don't-care bit, kept at the value ptxas gives it;
* one operand's number changes by ±2^k (register index, immediate, constant offset …): the
  bit is bit k of a numeric *field* of that operand (its weight is the change);
* anything else (modifier tokens, an operand's sign, |abs|, selectors, special-register
  name): the bit belongs to a *group*; adjacent group bits are enumerated together and the
  text of every value is recorded.

Also recorded per form: which operands nvdisasm leaves out at their default (`PT`, the
`0xf` lane mask of MOV), nvdisasm's aliases (value classes of operands that rename the
mnemonic: `IMAD.MOV` when a factor is RZ, `IMAD.SHL`, `IMAD.IADD`), the printed order of the
mnemonic's tokens (read off probes that show two groups at once), and which operand each of
the four reuse flags marks.

Seeds whose words the table already reads back as nvdisasm's text are skipped, so the table
holds one form per distinct pattern that needed one. `--extend --arch sm_86` adds forms for a
member arch whose nvdisasm prints some words differently (they win for that arch only). The
result is written atomically to `encoder/tables/<family>.json`.

Groups found one bit at a time are completed before enumeration: a bit whose flip alone is
illegal or silent joins a neighbouring group when the group's values show it (LDC's size
bits, ATOMS's SPIN); a bit a zero-register operand hides (`.X4` of `[RZ]`) stays a form bit;
the offset of an absolute address (`[0x4]` ↔ `[RZ]`) is a field; one field printed as two
operands (`BAR.SYNC R6, R6`) is a field of both; and two groups whose values do not combine
independently are enumerated together (I2F/F2I selectors by type, HADD2.F32 |abs|).
`--reprobe OPCODE` (with `--extend`) drops an opcode's forms for the arch and probes again.

An immediate whose signedness a type group decides (I2F prints `-0x10` for a signed source,
`0xfffffff0` for an unsigned one) gets `signed_by` [group, values].

Known gaps: an optional operand that a group makes visible (R2UR.OR's PT) is not modelled.
ptxas also writes the descriptor register of LD/ST/LDG/STG/RED/ATOMG/LDGSTS (UR4/UR6…) where
nvdisasm does not print it, and NaN payloads of float immediates, so those words are not
determined by their text (the codec carries them in `Mem.desc` and `Imm.value`; `--check`
counts them apart and measures decode → encode on every word).

Usage: python -m tools.isa_probe [--arch sm_89] [--corpus zluda ...] [--extend] [--out PATH]
                                [--seed-ptx tools/isa_seeds/FILE.ptx ...] [--reprobe OPCODE ...]
                                [--seed-words tools/isa_seeds/FILE.words ...]
                                [--own-only] [--no-corpus] [--force]
       python -m tools.isa_probe --check [--arch sm_89] [--corpus zluda ...]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ptx2sass import oracle

DATA_BITS = tuple(range(105)) + (126, 127)
CONTROL_SHIFT = 105
_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BAD = re.compile(r"at address 0x([0-9a-f]+)")
NOP_WORD = 0x7918  # sm_7x..sm_12x NOP with zero control bits


def disassemble(words: list[int], arch: str, chunk: int = 1024) -> list[str | None]:
    """nvdisasm's text for each raw word (None where nvdisasm rejects the word).

    nvdisasm refuses a whole file when one word is illegal but names every bad address, so
    those words are swapped for NOPs and the file disassembled again.
    """
    out: list[str | None] = []
    for start in range(0, len(words), chunk):
        part = list(words[start:start + chunk])
        bad: set[int] = set()
        for _attempt in range(4):
            data = b"".join((NOP_WORD if i in bad else w).to_bytes(16, "little")
                            for i, w in enumerate(part))
            run = oracle.nvdisasm_raw(data, arch, ())
            if run.ok:
                break
            found = {int(a, 16) // 16 for a in _BAD.findall(run.stderr)}
            if not found - bad:
                raise oracle.OracleFailed(f"nvdisasm failed without naming a word: {run.stderr}")
            bad |= found
        else:
            raise oracle.OracleFailed(f"nvdisasm kept failing: {run.stderr[:500]}")
        texts: dict[int, str] = {}
        for m in _LINE.finditer(run.stdout):
            texts[int(m.group(1), 16) // 16] = m.group(2)
        out.extend(None if i in bad else texts.get(i) for i in range(len(part)))
    return out


# --- text views of probe words -------------------------------------------------------

from ptx2sass.encoder.codec import arch_numbering, bits_value, linear_bits, put_bits  # noqa: E402
from ptx2sass.encoder.fields import (CLASS_VALUES, Numbering, View, float_bits,  # noqa: E402
                                     operand_shape, parse_view, shape_kinds, token_edits,
                                     value_class)

GROUP_LIMIT = 10      # bits enumerated together at most (2^10 words)


class Probe:
    """One instruction as the probe sees it: operand 0 is the guard (PT when not printed);
    its zero registers' numbers are the probed arch's (`numbers`)."""

    def __init__(self, text: str, addr: int, numbers: Numbering, pcrel: frozenset = frozenset()):
        v: View = parse_view(text)
        self.text = text
        self.tokens = v.tokens
        self.numbers = numbers
        ops = [v.guard or "PT", *v.operands]
        self.shapes, self.nums = [], []
        for k, op in enumerate(ops):
            shape, nums = operand_shape(op, numbers)
            nums = [n - addr if (k, j) in pcrel else n for j, n in enumerate(nums)]
            self.shapes.append(shape)
            self.nums.append(nums)
        self.reuse = [i + 1 for i in v.reuse]
        self.valid = "???" not in text and "INVALID" not in text.upper()

    def kinds(self) -> list[tuple[str, ...]]:
        return [tuple(shape_kinds(s)) for s in self.shapes]

    def skeleton(self):
        return (self.tokens[0], tuple(self.kinds()))


def probe_texts(words: list[int], arch: str, pcrel=frozenset()) -> list[Probe | None]:
    """Disassemble; each word sits at address 16*i of its batch (so pc-relative numbers
    are brought back to offsets from the word itself)."""
    out = []
    chunk = 1024
    numbers = arch_numbering(arch)
    for start in range(0, len(words), chunk):
        part = words[start:start + chunk]
        texts = disassemble(part, arch, chunk=chunk)
        for i, t in enumerate(texts):
            p = Probe(t, 16 * i, numbers, pcrel) if t is not None else None
            out.append(p if p is not None and p.valid else None)
    return out


# --- one seed → one form -------------------------------------------------------------

CONTROL_MASK = ((1 << 21) - 1) << CONTROL_SHIFT
NEUTRAL_CONTROL = 1 | 1 << 4 | 7 << 5 | 7 << 8
REG_SHAPES = {"{P}", "{UP}", "{R}", "{UR}"}


def classify(base: Probe, p: Probe | None):
    """How one flipped word's text differs from the base text."""
    if p is None or p.tokens[0] != base.tokens[0]:
        return ("fixed",)
    n0, n1 = len(base.shapes), len(p.shapes)
    if abs(n1 - n0) == 1:
        long_, short = (p, base) if n1 > n0 else (base, p)
        hits = [k for k in range(1, len(long_.shapes))
                if long_.shapes[:k] + long_.shapes[k + 1:] == short.shapes
                and long_.nums[:k] + long_.nums[k + 1:] == short.nums
                and long_.tokens == short.tokens]
        if n1 > n0 and hits:
            return ("insert", hits[0], p)
        if len(hits) == 1:
            return ("delete", hits[0])
        return ("fixed",)       # no single operand, or an ambiguous one, went away
    if n1 != n0:
        return ("fixed",)
    if p.kinds() != base.kinds():
        return _address_offset_change(base, p)
    nums = [(k, j) for k in range(n0) for j in range(len(base.nums[k]))
            if base.nums[k][j] != p.nums[k][j]]
    shapes = {k for k in range(n0) if base.shapes[k] != p.shapes[k]}
    toks = base.tokens != p.tokens
    if not nums and not shapes and not toks:
        return ("silent",)
    if len(nums) == 1 and not shapes and not toks:
        k, j = nums[0]
        return ("num", k, j, base.nums[k][j], p.nums[k][j])
    if not nums:
        return ("group", shapes, toks)
    if not shapes and not toks and all(isinstance(base.nums[k][j], int) for k, j in nums) \
            and len({p.nums[k][j] - base.nums[k][j] for k, j in nums}) == 1:
        # one field printed as several operands (`BAR.SYNC R6, R6`: id and count in one
        # register; UTC*MMA's `tmem[UR4], idesc[UR5]`: a register pair's two halves, the
        # second a bias of 1 above the field): each operand gets the field
        return ("nums", [(k, j, base.nums[k][j], p.nums[k][j]) for k, j in nums])
    return ("fixed",)


def _without_zero_terms(shape: str, nums: list, numbers: Numbering) -> tuple[str, list]:
    """An address with its zero-register terms left out (`[RZ+0x0]` → `[{i}]`, [0];
    `c[0x3][RZ]` → `c[{i}][{i}]`, [3, 0]): nvdisasm prints an absolute address `[0x10]` and,
    at offset 0, its RZ base `[RZ]`."""
    if not shape.endswith("]") or "[" not in shape:
        return shape, nums
    head, _, inner = shape[:-1].rpartition("[")
    it = iter(nums)
    out_nums = [next(it) for _ in shape_kinds(head)]
    parts = []
    for part in inner.split("+"):
        holes = shape_kinds(part)
        values = [next(it) for _ in holes]
        if part in ("{R}", "{UR}") and values[0] == numbers.zero_index[holes[0]]:
            continue
        parts.append(part)
        out_nums.extend(values)
    if not parts:             # `c[0x3][RZ]`: the constant address 0
        parts, out_nums = ["{i}"], out_nums + [0]
    return head + "[" + "+".join(parts) + "]", out_nums


def _address_offset_change(base: Probe, p: Probe):
    """A flipped bit that only moves an absolute address's offset to or from 0 (`[0x4]` ↔
    `[RZ]`) is a bit of the offset field, although the printed shape changes."""
    if base.tokens != p.tokens:
        return ("fixed",)
    change = None
    for k, (s0, n0, s1, n1) in enumerate(zip(base.shapes, base.nums, p.shapes, p.nums)):
        if s0 == s1 and n0 == n1:
            continue
        c0, c1 = _without_zero_terms(s0, n0, base.numbers), _without_zero_terms(s1, n1, base.numbers)
        if change is not None or c0[0] != c1[0] or c0 != (s0, n0) or len(n0) != len(c1[1]):
            return ("fixed",)
        diff = [j for j in range(len(n0)) if n0[j] != c1[1][j]]
        if len(diff) != 1 or not isinstance(n0[diff[0]], int):
            return ("fixed",)
        change = ("num", k, diff[0], n0[diff[0]], c1[1][diff[0]])
    return change or ("fixed",)


def _group_bits_hidden_by_illegal_values(work: int, kinds: dict, base: Probe, arch: str,
                                         pcrel) -> dict[int, tuple]:
    """Bits that look form-fixing alone but are bits of a neighbouring group: flipping one
    bit of a size field can give an illegal value (LDC's 73..75 hold 4 for 32 bits; 6 is
    illegal, so bit 74 alone says `fixed`, yet 2 is `.U16`). Such a bit joins the group
    when some value of the group with it flipped prints with the same operands; a bit that
    prints nothing alone joins when it changes how another value of the group prints."""
    group = {b for b, c in kinds.items() if c[0] == "group"}
    trials = []
    for b, c in sorted(kinds.items()):
        if c[0] not in ("fixed", "silent") or b < 12 or b > 104 or not ({b - 1, b + 1} & group):
            continue
        run = [b]
        while run[0] - 1 in group and len(run) < 7:
            run.insert(0, run[0] - 1)
        while run[-1] + 1 in group and len(run) < 7:
            run.append(run[-1] + 1)
        trials.append((b, run))
    if not trials:
        return {}
    words = [put_bits(work, run, v) for _b, run in trials for v in range(1 << len(run))]
    probes = iter(probe_texts(words, arch, pcrel))
    out = {}
    for b, run in trials:
        at = run.index(b)
        shown = {}
        for v in range(1 << len(run)):
            p = next(probes)
            if p is not None and p.skeleton() == base.skeleton() and p.nums == base.nums:
                shown[v] = (p.tokens, p.shapes)
        flipped = {v for v in shown if v >> at & 1 != work >> b & 1}
        if kinds[b][0] == "fixed" and flipped:
            out[b] = ("group", set(), True)
        # a bit silent alone that changes the text of another value of the group
        # (ATOMS's SPIN, bit 88, shows only with CAST, bit 87)
        elif kinds[b][0] == "silent" and any(shown.get(v ^ 1 << at) != shown[v] for v in flipped):
            out[b] = ("group", set(), True)
    return out


def _silent_bits_a_register_reveals(work: int, kinds: dict, base: Probe, arch: str,
                                    pcrel) -> set[int]:
    """Bits that print nothing only because a register operand of the seed is the zero
    register: `STS.64 [RZ], R2` hides the `.X4` scale (bit 78) that `[R2.X4]` shows. They
    are kept at the seed's value (form bits), so that the form does not claim words that
    set them (another form, probed from a seed with a real register, reads those)."""
    fields: dict[tuple[int, int], list] = {}
    for b, c in kinds.items():
        if c[0] == "num":
            fields.setdefault((c[1], c[2]), []).append((b, c[3], c[4]))
    changed = work
    for (k, j), entries in fields.items():
        kind = shape_kinds(base.shapes[k])[j]
        n = base.nums[k][j]
        if kind not in ("R", "UR") or n != base.numbers.zero_index[kind]:
            continue
        entries.sort()
        bits = [b for b, _o, _n in entries]
        weights = [new - old if not work >> b & 1 else old - new for b, old, new in entries]
        bias = n - sum(w for b, w in zip(bits, weights) if work >> b & 1)
        packed = linear_bits(2, {"bits": bits, "weights": weights, "bias": bias})
        if packed is not None:
            changed = put_bits(changed, bits, packed)
    silent = [b for b, c in sorted(kinds.items()) if c[0] == "silent" and 12 <= b <= 104]
    if changed == work or not silent:
        return set()
    probes = probe_texts([changed] + [changed ^ 1 << b for b in silent], arch, pcrel)
    ref = probes[0]
    if ref is None:
        return set()
    return {b for b, p in zip(silent, probes[1:])
            if p is None or (p.tokens, p.shapes, p.nums) != (ref.tokens, ref.shapes, ref.nums)}


def _merge_interacting(work: int, groups: list[dict], base: Probe, arch: str,
                       pcrel) -> list[dict]:
    """Merge two groups when their values do not combine independently: enumerated one at a
    time (the others at the seed's values), a group cannot show that another changes how it
    prints. I2F's source selector prints `.B1` for a byte type, `.H1` for a 16-bit one and
    nothing for 32 bits; F2I's likewise; HADD2's `.F32` hides |abs|. Pairs are shown together
    once; those whose joint texts differ from the combination of their own are merged."""
    from collections import Counter

    def effect(p: Probe, touched: set[int]):
        return {k: p.shapes[k] for k in touched}, Counter(p.tokens) - Counter(base.tokens), \
            Counter(base.tokens) - Counter(p.tokens)

    def touched(g):
        return {k for p in g["values"].values() for k in range(len(base.shapes))
                if p.shapes[k] != base.shapes[k]}

    split: set[tuple] = set()
    merged = True
    while merged:
        merged = False
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                ga, gb = groups[a], groups[b]
                bits = sorted(ga["bits"] + gb["bits"])
                ta, tb = touched(ga), touched(gb)
                if len(bits) > GROUP_LIMIT:
                    # too many bits to enumerate together, yet both print one operand: split
                    # the larger into the parts that print independently and merge those
                    # (hopper's HFMA2: b's `.H0_NH1` is one bit of the 8-bit group of c's
                    # modifiers and the rounding tokens, its negation and |abs| another group)
                    big = a if len(ga["bits"]) >= len(gb["bits"]) else b
                    key = tuple(groups[big]["bits"])
                    if not ta & tb or key in split:
                        continue
                    split.add(key)
                    parts = _split_group(work, groups[big], base, arch, pcrel)
                    if len(parts) > 1:
                        groups[big:big + 1] = parts
                        merged = True
                        break
                    continue
                joint = _enumerate_group(work, bits, base, arch, pcrel)
                # one operand both change: a value's shape replaces the operand's, so the
                # two cannot compose (hopper's HFMA2 `-|R|.H1_H1`, found one bit at a time,
                # read back with all but the last group's change dropped)
                interacting = bool(ta & tb)
                for va in range(0 if interacting else 1 << len(ga["bits"])):
                    for vb in range(1 << len(gb["bits"])):
                        w = put_bits(put_bits(work, ga["bits"], va), gb["bits"], vb)
                        v = bits_value(w, bits)
                        pa, pb, pj = ga["values"].get(va), gb["values"].get(vb), joint.get(v)
                        if pa is None or pb is None:
                            # a value invalid alone is no evidence either way, unless the
                            # pair is valid: then only the two together can spell it
                            if pj is not None:
                                interacting = True
                                break
                            continue
                        if pj is None:
                            interacting = True
                            break
                        sa, add_a, del_a = effect(pa, ta - tb)
                        sb, add_b, del_b = effect(pb, tb - ta)
                        sj, add_j, del_j = effect(pj, (ta ^ tb))
                        if {**sa, **sb} != sj or add_a + add_b != add_j or del_a + del_b != del_j:
                            interacting = True
                            break
                    if interacting:
                        break
                if interacting:
                    groups[a] = {"bits": bits, "values": joint}
                    del groups[b]
                    merged = True
                    break
            if merged:
                break
    return groups


def _pcrel(word: int, arch: str) -> frozenset:
    a, b = probe_texts([word, word], arch)
    if a is None or b is None:
        return frozenset()
    return frozenset((k, j) for k in range(len(a.nums)) for j, n in enumerate(a.nums[k])
                     if isinstance(n, int) and b.nums[k][j] - n == 16)




def _groups_from_bits(info: dict[int, tuple]) -> list[list[int]]:
    """Union adjacent group bits and bits that touch the same operand."""
    parent = {b: b for b in info}

    def find(b):
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        return b

    by_slot: dict[int, int] = {}
    for b in sorted(info):
        if b - 1 in info:
            parent[find(b)] = find(b - 1)
        for k in info[b][1]:
            if k in by_slot:
                parent[find(b)] = find(by_slot[k])
            else:
                by_slot[k] = b
    comps: dict[int, list[int]] = {}
    for b in info:
        comps.setdefault(find(b), []).append(b)
    out = []
    for comp in comps.values():
        comp.sort()
        if len(comp) <= GROUP_LIMIT:
            out.append(comp)
            continue
        run: list[int] = []
        for b in comp:          # too many to enumerate jointly: fall back to adjacent runs
            if run and (b != run[-1] + 1 or len(run) == 8):
                out.append(run)
                run = []
            run.append(b)
        out.append(run)
    return sorted(out)


def _span(base_toks: list[str], toks: list[str]) -> tuple[int, int]:
    p = 0
    while p < min(len(base_toks), len(toks)) and base_toks[p] == toks[p]:
        p += 1
    s = 0
    while (s < min(len(base_toks), len(toks)) - p
           and base_toks[len(base_toks) - 1 - s] == toks[len(toks) - 1 - s]):
        s += 1
    return p, len(base_toks) - s


def _enumerate_group(work: int, bits: list[int], base: Probe, arch: str, pcrel) -> dict:
    words = [put_bits(work, bits, v) for v in range(1 << len(bits))]
    values = {}
    for v, p in enumerate(probe_texts(words, arch, pcrel)):
        if p is None or p.skeleton() != base.skeleton() or p.nums != base.nums:
            continue
        values[v] = p
    return values


def derive_form(seed: int, arch: str, reveal: bool = True) -> dict | None:
    """Probe one seed word; None when nvdisasm cannot read it at all. With `reveal`, hidden
    operands are made visible first so that their fields are found too."""
    # probe with the seed's own scheduling bits (some control values are illegal), minus reuse
    work = seed & ~(0xf << 122)
    seed &= ~CONTROL_MASK
    for _reveal in range(6 if reveal else 1):
        pcrel = _pcrel(work, arch)
        probes = probe_texts([work] + [work ^ (1 << b) for b in DATA_BITS], arch, pcrel)
        base = probes[0]
        if base is None:
            return None
        kinds = {b: classify(base, p) for b, p in zip(DATA_BITS, probes[1:])}
        inserts = [b for b, c in kinds.items() if c[0] == "insert"]
        if not inserts or not reveal:
            break
        # make a hidden operand visible, then probe again; prefer a bit that shows a value
        # no other operand has, so later deletions say unambiguously which operand went
        present = list(zip(base.shapes, base.nums))
        fresh = [b for b in inserts
                 if (kinds[b][2].shapes[kinds[b][1]], kinds[b][2].nums[kinds[b][1]]) not in present]
        work ^= 1 << (fresh or inserts)[0]
    kinds.update(_group_bits_hidden_by_illegal_values(work, kinds, base, arch, pcrel))
    kinds.update({b: ("fixed",) for b in _silent_bits_a_register_reveals(work, kinds, base,
                                                                         arch, pcrel)})
    mask = 0
    num_bits: dict[tuple[int, int], list[tuple[int, object]]] = {}
    group_info: dict[int, tuple] = {}
    optional: set[int] = {0}
    deleted: dict[int, list[int]] = {}
    for b, c in kinds.items():
        if b < 12 or c[0] == "fixed" or c[0] == "insert":   # bits 0..11: the opcode
            mask |= 1 << b
        elif c[0] == "num":
            _, k, j, old, new = c
            num_bits.setdefault((k, j), []).append((b, (old, new)))
        elif c[0] == "nums":
            for k, j, old, new in c[1]:
                num_bits.setdefault((k, j), []).append((b, (old, new)))
        elif c[0] == "delete":
            k = c[1]
            file = base.shapes[k].strip("{}")
            if base.shapes[k] in REG_SHAPES:
                optional.add(k)
                num_bits.setdefault((k, 0), []).append((b, (base.nums[k][0], base.numbers.zero_index[file])))
            elif len(base.nums[k]) == 1 and isinstance(base.nums[k][0], int):
                deleted.setdefault(k, []).append(b)
            else:
                mask |= 1 << b
        elif c[0] == "group":
            group_info[b] = (c[0], c[1], c[2])
    # numeric fields: integer ones are linear (value = bias + sum of weights), floats raw bits
    slots = []
    for k, shape in enumerate(base.shapes):
        fields = []
        for j, n in enumerate(base.nums[k]):
            entries = sorted(num_bits.get((k, j), []))
            bits = [b for b, _ in entries]
            if isinstance(n, str):
                # a NaN or infinity seed hides its low mantissa bits: a float field is 32 bits
                low = bits[-1] - 31 if bits else 0
                if bits and low >= 0 and all(kinds.get(b, ("",))[0] == "silent"
                                             for b in range(low, bits[0])):
                    bits = list(range(low, bits[0])) + bits
                fields.append({"bits": bits, "float": _float_kind(work, bits, k, j, arch, pcrel)})
                continue
            weights = []
            for b, (old, new) in entries:
                weights.append(new - old if not work >> b & 1 else old - new)
            # bits whose flip hides the operand (it printed its default): they continue the
            # field's power-of-two run at either end
            for b in sorted(deleted.get(k, [])) if j == 0 else ():
                if bits and b == bits[0] - 1 and weights[0] % 2 == 0:
                    bits.insert(0, b)
                    weights.insert(0, weights[0] // 2)
                elif bits and b == bits[-1] + 1:
                    bits.append(b)
                    weights.append(weights[-1] * 2)
                else:
                    mask |= 1 << b
                    continue
                optional.add(k)
            bias = n - sum(w for b, w in zip(bits, weights) if work >> b & 1)
            field = {"bits": bits, "weights": weights, "bias": bias}
            if (k, j) in pcrel:
                field["pcrel"] = True
            fields.append(field)
        slots.append({"shape": shape, "fields": fields})
    # optional register operands: vanish from the text when set to the zero register
    tests = []
    for k, slot in enumerate(slots):
        if k in optional or slot["shape"] not in REG_SHAPES or not slot["fields"][0]["bits"]:
            continue
        f = slot["fields"][0]
        zero = base.numbers.zero_index[slot["shape"].strip("{}")]
        w = linear_bits(zero, f)
        if w is not None:
            tests.append((k, put_bits(work, f["bits"], w)))
    for (k, _w), p in zip(tests, probe_texts([w for _k, w in tests], arch, pcrel)):
        if p is not None and len(p.shapes) == len(base.shapes) - 1:
            optional.add(k)
    first = probe_texts([seed | (work & CONTROL_MASK)], arch)[0]
    hidden_in_seed = first is not None and len(first.shapes) < len(base.shapes)
    for k in optional:
        slots[k]["optional"] = True
        f = slots[k]["fields"][0] if slots[k]["fields"] else None
        kinds = shape_kinds(base.shapes[k])
        slots[k]["hidden_shape"] = base.shapes[k]
        if len(kinds) == 1 and kinds[0] in base.numbers.zero_index:
            slots[k]["default"] = [base.numbers.zero_index[kinds[0]]]
            slots[k]["hidden_shape"] = "{" + kinds[0] + "}"
        elif f and "weights" in f and hidden_in_seed:   # what the seed holds where it hid it
            slots[k]["default"] = [f["bias"] + sum(w for b, w in zip(f["bits"], f["weights"])
                                                   if seed >> b & 1)]
        else:
            del slots[k]["optional"]
    groups = []
    for bits in _groups_from_bits(group_info):
        values = _enumerate_group(work, bits, base, arch, pcrel)
        groups.append({"bits": bits, "values": values})
    groups = _merge_interacting(work, groups, base, arch, pcrel)
    layout, groups, order = _layout(base, groups, work, arch, pcrel)
    _mark_signed_immediates(work, base, slots, groups, arch, pcrel)
    reuse = {}
    # nvdisasm shows reuse flags only when bit 109 is set: probe them under a neutral
    # control field (stall 1, bit 109 set, no scoreboards)
    neutral = (work & ~CONTROL_MASK) | NEUTRAL_CONTROL << CONTROL_SHIFT
    rprobes = probe_texts([neutral | 1 << (122 + i) for i in range(4)], arch, pcrel)
    for i, p in enumerate(rprobes):
        if p is not None and len(p.reuse) == 1:
            reuse[str(i)] = p.reuse[0]
    aliases = _aliases(work, base, slots, arch, pcrel)
    return {"arch": arch, "aliases": aliases, "tokens": base.tokens, "order": order,"opcode": base.tokens[0], "text": first.text if first else base.text, "mask": hex(mask),
            "value": hex(seed & mask), "base": hex(seed & ~CONTROL_MASK), "slots": slots,
            "groups": groups, "layout": layout, "reuse": reuse}


def _mark_signed_immediates(work: int, base: Probe, slots: list[dict], groups: list[dict],
                            arch: str, pcrel) -> None:
    """An immediate whose signedness a group decides (I2F prints `-0x10` for a signed
    source type, `0xfffffff0` for an unsigned one): each group value is shown with the
    field's bits all set; where some values print the number negative and others do not,
    the field gets `signed_by` [group index, the values printing it signed]."""
    for k, slot in enumerate(slots):
        kinds = shape_kinds(base.shapes[k])
        for j, f in enumerate(slot["fields"]):
            if "weights" not in f or kinds[j] != "i" or len(f["bits"]) < 8 or f.get("pcrel"):
                continue
            top = max(f["weights"], key=abs)
            if top < 0:
                continue            # signed whatever the groups hold
            ones = put_bits(work, f["bits"], (1 << len(f["bits"])) - 1)
            unsigned = f["bias"] + sum(f["weights"])
            trials = [(gi, int(v)) for gi, g in enumerate(groups) for v in g["values"]]
            words = [put_bits(ones, groups[gi]["bits"], v) for gi, v in trials]
            signed: dict[int, list[int]] = {}
            shown: dict[int, int] = {}
            for (gi, v), p in zip(trials, probe_texts(words, arch, pcrel)):
                if p is None or len(p.nums) != len(base.nums) or len(p.nums[k]) != len(kinds):
                    continue
                shown[gi] = shown.get(gi, 0) + 1
                if p.nums[k][j] == unsigned - 2 * top:
                    signed.setdefault(gi, []).append(v)
            for gi, values in sorted(signed.items()):
                if len(values) < shown[gi]:
                    f["signed_by"] = [gi, sorted(values)]
                    break


def _float_kind(work: int, bits: list[int], k: int, j: int, arch: str, pcrel) -> str:
    """Which float format a float immediate field holds: shown a pattern that reads
    differently in each (0x3ff80000: f64 1.5, f32 1.9375), nvdisasm tells."""
    from ptx2sass.encoder.fields import float_text
    if len(bits) < 32:      # f16 or bf16 (the .BF16_V2 forms): 0x3fc0 is f16 1.9375, bf16 1.5
        p = probe_texts([put_bits(work, bits, 0x3fc0)], arch, pcrel)[0]
        if p is not None and len(p.nums) > k and len(p.nums[k]) > j \
                and float_text(0x3fc0, "bf16").strip() == str(p.nums[k][j]).strip():
            return "bf16"
        return "f16"
    p = probe_texts([put_bits(work, bits, 0x3ff80000)], arch, pcrel)[0]
    if p is not None and len(p.nums) > k and len(p.nums[k]) > j:
        for kind in ("f32", "f64h"):
            if float_text(0x3ff80000, kind).strip() == str(p.nums[k][j]).strip():
                return kind
    return "f32"


def _alias_fields(slots: list[dict]):
    """(slot, index, kind, file) of every register or integer field an alias might test."""
    out = []
    for k, slot in enumerate(slots):
        if k == 0:
            continue
        kinds = shape_kinds(slot["shape"])
        for j, (kind, f) in enumerate(zip(kinds, slot["fields"])):
            if "weights" not in f or f.get("pcrel") or not f["bits"]:
                continue
            if kind in ("R", "UR"):
                out.append((k, j, "reg", kind))
            elif kind == "i" and slot["shape"] == "{i}" and len(f["bits"]) >= 8:
                out.append((k, j, "int", None))
    return out


def _class_word(work: int, slots, field, cls: str, numbers: Numbering) -> int | None:
    k, j, kind, file = field
    f = slots[k]["fields"][j]
    value = CLASS_VALUES[kind][cls]
    if value is None:
        value = numbers.zero_index[file]
    packed = linear_bits(value, f)
    return None if packed is None else put_bits(work, f["bits"], packed)


def _aliases(work: int, base: Probe, slots: list[dict], arch: str, pcrel) -> dict | None:
    """Which value classes of which fields change the mnemonic, and how (a truth table)."""
    import itertools
    # the full grid of value classes over the source fields (aliases can test several
    # operands together: IMAD.MOV when either factor is RZ, IMAD.SHL for a power-of-two
    # factor *and* an RZ addend)
    relevant = [f for f in _alias_fields(slots) if f[0] >= 2][:3]
    if not relevant:
        return None
    combos = list(itertools.product(*[list(CLASS_VALUES[f[2]]) for f in relevant]))
    words = []
    for combo in combos:
        w = work
        for fld, cls in zip(relevant, combo):
            w = _class_word(w, slots, fld, cls, base.numbers) if w is not None else None
        words.append(w)
    table = {}
    got = probe_texts([w for w in words if w is not None], arch, pcrel)
    it = iter(got)
    for combo, w in zip(combos, words):
        p = next(it) if w is not None else None
        if p is not None and p.skeleton()[1] == base.skeleton()[1]:
            table["/".join(combo)] = token_edits(base.tokens, p.tokens)
    if not any(table.values()):
        return None
    seed_classes = []
    for k, j, kind, file in relevant:
        seed_classes.append(value_class(kind, base.nums[k][j], file, base.numbers))
    return {"fields": [[k, j, kind, file] for k, j, kind, file in relevant],
            "seed": "/".join(seed_classes), "table": table}



def _order_inserts(gis: list[int], groups: list[dict], B: list[str], work: int, arch: str,
                   pcrel) -> list[int]:
    """Groups that all insert their tokens at the same place, in nvdisasm's order: each pair
    is shown together once and the order read off the text."""
    if len(gis) < 2:
        return gis
    shown = {gi: [(v, p.tokens) for v, p in groups[gi]["values"].items() if p.tokens != B]
             for gi in gis}
    pairs = [(a, b) for i, a in enumerate(gis) for b in gis[i + 1:]]
    words, keys = [], []
    for a, b in pairs:
        for va, ta in shown[a][:3]:
            for vb, tb in shown[b][:3]:
                w = put_bits(put_bits(work, groups[a]["bits"], va), groups[b]["bits"], vb)
                words.append(w)
                keys.append((a, b, set(ta) - set(B), set(tb) - set(B)))
    before: dict[tuple[int, int], bool] = {}
    for (a, b, ta, tb), p in zip(keys, probe_texts(words, arch, pcrel)):
        if (a, b) in before or p is None or not ta or not tb:
            continue
        ia = min((i for i, t in enumerate(p.tokens) if t in ta), default=None)
        ib = min((i for i, t in enumerate(p.tokens) if t in tb), default=None)
        if ia is not None and ib is not None and ia != ib:
            before[(a, b)] = ia < ib
    import functools

    def cmp(a, b):
        if (a, b) in before:
            return -1 if before[(a, b)] else 1
        if (b, a) in before:
            return 1 if before[(b, a)] else -1
        return 0
    return sorted(gis, key=functools.cmp_to_key(cmp))


def _split_group(work: int, group: dict, base: Probe, arch: str, pcrel) -> list[dict]:
    """A group as one group per bit, merged back where their values interact."""
    if len(group["bits"]) < 2:
        return [group]
    singles = [{"bits": [b], "values": _enumerate_group(work, [b], base, arch, pcrel)}
               for b in group["bits"]]
    return _merge_interacting(work, singles, base, arch, pcrel)


def _layout(base: Probe, groups: list[dict], work: int, arch: str, pcrel):
    """Where each group's mnemonic tokens sit among the base tokens; groups whose token
    spans overlap are merged and enumerated together."""
    B = base.tokens

    def token_spans():
        spans = []
        for g in groups:
            ps = [_span(B, p.tokens) for p in g["values"].values() if p.tokens != B]
            spans.append((min(a for a, _ in ps), max(e for _, e in ps)) if ps else None)
        return spans
    for _round in range(8):
        spans = token_spans()
        changed = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                si, sj = spans[i], spans[j]
                if not (si and sj and si[0] < sj[1] and sj[0] < si[1]):
                    continue
                bits = sorted(groups[i]["bits"] + groups[j]["bits"])
                if len(bits) <= GROUP_LIMIT + 2:
                    groups[i] = {"bits": bits,
                                 "values": _enumerate_group(work, bits, base, arch, pcrel)}
                    del groups[j]
                    changed = True
                    break
                # too many bits to enumerate together: split the larger group into the parts
                # that print independently (sm_75's RED.E.AND: bits 72..78 hold `.E`, the
                # type, `.PRIVATE` and the scope, whose tokens straddle the operation's)
                big = i if len(groups[i]["bits"]) >= len(groups[j]["bits"]) else j
                parts = _split_group(work, groups[big], base, arch, pcrel)
                if len(parts) > 1:
                    groups[big:big + 1] = parts
                    changed = True
                    break
            if changed:
                break
        if not changed:
            break
    spans = token_spans()
    layout: list = []
    placed = set()
    p = 0
    while p <= len(B):
        inserting = [gi for gi, s in enumerate(spans)
                     if s and s[0] == p and s[1] == p and gi not in placed]
        for gi in _order_inserts(inserting, groups, B, work, arch, pcrel):
            layout.append(gi)
            placed.add(gi)
        if p == len(B):
            break
        starting = [gi for gi, s in enumerate(spans) if s and s[0] == p and s[1] > p
                    and gi not in placed]
        if starting:
            gi = starting[0]
            layout.append(gi)
            placed.add(gi)
            p = spans[gi][1]
        else:
            layout.append(B[p])
            p += 1
    order = _token_order(base, groups, work, arch, pcrel)
    out_groups = []
    for gi, g in enumerate(groups):
        s = spans[gi]
        vals = {}
        for v, pr in g["values"].items():
            entry = {}
            if s:
                tail = len(B) - s[1]
                entry["tokens"] = pr.tokens[s[0]:len(pr.tokens) - tail]
            shapes = {str(k): sh for k, sh in enumerate(pr.shapes) if sh != base.shapes[k]}
            if shapes:
                entry["shapes"] = shapes
            vals[str(v)] = entry
        out_groups.append({"bits": g["bits"], "seed": bits_value(work, g["bits"]),
                           "values": vals})
    return layout, out_groups, order


def _token_order(base: Probe, groups: list[dict], work: int, arch: str, pcrel) -> list:
    """The order nvdisasm prints the mnemonic's tokens in, read off every probe text plus
    one word per pair of groups with both showing their richest tokens (a group's tokens
    need not be contiguous: `FMUL.FTZ.M2.RZ.SAT`)."""
    seqs = [base.tokens] + [p.tokens for g in groups for p in g["values"].values()]
    B = set(base.tokens)
    # per group, one value for each distinct set of new tokens (at most 32)
    shows: dict[int, list[int]] = {}
    for gi, g in enumerate(groups):
        seen: dict[frozenset, int] = {}
        for v, p in g["values"].items():
            new = frozenset(p.tokens) - B
            if new and new not in seen:
                seen[new] = v
        shows[gi] = list(seen.values())[:32]
    words = []
    for a in shows:
        for b in shows:
            if a < b:
                words += [put_bits(put_bits(work, groups[a]["bits"], va), groups[b]["bits"], vb)
                          for va in shows[a] for vb in shows[b]][:512]
    seqs += [p.tokens for p in probe_texts(words, arch, pcrel) if p is not None]
    before: set[tuple[str, str]] = set()
    for seq in seqs:
        toks = seq[1:]
        for i, t in enumerate(toks):
            for u in toks[i + 1:]:
                if u != t:
                    before.add((t, u))
    # pairs seen both ways say nothing; the rest is the printed order the codec restores
    return sorted([x, y] for x, y in before if (y, x) not in before)


# --- seeds, iteration, output ----------------------------------------------------------

def build_table(arch: str, seeds: dict[int, str], existing: list[dict] | None = None,
                log=print, save=None, primary: str | None = None,
                own_only: bool = False, force: bool = False) -> list[dict]:
    """Probe seeds (word → nvdisasm's text) in order, skipping those that an earlier form
    already decodes to the same text (`own_only`: that one of the arch's own forms does, so a
    member arch gets its own form for a word the primary arch's form reads alike but whose
    neighbours it reads differently: sm_100's MOV, where sm_120's MOV.64 bit is a don't-care;
    `force`: probe every seed, for a form that reads the seed only through another form's
    group: sm_120's MOV R, UR, whose lane mask MOV.64's form has no field for)."""
    from ptx2sass.encoder import codec
    forms = list(existing or [])
    numbers = codec.arch_numbering(arch)

    def skip_table(forms):
        return codec.Table("probe", [codec.Form.from_json(f) for f in forms
                                     if not own_only or f.get("arch") == arch], primary, numbers)
    table = skip_table(forms)
    for i, seed in enumerate(seeds):
        if not force and _decodes(table, seed, seeds[seed], arch):
            continue
        f = derive_form(seed, arch)
        if f is None:
            log(f"  seed {seed:#034x}: nvdisasm cannot read it")
            continue
        alone = codec.Table("probe", [codec.Form.from_json(f)], primary, numbers)
        if not _decodes(alone, seed, seeds[seed], arch):
            # a revealed operand was shown by a presence flag, not by its value: probe the
            # seed as it is
            f = derive_form(seed, arch, reveal=False)
            alone = codec.Table("probe", [codec.Form.from_json(f)], primary, numbers)
            if not _decodes(alone, seed, seeds[seed], arch) and \
                    _text(alone, seed, arch) == _text(table, seed, arch):
                continue        # no better than the forms already there (the text does not
                                # determine the word: a NaN payload, a relocation)
        forms.append(f)
        table = skip_table(forms)
        log(f"  [{i + 1}/{len(seeds)}] {f['text']}  ({len(forms)} forms)")
        if save and len(forms) % 10 == 0:
            save(forms)
    return forms


_TARGET = re.compile(r"`\([^)]*\)|-?0x[0-9a-f]+$")


def _table_text(table, word: int, arch: str) -> str:
    """`codec.decode_text` with the probe's table in place of the arch's."""
    from ptx2sass.encoder import codec
    return codec.render_view(codec._decode_view(word, arch, 0, table)[0])


def _text(table, word: int, arch: str) -> str | None:
    from ptx2sass.encoder import codec
    try:
        return _table_text(table, word, arch)
    except codec.DecodeError:
        return None


def _decodes(table, word: int, text: str, arch: str) -> bool:
    from ptx2sass.encoder import codec
    try:
        got = _table_text(table, word, arch)
        if "`(" in text:        # label names are not in the word
            return _TARGET.sub("L", got) == _TARGET.sub("L", text)
        return got == text
    except codec.DecodeError:
        return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_89", help="arch whose nvdisasm is the oracle")
    ap.add_argument("--seed-arch", action="append", default=None,
                    help="archs whose corpus words seed the probe (default: --arch)")
    ap.add_argument("--corpus", action="append", default=None)
    ap.add_argument("--family", default=None, help="table name (default from the arch)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--extend", action="store_true", help="keep the forms already in the table")
    ap.add_argument("--seed-ptx", action="append", default=[], metavar="FILE",
                    help="also seed with the words ptxas writes for this PTX (tools/isa_seeds/: "
                         "forms the code generator needs that the corpora lack)")
    ap.add_argument("--seed-words", action="append", default=[], metavar="FILE",
                    help="also seed with raw words (one hex word a line, `#` comments): forms "
                         "nvdisasm reads that ptxas never writes for the arch (sm_120's ISETP.EX: "
                         "ptxas compares 64-bit values with ISETP.U64 there)")
    ap.add_argument("--reprobe", action="append", default=[], metavar="OPCODE",
                    help="with --extend: drop the table's forms of this opcode and probe its "
                         "seeds again (after the probe learnt something new)")
    ap.add_argument("--own-only", action="store_true",
                    help="with --extend: skip a seed only when the arch's own forms read it (a "
                         "member arch's form for a word whose primary-arch form misreads its "
                         "neighbours)")
    ap.add_argument("--force", action="store_true",
                    help="probe every seed, even one a form already reads as nvdisasm does")
    ap.add_argument("--no-corpus", action="store_true",
                    help="seed only with --seed-words / --seed-ptx, not the corpus words")
    ap.add_argument("--check", action="store_true",
                    help="do not probe: report how the table round-trips the corpus words")
    args = ap.parse_args(argv)
    if args.check:
        from tools.corpus_words import corpus_words
        words = corpus_words(args.arch, tuple(args.corpus or ["zluda"]))
        print(format_report(args.arch, check_words(words, args.arch)))
        return 0
    from ptx2sass.encoder import codec
    from tools.corpus_words import corpus_words
    family = args.family or codec.ARCH_FAMILY.get(args.arch) or args.arch
    out = Path(args.out) if args.out else Path(codec.TABLES) / f"{family}.json"
    words: dict[int, str] = {}
    for sa in [] if args.no_corpus else args.seed_arch or [args.arch]:
        for w in corpus_words(sa, tuple(args.corpus or ["zluda"])):
            words.setdefault(w.word, w.text)
    for path in args.seed_ptx:
        for w in ptx_words(Path(path), args.arch):
            words.setdefault(w.word, w.text)
    raw = [int(line.split("#")[0], 16) for path in args.seed_words
           for line in Path(path).read_text().splitlines() if line.split("#")[0].strip()]
    for w, text in zip(raw, disassemble(raw, args.arch)):
        if text is not None:
            words.setdefault(w, text)
    seeds = {w: words[w] for w in sorted(words, key=lambda w: (w & 0xfff, w))}
    print(f"{len(seeds)} distinct seed words")
    existing, primary = None, args.arch
    if args.extend and out.is_file():
        old = json.loads(out.read_text())
        existing, primary = old["forms"], old.get("probed_with", args.arch)
        existing = [f for f in existing
                    if f["opcode"] not in args.reprobe or f.get("arch", primary) != args.arch]

    def save(forms):
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(table_json(family, primary, oracle.tool_version("nvdisasm"), forms))
        tmp.replace(out)        # readers never see a half-written table
    forms = build_table(args.arch, seeds, existing, save=save, primary=primary,
                        own_only=args.own_only, force=args.force)
    save(forms)
    print(f"wrote {len(forms)} forms to {out}")
    return 0



def table_json(family: str, primary: str, nvdisasm: str, forms: list) -> str:
    """The table file's text: one form per line, so that branches which add forms merge in git."""
    head = json.dumps({"family": family, "probed_with": primary, "nvdisasm": nvdisasm})
    body = ",\n".join(json.dumps(f) for f in forms)
    return head[:-1] + ', "forms": [\n' + body + "\n]}\n"


def ptx_words(path: Path, arch: str):
    """The words (with nvdisasm's text) of ptxas's cubin for one PTX file."""
    from tools.corpus_words import compile_for, words_of_listing
    cubin, retargeted = compile_for(path.read_bytes(), arch, path.name)
    if cubin is None:
        raise SystemExit(f"{path}: ptxas rejects it for {arch}")
    return words_of_listing(oracle.nvdisasm(cubin), arch, path.name, retargeted)


# --- checking a table against ptxas's words ---------------------------------------------

def _same_instruction(a, b, arch: str | None = None) -> bool:
    """Equal, with labels compared by offset (a word holds no label names), and without the
    `desc[URx]` register where `arch`'s nvdisasm hides it (its text cannot say which)."""
    from dataclasses import replace as _r

    from ptx2sass.encoder import codec
    from ptx2sass.encoder.model import Label

    def norm(ins):
        if arch is not None:
            ins = codec.as_text_shows(ins, arch)
        ops = [Label("", op.offset) if isinstance(op, Label) else op for op in ins.operands]
        return _r(ins, operands=tuple(ops))
    return norm(a) == norm(b)


def check_words(words, arch: str) -> dict:
    """Round-trip every corpus word: encode(parse(text)) == word, decode(word) == parse(text)
    and encode(decode(word)) == word.

    Returns counts and, per failing form (`opcode.mods` + operand shapes), up to 3 examples.
    A failure is `undetermined` when the bits that differ are ones nvdisasm does not print
    (the text cannot say what ptxas put there): counted per reason in `undetermined_by`
    ("descriptor": bits outside the form's fields, the hidden `desc[URx]`; "NaN payload": a
    float field that prints `+QNAN` whatever its mantissa). Relocated operands (`32@lo(sym)`,
    `CALL.ABS` to a symbol) compare as the zero field the word holds under the relocation
    (`codec.without_relocations`); `relocated` counts those words.
    """
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.fields import operand_shape, parse_view
    stats = {"words": 0, "encode_ok": 0, "decode_ok": 0, "decode_encode_ok": 0,
             "undetermined": 0, "undetermined_by": {}, "relocated": 0, "failures": {},
             "determined_failures": {}}
    table = codec.table_for(arch)
    for w in words:
        stats["words"] += 1
        try:
            ins = w.instruction()
        except ValueError as e:
            why = f"sass_text: {e}"
            ins = None
        enc_ok = dec_ok = False
        why_undetermined = None
        if ins is not None:
            relocations: list = []
            try:
                got = codec.encode(ins, arch, pc=w.offset, relocations=relocations)
                enc_ok = got == w.word
                diff = got ^ w.word
                form = codec.find_form(table, w.word, arch)
                reason = None if enc_ok or form is None else _undetermined(form, w.word, diff)
                if reason:
                    why_undetermined = reason
                    stats["undetermined"] += 1
                    stats["undetermined_by"][reason] = stats["undetermined_by"].get(reason, 0) + 1
                why = f"encode gives {got:#034x}, xor {diff:#x}"
            except codec.EncodeError as e:
                why = f"EncodeError: {e}"
            stats["relocated"] += bool(relocations)
            try:
                decoded = codec.decode(w.word, arch, pc=w.offset)
                dec_ok = _same_instruction(decoded, codec.without_relocations(ins)[0], arch)
                if not dec_ok and enc_ok:
                    why = f"decode gives {codec.decode_text(w.word, arch, w.offset)!r}"
                stats["decode_encode_ok"] += codec.encode(decoded, arch, pc=w.offset) == w.word
            except codec.DecodeError as e:
                if enc_ok:
                    why = f"DecodeError: {e}"
            except codec.EncodeError:
                pass
        stats["encode_ok"] += enc_ok
        stats["decode_ok"] += dec_ok
        if not (enc_ok and dec_ok):
            v = parse_view(w.text)
            key = ".".join(v.tokens) + " " + ", ".join(operand_shape(o, table.numbers)[0] for o in v.operands)
            stats["failures"].setdefault(key, []).append(f"{w.text}  [{w.word:032x}] {why}")
            if not dec_ok or why_undetermined is None:
                stats["determined_failures"].setdefault(key, []).append(
                    f"{w.text}  [{w.word:032x}] {why}")
    return stats


def _undetermined(form, word: int, diff: int) -> str | None:
    """Why the differing bits are ones the text cannot determine, or None if it can."""
    from ptx2sass.encoder import codec
    if not diff & (form.mask | form.field_mask):
        return "descriptor"
    nan_bits = 0
    for bits, _kind in codec._nan_fields(form, word):
        nan_bits |= sum(1 << b for b in bits)
    # a NaN stays a NaN: the exponent bits agree, only the payload differs
    if nan_bits and not diff & ~nan_bits:
        return "NaN payload"
    return None


def format_report(arch: str, stats: dict, examples: int = 2) -> str:
    n = stats["words"]
    determined = n - stats["undetermined"]
    by = ", ".join(f"{k}: {v}" for k, v in sorted(stats["undetermined_by"].items()))
    lines = [f"{arch}: {stats['encode_ok']}/{n} distinct words encode bit-exactly "
             f"({100.0 * stats['encode_ok'] / max(n, 1):.2f}%; "
             f"{100.0 * stats['encode_ok'] / max(determined, 1):.2f}% of the {determined} whose "
             f"bits the text determines; undetermined: {by or 'none'}; "
             f"{stats['relocated']} with relocated operands), "
             f"{stats['decode_ok']}/{n} decode to the same "
             f"instruction ({100.0 * stats['decode_ok'] / max(n, 1):.2f}%), "
             f"{stats['decode_encode_ok']}/{n} decode → encode bit-exactly "
             f"({100.0 * stats['decode_encode_ok'] / max(n, 1):.2f}%)",
             "failing forms (count, mnemonic and operand shapes):"]
    for form, items in sorted(stats["failures"].items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(items):5d}  {form}")
        lines.extend(f"           {e}" for e in items[:examples])
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
