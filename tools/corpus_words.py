"""Every distinct instruction word the pinned ptxas emits over the corpora, with nvdisasm's text.

Usage: python -m tools.corpus_words [--arch sm_89 ...] [--corpus zluda ...] [--jsonl FILE]

Each PTX file of each corpus is compiled with the oracle's ptxas and disassembled with
`nvdisasm -hex`; the listing gives one record per instruction. A file ptxas rejects for the
arch is tried once more with its `.target` line set to the arch (the tinygrad and CUDA
corpora are written for sm_89, which sm_80/sm_86/sm_75 refuse as it stands); files rejected
both ways are skipped.
Records are deduplicated by (word, text): a branch word can print different label names in
different kernels. `corpus_words(arch)` is what the encoder's round-trip test and the stats
use; its result is cached under .cache/corpus_words/, keyed by the PTX contents and the tool
versions, so only the first call per corpus state pays for compiling.

The command prints, per arch, the number of distinct words and texts and how many texts
`encoder.sass_text` parses and prints back unchanged.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from ptx2sass import cache, oracle
from ptx2sass.encoder.model import Control, Instruction, Label
from ptx2sass.encoder.sass_text import (SassSyntaxError, format_instruction, parse_instruction,
                                        parse_listing)
from tools.corpora import REPO, corpus_dirs, ptx_files

DEFAULT_ARCHS = ("sm_89", "sm_86", "sm_80")
ALL_ARCHS = ("sm_89", "sm_86", "sm_80", "sm_75", "sm_90", "sm_120")
_FORMAT = 2   # bump when the record layout or the extraction changes
_TARGET = re.compile(rb"(\.target\s+)sm_\d+[a-z]?")
_ARCH = re.compile(r"sm_\d{2,3}[af]?")


@dataclass(frozen=True)
class Word:
    """One distinct instruction word of ptxas's output and where it was first seen."""
    word: int                 # the 128 bits, little-endian as stored in .text
    text: str                 # nvdisasm's text, without `;`
    arch: str
    source: str               # `corpus/relative/path.ptx:function`
    offset: int               # byte offset of the instruction in its .text section
    targets: tuple[tuple[str, int], ...] = ()   # labels in `text` → their section offsets
    retargeted: bool = False  # compiled with the PTX's `.target` rewritten to `arch`

    @property
    def control(self) -> Control:
        return Control.unpack(self.word >> 105)

    def instruction(self) -> Instruction:
        """The parsed text with control fields from the word and labels resolved."""
        ins = parse_instruction(self.text)
        where = dict(self.targets)
        ops = tuple(Label(op.name, where.get(op.name)) if isinstance(op, Label) else op
                    for op in ins.operands)
        return replace(ins, operands=ops, control=self.control)

    def to_json(self) -> dict:
        return {"word": f"{self.word:032x}", "text": self.text, "arch": self.arch,
                "source": self.source, "offset": self.offset, "targets": list(self.targets),
                "retargeted": self.retargeted}

    @classmethod
    def from_json(cls, d: dict) -> "Word":
        return cls(int(d["word"], 16), d["text"], d["arch"], d["source"], d["offset"],
                   tuple((str(n), int(o)) for n, o in d["targets"]), bool(d["retargeted"]))


def _corpus_files(corpora: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """(`corpus/relative/path.ptx`, contents) of every PTX file, read once so the cache key
    and the compiled text agree even while a corpus is being rewritten."""
    out = []
    for corpus in corpora:
        root = corpus_dirs()[corpus]
        for p in ptx_files(corpus):
            try:
                out.append((f"{corpus}/{p.relative_to(root).as_posix()}", p.read_bytes()))
            except FileNotFoundError:
                continue  # removed since the folder was listed
    return out


def _cache_path(arch: str, corpora: tuple[str, ...], files: list[tuple[str, bytes]]) -> Path:
    h = hashlib.sha256()
    h.update(json.dumps([_FORMAT, arch, oracle.tool_version("ptxas"),
                         oracle.tool_version("nvdisasm")]).encode())
    for name, data in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    root = Path(cache.cache_dir("corpus_words"))
    return root / f"{arch}-{'+'.join(corpora)}-{h.hexdigest()[:20]}.json"


def compile_for(ptx: bytes, arch: str, name: str) -> tuple[bytes | None, bool]:
    """ptxas's cubin for `arch` (None if rejected) and whether the PTX's `.target` had to be
    rewritten to `arch` first (PTX written for sm_89 is refused for sm_86 as it stands)."""
    run = oracle.ptxas(ptx, arch, name=name)
    if run.ok and run.output:
        return run.output, False
    m = _TARGET.search(ptx)
    if m and m.group(0)[len(m.group(1)):] != arch.encode():
        run = oracle.ptxas(_TARGET.sub(lambda t: t.group(1) + arch.encode(), ptx, count=1),
                           arch, name=name)
        if run.ok and run.output:
            return run.output, True
    return None, False


def words_of_listing(listing_text: str, arch: str, source: str,
                     retargeted: bool = False) -> list[Word]:
    """Records for every instruction of one `nvdisasm -hex` listing (unparsable ones too:
    the text is what nvdisasm printed; the labels are read from the listing itself)."""
    listing = parse_listing(listing_text, strict=False)
    out = []
    for func in listing.functions:
        table = listing.section_labels(func.section)
        for entry in func.entries:
            if entry.word is None:
                continue
            targets = tuple((name, table[name]) for name in table
                            if f"`({name})" in entry.text)
            out.append(Word(entry.word, entry.text, arch, f"{source}:{func.name}",
                            entry.offset, targets, retargeted))
    return out


def collect(arch: str, corpora: tuple[str, ...],
            files: list[tuple[str, bytes]] | None = None) -> list[Word]:
    """Compile and disassemble every file (no caching of the result here)."""
    seen: dict[tuple[int, str], Word] = {}
    for source, data in _corpus_files(corpora) if files is None else files:
        cubin, retargeted = compile_for(data, arch, source.rsplit("/", 1)[-1])
        if cubin is None:
            continue
        for w in words_of_listing(oracle.nvdisasm(cubin, ("-hex",)), arch, source, retargeted):
            seen.setdefault((w.word, w.text), w)
    return list(seen.values())


def corpus_words(arch: str = "sm_89", corpora: tuple[str, ...] | None = None) -> list[Word]:
    """Distinct (word, text) records of ptxas's output over the corpora for `arch`, cached.
    The cache file is named by arch, corpora and a hash of every PTX file and tool version;
    older files for the same arch and corpora are removed when a new one is written."""
    if not _ARCH.fullmatch(arch):
        raise ValueError(f"bad arch {arch!r} (expected e.g. sm_89)")
    corpora = tuple(corpora or corpus_dirs())
    unknown = [c for c in corpora if c not in corpus_dirs()]
    if unknown:
        raise ValueError(f"unknown corpus {', '.join(unknown)} (known: {', '.join(corpus_dirs())})")
    files = _corpus_files(corpora)
    path = _cache_path(arch, corpora, files)
    if path.is_file():
        try:
            return [Word.from_json(d) for d in json.loads(path.read_text())]
        except (ValueError, KeyError, TypeError):
            pass  # a damaged cache entry is rebuilt
    words = collect(arch, corpora, files)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump([w.to_json() for w in words], f)
    os.replace(tmp, path)
    prefix = f"{arch}-{'+'.join(corpora)}-"
    for old in path.parent.glob(f"{prefix}*.json"):
        if old != path and old.name[len(prefix):].count("-") == 0:
            old.unlink(missing_ok=True)
    return words


def round_trip_failures(words: list[Word]) -> list[tuple[str, str]]:
    """(text, what went wrong) for every distinct text that does not print back unchanged."""
    out = []
    for text in sorted({w.text for w in words}):
        try:
            printed = format_instruction(parse_instruction(text))
        except SassSyntaxError as e:
            out.append((text, f"parse error: {e}"))
            continue
        if printed != text:
            out.append((text, f"printed as {printed!r}"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Distinct ptxas instruction words over the corpora")
    ap.add_argument("--arch", nargs="*", default=list(DEFAULT_ARCHS),
                    help=f"archs (default {' '.join(DEFAULT_ARCHS)}; 'all' = {' '.join(ALL_ARCHS)})")
    ap.add_argument("--corpus", nargs="*", default=list(corpus_dirs()))
    ap.add_argument("--jsonl", type=Path, help="also write every record, one JSON object a line")
    ap.add_argument("--failures", action="store_true", help="list texts that fail the round trip")
    args = ap.parse_args(argv)
    archs = ALL_ARCHS if args.arch == ["all"] else tuple(args.arch)
    unknown = [c for c in args.corpus if c not in corpus_dirs()]
    if unknown:
        ap.error(f"unknown corpus {', '.join(unknown)} (known: {', '.join(corpus_dirs())})")
    bad_arch = [a for a in archs if not _ARCH.fullmatch(a)]
    if bad_arch:
        ap.error(f"bad arch {', '.join(bad_arch)} (expected e.g. sm_89)")
    out = args.jsonl.open("w") if args.jsonl else None
    print(f"{'arch':<8} {'words':>7} {'texts':>7} {'mnemonics':>10} {'round trip':>16}")
    for arch in archs:
        words = corpus_words(arch, tuple(args.corpus))
        texts = {w.text for w in words}
        fails = round_trip_failures(words)
        mnems = {t.split()[1] if t.startswith("@") else t.split()[0] for t in texts}
        ok = len(texts) - len(fails)
        print(f"{arch:<8} {len({w.word for w in words}):>7} {len(texts):>7} {len(mnems):>10} "
              f"{ok:>7}/{len(texts)} {100.0 * ok / max(len(texts), 1):5.1f}%")
        if args.failures:
            for text, why in fails:
                print(f"    {text!r}: {why}")
        if out:
            for w in words:
                out.write(json.dumps(w.to_json()) + "\n")
    if out:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
