"""Which inventory forms ptxas 13.5 takes for an arch-specific target (`sm_90a`, `sm_100a`)
and we refuse: each form's acceptance kernel (tools/inventory_kernels.py) compiled by both,
the arch-specific forms (setmaxnreg, wgmma's fences, f32 redux) with every other form
ptxas takes there (`--sample N --seed S` draws N of those; the arch-specific ones always).
tools.inventory_coverage leaves the `a` targets out; this is its compile-only check there.

    py -m tools.arch_specific_coverage --arch 90a [--sample 200 --seed 5]
    py -m tools.arch_specific_coverage --arch 100a --opcode cvt --messages

`--opcode` keeps one opcode's forms (all of them, no sample); `--messages` also compiles the
forms ptxas refuses and compares our diagnostics with its (ptxas-refused-same/-differ);
`--after-marker TEXT` keeps the forms of the spec lines after the comment naming TEXT (a
section a branch added: `--after-marker "branch inv32"`, every form, no sample; `--arch 89`
counts a plain target's).
"""
from __future__ import annotations

import argparse
import random
import re
from collections import Counter

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.frontend import inventory
from ptx2sass.frontend.instructions import TARGET_MIN_VERSION
from tools.inventory_kernels import acceptance_module, instruction_text, version_for


def _diagnostics(text: str) -> list[str]:
    return re.findall(r"line \d+; (?:error|fatal|warning)\s*: .*", text)


def check(form, sm: int, target: str, messages: bool = False) -> tuple[str, str]:
    """(status, detail): match / refused (ptxas takes it, we do not) / ptxas-refused / crash;
    with `messages`, ptxas-refused-same / ptxas-refused-differ (our refusal's lines)."""
    version = max(version_for(form, sm), TARGET_MIN_VERSION.get(target, (8, 0)))
    text, _ = acceptance_module([instruction_text(form)], sm, version)
    text = text.replace(f".target sm_{sm}\n", f".target {target}\n", 1)
    try:
        theirs = oracle.ptxas(text, target)
        if not theirs.ok and messages:
            try:
                codegen.compile_ptx(text, target, "k.ptx")
                ours = ["accepted"]
            except CompileError as e:
                ours = _diagnostics("\n".join(str(d) for d in e.diagnostics))
            same = ours == _diagnostics(theirs.stderr)
            return ("ptxas-refused-same", "") if same else \
                ("ptxas-refused-differ", f"ptxas {_diagnostics(theirs.stderr)} ours {ours}")
        if not theirs.ok:
            return "ptxas-refused", ""
    except oracle.OracleFailed as e:        # ptxas itself crashed (signal 11)
        return "ptxas-crash", str(e)
    try:
        codegen.compile_ptx(text, target, "k.ptx")
    except CompileError as e:
        return "refused", str(e).splitlines()[0]
    except Exception as e:  # noqa: BLE001 - a crash is a finding
        return "crash", f"{type(e).__name__}: {e}"
    return "match", ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="90a", help="90a, 100a, 100f, 103a, 120a")
    ap.add_argument("--sample", type=int, default=0, help="how many of the other forms (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opcode", help="only this opcode's forms")
    ap.add_argument("--after-marker", help="only the forms of the spec lines after this comment")
    ap.add_argument("--messages", action="store_true",
                    help="compare our diagnostics on the forms ptxas refuses")
    args = ap.parse_args(argv)
    sm = int(re.match(r"\d+", args.arch).group())
    target = f"sm_{args.arch}"
    a_target = args.arch.endswith(("a", "f"))
    forms = [f for f in inventory.forms() if f.valid_on(sm, version_for(f, sm), a_target)
             and (args.opcode is None or f.opcode == args.opcode)]
    if args.after_marker:
        from tools import gen_ptx_inventory
        text = gen_ptx_inventory.SPEC.read_text()
        mark = next(i for i, line in enumerate(text.splitlines(), 1)
                    if line.startswith("#") and args.after_marker in line)
        lines = {d["name"]: d["line"] for d in gen_ptx_inventory.parse_spec(text)[0]}
        forms = [f for f in forms if lines[f.name] > mark]
        args.sample = 0
    special = [f for f in forms if f.arch_specific]
    others = [f for f in forms if not f.arch_specific]
    if args.sample:
        others = random.Random(args.seed).sample(others, min(args.sample, len(others)))
    counts: Counter = Counter()
    for f in special + others:
        status, detail = check(f, sm, target, args.messages)
        counts[status, f.arch_specific] += 1
        if status not in ("match", "ptxas-refused", "ptxas-refused-same"):
            print(f"{status:9} {f.name}: {detail}")
    for (status, specific), n in sorted(counts.items()):
        print(f"{'arch-specific' if specific else 'other':13} {status:13} {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
