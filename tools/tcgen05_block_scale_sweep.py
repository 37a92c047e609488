"""tcgen05.mma `.block_scale` modifier sweep (branch tcgen29): every combination of kind (the
three mx kinds, f16, f8f6f4) x scale-vector size (none, `::1X`, `::2X`, `::4X`, `.block16`,
`.block32`) x `.block_scale` or not x operand shape (the block-scaled 7, the dense 5) x PTX
version (8.7, 9.0) x target (sm_100a, sm_100f), compiled by ptxas 13.5 and by us: ours = ptxas's
UTC*MMA line (uniform register numbers aside) or ptxas's error lines (line and text, in order).

The rules in frontend/tcgen05.py were written from a set of single probes (the forms of
tests/test_tcgen05_mma_block_scale.py); most combinations here were not among them.

    py -m tools.tcgen05_block_scale_sweep [--show N] [--wide]
"""
from __future__ import annotations

import argparse
import itertools
import re

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.errors import CompileError

KERNEL = """.version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 da, .param .u64 db, .param .u32 id, .param .u32 taddr)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [da];
  ld.param.u64 %rd2, [db];
  ld.param.u32 %r4, [id];
  ld.param.u32 %r2, [taddr];
  add.u32 %r5, %r2, 16;
  add.u32 %r6, %r2, 32;
  setp.ne.u32 %p1, %r4, 0;
  tcgen05.mma{sp}.cta_group::{group}{mods} {operands};
  ret;
}}
"""
KINDS = (".kind::mxf8f6f4", ".kind::mxf4", ".kind::mxf4nvf4", ".kind::f16", ".kind::f8f6f4")
SIZES = ("", ".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X", ".block16", ".block32")
OPERANDS = ("[%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "[%r2], %rd1, %rd2, %r4, %p1")


def _lines(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, ("-c",))
    return [re.sub(r"UR\d+", "UR", " ".join(t.split("*/", 1)[1].split(";")[0].split()))
            for t in text.splitlines() if "MMA" in t]


TARGETS = ("sm_100a", "sm_100f")
# --wide: the same on other targets, with `.sp` (metadata before idesc) and `.cta_group::2`;
# written after the rules were final, and first run as it stands (held out)
WIDE_TARGETS = ("sm_103a", "sm_110f", "sm_120a", "sm_90a")
WIDE = (("", "1"), (".sp", "1"), ("", "2"))


def cases(wide: bool = False):
    variants = WIDE if wide else (("", "1"),)
    for (sp, group), kind, size, scaled, operands, version, target in itertools.product(
            variants, KINDS, SIZES, (True, False), OPERANDS, ("8.7", "9.0"),
            WIDE_TARGETS if wide else TARGETS):
        if target[-1] == "f" and version == "8.7" or target[3:6] in ("103", "110") and version == "8.7":
            continue                    # PTX 8.7 lacks the target: ptxas's line-2 error only
        mods = kind + (".block_scale" if scaled else "") + size
        ops = operands.replace("%rd2, %r4", "%rd2, [%r5], %r4") if sp else operands
        yield KERNEL.format(version=version, target=target, mods=mods, operands=ops, sp=sp,
                            group=group), target


def outcome(ptx: str, target: str, who: str):
    if who == "ptxas":
        r = oracle.ptxas(ptx.encode(), target, name="k")
        if r.ok:
            return _lines(r.output)
        return [(int(m.group(1)), m.group(2)) for m in re.finditer(r"line (\d+); error\s*: (.*)", r.stderr)]
    try:
        return _lines(compile_ptx(ptx, target))
    except CompileError as e:
        return [(d.line, d.message) for d in e.diagnostics if d.severity == "error"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", type=int, default=5, help="differences to print")
    ap.add_argument("--wide", action="store_true", help="other targets, .sp and cta_group::2")
    args = ap.parse_args(argv)
    same = total = compiled = 0
    shown = 0
    per_target: dict[str, list[int]] = {}
    for ptx, target in cases(args.wide):
        theirs, mine = outcome(ptx, target, "ptxas"), outcome(ptx, target, "ours")
        total += 1
        counts = per_target.setdefault(target, [0, 0])
        counts[0] += theirs == mine
        counts[1] += 1
        compiled += bool(theirs) and isinstance(theirs[0], str)
        same += theirs == mine
        if theirs != mine and shown < args.show:
            shown += 1
            mma = next(t for t in ptx.splitlines() if "tcgen05.mma" in t).strip()
            print(f"DIFF {target} {ptx.splitlines()[0]} {mma}\n  ptxas {theirs}\n  ours  {mine}")
    print(f"{same}/{total} combinations: ours = ptxas's line or error lines ({compiled} compiled by ptxas); "
          + ", ".join(f"{t} {a}/{n}" for t, (a, n) in per_target.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
