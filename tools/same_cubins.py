"""Do two checkouts write the same cubins? The proof a refactor owes that it changed nothing.

    py -m tools.same_cubins --base DIR [--every 3] [--archs sm_75,sm_80,...] [--corpora zluda,cuda,...]
                            [--extra FILE ...]
    py -m tools.same_cubins --digests DIR --out FILE ...   (one side only, as JSON)
    py -m tools.same_cubins --base-digests FILE --our-digests FILE ...   (compare saved ones)

Every `--every`-th PTX file (by name) of each corpus (tools/corpora.py; `--corpora none`: none),
and the `--extra` files (e.g. the tools/isa_seeds kernels of the forms a change touches), are
compiled for each arch, once with the ptx2sass of this checkout and once with that of the checkout at DIR (e.g.
`git archive REV | tar -x -C DIR`; nothing to install there: a child process imports DIR's
folders as the `ptx2sass` packages, as setup.py maps them). A file whose `.target` the arch
refuses is compiled again with its `.target` rewritten to the arch. A pair counts as the same
when both cubins are byte-identical, or both compiles fail with the same message. Prints the
counts per arch and every pair that differs; exits 1 if any does.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHS = ("sm_75", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120")
CORPORA = ("zluda", "cuda", "triton", "tinygrad")
# distribution package -> folder of a checkout (setup.py's MAPPED)
MAPPED = {"ptx2sass": "ptx2sass", "ptx2sass.frontend": "frontend", "ptx2sass.regalloc": "regalloc",
          "ptx2sass.sched": "sched", "ptx2sass.encoder": "encoder", "ptx2sass.emu": "emu"}
_TARGET = re.compile(r"(\.target\s+)sm_\d+[a-z]?")


def sample(corpora, every: int, extra=()) -> list[Path]:
    """Every `every`-th .ptx of each corpus, by name (the first of each included), then `extra`."""
    from tools.corpora import corpus_dirs
    dirs = corpus_dirs()
    out = []
    for name in corpora:
        if name != "none":
            if not dirs[name].is_dir():      # the shared folder beside the clone, or $PTX2SASS_SHARED
                raise SystemExit(f"corpus {name}: no folder {dirs[name]}")
            out += sorted(dirs[name].glob("*.ptx"))[::every]
    return out + [Path(f).resolve() for f in extra]


def _import_from(root: Path) -> None:
    """Make `import ptx2sass...` read the checkout at `root`, ahead of any installed or
    editable one (before anything has imported it)."""
    import importlib.abc
    import importlib.machinery
    import importlib.util

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname in MAPPED:
                folder = root / MAPPED[fullname]
                return importlib.util.spec_from_file_location(
                    fullname, folder / "__init__.py", submodule_search_locations=[str(folder)])
            parent = fullname.rpartition(".")[0]
            if parent in MAPPED:        # the editable finder would send these to its own tree
                return importlib.machinery.PathFinder.find_spec(fullname, [str(root / MAPPED[parent])])
            return None
    sys.meta_path.insert(0, Finder())


def digest_one(compile_ptx, text: str, arch: str, name: str) -> str:
    """sha256 of the cubin, or `error: message` (after a retargeted second try)."""
    from ptx2sass.errors import CompileError
    try:
        return hashlib.sha256(compile_ptx(text, arch=arch, filename=name)).hexdigest()
    except CompileError as first:
        retargeted = _TARGET.sub(lambda m: m.group(1) + arch, text, count=1)
        if retargeted == text:
            return f"error: {first}"
        try:
            return hashlib.sha256(compile_ptx(retargeted, arch=arch, filename=name)).hexdigest()
        except CompileError as e:
            return f"error: {e}"
    except Exception as e:           # a crash is a result too, and must match
        return f"crash: {type(e).__name__}: {e}"


def digests(root: Path, files: list[Path], archs) -> dict[str, str]:
    """{"file arch": digest} with the ptx2sass of `root` (this process must not have imported
    ptx2sass yet)."""
    _import_from(root)
    import ptx2sass
    assert Path(ptx2sass.__file__).resolve().parent == (root / "ptx2sass").resolve(), ptx2sass.__file__
    out = {}
    for f in files:
        text = f.read_text()
        for arch in archs:
            out[f"{f.parent.name}/{f.name} {arch}"] = digest_one(ptx2sass.compile, text, arch, f.name)
    return out


def _child(root: Path, args, out: Path) -> dict[str, str]:
    cmd = [sys.executable, "-m", "tools.same_cubins", "--digests", str(root), "--out", str(out),
           "--every", str(args.every), "--archs", ",".join(args.archs), "--corpora", ",".join(args.corpora)]
    if args.extra:
        cmd += ["--extra", *map(str, args.extra)]
    subprocess.run(cmd, check=True, cwd=ROOT)
    return json.loads(out.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", type=Path, help="the other checkout's root")
    ap.add_argument("--base-digests", type=Path, help="its digests, saved by --digests DIR --out FILE")
    ap.add_argument("--our-digests", type=Path, help="this checkout's, saved likewise")
    ap.add_argument("--digests", type=Path, help="only write the digests of the checkout at DIR (--out)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--archs", type=lambda s: s.split(","), default=list(ARCHS))
    ap.add_argument("--corpora", type=lambda s: s.split(","), default=list(CORPORA))
    ap.add_argument("--extra", nargs="*", type=Path, default=[], help="more PTX files")
    args = ap.parse_args(argv)
    args.extra = [f.resolve() for f in args.extra]
    files = sample(args.corpora, args.every, args.extra)
    if args.digests:
        args.out.write_text(json.dumps(digests(args.digests, files, args.archs), indent=0, sort_keys=True))
        return 0
    if not (args.base or args.base_digests):
        ap.error("--base or --base-digests")
    with tempfile.TemporaryDirectory() as tmp:
        base = json.loads(args.base_digests.read_text()) if args.base_digests else \
            _child(args.base.resolve(), args, Path(tmp) / "base.json")
        ours = json.loads(args.our_digests.read_text()) if args.our_digests else \
            _child(ROOT, args, Path(tmp) / "ours.json")
    differ = sorted(k for k in ours if base.get(k) != ours[k])
    print(f"{len(files)} files x {len(args.archs)} archs (1 in {args.every} of {', '.join(args.corpora)}; "
          f"{len(args.extra)} more)")
    for arch in args.archs:
        keys = [k for k in ours if k.endswith(" " + arch)]
        compiled = sum(not ours[k].startswith(("error", "crash")) for k in keys)
        same = sum(base.get(k) == ours[k] for k in keys)
        print(f"{arch}: {same}/{len(keys)} the same ({compiled} cubins, {len(keys) - compiled} refused by both)"
              if same == len(keys) else f"{arch}: {same}/{len(keys)} the same ({compiled} cubins)")
    for k in differ:
        print(f"DIFFERS {k}: base {base.get(k, 'missing')[:80]} / ours {ours[k][:80]}")
    print(f"total: {len(ours) - len(differ)}/{len(ours)} the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
