"""Texture/surface chapter forms against ptxas, section by section.

For each form of the inventory's texture/surface chapter that ptxas accepts for sm_89, the
per-form checker's kernel (module `.texref tex0` / `.surfref surf0` handles; results
unread; `kernel_text`) is compiled by ptxas and by ptx2sass, and the two cubins compared:

* `accepted`: ptx2sass compiles it (and nvdisasm reads our words back as meant);
* `listing`: nvdisasm's instructions equal ptxas's, register numbers, the spelling of a
  move (`MOV R, x` vs `IMAD.MOV.U32 R, RZ, RZ, x`) and the NOP padding aside (the kernels
  read undefined registers, which ptxas all maps to R0);
* `words`: the instruction words (control codes included) are ptxas's up to the padding;
* `records` (counted apart): every section but the texts and `.note.nv.tkinfo` (the
  writing tool's name) is byte-identical, header fields included (symbols, `.nv.info`
  records, constant-bank slots, relocations, debug frame), section offsets aside;
* `cubin`: words and records both.


    python -m tools.texture_coverage [--opcode OP] [--sample N --seed S] [--show N]
"""
from __future__ import annotations

import argparse
import io
import random
import re
import sys
from collections import Counter, defaultdict

from ptx2sass import codegen, oracle
from ptx2sass.errors import CompileError
from tools.inventory_coverage import _readback_ok, sm89_forms
from tools.inventory_kernels import acceptance_module, instruction_text, version_for

SKIPPED_SECTIONS = (".note.nv.tkinfo",)


def sections(cubin: bytes) -> dict[str, tuple]:
    """name -> (header fields, bytes) of every section but the skipped ones."""
    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(cubin))
    out = {}
    for i, s in enumerate(elf.iter_sections()):
        if s.name in SKIPPED_SECTIONS or not s.name:
            continue
        h = s.header
        out[s.name] = ((i, h.sh_type, h.sh_flags, h.sh_addralign, h.sh_entsize, h.sh_link,
                        h.sh_info, h.sh_size), s.data() if h.sh_type != "SHT_NOBITS" else b"")
    return out


NOP_WORD = 0x7918


def unpadded(text: bytes) -> bytes:
    """The text without its trailing NOP words."""
    end = len(text)
    while end >= 16 and int.from_bytes(text[end - 16:end], "little") & 0xFFFFFFFFFFFF == NOP_WORD \
            and int.from_bytes(text[end - 8:end], "little") >> 32 & 0xFFFF == 0:
        end -= 16
    return text[:end]


def listing(cubin: bytes) -> list[str]:
    """nvdisasm's instructions (padding dropped, moves spelt one way)."""
    out = []
    for line in oracle.nvdisasm(cubin).splitlines():
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+([^;]*);", line)
        if m and m.group(1).strip() != "NOP":
            ins = re.sub(r"^(@!?P\w+ )?IMAD\.MOV\.U32 (\w+), RZ, RZ, ", r"\1MOV \2, ", m.group(1).strip())
            out.append(re.sub(r"\bR\d+\b", "R", re.sub(r"\s+", " ", ins)))
    return out


def kernel_text(form, sm: int = 89) -> str:
    """The checker's module for the form, without the parts texture forms never name (the
    dummy function, the branch-target table and its label), which change ptxas's blocks."""
    text, _ = acceptance_module([instruction_text(form)], sm, version_for(form, sm))
    for part in (".func fdummy()\n{\nret;\n}\n", "L_targets: .branchtargets L_end;\n", "L_end:\n"):
        text = text.replace(part, "")
    return text


def check(form, sm: int = 89) -> tuple[str, str]:
    """(status, detail): ptxas-refused, refused, crash, readback, accepted, listing,
    words, cubin; the detail says whether the records are ptxas's."""
    text = kernel_text(form, sm)
    arch = f"sm_{sm}"
    theirs = oracle.ptxas(text, arch)
    if not theirs.ok:
        return "ptxas-refused", (theirs.stderr or "").strip().splitlines()[0:1]
    try:
        cubin, codes = codegen.generate_module(codegen.lower_ptx(text, arch, "k.ptx"), arch,
                                               filename="k.ptx")
    except CompileError as e:
        return "refused", e.message
    except Exception as e:          # noqa: BLE001 - an internal error is a finding
        return "crash", f"{type(e).__name__}: {e}"
    if not _readback_ok(cubin, codes):
        return "readback", "nvdisasm reads our words otherwise"
    ours, ref = sections(cubin), sections(theirs.output)
    differ = [n for n in sorted(set(ours) | set(ref)) if not n.startswith(".text.")
              and ours.get(n, (None,))[1:] != ref.get(n, (None,))[1:]
              or (ours.get(n) or ((0,) * 8,))[0][1:7] != (ref.get(n) or ((0,) * 8,))[0][1:7]]
    records = "records= " if not differ else "records differ: " + ", ".join(differ)
    if listing(cubin) != listing(theirs.output):
        return "accepted", records
    texts = sorted(n for n in ref if n.startswith(".text."))
    if any(unpadded(ours[n][1]) != unpadded(ref[n][1]) for n in texts):
        return "listing", records
    return ("cubin" if not differ else "words"), records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--opcode")
    ap.add_argument("--sample", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=3, help="details shown per status")
    args = ap.parse_args(argv)
    forms = [f for f in sm89_forms() if f.chapter == "texture/surface"
             and (args.opcode is None or f.opcode == args.opcode)]
    if args.sample:
        forms = random.Random(args.seed).sample(forms, min(args.sample, len(forms)))
    by_opcode: dict[str, Counter] = defaultdict(Counter)
    shown: Counter = Counter()
    for f in forms:
        status, detail = check(f)
        by_opcode[f.opcode][status] += 1
        by_opcode[f.opcode]["records="] += detail == "records= "
        if status not in ("cubin", "ptxas-refused", "words") and shown[status, detail] < args.show:
            shown[status, detail] += 1
            print(f"  {f.spelling}: {status}: {detail}", file=sys.stderr)
    total = Counter()
    print(f"{'opcode':8} {'forms':>5} {'accepted':>8} {'listing=':>8} {'words=':>6} {'records=':>8} {'cubin=':>6}  other")
    for op in sorted(by_opcode):
        c = by_opcode[op]
        total.update(c)
    for op, c in sorted(by_opcode.items()) + [("total", total)]:
        n = sum(v for k, v in c.items() if k not in ("ptxas-refused", "records="))
        levels = ("accepted", "listing", "words", "cubin")
        at_least = [sum(c[k] for k in levels[i:]) for i in range(4)]
        other = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k not in levels + ("records=",))
        print(f"{op:8} {n:5} {at_least[0]:8} {at_least[1]:8} {at_least[2]:6} {c['records=']:8} "
              f"{at_least[3]:6}  {other}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
