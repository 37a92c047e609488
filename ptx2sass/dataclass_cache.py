"""`dataclasses.dataclass`, with the bytecode of the methods it generates cached across
processes (issue 6: process start is part of every `ptx2sass` run).

`dataclass()` writes `__init__`, `__repr__`, `__eq__` (and `__setattr__`, `__delattr__`,
`__hash__` when frozen) as source text and compiles each with `exec`: ~0.3 ms a class,
~20 ms for the ~100 classes a compile imports, more than a small kernel's code generation.
The text depends only on the class's fields and options, so the code compiled from it is
kept in a marshal file keyed by the text itself: an edited class yields a new text (a
miss, compiled as before), never a stale hit. Everything else is the standard decorator:
the same `fields()`, `replace()`, repr, equality and frozen checks.

The file lives in the cache directory (`ptx2sass/cache.py`), is named after the
interpreter's exact version, is written once at exit when this process compiled
something new, and is only an optimisation: unreadable or unwritable, classes are built as
usual.
"""
from __future__ import annotations

import builtins
import dataclasses
import marshal
import os
import sys
import threading

_LIMIT = 4000          # entries kept before the file is pruned to one process's classes
_lock = threading.RLock()
_owner: int | None = None        # the thread building one of our classes, if any
_codes: dict[str, object] | None = None   # source text -> code object
_path: str | None = None
_used: set[str] = set()
_new = 0


def dataclass(cls=None, /, **options):
    """`dataclasses.dataclass(cls, **options)`, compiling its methods through the cache."""
    def wrap(cls):
        global _owner
        with _lock:
            if _codes is None:
                _load()
            saved, _owner = _owner, threading.get_ident()
            dataclasses.exec = _exec     # the module's global shadows the builtin
            try:
                return dataclasses.dataclass(cls, **options)
            finally:
                _owner = saved
                if saved is None:
                    del dataclasses.exec
    return wrap if cls is None else wrap(cls)


def _exec(source, globals=None, locals=None):
    if isinstance(source, str) and _owner == threading.get_ident():
        global _new
        code = _codes.get(source)
        if code is None:
            # as `exec(source)` inside dataclasses compiles it: no __future__ flags of ours
            code = _codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
            _new += 1
        _used.add(source)
        source = code
    return builtins.exec(source, globals, locals)


def cache_path() -> str:
    from ptx2sass.cache import cache_dir
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"   # bytecode differs by release
    return os.path.join(cache_dir(), f"dataclasses-{tag}.marshal")


def _load() -> None:
    global _codes, _path
    _codes, _path = {}, cache_path()
    try:
        with open(_path, "rb") as fh:
            codes = marshal.loads(fh.read())   # load(fh) reads piecemeal: slower
        if isinstance(codes, dict):
            _codes = codes
    except (OSError, EOFError, ValueError, TypeError):
        pass
    import atexit
    atexit.register(_save)


def _save() -> None:
    """Write the cache atomically if this process compiled anything new."""
    if not _new:
        return
    from ptx2sass.cache import write_bytes
    write_bytes(_path, marshal.dumps(_codes if len(_codes) <= _LIMIT
                                     else {s: _codes[s] for s in _used}))
