"""tex / tld4 forms with their results read, against ptxas: one kernel per form and handle.

Every `tex` geometry (1d, 2d, 3d, a1d, a2d, cube, acube) x result type (f32, s32, u32) x
coordinate type (f32, s32; cube only f32), with `.level` and `.grad` variants, and `tld4`
r/g/b/a on 2d/a2d/cube/acube, each on a module `.texref` (ptxas's bound forms) and on a
64-bit handle loaded from memory (the `.B` forms). The kernel loads the coordinates from
memory and stores the four results. Compared: the texture-unit instructions of our cubin
and ptxas's (opcode, every modifier, operand shapes; register numbers aside).

The split: forms whose name hashes to 0 mod 4 are the held-back quarter (`--part held`);
the texture selection was written looking at ptxas's code for a few dozen forms of the
other part (`--part tuned`).

    python -m tools.texture_fetch_forms [--part all|tuned|held] [--show N]
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections import Counter

from ptx2sass import codegen, oracle
from ptx2sass.errors import CompileError

GEO = {"1d": 1, "2d": 2, "3d": 4, "a1d": 2, "a2d": 4, "cube": 4, "acube": 4}
UNIT = re.compile(r"^(?:@!?U?P\d )?(SULD|SUST|SURED|TXQ|TEX|TLD|TLD4|TXD|TMML)\b")


def _coords(geo: str, ct: str) -> str:
    r = "%f" if ct == "f32" else "%r"
    if geo == "a1d":
        return "{%r20, " + r + "1}"
    if geo in ("a2d", "acube"):
        return "{%r20, " + f"{r}1, {r}2, {r}3" + "}"
    c = [f"{r}{i}" for i in (1, 2, 3, 4)][:GEO[geo]]
    return "{" + ", ".join(c) + "}"


def forms() -> list[tuple[str, str, str]]:
    """(name, instruction with handle placeholder HANDLE, result type)."""
    out = []
    for geo in GEO:
        for dt in ("f32", "s32", "u32"):
            d = "{" + ", ".join(f"{'%f' if dt == 'f32' else '%r'}{i}" for i in (10, 11, 12, 13)) + "}"
            for ct in ("f32", "s32"):
                if geo in ("cube", "acube") and ct == "s32":
                    continue
                head = f"tex.{geo}.v4.{dt}.{ct}"
                out.append((head, f"{head} {d}, [HANDLE, {_coords(geo, ct)}];", dt))
                if ct == "f32":
                    out.append((f"tex.level.{geo}.v4.{dt}.{ct}",
                                f"tex.level.{geo}.v4.{dt}.{ct} {d}, [HANDLE, {_coords(geo, ct)}], %f5;", dt))
                    if geo not in ("cube", "acube"):
                        g = {"1d": 1, "2d": 2, "3d": 4, "a1d": 1, "a2d": 2}[geo]
                        gv = "{" + ", ".join(["%f5", "%f6", "%f7", "%f8"][:g]) + "}"
                        out.append((f"tex.grad.{geo}.v4.{dt}.{ct}", f"tex.grad.{geo}.v4.{dt}.{ct} {d}, "
                                    f"[HANDLE, {_coords(geo, ct)}], {gv}, {gv};", dt))
            if geo in ("2d", "a2d", "cube", "acube"):
                for comp in "rgba":
                    head = f"tld4.{comp}.{geo}.v4.{dt}.f32"
                    out.append((head, f"{head} {d}, [HANDLE, {_coords(geo, 'f32')}];", dt))
    return out


def kernel(line: str, dt: str, handle: str) -> str:
    cls = "%f" if dt == "f32" else "%r"
    decl = ".global .texref tex0;\n" if handle == "tex0" else ""
    load = "" if handle == "tex0" else "ld.global.u64 %rd9, [%rd2];\n"
    line = line.replace("HANDLE", "tex0" if handle == "tex0" else "%rd9")
    loads = "".join(f"ld.global.f32 %f{i}, [%rd2+{4 + 4 * i}];\n" for i in range(1, 5))
    loads += "".join(f"ld.global.u32 %r{i}, [%rd2+{20 + 4 * i}];\n" for i in range(1, 5))
    loads += "ld.global.u32 %r20, [%rd2+40];\n"
    loads += "".join(f"ld.global.f32 %f{i}, [%rd2+{24 + 4 * i}];\n" for i in range(5, 9))
    return f""".version 8.5
.target sm_89
.address_size 64
{decl}.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .f32 %f<20>;
.reg .b32 %r<30>;
.reg .b64 %rd<10>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
{loads}{load}{line}
st.global.v4.{'f32' if dt == 'f32' else 'u32'} [%rd1], {{{cls}10, {cls}11, {cls}12, {cls}13}};
ret;
}}
"""


def unit_lines(cubin: bytes) -> list[str]:
    """The texture/surface instructions of a listing, registers as R / UR / P (their numbers
    are the allocators' choice), the control fields left out."""
    out = []
    for row in oracle.nvdisasm(cubin, ()).splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", row)
        if m and UNIT.match(m.group(1)):
            out.append(re.sub(r"\b(U?[RP])\d+\b", r"\1", m.group(1)))
    return out


def held_back(name: str) -> bool:
    return hashlib.sha1(name.encode()).digest()[0] % 4 == 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("all", "tuned", "held"), default="all")
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--arch", default="sm_89", help="the GPU both compilers target")
    args = ap.parse_args(argv)
    counts: dict[str, Counter] = {"tuned": Counter(), "held": Counter()}
    shown = Counter()
    for name, line, dt in forms():
        for handle in ("tex0", "reg"):
            key = f"{name}.{handle}"
            part = "held" if held_back(key) else "tuned"
            if args.part not in ("all", part):
                continue
            text = kernel(line, dt, handle)
            theirs = oracle.ptxas(text, args.arch)
            if not theirs.ok:
                counts[part]["ptxas-refused"] += 1
                continue
            try:
                ours = codegen.compile_ptx(text, args.arch, "k.ptx")
            except CompileError as e:
                status, detail = "refused", e.message
            else:
                a, b = unit_lines(ours), unit_lines(theirs.output)
                status, detail = ("equal", "") if a == b else ("differ", f"ours {a} ptxas {b}")
            counts[part][status] += 1
            if status != "equal" and shown[status] < args.show:
                shown[status] += 1
                print(f"  {key}: {status}: {detail}", file=sys.stderr)
    for part, c in counts.items():
        if c:
            n = sum(v for k, v in c.items() if k != "ptxas-refused")
            print(f"{part:6} kernels {n:4}  texture unit as ptxas's {c['equal']:4}  "
                  + ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k != "equal"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
