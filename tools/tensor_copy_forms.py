"""Every tensor-copy form of the PTX inventory below a spec marker (default: the section
branch isa34 added: cta_group on every load mode, im2col::w with multicast, cache hints),
written as one instruction line with tests/test_codegen_tensor_copy.py's registers and
checked as tools/tensor_copy_variants checks a random spelling: ptxas 13.5.37 and ours must
agree on the verdict (and a refusal's messages), and where both compile, every issue of a
UTMA* instruction in the emulator must name the same mnemonic and operand values by role.

    py -m tools.tensor_copy_forms [--arch sm_100a] [--marker "branch isa34"] [--per-lane]
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter

from ptx2sass.frontend import inventory
from ptx2sass.frontend.instructions import TARGET_MIN_VERSION
from tools.tensor_copy_variants import check

REGS = ["%r1", "%r2", "%r3", "%r4", "%r5"]
CONSTANTS = ["%r1", "7", "9", "11", "13"]


def is_tensor_copy(form: inventory.Form) -> bool:
    return form.opcode == "cp" and ".tensor" in form.modifiers


def line(form: inventory.Form, per_lane: bool = False) -> str:
    """The form as one instruction: shared buffer and mbarrier by name (or the per-lane
    registers), coordinates from %r1.. (or constants), halves %h1/%h2, the policy %pol."""
    coords = REGS if per_lane else CONSTANTS
    out, addresses = [], 0
    for op in form.operands:
        if op.kind.startswith("M"):
            n = int(op.kind[1:])
            out.append("[%rd1, {" + ", ".join(coords[:n] if n == 5 else coords[1:n + 1] if n < 5 else coords) + "}]")
        elif op.kind == "m":
            out.append(("[%sb]" if per_lane else "[sbuf]") if addresses == 0 else
                       ("[%bar]" if per_lane else "[mbar]"))
            addresses += 1
        elif op.kind.startswith("v"):
            n = int(op.kind[1:])
            out.append("{" + ", ".join(["%h1", "%h2", "%h1"][:n]) + "}")
        elif op.type == ".b16":
            out.append("%h2")
        elif op.type == ".b64":
            out.append("%pol")
        else:
            raise ValueError(f"operand {op} of {form.name}")
    return f"{form.spelling} {', '.join(out)};"


def forms_after(marker: str) -> list[inventory.Form]:
    before = inventory.names_before(marker)
    return [f for f in inventory.forms() if is_tensor_copy(f) and f.name not in before]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_100a")
    ap.add_argument("--marker", default="branch isa34")
    ap.add_argument("--per-lane", action="store_true", help="per-lane addresses and coordinates")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args(argv)
    sm = int(args.arch[3:].rstrip("af"))
    specific = args.arch[-1] in "af"
    # the kernel's PTX version: 8.7, or the first the target has (sm_103a 8.8, sm_110a 9.0)
    v = max((8, 7), TARGET_MIN_VERSION.get(args.arch, (8, 7)))
    version = f"{v[0]}.{v[1]}"
    counts: Counter = Counter()
    for form in forms_after(args.marker):
        if not form.valid_on(sm, (9, 9), specific):
            counts["not-on-target"] += 1
            continue
        text = line(form, args.per_lane)
        status, detail = check(text, args.arch, version)
        counts[status] += 1
        if args.show or status != "match":
            print(f"{status:15} {text}  {detail}", flush=True)
    for status, n in sorted(counts.items()):
        print(f"{status:15} {n}")
    return 0 if set(counts) <= {"match", "not-on-target"} else 1


if __name__ == "__main__":
    sys.exit(main())
