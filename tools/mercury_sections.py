"""What ptxas's Mercury sections (sm_100+: `.nv.merc.*`, `.nv.capmerc.text.*`) hold, next to
the SASS sections they shadow: header fields, whether the bytes equal the SASS section's,
`.nv.info` records side by side, relocations side by side, `.nv.merc.symtab` against
`.symtab`. Investigation aid for docs/cubin.md ("Mercury sections"); we write none.

    python -m tools.mercury_sections CUBIN [--full]
    python -m tools.mercury_sections --ptx FILE.ptx --arch sm_100 [-c]   (runs the pinned ptxas)
"""
from __future__ import annotations

import argparse
import struct
import sys

from ptx2sass.encoder.nvinfo import parse_records


def _sections(data: bytes) -> list[dict]:
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    out = []
    for i in range(shnum):
        name, typ, flags, _, off, size, link, info, align, es = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        out.append(dict(index=i, name_at=name, type=typ, flags=flags, offset=off, size=size, link=link,
                        info=info, align=align, entsize=es,
                        data=data[off:off + size] if typ != 8 else b""))
    names = out[shstrndx]["data"]
    for s in out:
        s["name"] = names[s["name_at"]:names.index(b"\0", s["name_at"])].decode()
    return out


def _symbols(sec: dict, strtab: bytes) -> list[tuple]:
    out = []
    for at in range(0, len(sec["data"]), 24):
        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", sec["data"], at)
        out.append((strtab[name:strtab.index(b"\0", name)].decode(), info >> 4, info & 15, other, shndx, value, size))
    return out


def _relocations(sec: dict) -> list[tuple]:
    return [(hex(off), hex(info & 0xFFFFFFFF), info >> 32, addend)
            for off, info, addend in struct.iter_unpack("<QQq", sec["data"])]


def _records(data: bytes) -> str:
    return " ".join(f"{r.name}={r.value.hex() if isinstance(r.value, bytes) else hex(r.value)}"
                    for r in parse_records(data))


def _is_mercury(name: str) -> bool:
    return name.startswith((".nv.merc.", ".nv.capmerc."))


def _counterpart(name: str) -> str:
    return name.replace(".nv.merc", "", 1) if name.startswith(".nv.merc.") else name.replace(".nv.capmerc", "", 1)


def report(data: bytes, full: bool = False) -> str:
    secs = _sections(data)
    by = {s["name"]: s for s in secs}
    e_flags, = struct.unpack_from("<I", data, 0x30)
    lines = [f"e_type {struct.unpack_from('<H', data, 0x10)[0]}  e_flags {e_flags:#x} (bits 0-7 {e_flags & 0xFF:#04x})"]
    for s in secs:
        if not _is_mercury(s["name"]):
            continue
        base = by.get(_counterpart(s["name"]))
        if base is None:
            same = "no SASS counterpart"
        elif base["data"] == s["data"]:
            same = f"= {base['name']}" + (" (same file bytes)" if base["offset"] == s["offset"] else "")
        else:
            same = f"differs from {base['name']} ({base['size']} vs {s['size']} bytes)"
        lines.append(f"[{s['index']:2}] {s['name']} type {s['type']:#x} flags {s['flags']:#x} link {s['link']} "
                     f"info {s['info']} align {s['align']} entsize {s['entsize']} size {s['size']}: {same}")
        if base is not None and base["data"] != s["data"]:
            if s["name"].startswith(".nv.merc.nv.info"):
                lines += [f"      SASS: {_records(base['data'])}", f"      merc: {_records(s['data'])}"]
            elif s["name"].startswith(".nv.merc.rela"):
                lines += [f"      SASS: {_relocations(base)}", f"      merc: {_relocations(s)}"]
        if full or s["name"].startswith(".nv.capmerc."):
            lines.append(f"      bytes: {s['data'].hex()}")
    if ".nv.merc.symtab" in by:
        strtab = by[".strtab"]["data"]
        merc = {x[0]: x for x in _symbols(by[".nv.merc.symtab"], strtab)}
        lines.append(".symtab -> .nv.merc.symtab (name, bind, type, other, shndx, value, size):")
        for sym in _symbols(by[".symtab"], strtab):
            m = merc.get(sym[0])
            lines.append(f"      {sym} -> {m if m != sym else 'same'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cubin", nargs="?")
    ap.add_argument("--ptx")
    ap.add_argument("--arch", default="sm_100")
    ap.add_argument("-c", action="store_true", help="ptxas -c (relocatable)")
    ap.add_argument("--full", action="store_true", help="every Mercury section's bytes")
    a = ap.parse_args(argv)
    if a.ptx:
        from ptx2sass import oracle
        r = oracle.ptxas(open(a.ptx).read(), arch=a.arch, options=("-c",) if a.c else ())
        if not r.ok:
            print(r.stderr, file=sys.stderr)
            return 1
        data = r.output
    elif a.cubin:
        data = open(a.cubin, "rb").read()
    else:
        ap.error("a cubin or --ptx")
    print(report(data, a.full))
    return 0


if __name__ == "__main__":
    sys.exit(main())
