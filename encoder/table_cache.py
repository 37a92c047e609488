"""Fast loading of the per-family encoding tables (`tables/<family>.json`).

Parsing the 1.7 MB JSON table and building its forms costs ~50 ms, more than ptxas's whole
compile of a small kernel, and a compile meets only a few dozen of its ~100 opcodes. So the
first load writes, per family, a marshal file into a cache directory: a small index of every
form's identifying bits, then one marshal blob per opcode with that opcode's forms already
converted to `Form` fields. Later processes read the index and unpack an opcode's blob only
when they meet the opcode.

The cache file's name carries the JSON's size and modification time and the format version,
so an edited table is never read stale. A cache that cannot be read is rebuilt; a directory
that cannot be written leaves the process to build the table from the JSON (correct, slower).
The directory is `$PTX2SASS_TABLE_CACHE`, else `$XDG_CACHE_HOME/ptx2sass`, else
`~/.cache/ptx2sass`.
"""
from __future__ import annotations

import marshal
import os

FORMAT = 1          # bump when the cached layout or Form's fields change


def cache_dir() -> str:
    explicit = os.environ.get("PTX2SASS_TABLE_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ptx2sass")


def cache_path(json_path: str, family: str) -> str:
    st = os.stat(json_path)
    return os.path.join(cache_dir(), f"table-{family}-{st.st_size}-{st.st_mtime_ns}-"
                                     f"v{FORMAT}.marshal")


def form_fields(d: dict) -> tuple:
    """A JSON form as the positional fields of `codec.Form` (plain data, marshal-able)."""
    groups = []
    for g in d["groups"]:
        touched = sorted({int(k) for e in g["values"].values() for k in e.get("shapes", {})})
        groups.append({"bits": g["bits"], "seed": g["seed"], "touched": touched,
                       "values": {int(v): e for v, e in g["values"].items()}})
    return (d["opcode"], int(d["mask"], 16), int(d["value"], 16), int(d["base"], 16),
            d["slots"], groups, d["layout"], {int(k): v for k, v in d["reuse"].items()},
            d.get("tokens", []), d.get("aliases"), d.get("arch"),
            frozenset(map(tuple, d.get("order") or ())))


def build(json_path: str) -> dict:
    """The cache's content for one JSON table: `keys` lists (mask, value, opcode, arch) of
    every form in table order; `blobs` maps an opcode to marshal bytes of its
    [(position, form fields), ...]."""
    import json     # only on a cache miss: the compile path never needs it
    with open(json_path, encoding="utf-8") as fh:
        data = json.load(fh)
    keys, per_opcode = [], {}
    for pos, d in enumerate(data["forms"]):
        fields = form_fields(d)
        keys.append((fields[1], fields[2], fields[0], fields[10]))
        per_opcode.setdefault(fields[0], []).append((pos, fields))
    return {"format": FORMAT, "family": data.get("family"), "primary": data.get("probed_with"),
            "keys": keys, "blobs": {op: marshal.dumps(v) for op, v in per_opcode.items()}}


def load(json_path: str, family: str) -> dict:
    """The cached content for `json_path` (see `build`), written to the cache on a miss."""
    try:
        path = cache_path(json_path, family)
    except OSError:
        raise FileNotFoundError(f"no encoding table for {family}: run tools/isa_probe.py") \
            from None
    try:
        with open(path, "rb") as fh:
            content = marshal.loads(fh.read())   # load(fh) reads piecemeal: slower
        if isinstance(content, dict) and content.get("format") == FORMAT:
            return content
    except (OSError, EOFError, ValueError, TypeError):
        pass
    content = build(json_path)
    write_atomically(path, content)
    return content


def unpack(blob: bytes) -> list[tuple[int, tuple]]:
    return marshal.loads(blob)


def write_atomically(path: str, content) -> None:
    """Marshal `content` to `path` atomically (other processes may be reading); give up
    quietly if we cannot. (Also the dataclass bytecode cache's writer.)"""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            marshal.dump(content, fh)
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
