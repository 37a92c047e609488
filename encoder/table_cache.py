"""Fast loading of the per-family encoding tables (`tables/<family>.json`).

Parsing the 1.7 MB JSON table and building its forms costs ~50 ms, more than ptxas's whole
compile of a small kernel, and a compile meets only a few dozen of its ~100 opcodes. So the
table is derived once into marshal data (`build`): a small index of every form's
identifying bits, then one marshal blob per opcode with that opcode's forms already
converted to `Form` fields. A process reads the index and unpacks an opcode's blob only when
it meets the opcode.

The derived file is found in this order: `tables/<family>.marshal` beside the JSON (a built
wheel has it: setup.py writes it at build time, for the JSON of the same size installed with
it); then the cache directory (`ptx2sass/cache.py`), under a name that carries the JSON's
CRC and the format version, so an edited table is never read stale; else it is built from
the JSON and written there (a cache that cannot be read or written only costs the time).
"""
from __future__ import annotations

import marshal
import os
import zlib

from ptx2sass import cache

FORMAT = 2          # bump when the derived layout or Form's fields change


def shipped_path(json_path: str) -> str:
    return os.path.splitext(json_path)[0] + ".marshal"


def cache_path(json_path: str, family: str) -> str:
    return cache.cache_dir("tables", f"{family}-{json_crc(json_path):08x}-v{FORMAT}.marshal")


CRC_INDEX = "crc-index"      # the cache's (tables/) record of each JSON's CRC by path, size and mtime


def json_crc(json_path: str) -> int:
    """The CRC of the JSON table's bytes. Reading and summing a 4-5 MB table cost ~8 ms of
    every process of a development tree (no derived file beside the JSON); so the CRC is
    kept in the cache by the file's absolute path, size and modification time in
    nanoseconds (what Python's own bytecode cache trusts, in seconds), and the file is read
    only when those differ. A missing or damaged record only costs the reading."""
    st = os.stat(json_path)
    where = os.path.abspath(json_path)
    index_path = cache.cache_dir("tables", CRC_INDEX)
    known = cache.read(index_path)
    known = known if isinstance(known, dict) else {}
    entry = known.get(where)
    if isinstance(entry, tuple) and len(entry) == 3 and entry[:2] == (st.st_size, st.st_mtime_ns):
        return entry[2]
    with open(json_path, "rb") as fh:
        crc = zlib.crc32(fh.read())
    known[where] = (st.st_size, st.st_mtime_ns, crc)
    cache.write(index_path, known)
    return crc


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
    """The derived content of one JSON table: `keys` lists (mask, value, opcode, arch) of
    every form in table order; `blobs` maps an opcode to marshal bytes of its
    [(position, form fields), ...]."""
    import json     # only when deriving: the compile path never needs it
    with open(json_path, encoding="utf-8") as fh:
        data = json.load(fh)
    keys, per_opcode = [], {}
    for pos, d in enumerate(data["forms"]):
        fields = form_fields(d)
        keys.append((fields[1], fields[2], fields[0], fields[10]))
        per_opcode.setdefault(fields[0], []).append((pos, fields))
    return {"format": FORMAT, "family": data.get("family"), "primary": data.get("probed_with"),
            "json_size": os.stat(json_path).st_size, "keys": keys,
            "blobs": {op: marshal.dumps(v) for op, v in per_opcode.items()}}


def _usable(content, json_path: str) -> bool:
    return (isinstance(content, dict) and content.get("format") == FORMAT
            and content.get("json_size") == os.stat(json_path).st_size)


def load(json_path: str, family: str) -> dict:
    """The derived content for `json_path` (see `build`), from the first place that has it."""
    if not os.path.isfile(json_path):
        raise FileNotFoundError(f"no encoding table for {family}: run tools/isa_probe.py")
    content = cache.read(shipped_path(json_path))
    if _usable(content, json_path):
        return content
    path = cache_path(json_path, family)
    content = cache.read(path)
    if _usable(content, json_path):
        return content
    content = build(json_path)
    cache.write(path, content)
    return content


def generate(json_path: str) -> str:
    """Write the derived file beside the JSON (the build step of setup.py); its path."""
    path = shipped_path(json_path)
    with open(path, "wb") as fh:
        fh.write(cache.encode(build(json_path)))
    return path


def unpack(blob: bytes) -> list[tuple[int, tuple]]:
    return marshal.loads(blob)
