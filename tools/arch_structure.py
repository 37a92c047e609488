"""Does our cubin for an arch have ptxas's structure? Over a fixed sample of corpus PTX files
(the `.target` rewritten to the arch, `.version` to 9.4): ELF type and flags, sections but
Mercury (name, type, flags, alignment), symbols, every `.nv.info` record (values but the
code's own: register counts, offsets, stack) and `.nv.compat`, ours against ptxas 13.5.37's.

    py -m tools.arch_structure --arch sm_107 [--files 40] [--seed 37] [-c | -g]

Prints each file that differs and the counts (same / diff / refused by either); written for
a new target (branch cli37's sm_107: compare its counts with sm_120's on the same files).
"""
from __future__ import annotations

import argparse
import glob
import io
import random
import re
from collections import Counter
from pathlib import Path

from elftools.elf.elffile import ELFFile

ROOT = Path(__file__).resolve().parent.parent
_CODE_RECORDS = {0x2F, 0x1C, 0x1D, 0x11, 0x12, 0x23, 0x1E, 0x31, 0x34, 0x25, 0x27, 0x28, 0x46, 0x65,
                 0x39, 0x59, 0x57}
_MERCURY = (".nv.merc.", ".nv.capmerc.")


def structure(cubin: bytes, code_records: set[int] = _CODE_RECORDS) -> dict:
    """The cubin's structure; `.nv.info` records of `code_records` by kind only."""
    from ptx2sass.encoder.nvinfo import parse_records
    elf = ELFFile(io.BytesIO(cubin))
    names = [s.name for s in elf.iter_sections()]
    kept = [s for s in elf.iter_sections() if not s.name.startswith(_MERCURY)]
    symbols = [(s.name, s["st_info"]["type"], s["st_info"]["bind"], s["st_other"]["visibility"],
                names[s["st_shndx"]] if isinstance(s["st_shndx"], int) else s["st_shndx"])
               for s in elf.get_section_by_name(".symtab").iter_symbols()]
    compat = elf.get_section_by_name(".nv.compat")
    return {"header": (elf.header["e_type"], elf.header["e_flags"]),
            "sections": [(s.name, s["sh_type"], s["sh_flags"], s["sh_addralign"]) for s in kept],
            "symbols": [s for s in symbols if not str(s[4]).startswith(_MERCURY)],
            "records": {s.name: [(r.attr, int(r.fmt), None if r.attr in code_records else r.value)
                                 for r in parse_records(s.data())]
                        for s in kept if s.name.startswith(".nv.info")},
            "compat": compat.data() if compat is not None else None}


def compare(ptx: str, arch: str, options: tuple[str, ...]) -> tuple[str, dict]:
    from ptx2sass import CompileError, oracle
    from ptx2sass.codegen import compile_ptx
    theirs = oracle.ptxas(ptx, arch, options, name="k.ptx")
    if not theirs.ok:
        return "ptxas-refused", {}
    kw = {"compile_only": True} if "-c" in options else {"debug": True, "opt_level": 0} if "-g" in options else {}
    try:
        ours = compile_ptx(ptx, arch, "k.ptx", **kw)
    except CompileError as e:
        return "ours-refused", {"message": str(e)[:200]}
    a, b = structure(ours), structure(theirs.output)
    if "-c" in options:       # our -c objects are SASS only (Target.mercury_e_flag)
        a.pop("header"), b.pop("header")
    diff = {k: (a[k], b[k]) for k in a if a[k] != b[k]}
    return ("same" if not diff else "diff"), diff


def sample(n: int, seed: int) -> list[Path]:
    files = sorted(glob.glob(str(ROOT / "tests" / "corpus" / "*" / "*.ptx")))
    files = [f for f in files if "/invalid/" not in f and "tinygrad_large" not in f]
    random.Random(seed).shuffle(files)
    return [Path(f) for f in files[:n]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("-c", action="store_true")
    ap.add_argument("-g", action="store_true")
    args = ap.parse_args()
    options = ("-c",) * args.c + ("-g",) * args.g
    counts = Counter()
    for path in sample(args.files, args.seed):
        ptx = re.sub(r"^\s*\.target\s+[^\n,]*", ".target " + args.arch, path.read_text(), count=1, flags=re.M)
        ptx = re.sub(r"^\s*\.version\s+\S+", ".version 9.4", ptx, count=1, flags=re.M)
        status, diff = compare(ptx, args.arch, options)
        counts[status] += 1
        if status not in ("same", "ptxas-refused"):
            print(status, path.relative_to(ROOT), sorted(diff))
    print(dict(counts))


if __name__ == "__main__":
    main()
