"""Random spellings of the sm_100a tensor-copy modes (gather4, scatter4 and its reductions,
im2col::w[::128], cta_group, multicast, cache hints, guards), each kernel compiled by ptxas
and by us: the verdicts must agree (and a refusal's messages), and where both compile, each
issue of a UTMA* instruction in the emulator must name the same mnemonic and the same
values in each operand role (the kernel head and the recorder are
tests/test_codegen_tensor_copy.py's `HEAD` and `issues`; ptxas's registers aside). Seeds are drawn from `--seeds A:B`; branch tensor33 tuned on its fixed
cases only, so every seed here is held out.

    py -m tools.tensor_copy_variants --seeds 0:200 [--arch sm_100a] [--show]
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.errors import EmuFault
from tests.test_codegen_tensor_copy import HEAD, TAIL, issues

OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _coord(rng) -> str:
    return rng.choice(["%r1", "%r2", "%r3", "%r4", "%r5", "%r6", str(rng.randrange(0, 300)),
                       str(-rng.randrange(1, 40))])


def _half(rng) -> str:
    return rng.choice(["%h1", "%h2", str(rng.randrange(0, 0x10000)), hex(rng.randrange(0, 0x10000))])


def variant(rng: random.Random) -> str:
    """One instruction line: a mode, its space, options and operands drawn from `rng`."""
    kind = rng.choice(["gather4", "gather4", "scatter4", "scatter4_reduce", "w", "w", "tile_cg",
                       "im2col_cg", "prefetch_gather4", "prefetch_w"])
    guard = rng.choice(["", "", "", "@%p ", "@!%p "])
    tmap = rng.choice(["%rd1", "%rd1", "%rd3"])
    smem = rng.choice(["sbuf", "%sa", "%sb"])
    bar = rng.choice(["mbar", "%bar"])
    hint = rng.random() < 0.3
    if kind in ("gather4", "w", "tile_cg", "im2col_cg"):
        dst = "shared::cta" if kind in ("gather4", "w") and rng.random() < 0.3 else "shared::cluster"
        if kind == "gather4":
            dims, mode, coords, offsets = 2, ".tile::gather4", 5, None
        elif kind == "w":
            dims = rng.choice([3, 4, 5])
            mode, coords, offsets = rng.choice([".im2col::w", ".im2col::w::128"]), dims, 2
        elif kind == "tile_cg":
            dims = rng.randrange(1, 6)
            mode, coords, offsets = rng.choice(["", ".tile"]), dims, None
        else:
            dims = rng.choice([3, 4, 5])
            mode, coords, offsets = ".im2col", dims, dims - 2
        # (into shared::cta ptxas refuses a multicast: "Illegal modifier")
        multicast = rng.random() < (0.4 if dst == "shared::cluster" else 0.1)
        group = rng.choice(["", ".cta_group::1", ".cta_group::2"])
        if kind in ("tile_cg", "im2col_cg") and not group:
            group = rng.choice([".cta_group::1", ".cta_group::2"])
        mods = (f"cp.async.bulk.tensor.{dims}d.{dst}.global{mode}.mbarrier::complete_tx::bytes"
                f"{'.multicast::cluster' if multicast else ''}{group}{'.L2::cache_hint' if hint else ''}")
        ops = [f"[{smem}]", f"[{tmap}, {{{', '.join(_coord(rng) for _ in range(coords))}}}]", f"[{bar}]"]
        if offsets:
            ops.append("{" + ", ".join(_half(rng) for _ in range(offsets)) + "}")
        if multicast:
            ops.append(_half(rng))
        if hint:
            ops.append("%pol")
        return guard + mods + " " + ", ".join(ops) + ";"
    if kind in ("scatter4", "scatter4_reduce"):
        head = "cp.async.bulk.tensor" if kind == "scatter4" else f"cp.reduce.async.bulk.tensor"
        op = "" if kind == "scatter4" else "." + rng.choice(OPS)
        mods = f"{head}.2d.global.shared::cta{op}.tile::scatter4.bulk_group{'.L2::cache_hint' if hint else ''}"
        ops = [f"[{tmap}, {{{', '.join(_coord(rng) for _ in range(5))}}}]", f"[{smem}]"]
        if hint:
            ops.append("%pol")
        return guard + mods + " " + ", ".join(ops) + ";"
    if kind == "prefetch_gather4":
        mods = f"cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4{'.L2::cache_hint' if hint else ''}"
        ops = [f"[{tmap}, {{{', '.join(_coord(rng) for _ in range(5))}}}]"] + (["%pol"] if hint else [])
        return guard + mods + " " + ", ".join(ops) + ";"
    dims = rng.choice([3, 4, 5])
    mode = rng.choice([".im2col::w", ".im2col::w::128"])
    mods = f"cp.async.bulk.prefetch.tensor.{dims}d.L2.global{mode}"
    ops = [f"[{tmap}, {{{', '.join(_coord(rng) for _ in range(dims))}}}]",
           "{" + ", ".join(_half(rng) for _ in range(2)) + "}"]
    return guard + mods + " " + ", ".join(ops) + ";"


def _errors(text: str) -> list[str]:
    return re.findall(r"error   : (.*)", text)


def check(line: str, arch: str, version: str = "8.7") -> tuple[str, str]:
    ptx = HEAD.format(v=version, arch=arch) + line + "\n" + TAIL
    theirs = oracle.ptxas(ptx, arch)
    try:
        ours = codegen.compile_ptx(ptx, arch)
    except CompileError as e:
        got = [m for d in e.diagnostics for m in _errors(str(d))]
        if theirs.ok:
            return "refused", got[0] if got else str(e)
        return ("both-refused", "") if got == _errors(theirs.stderr) else \
            ("messages-differ", f"ptxas {_errors(theirs.stderr)} ours {got}")
    except EmuFault as e:
        return "crash", str(e)
    if not theirs.ok:
        return "accepted", _errors(theirs.stderr)[0]
    want, got = issues(theirs.output), issues(ours)
    if not want:
        return "no-issue", ""
    return ("match", "") if want == got else ("differ", f"ptxas {want[:2]} ours {got[:2]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:100")
    ap.add_argument("--arch", default="sm_100a")
    ap.add_argument("--show", action="store_true", help="print every seed's line")
    args = ap.parse_args(argv)
    a, b = (int(x) for x in args.seeds.split(":"))
    counts: Counter = Counter()
    for seed in range(a, b):
        line = variant(random.Random(seed))
        status, detail = check(line, args.arch)
        counts[status] += 1
        if args.show or status not in ("match", "both-refused"):
            print(f"{seed:5} {status:15} {line}  {detail}")
    for status, n in sorted(counts.items()):
        print(f"{status:15} {n}")
    return 0 if set(counts) <= {"match", "both-refused"} else 1


if __name__ == "__main__":
    sys.exit(main())
