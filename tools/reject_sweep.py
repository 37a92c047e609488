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

`--wide` (branch reject27) draws from more forms (memory operands `[%m]`, vectors `{..}`,
predicate pairs `p|q`, 8-bit/half/packed types in registers wide enough for them) and adds
two mutation kinds:
  modifier - one modifier dropped, or replaced by / joined with another the opcode takes
             in some other inventory form;
  space    - the state space of a memory form replaced by another, or dropped;
a variant may then be valid (ptxas accepts it): ours must accept it too.  Held out there by
seed: `--wide --seed 2700..2704 --n 200` (reject27), `--seed 2800..2804 --held 2800-2804`
(reject28; see docs/STATUS.md), never tuned on.
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


SHARED_MUTATIONS = ("drop", "extra", "sm", "version")


def _shared_mutation(kind, f, ops, target, version, rng):
    """(operands, target, version) after a mutation both generators make: the last operand
    dropped or repeated, a target below the form's, or a PTX version one below its; None
    where the form has no such mutant."""
    if kind == "drop":
        return ops[:-1], target, version
    if kind == "extra":
        return ops + [ops[-1]], target, version
    if kind == "sm":
        lower = [s for s in SM_LIST if s < f["sm"]]
        return (ops, rng.choice(lower), version) if lower else None
    ver = tuple(f["ptx"])
    version = (ver[0], ver[1] - 1) if ver[1] > 0 else (ver[0] - 1, 9)
    if version < (2, 3):  # .address_size itself needs 2.3
        return None
    return ops, max(f["sm"], 75), version


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
        elif kind in SHARED_MUTATIONS:
            mutated = _shared_mutation(kind, f, ops, target, version, rng)
            if mutated is None:
                continue
            ops, target, version = mutated
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


# ---- the wider generator (--wide, branch reject27)
WIDE_TYPES = {".b8": ".b16", ".u8": ".u16", ".s8": ".s16", ".bf16": ".b16", ".f16": ".b16",
              ".f16x2": ".b32", ".bf16x2": ".b32", ".u16x2": ".b32", ".s16x2": ".b32",
              ".tf32": ".b32", ".f32x2": ".b64"}
WIDE_TYPE_POOL = TYPES + [".b8", ".u8", ".s8", ".bf16", ".f16x2", ".bf16x2", ".b128"]
WIDE_OPS = SIMPLE_OPS | {"pp", "dp", "i", "m", "V", "W"}
SPACES = [".global", ".shared", ".shared::cta", ".shared::cluster", ".local", ".const", ".param"]


def wide_reg_type(t):
    return WIDE_TYPES.get(t, t)


def wide_forms():
    inv = json.loads((ROOT / "frontend/ptx_inventory.json").read_text())
    out = []
    for f in inv["forms"]:
        ops = f["operands"]
        if f["arch_specific"] or not ops or f["sm"] > 90:
            continue
        if any(o[0] not in WIDE_OPS or o[2] for o in ops):
            continue
        if any(o[0] != "m" and wide_reg_type(o[1]) not in TYPES + [".b128"] for o in ops):
            continue
        out.append(f)
    return out


def wide_operand(letter, t, i, decls, vec):
    """The text of one operand; declares what it names in `decls` (prefix -> type)."""
    def reg(ty, k=0):
        ty = wide_reg_type(ty)
        pfx = "%p" if ty == ".pred" else "%r" + ty[1:] + "x"
        decls[pfx] = ty
        return f"{pfx}{i + k}"
    if letter == "m":
        decls["%mx"] = ".b64"
        return f"[%mx{i}]"
    if letter == "i":
        return "0x96"
    if letter == "pp":
        return f"{reg('.pred')}|{reg('.pred', 1)}"
    if letter == "dp":
        return f"{reg(t)}|{reg('.pred', 1)}"
    if letter in ("V", "W") and vec:
        return "{" + ", ".join(reg(t, k * 8) for k in range(vec)) + "}"
    return reg(t)


def wide_kernel(spelling, ops, version, target):
    m = re.search(r"\.v(\d+)(?:\.|$)", spelling)
    vec = int(m.group(1)) if m else 0
    decls, args = {}, []
    for i, (letter, t) in enumerate(ops):
        args.append(wide_operand(letter, t, i, decls, vec))
    lines = [f".version {version[0]}.{version[1]}", f".target sm_{target}", ".address_size 64",
             ".visible .entry k()", "{"]
    for pfx, dt in decls.items():
        lines.append(f"\t.reg {dt} {pfx}<{len(ops) + 8 * max(vec, 1) + 1}>;")
    lines.append(f"\t{spelling} {', '.join(args)};")
    lines += ["\tret;", "}", ""]
    return "\n".join(lines)


def wide_variants(forms, n, seed):
    rng = random.Random(seed)
    pool = {}
    for f in forms:
        pool.setdefault(f["opcode"], set()).update(f["modifiers"])
    pool = {k: sorted(v) for k, v in pool.items()}
    spaced = [f for f in forms if f["spaces"]]
    res = []
    for _ in range(n * 6):
        if len(res) >= n:
            break
        kind = rng.choice(["type", "drop", "extra", "sm", "version", "modifier", "modifier", "space",
                           "space"])
        f = rng.choice(spaced if kind == "space" else forms)
        ver, sm = tuple(f["ptx"]), max(f["sm"], 75)
        ops = [(o[0], o[1]) for o in f["operands"]]
        spelling = f["spelling"]
        target = max(sm, 90)
        version = (max(ver[0], 8), 7 if ver < (8, 7) else ver[1])
        if kind == "type":
            if not f["types"]:
                continue
            t0 = rng.choice(f["types"])
            t = rng.choice([x for x in WIDE_TYPE_POOL if x != t0])
            parts = spelling.split(".")
            k = len(parts) - 1 - parts[::-1].index(t0[1:])
            spelling = ".".join(parts[:k] + [t[1:]] + parts[k + 1:])
            ops = [(o, t if ty == t0 else ty) for o, ty in ops]
        elif kind in SHARED_MUTATIONS:
            mutated = _shared_mutation(kind, f, ops, target, version, rng)
            if mutated is None:
                continue
            ops, target, version = mutated
        elif kind == "modifier":
            parts = spelling.split(".")
            mods = [m for m in f["modifiers"] if m[1:] in parts]
            others = [m for m in pool.get(f["opcode"], []) if m not in f["modifiers"]]
            how = rng.choice(["drop", "replace", "add"])
            if how != "add" and not mods or how != "drop" and not others:
                continue
            if how == "drop":
                parts.remove(rng.choice(mods)[1:])
            elif how == "replace":
                parts[parts.index(rng.choice(mods)[1:])] = rng.choice(others)[1:]
            else:
                parts.insert(rng.randrange(1, len(parts)), rng.choice(others)[1:])
            spelling = ".".join(parts)
        elif kind == "space":
            sp = f["spaces"][0]
            parts = spelling.split(".")
            i = next((k for k, p_ in enumerate(parts) if "." + p_ == sp), None)
            if i is None:
                continue
            new = rng.choice([x for x in SPACES + [None] if x != sp])
            if new is None:
                del parts[i]
            else:
                parts[i] = new[1:]
            spelling = ".".join(parts)
        if target > 90:
            continue
        ptx = wide_kernel(spelling, ops, version, target)
        res.append((kind, f["name"], f"sm_{target}", ptx))
    return res


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--seeds", type=int, default=1, help="this many seeds from --seed on")
    ap.add_argument("--wide", action="store_true", help="the wider generator (branch reject27)")
    ap.add_argument("--held", default="2700-2704",
                    help="--wide: the seed range A-B counted as held out (reject27: 2700-2704, reject28: 2800-2804)")
    ap.add_argument("--show", default="tune", help="parts whose disagreements are printed (tune, held, all, none)")
    a = ap.parse_args(argv)
    from ptx2sass import oracle
    tally = {"tune": Counter(), "held": Counter()}
    classes = Counter()
    drawn = []
    for seed in range(a.seed, a.seed + a.seeds):
        if a.wide:
            drawn += wide_variants(wide_forms(), a.n, seed)
        else:
            drawn += variants(simple_forms(), a.n, seed)
    for kind, name, arch, ptx in drawn:
        part = "held" if hashlib.sha1(ptx.encode()).hexdigest()[0] in "0123" else "tune"
        if a.wide:      # held out by seed range there, so every variant is one part
            lo, hi = (int(x) for x in a.held.split("-"))
            part = "held" if lo <= a.seed <= hi else "tune"
        try:
            theirs = oracle.ptxas(ptx, arch)
        except oracle.OracleFailed:      # ptxas 13.5.37 itself crashes on a few (signal 11)
            tally[part]["ptxas crash"] += 1
            continue
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
            if a.show in (part, "all"):
                line = ptx.splitlines()[-3].strip() if a.wide else name
                print(f"[{verdict}] {kind} {line} {arch} {ptx.splitlines()[0][9:]}: ptxas={theirs.ok} {tm[:1]} ours={ok} {msgs[:1]}")
    for part, c in tally.items():
        print(part, dict(c))
    print("classes", dict(classes.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
