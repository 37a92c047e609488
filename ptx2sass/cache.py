"""The one cache directory and how its files are read and written.

Every cache of ptx2sass (derived encoding tables, PLY grammar tables a development tree has
not built yet, the test oracle's tool runs) lives under one folder: `$PTX2SASS_CACHE`, else
`$XDG_CACHE_HOME/ptx2sass` (an absolute `XDG_CACHE_HOME` only, as the XDG spec says), else
`~/.cache/ptx2sass`. (The tinygrad backend keeps its cubins and loaded programs in tinygrad's
own disk cache instead, as tinygrad's other compilers do, under names carrying
`code_version`.)

A cache is only ever an optimisation: a file that is missing, unreadable, truncated or
damaged reads as absent (its content carries a checksum), and a folder that cannot be
written is left alone. Neither changes what is computed, and neither raises.
"""
from __future__ import annotations

import functools
import importlib.util
import marshal
import os
import zlib

_MAGIC = b"ptx2sass-cache-1\n"


def cache_dir(*parts: str) -> str:
    explicit = os.environ.get("PTX2SASS_CACHE")
    if explicit:
        root = explicit
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "ptx2sass")
    return os.path.join(root, *parts)


def encode(content) -> bytes:
    """`content` (plain data: what marshal takes) as bytes with a magic line and a CRC."""
    payload = marshal.dumps(content)
    return _MAGIC + zlib.crc32(payload).to_bytes(4, "little") + payload


def decode(data: bytes):
    """The content `encode` wrote, or None when `data` is not such a file, intact."""
    head = len(_MAGIC) + 4
    if not data.startswith(_MAGIC) or len(data) < head:
        return None
    payload = memoryview(data)[head:]
    if zlib.crc32(payload).to_bytes(4, "little") != data[len(_MAGIC):head]:
        return None
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None


def read(path: str):
    """The content of a cache file, or None when it is absent, unreadable or damaged."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return decode(data)


def write(path: str, content) -> None:
    """Write a cache file atomically (other processes may be reading it); give up quietly
    when the folder cannot be written."""
    write_bytes(path, encode(content))


def write_text(path: str, text: str) -> None:
    """`write` for a file whose readers check its content themselves (the oracle's JSON)."""
    write_bytes(path, text.encode())


def write_bytes(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


# The packages whose code decides what `ptx2sass.compile` writes.
COMPILER_PACKAGES = ("ptx2sass", "ptx2sass.frontend", "ptx2sass.regalloc", "ptx2sass.sched",
                     "ptx2sass.encoder")


@functools.cache
def code_version(packages: tuple[str, ...] = COMPILER_PACKAGES) -> str:
    """A name for this installation's code of `packages`: a hash of every file's path, size
    and modification time (what Python's own bytecode cache trusts to tell an edited source),
    so a cache keyed by it is never read by other code. ~300 stat calls, ~2 ms."""
    import hashlib      # here: the compile path never needs it (OpenSSL's load is ~10 ms)
    h = hashlib.blake2b(digest_size=12)
    for name in packages:
        spec = importlib.util.find_spec(name)
        for root in (spec.submodule_search_locations or ()) if spec else ():
            h.update(f"{name}:{root}\n".encode())
            for folder, subdirs, files in os.walk(root):
                subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
                for f in sorted(files):
                    if f.endswith((".pyc", ".tmp")):
                        continue
                    try:
                        st = os.stat(os.path.join(folder, f))
                    except OSError:
                        continue
                    h.update(f"{os.path.relpath(os.path.join(folder, f), root)}\0"
                             f"{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
