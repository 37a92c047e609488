"""Near-miss INVALID variants of inventory forms, verdicts of ptxas and ours compared (issue 15/16).

A drop-in ptxas must refuse what ptxas refuses, in its words.  Each variant mutates one
register-only inventory form (frontend/ptx_inventory.json) in one way:
  type     - the instruction's type replaced by another PTX type the form does not list;
  drop     - one operand fewer;            extra - one operand more;
  sm       - a target below the form's minimum sm;
  version  - a `.version` below the form's minimum PTX version;
and is written as a tiny kernel.  Both ptxas (pinned, via ptx2sass.oracle, cached) and ours
compile it; the verdicts (accept/refuse) and, for refusals, the `line N; error : ...` lists
are compared.  The sample is fixed (seeded); variants whose sha1 starts with [0-3] are the
held-out part (not tuned on), the rest the tuning part.

    .venv/bin/python tools/reject_sweep.py [--n 300] [--seed 25] [--arch sm_90]
"""
import argparse
import hashlib
import json
import random
import re
import sys
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TYPES = [".b16", ".b32", ".b64", ".u16", ".u32", ".u64", ".s16", ".s32", ".s64",
         ".f16", ".f32", ".f64", ".pred"]
REG = {".pred": ("%p", ".pred")}
SIMPLE_OPS = {"d", "a", "b", "c", "r", "q", "p"}  # plain register operands
# targets pinned ptxas 13.5.37 knows (below sm_75 it stops at the command line: "Value 'sm_52'
# is not defined for option 'gpu-name'", which our CLI says too, not the PTX checks)
SM_LIST = [75, 80, 86, 87, 89, 90]


def reg_decl(t):
    """(prefix, declared type) of a register for operand type t (f16 lives in .b16)."""
    if t in REG:
        return REG[t]
    if t == ".f16":
        return ("%h", ".b16")
    # the prefix must not end in a digit: ptxas (and ours) declare nothing for `%ru32<4>`
    return ("%r" + t[1:] + "x", t)


def kernel(ins_types, spelling, ops, version, target):
    """A kernel declaring one register array per operand type and running one instruction."""
    decls = {}
    args = []
    for i, t in enumerate(ops):
        pfx, dt = reg_decl(t)
        decls[pfx] = dt
        args.append(f"{pfx}{i}")
    lines = [f".version {version[0]}.{version[1]}", f".target sm_{target}", ".address_size 64",
             ".visible .entry k()", "{"]
    for pfx, dt in decls.items():
        lines.append(f"\t.reg {dt} {pfx}<{len(ops) + 1}>;")
    lines.append(f"\t{spelling} {', '.join(args)};")
    lines += ["\tret;", "}", ""]
    return "\n".join(lines)


def simple_forms():
    inv = json.loads((ROOT / "frontend/ptx_inventory.json").read_text())
    out = []
    for f in inv["forms"]:
        ops = f["operands"]
        if f["spaces"] or not ops or any(o[1] not in TYPES for o in ops):
            continue
        if any(o[0] not in SIMPLE_OPS for o in ops):
            continue
        if len(f["types"]) != 1 or f["arch_specific"]:
            continue
        out.append(f)
    return out


def variants(forms, n, seed):
    rng = random.Random(seed)
    res = []
    for _ in range(n * 4):
        if len(res) >= n:
            break
        f = rng.choice(forms)
        ver, sm = tuple(f["ptx"]), max(f["sm"], 75)
        ops = [o[1] for o in f["operands"]]
        spelling, t0 = f["spelling"], f["types"][0]
        kind = rng.choice(["type", "drop", "extra", "sm", "version"])
        target, version = max(sm, 90) if sm <= 90 else sm, (max(ver[0], 8), 7 if ver < (8, 7) else ver[1])
        if target > 90:
            continue
        if kind == "type":
            t = rng.choice([x for x in TYPES if x != t0])
            spelling = spelling.replace(t0, t, 1)
            ops = [t if o == t0 else o for o in ops]
        elif kind == "drop":
            ops = ops[:-1]
        elif kind == "extra":
            ops = ops + [ops[-1]]
        elif kind == "sm":
            lower = [s for s in SM_LIST if s < f["sm"]]
            if not lower:
                continue
            target = rng.choice(lower)
        elif kind == "version":
            version = (ver[0], ver[1] - 1) if ver[1] > 0 else (ver[0] - 1, 9)
            if version < (2, 3):  # .address_size itself needs 2.3
                continue
            target = max(f["sm"], 75)
        ptx = kernel(f["types"], spelling, ops, version, target)
        res.append((kind, f["name"], f"sm_{target}", ptx))
    return res


def diag(text):
    """Error/fatal lines (with `line N;` where given), less ptxas's closing summary line."""
    found = re.findall(r"(?:line \d+; )?(?:error|fatal)\s*: .*", text)
    return [m for m in found if "aborted due to errors" not in m]


def ours(ptx, arch):
    from ptx2sass import codegen
    from ptx2sass.errors import CompileError
    try:
        codegen.compile_ptx(ptx, arch)
        return True, []
    except CompileError as e:
        return False, diag("\n".join(str(d) for d in e.diagnostics))
    except Exception:  # a crash is a disagreement of its own class
        return None, [traceback.format_exc().splitlines()[-1]]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=25)
    a = ap.parse_args(argv)
    from ptx2sass import oracle
    tally = {"tune": Counter(), "held": Counter()}
    classes = Counter()
    for kind, name, arch, ptx in variants(simple_forms(), a.n, a.seed):
        part = "held" if hashlib.sha1(ptx.encode()).hexdigest()[0] in "0123" else "tune"
        theirs = oracle.ptxas(ptx, arch)
        ok, msgs = ours(ptx, arch)
        tm = diag(theirs.stderr)
        if ok is None:
            verdict = "crash"
        elif ok != theirs.ok:
            verdict = "verdict"
        elif not ok and msgs != tm:
            verdict = "message"
        else:
            verdict = "agree"
        tally[part][verdict] += 1
        if verdict != "agree":
            classes[(kind, verdict)] += 1
            if part == "tune":
                print(f"[{verdict}] {kind} {name} {arch}: ptxas={theirs.ok} {tm[:1]} ours={ok} {msgs[:1]}")
    for part, c in tally.items():
        print(part, dict(c))
    print("classes", dict(classes.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
