"""Random spellings of the sm_100a tensor-copy modes (gather4, scatter4 and its reductions,
im2col::w[::128], cta_group, multicast, cache hints, guards), each kernel compiled by ptxas
and by us: the verdicts must agree (and a refusal's messages), and where both compile, each
issue of a UTMA* instruction in the emulator must name the same mnemonic and the same
values in each operand role (tests/test_codegen_tensor_copy.py's `_issues`, ptxas's
registers aside). Seeds are drawn from `--seeds A:B`; branch tensor33 tuned on its fixed
cases only, so every seed here is held out.

    py -m tools.tensor_copy_variants --seeds 0:200 [--arch sm_100a] [--show]
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter

import numpy as np

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu import ops_bulk, registry
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.lanes import PerWarp
from ptx2sass.emu.launch import run

HEAD = """.version {v}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 tmap, .param .u32 c0, .param .u64 pol)
{{
.reg .b64 %rd<8>, %pol;
.reg .b32 %r<16>, %sa, %sb, %bar, %tx;
.reg .b16 %h<4>;
.reg .pred %p;
.shared .align 128 .b8 sbuf[8192];
.shared .align 8 .b64 mbar;
ld.param.u64 %rd1, [tmap];
ld.param.u32 %r1, [c0];
ld.param.u64 %pol, [pol];
mov.u32 %tx, %tid.x;
mov.u32 %sa, sbuf;
mov.u32 %bar, mbar;
and.b32 %r6, %tx, 3;
add.s32 %r2, %r6, 3;
add.s32 %r3, %tx, 5;
add.s32 %r4, %r6, 7;
add.s32 %r5, %tx, 9;
cvt.u16.u32 %h1, %r6;
add.u16 %h2, %h1, 2;
mad.lo.u32 %sb, %r6, 128, %sa;
mul.wide.u32 %rd2, %r6, 0;
add.s64 %rd3, %rd1, %rd2;
setp.lt.u32 %p, %tx, 20;
{line}
ret;
}}
"""
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


def issues(cubin: bytes) -> list[tuple]:
    """(mnemonic, block values, extra, map address, policy) per issue of a UTMA* copy in the
    emulator, sorted (tests/test_codegen_tensor_copy.py's record)."""
    seen = []
    handlers, _ = registry.load_all()

    def record(w, s, active, mask):
        if not w.per_warp:
            raise PerWarp()
        lanes = np.nonzero(np.broadcast_to(mask, (w.width,)))[0]
        if not len(lanes):
            return None
        lane = int(lanes[0])
        ins = s.ins
        dims = 5 if {"GATHER4", "SCATTER4"} & set(ins.modifiers) else \
            int(next(m for m in ins.modifiers if m.endswith("D"))[0])
        first = {"UTMALDG": 2, "UTMAPF": 0}.get(ins.opcode, 1)
        block = ops_bulk._ureg(ins.operands[0])
        values = [ops_bulk._uvalue(w, type(block)("UR", block.index + k), lane) for k in range(first + dims)]
        values[:first] = [v & 0xFFFFFF for v in values[:first]]
        extra = policy = None
        for op in ins.operands[2:]:
            if getattr(op, "file", None) == "UR":
                extra = ops_bulk._uvalue(w, op, lane)
            elif getattr(op, "desc", None) is not None:
                policy = ops_bulk._upair(w, op.desc, lane)
        tmap = ops_bulk._upair(w, ops_bulk._ureg(ins.operands[1]), lane)
        seen.append((".".join((ins.opcode,) + tuple(ins.modifiers)), tuple(values), extra, tmap, policy))
        return None

    registry.VECTOR.add(record)
    saved = {op: handlers.get(op) for op in ("UTMALDG", "UTMASTG", "UTMAREDG", "UTMAPF")}
    try:
        for op in saved:
            handlers[op] = record
        run(cubin, "k", 1, 64, [np.uint64(0x7000_0000_1000), np.uint32(0x123),
                                np.uint64(0x1000_0000_0000_abcd)])
    finally:
        for op, h in saved.items():
            handlers[op] = h
    return sorted(seen)


def _errors(text: str) -> list[str]:
    return re.findall(r"error   : (.*)", text)


def check(line: str, arch: str) -> tuple[str, str]:
    ptx = HEAD.format(v="8.7", arch=arch, line=line)
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
