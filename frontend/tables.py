"""The PLY lexer and parser tables: where they come from and how they are built.

PLY derives its tables from `lexer.py` and `parser.py` (seconds of work for the parser), so
they are built once, named after a CRC of those sources (an edited lexer or grammar never
meets a stale table), and found in this order:

1. beside this file, as the modules `_lextab_<crc>.py` / `_parsetab_<crc>.py`: a built wheel
   has them (setup.py runs `generate` at build time; their bytecode is compiled at install),
   and `make setup` writes them into a development tree;
2. in the cache directory (`ptx2sass/cache.py`), as checked data: a development tree whose
   lexer or grammar changed since `make setup` builds them there on first use;
3. built in memory when neither is usable (a read-only or damaged cache): slower, the same
   tables.

Nothing is ever written beside the package at run time (an installed package's folder is not
ours to write).
"""
from __future__ import annotations

import os
import types
import zlib

from ptx2sass import cache

HERE = os.path.dirname(os.path.abspath(__file__))      # no pathlib at start-up
PACKAGE = __name__.rsplit(".", 1)[0]          # ptx2sass.frontend

# What PLY's generated table modules define (lex: readtab, yacc: LRTable.read_table).
LEX_FIELDS = ("_tabversion", "_lextokens", "_lexreflags", "_lexliterals", "_lexstateinfo",
               "_lexstatere", "_lexstateignore", "_lexstateerrorf", "_lexstateeoff")
YACC_FIELDS = ("_tabversion", "_lr_method", "_lr_signature", "_lr_action", "_lr_goto",
                "_lr_productions")


def table_name(stem: str, *sources: str) -> str:
    """`stem_<crc of the sources>`: the table's module name."""
    digest = 0
    for source in sources:
        with open(source, "rb") as fh:
            digest = zlib.crc32(fh.read(), digest)
    return f"{stem}_{digest:08x}"


def derived_name(name: str) -> str:
    """A module name for a table PLY must derive: never importable (PLY would read any table
    it can import instead, prefixing a bare name with the caller's package), and PLY writes
    it as `<outputdir>/<name>.py`."""
    return f"_ptx2sass_derived.{name}"


def load(name: str, build, fields: tuple[str, ...]):
    """`build(table, outputdir=None)` (a PLY constructor given a table module or module
    name, or None to derive the table, written to `outputdir` if given) with the table
    `name` from the first place that has it."""
    if os.path.isfile(os.path.join(HERE, f"{name}.py")):
        module = _import_beside(name, fields)
        if module is not None:
            try:
                return build(module)
            except Exception:    # content PLY cannot read: as if damaged
                pass
    path = cache.cache_dir("ply", f"{name}.marshal")
    content = cache.read(path)
    if isinstance(content, dict) and all(f in content for f in fields):
        try:
            return build(_as_module(name, content, path))
        except Exception:        # a table that does not fit this PLY: derive it again
            pass
    content = derive(name, build, fields)
    if content is None:
        return build(None)
    cache.write(path, content)
    return build(_as_module(name, content, path))


def _import_beside(name: str, fields: tuple[str, ...]) -> types.ModuleType | None:
    """The table module beside this file, or None where it or its bytecode is damaged (a
    truncated file, bad marshal data, fields missing): such a file is not ours to repair,
    and the cache's checked copy serves instead."""
    import importlib
    try:
        module = importlib.import_module(f"{PACKAGE}.{name}")
    except Exception:
        return None
    return module if all(hasattr(module, f) for f in fields) else None


def derive(name: str, build, fields: tuple[str, ...]) -> dict | None:
    """The table `name` as plain data: PLY writes its module into a scratch folder (its only
    way of producing one), which is read back."""
    import shutil
    import tempfile
    from pathlib import Path
    scratch = tempfile.mkdtemp(prefix="ptx2sass-tables-")
    try:
        build(None, scratch)
        produced = next(Path(scratch).glob("*.py"), None)
        if produced is None:
            return None
        namespace: dict = {}
        exec(compile(produced.read_text(), str(produced), "exec"), namespace)
        return {f: namespace[f] for f in fields}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _literal(value) -> str:
    """Python source for a table value; sets sorted, so that a build is reproducible."""
    if isinstance(value, (set, frozenset)):
        return f"set({tuple(sorted(value))!r})"
    return repr(value)


def _as_module(name: str, content: dict, path: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = path           # PLY asks where a table module lives
    module.__dict__.update(content)
    return module


def generate(folder: str | os.PathLike) -> list[Path]:
    """Write the current lexer and parser tables into `folder` as modules (the build step of
    setup.py and `make setup`), removing tables of earlier sources; return the files."""
    from pathlib import Path

    from ptx2sass.frontend import lexer, parser
    folder = Path(folder)
    written = []
    for name, build, fields in (lexer.table_spec(), parser.table_spec()):
        content = derive(name, build, fields)
        if content is None:
            raise RuntimeError(f"PLY produced no table {name}")
        target = folder / f"{name}.py"
        staging = folder / f".{name}.py.{os.getpid()}.tmp"
        staging.write_text("# Generated by ptx2sass/frontend/tables.py from the lexer and "
                           "grammar; do not edit.\n"
                           + "".join(f"{f} = {_literal(content[f])}\n" for f in fields))
        os.replace(staging, target)
        stem = name.rsplit("_", 1)[0]
        for old in folder.glob(f"{stem}_*.py"):
            if old != target:
                old.unlink()
        written.append(target)
    return written

