"""The map of the work ahead: per corpus, kernels, ptxas acceptance, PTX instructions used
and SASS opcodes ptxas emits for them.

Usage: python -m tools.corpus_stats [--arch sm_89] [--detail] [--corpus NAME ...]

The PTX and SASS scans here are deliberately light regular expressions, independent of the
compiler's own frontend and encoder, so the figures do not depend on the code they measure.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

from ptx2sass import oracle
from tools.corpora import corpus_dirs, entry_names, ptx_files

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PTX_INSTR = re.compile(r"^\s*(?:[\w$]+:\s*)?(?:@!?%?[\w$]+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)*)(?=[\s;{])", re.M)
_SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-7T]\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")


@dataclass
class CorpusStats:
    files: int = 0
    kernels: int = 0
    accepted: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)
    ptx_instructions: Counter = field(default_factory=Counter)
    sass_opcodes: Counter = field(default_factory=Counter)
    sass_mnemonics: Counter = field(default_factory=Counter)


def ptx_instructions(text: str) -> list[str]:
    """Instruction mnemonics with modifiers (`ld.global.f32`) inside function bodies."""
    body = _COMMENT.sub("", text)
    out = []
    depth = 0
    for line in body.splitlines():
        if depth > 0:
            m = _PTX_INSTR.match(line)
            if m and not line.lstrip().startswith("."):
                out.append(m.group(1))
        depth += line.count("{") - line.count("}")
    return out


def sass_mnemonics(listing: str) -> list[str]:
    return _SASS_LINE.findall(listing)


def collect(corpus: str, arch: str) -> CorpusStats:
    st = CorpusStats()
    for path in ptx_files(corpus):
        text = path.read_text(errors="replace")
        st.files += 1
        st.kernels += len(entry_names(text))
        st.ptx_instructions.update(ptx_instructions(text))
        run = oracle.ptxas(text, arch, name=path.name)
        if not run.ok:
            msg = next((ln for ln in run.stderr.splitlines() if "error" in ln or "fatal" in ln), "")
            st.rejected.append((str(path.relative_to(corpus_dirs()[corpus])), msg.strip()))
            continue
        st.accepted += 1
        for mnem in sass_mnemonics(oracle.nvdisasm(run.output, ())):
            st.sass_mnemonics[mnem] += 1
            st.sass_opcodes[mnem.split(".")[0]] += 1
    return st


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Corpus coverage report")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--detail", action="store_true", help="list every instruction and opcode")
    ap.add_argument("--corpus", nargs="*", default=list(corpus_dirs()))
    args = ap.parse_args(argv)
    stats = {name: collect(name, args.arch) for name in args.corpus}
    print(f"ptxas {oracle.tool_version('ptxas')}, -arch={args.arch}")
    print(f"{'corpus':<10} {'files':>6} {'kernels':>8} {'accepted':>9} {'PTX instr':>10} {'SASS ops':>9} {'SASS forms':>11}")
    total_ptx, total_sass = Counter(), Counter()
    for name, st in stats.items():
        total_ptx.update(st.ptx_instructions)
        total_sass.update(st.sass_opcodes)
        print(f"{name:<10} {st.files:>6} {st.kernels:>8} {st.accepted:>9} {len(st.ptx_instructions):>10} "
              f"{len(st.sass_opcodes):>9} {len(st.sass_mnemonics):>11}")
    print(f"{'all':<10} {'':>6} {'':>8} {'':>9} {len(total_ptx):>10} {len(total_sass):>9}")
    for name, st in stats.items():
        for file, msg in st.rejected:
            print(f"  rejected [{name}] {file}: {msg}")
    if args.detail:
        for name, st in stats.items():
            print(f"\n## {name}: PTX instructions")
            for k, v in st.ptx_instructions.most_common():
                print(f"  {v:6d}  {k}")
            print(f"\n## {name}: SASS opcodes")
            for k, v in st.sass_opcodes.most_common():
                print(f"  {v:6d}  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
