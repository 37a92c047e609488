"""ptx2sass installed as a user gets it: a wheel built from the working tree, installed into a
fresh virtual environment (no editable finder, no repository on sys.path), its three commands
run on the bundled example. Offline (CI reaches PyPI only in `make setup`): see
tools/wheel_env.py.
"""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tools import wheel_env

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "vecadd.ptx"
MAPPED = wheel_env.MAPPED
N = 1000


def _source_files() -> list[str]:
    files = wheel_env.source_files()
    if files is None:
        pytest.skip("not a git checkout")
    return files


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("packaging")
    _source_files()
    wheel = wheel_env.build_wheel(tmp)
    return {"tmp": tmp, "wheel": wheel, **wheel_env.install(wheel, tmp)}


def _run(cmd, cwd, env=None, **kw):
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTX2SASS_CACHE")}
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                          env={**base, **(env or {})}, **kw)


def _untimed(text: str) -> str:
    return re.sub(r"time = [0-9.]+ ms", "time = ? ms", text)


def test_wheel_holds_every_file_of_the_mapped_folders(installed):
    """Every source file of the package folders (modules of every subpackage, data) is in the
    wheel at its package path, with the tables derived at build time."""
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    expected = {MAPPED[f.split("/")[0]] + f[f.index("/"):] for f in _source_files()
                if f.split("/")[0] in MAPPED}
    assert expected - names == set()
    tables = sorted(n for n in names if n.startswith("ptx2sass/encoder/tables/"))
    assert [n for n in tables if n.endswith(".marshal")] == \
        [n[:-len(".json")] + ".marshal" for n in tables if n.endswith(".json")]
    assert any(n.startswith("ptx2sass/frontend/_lextab_") for n in names)
    assert any(n.startswith("ptx2sass/frontend/_parsetab_") for n in names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_installed_code_never_imports_tools_or_tests(installed):
    """Development-time code (`tools/`, `tests/`) is not installed; nothing installed may
    import it, even lazily inside a function."""
    z = zipfile.ZipFile(installed["wheel"])
    offenders = []
    for name in z.namelist():
        if not name.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(z.read(name), name)):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots = [node.module.split(".")[0]]
            else:
                continue
            offenders += [f"{name}:{node.lineno} {r}" for r in roots if r in ("tools", "tests")]
    assert offenders == []


def test_installed_environment_is_not_the_repository(installed):
    out = _run([installed["python"], "-c", "import importlib.util, json, os, sys, ptx2sass; "
                "print(json.dumps([ptx2sass.__file__, [os.path.abspath(p) for p in sys.path], "
                "[type(f).__name__ for f in sys.meta_path], "
                "[importlib.util.find_spec(m) is None for m in ('tools', 'tests')]]))"],
               installed["tmp"], check=True)
    where, path, finders, absent = json.loads(out.stdout)
    assert Path(where).is_relative_to(installed["purelib"])
    assert str(REPO) not in path
    assert not [f for f in finders if "editable" in f.lower()]
    assert absent == [True, True]


def test_installed_commands_match_the_editable_install(installed, tmp_path):
    """`ptx2sass`, `ptx2sass-emu` and `ptx2sass-as` from the wheel, in a process that may
    write neither bytecode nor a cache: the same cubin and output as the editable install,
    the emulated vecadd equal to NumPy's sum, and nothing written into site-packages."""
    bin_ = installed["venv"] / "bin"
    before = sorted(str(p) for p in installed["purelib"].rglob("*"))
    locked = tmp_path / "locked"       # nothing may be written here (root may write anyway:
    locked.mkdir()                     # the check is that nothing was)
    locked.chmod(0o500)
    quiet = {"PYTHONDONTWRITEBYTECODE": "1", "PTX2SASS_CACHE": str(locked / "cache"),
             "HOME": str(locked)}
    try:
        ours = _run([bin_ / "ptx2sass", "-v", "-arch=sm_89", EXAMPLE, "-o", "wheel.cubin"],
                    tmp_path, quiet)
        assert ours.returncode == 0, ours.stderr
        editable = _run([Path(sys.executable).parent / "ptx2sass", "-v", "-arch=sm_89", EXAMPLE,
                         "-o", "editable.cubin"], tmp_path)
        assert editable.returncode == 0, editable.stderr
        assert (tmp_path / "wheel.cubin").read_bytes() == \
            (tmp_path / "editable.cubin").read_bytes()
        assert _untimed(ours.stdout + ours.stderr) == _untimed(editable.stdout + editable.stderr)

        rng = np.random.default_rng(0)
        a, b = rng.standard_normal(N, np.float32), rng.standard_normal(N, np.float32)
        a.tofile(tmp_path / "a.bin")
        b.tofile(tmp_path / "b.bin")
        (tmp_path / "launch.json").write_text(json.dumps({
            "kernel": "vecadd", "grid": [(N + 127) // 128, 1, 1], "block": [128, 1, 1],
            "buffers": {"a": {"file": "a.bin"}, "b": {"file": "b.bin"}, "c": {"size": 4 * N}},
            "params": [{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"},
                       {"type": "u32", "value": N}]}))
        emu = _run([bin_ / "ptx2sass-emu", "wheel.cubin", "launch.json", "--out-dir", "out",
                    "--stats"], tmp_path, quiet)
        assert emu.returncode == 0, emu.stderr
        assert json.loads(emu.stdout)["hazards"] == 0
        c = np.fromfile(tmp_path / "out" / "c.bin", np.float32)
        assert np.array_equal(c, a + b)

        from ptx2sass import oracle
        try:
            listing = oracle.nvdisasm((tmp_path / "wheel.cubin").read_bytes())
        except oracle.OracleMissing:
            pytest.skip("no nvdisasm for the assembler's input")
        (tmp_path / "vecadd.sass").write_text(listing)
        assembled = _run([bin_ / "ptx2sass-as", "vecadd.sass", "-o", "as_wheel.cubin"],
                         tmp_path, quiet)
        assert assembled.returncode == 0, assembled.stderr
        reference = _run([Path(sys.executable).parent / "ptx2sass-as", "vecadd.sass", "-o",
                          "as_editable.cubin"], tmp_path)
        assert reference.returncode == 0, reference.stderr
        assert (tmp_path / "as_wheel.cubin").read_bytes() == \
            (tmp_path / "as_editable.cubin").read_bytes()
    finally:
        locked.chmod(0o700)
    assert not (locked / "cache").exists()
    assert sorted(str(p) for p in installed["purelib"].rglob("*")) == before
