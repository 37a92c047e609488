"""The cache directory rule (ptx2sass/cache.py) and the promise every cache keeps: a damaged,
unreadable or unwritable cache never changes what is compiled and never raises."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2sass import cache, oracle
from ptx2sass.encoder import table_cache
from ptx2sass.frontend import lexer, parser, tables

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = [REPO / "examples" / "vecadd.ptx",
            REPO / "tests" / "corpus" / "tinygrad" / "abs_float16__E_16_32_4.ptx"]


def test_one_directory_rule_for_every_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("PTX2SASS_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache.cache_dir() == str(tmp_path / "home" / ".cache" / "ptx2sass")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")     # the XDG spec: absolute only
    assert cache.cache_dir() == str(tmp_path / "home" / ".cache" / "ptx2sass")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "xdg" / "ptx2sass"
    assert cache.cache_dir() == str(root)
    json_path = str(REPO / "encoder" / "tables" / "ampere.json")
    assert Path(table_cache.cache_path(json_path, "ampere")).parent.parent == root
    assert oracle.cache_dir().parent == root
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path / "explicit"))
    assert cache.cache_dir("x") == str(tmp_path / "explicit" / "x")


def test_damaged_files_read_as_absent(tmp_path):
    path = str(tmp_path / "f")
    cache.write(path, {"a": [1, 2, (3, "x")], "b": b"\0" * 100})
    good = Path(path).read_bytes()
    assert cache.read(path) == {"a": [1, 2, (3, "x")], "b": b"\0" * 100}
    damaged = [good[:len(good) // 2], good[:-1] + bytes([good[-1] ^ 1]), b"", b"garbage",
               good[:20], b"\x00" * len(good)]
    for data in damaged:
        Path(path).write_bytes(data)
        assert cache.read(path) is None
    assert cache.read(str(tmp_path / "absent")) is None


def test_unwritable_directory_is_left_alone(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache.write(str(blocker / "sub" / "f"), [1])      # a folder that cannot be made: no raise
    cache.write_text(str(blocker / "g"), "x")
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("spec", [lexer.table_spec, parser.table_spec], ids=["lex", "yacc"])
def test_grammar_tables_from_a_damaged_or_unwritable_cache(spec, tmp_path, monkeypatch):
    """A tree without built tables derives them into the cache; a damaged cache file, or one
    whose checked content does not fit PLY, is derived again; an unwritable cache still
    gives the tables. Every time the same tables."""
    monkeypatch.setattr(tables, "HERE", tmp_path / "no_tables_here")
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path / "cache"))
    name, build, fields = spec()
    fingerprint = _lexer_fingerprint if spec is lexer.table_spec else _parser_fingerprint
    reference = fingerprint(build(None))
    assert fingerprint(tables.load(name, build, fields)) == reference
    (stored,) = (tmp_path / "cache" / "ply").iterdir()
    assert fingerprint(tables.load(name, build, fields)) == reference    # read back
    data = stored.read_bytes()
    stored.write_bytes(data[:-10] + bytes(10))
    assert fingerprint(tables.load(name, build, fields)) == reference
    assert stored.read_bytes() == data                                  # derived and rewritten
    cache.write(str(stored), {f: 0 for f in fields})                    # intact but wrong
    assert fingerprint(tables.load(name, build, fields)) == reference
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    monkeypatch.setenv("PTX2SASS_CACHE", str(blocker / "cache"))
    assert fingerprint(tables.load(name, build, fields)) == reference


def _lexer_fingerprint(lexobj):
    return {state: [(p.pattern, [f and f[1] for f in funcs]) for p, funcs in res]
            for state, res in lexobj.lexstatere.items()}


def _parser_fingerprint(lr):
    # a table derived in memory lists states without gotos, a written one leaves them out
    return lr.action, {k: v for k, v in lr.goto.items() if v}, [str(p) for p in lr.productions]


def _compile_all(env: dict, out: Path) -> list[bytes]:
    outputs = []
    for i, ptx in enumerate(EXAMPLES):
        target = out / f"{i}.cubin"
        run = subprocess.run([sys.executable, "-m", "ptx2sass", "-arch=sm_89", str(ptx), "-o",
                              str(target)], capture_output=True, text=True, env=env)
        assert (run.returncode, run.stderr) == (0, "")
        outputs.append(target.read_bytes())
    return outputs


def test_damaged_and_unwritable_caches_do_not_change_the_cubins(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env["PTX2SASS_CACHE"] = str(tmp_path / "cache")
    reference = _compile_all(env, tmp_path)
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files, "the first run fills the cache"
    for n, p in enumerate(files):                   # damage each file a different way
        data = p.read_bytes()
        p.write_bytes([data[:len(data) // 3], data[:-7] + b"1234567", b""][n % 3])
    assert _compile_all(env, tmp_path) == reference
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    env["PTX2SASS_CACHE"] = str(blocker / "cache")
    assert _compile_all(env, tmp_path) == reference


@pytest.mark.parametrize("damage", ["truncated", "bytecode", "fields", "content"])
@pytest.mark.parametrize("spec", [lexer.table_spec, parser.table_spec], ids=["lex", "yacc"])
def test_damaged_table_beside_the_package_is_passed_over(spec, damage, tmp_path, monkeypatch):
    """A generated table module beside the package (a wheel's, or `make setup`'s) that is
    damaged, or whose bytecode is (bad marshal data with a header that still matches the
    source), must not break every later run: the cache's copy serves instead."""
    import importlib
    import py_compile
    name, build, fields = spec()
    fingerprint = _lexer_fingerprint if spec is lexer.table_spec else _parser_fingerprint
    reference = fingerprint(build(None))
    package = tmp_path / "damaged_tables_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    good = (Path(tables.__file__).parent / f"{name}.py").read_text()
    table = package / f"{name}.py"
    if damage == "truncated":
        table.write_text(good[: len(good) // 2])
    elif damage == "fields":
        table.write_text("_tabversion = '3.10'\n")
    elif damage == "content":
        table.write_text("".join(f"{f} = None\n" for f in fields))
    else:
        table.write_text(good)
        pyc = Path(py_compile.compile(str(table), cfile=importlib.util.cache_from_source(str(table))))
        data = pyc.read_bytes()
        pyc.write_bytes(data[: len(data) // 2])            # the 16-byte header stays valid
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(tables, "HERE", str(package))
    monkeypatch.setattr(tables, "PACKAGE", package.name)
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path / "cache"))
    for module in [m for m in sys.modules if m.startswith(package.name)]:
        monkeypatch.delitem(sys.modules, module)
    assert fingerprint(tables.load(name, build, fields)) == reference
    assert fingerprint(tables.load(name, build, fields)) == reference    # and again
