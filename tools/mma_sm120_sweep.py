"""Sweep of sm_120a's kind::f8f6f4 / block-scaled `mma.sync` spellings: ours against ptxas
13.5.37, line for line (compiled by both, or the same error lines in the same order).

    py -m tools.mma_sm120_sweep              # the modifier sweep on sm_120a (1,410 forms)
    py -m tools.mma_sm120_sweep --targets    # the valid forms on other targets and PTX versions
    py -m tools.mma_sm120_sweep --held-out   # mixed types, f16, k16, selectors on sm_121f
    py -m tools.mma_sm120_sweep --every 7    # every 7th form only

Forms: kind {none, f8f6f4, mxf8f6f4, mxf4, mxf4nvf4} x `.block_scale` or not x size {none,
::1X, ::2X, ::4X} x shape {m16n8k32, m16n8k64} x A=B type {e4m3, e2m1, e3m2} x scale type
{none, ue8m0, ue4m3} x operands {dense 4, block-scaled 8} (branch mma120_31; frontend/mma_narrow.py
holds the rules).
"""
from __future__ import annotations

import argparse
import re
import sys

BODY = """.version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .b32 a<4>, b<2>, s<2>;
  .reg .f32 c<4>, d<4>;
  .reg .b32 h<2>, e<2>;
  .reg .b64 q;
  ld.param.u64 q, [p];
  ld.global.v4.u32 {{a0,a1,a2,a3}}, [q];
  ld.global.v2.u32 {{b0,b1}}, [q+16];
  ld.global.v4.f32 {{c0,c1,c2,c3}}, [q+32];
  ld.global.v2.u32 {{s0,s1}}, [q+48];
  {mma}
  st.global.v4.f32 [q], {{d0,d1,d2,d3}};
  st.global.v2.u32 [q+16], {{h0,h1}};
  ret;
}}
"""
LINE = 15
OPERANDS = "{d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1}, {c0,c1,c2,c3}"


def forms():
    for kind in ("", ".kind::f8f6f4", ".kind::mxf8f6f4", ".kind::mxf4", ".kind::mxf4nvf4"):
        for block in ("", ".block_scale"):
            for vec in ("", ".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X"):
                for shape in ("m16n8k32", "m16n8k64"):
                    for t in ("e4m3", "e2m1", "e3m2"):
                        for stype in ("", ".ue8m0", ".ue4m3"):
                            for ops in ("dense", "scaled"):
                                if not (block or vec or stype) and ops == "scaled":
                                    continue
                                tail = ", s0, {0, 0}, s1, {0, 0}" if ops == "scaled" else ""
                                yield (f"mma.sync.aligned.{shape}.row.col{kind}{block}{vec}.f32.{t}.{t}"
                                       f".f32{stype} {OPERANDS}{tail};")


def held_out_forms():
    """Written after the rules were final and first run then (the figure is held out): mixed
    A/B types, f16 accumulators, the k16 shape, selector values, on sm_121f at PTX 9.1."""
    for kind in (".kind::f8f6f4", ".kind::mxf8f6f4", ".kind::mxf4nvf4"):
        for block in ("", ".block_scale"):
            for vec in ("", ".scale_vec::2X", ".scale_vec::4X"):
                for shape in ("m16n8k16", "m16n8k32", "m16n8k64"):
                    for ab in ("e5m2.e2m3", "e2m1.e4m3", "e2m1.e2m1"):
                        for acc in ("f32", "f16"):
                            for stype in ("", ".ue8m0", ".ue4m3"):
                                for tail in ("", ", s0, {0, 1}, s1, {2, 3}", ", s0, {3, 0}, s1, {0, 0}"):
                                    if not (block or vec or stype) and tail:
                                        continue
                                    ops = OPERANDS if acc == "f32" else \
                                        "{h0,h1}, {a0,a1,a2,a3}, {b0,b1}, {e0,e1}"
                                    yield (f"mma.sync.aligned.{shape}.row.col{kind}{block}{vec}.{acc}.{ab}"
                                           f".{acc}{stype} {ops}{tail};")


# valid forms on other targets and versions (ptxas's target and version lines)
TARGET_FORMS = (
    "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 " + OPERANDS + ";",
    "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e5m2.f32 " + OPERANDS + ";",
    "mma.sync.aligned.m16n8k32.row.col.f32.e2m3.e2m3.f32 " + OPERANDS + ";",
    "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e2m3.e4m3.f32.ue8m0 "
    + OPERANDS + ", s0, {1, 1}, s1, {2, 3};",
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.f32.e2m1.e2m1.f32.ue8m0 "
    + OPERANDS + ", s0, {0, 1}, s1, {2, 0};",
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 "
    + OPERANDS + ", s0, {0, 0}, s1, {0, 3};",
    "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue8m0 "
    + OPERANDS + ", s0, {0, 1}, s1, {0, 0};",
)
TARGETS = ("sm_120a", "sm_121a", "sm_120f", "sm_121f", "sm_120", "sm_121", "sm_100a", "sm_100f",
           "sm_103a", "sm_110a", "sm_90a", "sm_89", "sm_80")
VERSIONS = ("8.6", "8.7", "9.0", "9.2")


def module(mma: str, target: str = "sm_120a", version: str = "9.2") -> str:
    return BODY.format(mma=mma, target=target, version=version)


def _errors(stderr: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), m.group(2).strip())
            for m in re.finditer(r"line (\d+); error\s*: (.*)", stderr)]


def mma_lines(cubin: bytes) -> list[str]:
    """The MMA line(s) and any selector UMOV, register numbers and reuse flags left out."""
    from ptx2sass import oracle
    text = oracle.nvdisasm(cubin, ("-c",))
    lines = [" ".join(line.split("*/", 1)[1].split(";")[0].split()) for line in text.splitlines()
             if "MMA" in line or re.search(r"UMOV UR\d+, 0x", line)]
    return [re.sub(r"\bU?R\d+", "R", line.replace(".reuse", "")) for line in lines]


def compare(ptx: str, target: str) -> tuple[bool, object, object]:
    """(same, ptxas's result, ours): "ok" or the error lines (line, text), in order; where
    both compile, the same MMA line(s) (mma_lines). The target line (`PTX .version 8.6 does
    not support .target sm_120a`, line 2) is left out of both: ptxas prints it after the
    instruction's lines."""
    from ptx2sass import oracle
    from ptx2sass.compiler import compile as compile_ptx
    from ptx2sass.errors import CompileError
    theirs_run = oracle.ptxas(ptx.encode(), target, name="k.ptx")
    theirs = "ok" if theirs_run.ok else [e for e in _errors(theirs_run.stderr) if e[0] != 2]
    try:
        cubin = compile_ptx(ptx, target)
        ours = "ok"
    except CompileError as err:
        ours = [(d.line, d.message) for d in err.diagnostics if d.severity == "error" and d.line != 2]
    if ours == theirs == "ok":
        return mma_lines(cubin) == mma_lines(theirs_run.output), theirs, ours
    return ours == theirs, theirs, ours


def cases(targets: bool, held_out: bool = False):
    if held_out:
        for mma in held_out_forms():
            yield module(mma, "sm_121f", "9.1"), "sm_121f"
        return
    if targets:
        for mma in TARGET_FORMS:
            for target in TARGETS:
                for version in VERSIONS:
                    yield module(mma, target, version), target
    else:
        for mma in forms():
            yield module(mma), "sm_120a"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", action="store_true")
    ap.add_argument("--held-out", action="store_true")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--show", type=int, default=10, help="mismatches to print")
    args = ap.parse_args(argv)
    same = total = shown = 0
    for i, (ptx, target) in enumerate(cases(args.targets, args.held_out)):
        if i % args.every:
            continue
        total += 1
        ok, theirs, ours = compare(ptx, target)
        same += ok
        if not ok and shown < args.show:
            shown += 1
            line = ptx.splitlines()[LINE - 1].strip()
            print(f"{target}: {line}\n  ptxas: {theirs}\n  ours:  {ours}")
    print(f"{same}/{total} = ptxas")
    return 0


if __name__ == "__main__":
    sys.exit(main())
