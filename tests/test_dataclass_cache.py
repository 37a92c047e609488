"""ptx2sass.dataclass_cache: classes built through the bytecode cache behave exactly as the
standard decorator's, and a second process reuses the cache instead of compiling."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap

import pytest

from ptx2sass import dataclass_cache

OPTIONS = [{}, {"frozen": True}, {"eq": False}, {"slots": True, "kw_only": True},
           {"frozen": True, "slots": True}, {"order": True, "unsafe_hash": True}]


def _make(decorator, options):
    class Point:
        x: int
        y: "list[int]" = dataclasses.field(default_factory=list)
        z: str = "z"
    return decorator(Point, **options)


def _code(f):
    c = f.__code__
    return (c.co_code, c.co_consts, c.co_names, c.co_varnames, c.co_flags, f.__defaults__,
            f.__kwdefaults__, f.__annotations__)


@pytest.mark.parametrize("options", OPTIONS)
def test_same_methods_as_the_standard_decorator(options):
    ours, theirs = _make(dataclass_cache.dataclass, options), _make(dataclasses.dataclass, options)
    methods = [m for m in ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__",
                           "__hash__", "__lt__") if callable(theirs.__dict__.get(m))]
    for name in methods:
        assert _code(ours.__dict__[name]) == _code(theirs.__dict__[name]), name
    assert [f.name for f in dataclasses.fields(ours)] == ["x", "y", "z"]
    kw = {"x": 1} if options.get("kw_only") else {}
    a, b = (ours(**kw) if kw else ours(1)), (theirs(**kw) if kw else theirs(1))
    assert repr(a).replace("test_same_methods", "") == repr(b).replace("test_same_methods", "")
    assert (a == dataclasses.replace(a)) == (b == dataclasses.replace(b))
    if options.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.x = 2


def test_a_second_process_reuses_the_cache(tmp_path):
    code = textwrap.dedent("""
        from ptx2sass import dataclass_cache
        from ptx2sass.dataclass_cache import dataclass
        @dataclass(frozen=True)
        class Probe:
            a: int
            b: str = "x"
        assert Probe(1) == Probe(1, "x") and hash(Probe(1)) == hash(Probe(1, "x"))
        print(dataclass_cache._new)
    """)
    env = dict(os.environ, PTX2SASS_CACHE=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    assert int(runs[0].stdout) > 0 and int(runs[1].stdout) == 0
    assert [p.name for p in tmp_path.iterdir()] == [
        f"dataclasses-{sys.implementation.cache_tag}-{sys.hexversion:x}.marshal"]
    # a new default is no new text (defaults are passed in, not written), and it is honoured
    edited = code.replace('b: str = "x"', 'b: str = "y"').replace('"x")', '"y")')
    run = subprocess.run([sys.executable, "-c", edited], env=env, capture_output=True, text=True)
    assert run.returncode == 0 and int(run.stdout) == 0, run.stderr
    # a new field is a different text: compiled afresh, never a stale hit
    edited = code.replace('b: str = "x"', 'b: str = "x"\n    c: int = 0')
    run = subprocess.run([sys.executable, "-c", edited], env=env, capture_output=True, text=True)
    assert run.returncode == 0 and int(run.stdout) > 0, run.stderr
