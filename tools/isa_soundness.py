"""Does a table read a word it does not know as some other instruction? For every form of an
arch's table, each single-bit change of the form's base word (bits 0-104: the instruction,
not its control code) that nvdisasm reads is decoded by us; a decode whose text differs from
nvdisasm's is a wrong reading: the emulator would run another instruction than ptxas wrote,
silently. A refusal ("cannot decode") is honest and not counted.

    py -m tools.isa_soundness --arch sm_75 [--opcode ATOMG] [--examples 2] [--seed-words-out F]

The words it writes are seeds for `tools.isa_probe --extend --seed-words F`, which learns the
fields they show.

Found: turing's `ATOMG ... [URx]` forms held the atomic operation as fixed text while its
bits were in no field, so an XOR read as INC (fuzz campaign 15's seed 27000137).
Limit: one bit at a time. A field that shows only with another bit set (a half selector that
exists only in an .F16 form: blackwell's `MUFU.EX2.F16 R, UR.H1`) is not reached; `--pairs`
changes two bits in two different modifier groups instead (hopper's HFMA2 `-|R|.H1_H1`: its
negation, |abs| and half selector were three groups, and the codec kept only the last).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict

from tools.isa_probe import disassemble

INSTRUCTION_BITS = 105
# Control bits with no write and no read scoreboard: nvdisasm rejects a store (SUST, SURED)
# whose control code sets a write scoreboard, and a form's base word has control bits 0 (a
# scoreboard of 0), so such a neighbour is disassembled again with these.
NO_SCOREBOARDS = ((7 << 5) | (7 << 8)) << INSTRUCTION_BITS


def disassemble_any_control(words: list[int], arch: str) -> list[tuple[str | None, int]]:
    """(nvdisasm's text, the byte address it disassembled the word at) for each word with
    control bits 0, or, where it rejects that, with `NO_SCOREBOARDS` (the text does not show
    control bits; before, every neighbour of the SUST/SURED forms was rejected and none was
    checked). The address is where a pc-relative target counts from (LEPC prints its target's
    address)."""
    chunk = 1024
    out = [(t, i % chunk * 16) for i, t in enumerate(disassemble(words, arch, chunk))]
    again = [i for i, (t, _) in enumerate(out) if t is None]
    retried = disassemble([words[i] | NO_SCOREBOARDS for i in again], arch, chunk)
    for j, (i, t) in enumerate(zip(again, retried)):
        out[i] = (t, j % chunk * 16)
    return out


def _canonical(text: str) -> str | None:
    from ptx2sass.encoder.sass_text import format_instruction, parse_instruction
    try:
        ins = parse_instruction(text.replace(" ;", "").strip())
    except Exception:  # noqa: BLE001 - text our parser cannot read is not compared
        return None
    return format_instruction(ins)


def neighbours(form, pairs: bool = False) -> list[int]:
    """The words near a form's base: each single-bit change, or (`pairs`) each change of two
    bits in two different modifier groups (the codec composes groups by letting the last
    one's operand shape win, so a pair is where two groups that both touch one operand, or a
    value valid only with another group's, show)."""
    base = form.base
    if not pairs:
        return [base ^ (1 << b) for b in range(INSTRUCTION_BITS)]
    bits = [(gi, b) for gi, g in enumerate(form.groups) for b in g["bits"] if b < INSTRUCTION_BITS]
    return [base ^ (1 << a) ^ (1 << b) for i, (ga, a) in enumerate(bits) for gb, b in bits[i + 1:] if ga != gb]


def wrong_readings(arch: str, opcode: str | None = None,
                   pairs: bool = False) -> dict[str, list[tuple[int, str, str]]]:
    """Per form (its tokens and base word), the (word, nvdisasm's text, ours) of every wrong
    reading found among its `neighbours`."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.sass_text import format_instruction
    table = codec.table_for(arch)
    forms = [f for f in table.forms if opcode is None or f.opcode == opcode]
    words, origin = [], []
    for f in forms:
        near = neighbours(f, pairs)
        words += near
        origin += [".".join(f.tokens) + f" ({f.base:#x})"] * len(near)
    out: dict[str, list] = defaultdict(list)
    for w, (text, pc), form in zip(words, disassemble_any_control(words, arch), origin):
        if text is None or "INVALID" in text:
            continue
        try:
            ours = format_instruction(codec.decode(w, arch, pc))
        except Exception:  # noqa: BLE001 - a refusal is honest
            continue
        theirs = _canonical(text)
        if theirs is not None and normalised(ours) != normalised(theirs):
            out[form].append((w, text.strip(), ours))
    return out


def normalised(text: str) -> str:
    """The text with spellings of one thing made one: `.reuse`, a NaN immediate's quietness
    (the word's bits are kept either way), a zero base register (`[RZ]` = `[0x0]`;
    `c[0x4][URZ]` = `c[0x4][0x0]`), a hidden
    descriptor (`desc.hidden[URx]`, which only we print), a pc-relative target named by its
    address (nvdisasm prints LEPC's as `0x120`, the decoder as the label `(.L_120)` of that
    same address: decoded at nvdisasm's address, they are one target)."""
    text = text.replace(".reuse", "").replace("SNAN", "QNAN").replace("[RZ]", "[0x0]").replace("[RZ+", "[")
    text = text.replace("][URZ]", "][0x0]")      # c[0x4][URZ]: a zero uniform offset
    text = _HIDDEN_DESC.sub("", text)       # a hidden descriptor register: nvdisasm prints none
    text = _ADDRESS_LABEL.sub(r"\g<1>0x\2", text)
    return " ".join(text.split())


_HIDDEN_DESC = re.compile(r"desc\.hidden\[UR\d+\]")
_ADDRESS_LABEL = re.compile(r"`\(\.L_(-?)([0-9a-f]+)\)")     # the decoder's label of an address


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True)
    ap.add_argument("--opcode")
    ap.add_argument("--examples", type=int, default=2)
    ap.add_argument("--pairs", action="store_true",
                    help="two bits in two different modifier groups instead of one bit")
    ap.add_argument("--seed-words-out", metavar="FILE",
                    help="write every wrong reading's word in isa_probe --seed-words format")
    args = ap.parse_args(argv)
    found = wrong_readings(args.arch, args.opcode, args.pairs)
    if args.seed_words_out:
        with open(args.seed_words_out, "w") as f:
            f.write(f"# {args.arch} words our table read as other instructions (tools/isa_soundness)\n")
            for rows in found.values():
                for w, theirs, _ in rows:
                    f.write(f"{w:#034x}  # {theirs}\n")
    total = sum(len(v) for v in found.values())
    print(f"{args.arch}: {total} wrong readings near {len(found)} forms")
    for form, rows in sorted(found.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(rows):4d}  {form}")
        for w, theirs, ours in rows[:args.examples]:
            print(f"          {w:#034x}\n            nvdisasm: {theirs}\n            ours:     {ours}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
