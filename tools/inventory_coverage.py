"""Per-form coverage of the PTX inventory for sm_89: for each form ptxas accepts, a
generated kernel compiled by ptxas and by us; where the form computes values from
registers (the "value" forms), both cubins run in the emulator over edge and random inputs
and must agree bit for bit, ours with zero hazards; nvdisasm must read our words back as
the instructions we meant.

    py -m tools.inventory_coverage [--chapter integer] [--opcode lop3] [--sample N] [--seed S]
                                    [--show 30] [--json FILE]

Status per form: match (counts as covered), mismatch, hazard, readback (nvdisasm disagrees),
refused (our CompileError), crash (any other exception in our compiler or emulator),
compiled (we compile it and nvdisasm reads it back, but the form has no value kernel yet, so
it is not counted as covered), ran (a clock/timer read: both run hazard-free, values not
comparable; not counted), ptxas-refused (the form is not for sm_89 at this version).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict

import numpy as np

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.frontend import inventory
from ptx2sass.frontend.inventory import Form
from tools.inventory_kernels import WIDTH, version_for

THREADS = 64
VALUE_KINDS = frozenset("d a r i p q dp pp x".split())
# special registers whose value differs between two correct programs (time): their forms
# run in the emulator (hazard-free) but their values are not compared ("ran")
NONDETERMINISTIC = ("%clock", "%globaltimer")
# Inputs where ptxas's code is known to differ from the PTX semantics (an independent
# reference decides, tests say which): spelling -> rows to leave out of the comparison.
PTXAS_DEVIATIONS = {
    # |offset| of INT_MIN overflows in ptxas's sequence: it returns 0, PTX says no bit is
    # found (tests/test_codegen_logic.py::test_fns)
    "fns.b32": lambda data: data[:, 2] == 0x80000000,
}
# Operands given as immediates in the value kernels (warp masks: the full warp, as nearly
# every program writes them), by opcode and operand index.
IMMEDIATE_OPERANDS = {"vote": {2: 0xFFFFFFFF}, "shfl": {4: 0xFFFFFFFF}, "match": {2: 0xFFFFFFFF},
                      "redux": {2: 0xFFFFFFFF},
                      # barrier 1 for the whole 64-thread block (random ids/counts would hang)
                      "bar": {1: 1, 2: THREADS}, "barrier": {1: 1, 2: THREADS}}
FLOAT_EDGES = {
    16: [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x03FF, 0x7BFF, 0x3F80,
         0x7F80, 0xFF80, 0x7FC0],
    32: [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
         0x00000001, 0x007FFFFF, 0x7F7FFFFF, 0x00800000, 0x4B000000, 0x3F000000],
    64: [0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000,
         0xFFF0000000000000, 0x7FF8000000000000, 0x1, 0x000FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF,
         0x0010000000000000],
}


def _is_float(ty: str) -> bool:
    return ty[1] in "fb" and ty[1:3] != "b1" and ty not in (".b8", ".b16", ".b32", ".b64",
                                                              ".b128")


def is_value_form(form: Form) -> bool:
    """Computes register results from register/immediate/predicate sources only."""
    if form.arch_specific or not form.operands:
        return False
    for op in form.operands:
        if op.kind not in VALUE_KINDS:
            return False
        if op.kind == "x" and not op.type.startswith("%"):
            return False
        if op.kind in ("d", "a", "r", "i", "dp") and WIDTH.get(op.type or "", 0) not in (8, 16, 32, 64):
            return False
    return any(op.kind in ("d", "p", "dp", "pp") for op in form.operands)


def _edges(ty: str, rng: random.Random) -> list[int]:
    bits = WIDTH[ty]
    mask = (1 << bits) - 1
    if _is_float(ty) and bits in FLOAT_EDGES:
        edges = list(FLOAT_EDGES[bits])
    else:
        edges = [0, 1, 2, mask, mask - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, 7, 31, 32, 33]
    return [e & mask for e in edges]


def value_kernel(form: Form, ptx: tuple[int, int], imm: dict[int, int]) -> tuple[str, list, int]:
    """(PTX text, the source operands' types in input-slot order, number of output slots)."""
    decls, loads, stores, ops = [], [], [], []
    sources: list[str] = []
    outs = 0

    def reg(ty: str, name: str) -> str:
        width = max(16, WIDTH[ty]) if ty != ".pred" else 1
        decls.append(f".reg .{'pred' if ty == '.pred' else f'b{width}'} {name};")
        return name

    def store(name: str, ty: str) -> None:
        nonlocal outs
        if ty == ".pred":
            t = reg(".b32", f"%sp{outs}")
            stores.append(f"selp.b32 {t}, 1, 0, {name};")
            stores.append(f"st.global.b32 [%rdo+{8 * outs}], {t};")
        else:
            w = max(16, WIDTH[ty])
            stores.append(f"st.global.b{w} [%rdo+{8 * outs}], {name};")
        outs += 1

    def load(ty: str, k: int) -> str:
        slot = len(sources)
        sources.append(ty)
        if ty == ".pred":
            t = reg(".b32", f"%lp{k}")
            p = reg(".pred", f"%q{k}")
            loads.append(f"ld.global.b32 {t}, [%rdi+{8 * slot}];")
            loads.append(f"setp.ne.b32 {p}, {t}, 0;")
            return p
        name = reg(ty, f"%s{k}")
        w = WIDTH[ty]
        loads.append(f"ld.global.{'u8' if w == 8 else f'b{w}'} {name}, [%rdi+{8 * slot}];")
        return name

    for k, op in enumerate(form.operands):
        if op.kind == "x":
            ops.append(op.type)
        elif op.kind == "i":
            ops.append(str(imm[k]))
        elif op.kind == "a" and k in imm:
            ops.append(str(imm[k]))
        elif op.kind in ("a", "r"):
            ops.append(load(op.type, k))
        elif op.kind == "q":
            ops.append(load(".pred", k))
        elif op.kind == "d":
            d = reg(op.type, f"%d{k}")
            ops.append(d)
            stores_after = (d, op.type)
            store(*stores_after)
        elif op.kind == "p":
            p = reg(".pred", f"%p{k}")
            ops.append(p)
            store(p, ".pred")
        elif op.kind == "dp":
            d, p = reg(op.type, f"%d{k}"), reg(".pred", f"%p{k}")
            ops.append(f"{d}|{p}")
            store(d, op.type)
            store(p, ".pred")
        elif op.kind == "pp":
            p, q = reg(".pred", f"%p{k}"), reg(".pred", f"%pq{k}")
            ops.append(f"{p}|{q}")
            store(p, ".pred")
            store(q, ".pred")
    nin = max(1, len(sources))
    text = f""".version {ptx[0]}.{ptx[1]}
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdi, %rdo, %rdt;
.reg .b32 %tx;
{chr(10).join(dict.fromkeys(decls))}
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mul.wide.u32 %rdt, %tx, {8 * nin};
add.s64 %rdi, %rdi, %rdt;
mul.wide.u32 %rdt, %tx, {8 * max(1, outs)};
add.s64 %rdo, %rdo, %rdt;
{chr(10).join(loads)}
{form.spelling} {', '.join(ops)};
{chr(10).join(stores)}
ret;
}}
"""
    return text, sources, outs


def value_inputs(sources: list[str], rng: random.Random) -> np.ndarray:
    data = np.zeros((THREADS, max(1, len(sources))), dtype=np.uint64)
    for j, ty in enumerate(sources):
        if ty == ".pred":
            data[:, j] = [rng.getrandbits(1) for _ in range(THREADS)]
            continue
        bits = WIDTH[ty]
        edges = _edges(ty, rng)
        col = []
        for t in range(THREADS):
            if t < len(edges) * 2 and rng.random() < 0.7:
                col.append(edges[(t + 3 * j) % len(edges)])
            elif rng.random() < 0.25:
                col.append(rng.randrange(-4, 5) & ((1 << bits) - 1))
            else:
                col.append(rng.getrandbits(bits))
        data[:, j] = col
    return data


def _readback_ok(cubin: bytes, codes) -> bool:
    from tools.emu_testing import _parseable
    from ptx2sass.encoder.model import Label
    from ptx2sass.encoder.sass_text import format_instruction, parse_listing

    def norm(ins):
        ops = tuple(Label("L", op.offset) if isinstance(op, Label) else op for op in ins.operands)
        return format_instruction(type(ins)(ins.opcode, ins.modifiers, ops, ins.guard, ins.control))
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    for code in codes:
        fn = [f for f in listing.functions if f.section == f".text.{code.name}"]
        if not fn or [norm(e.instruction) for e in fn[0].entries] != [norm(i) for i in code.instructions]:
            return False
    return True


def check_form(form: Form, seed: int = 0) -> tuple[str, str]:
    """(status, detail) for one form on sm_89."""
    from ptx2sass.emu.launch import run
    from tools.inventory_kernels import acceptance_module, instruction_text
    rng = random.Random(f"{form.name}/{seed}")
    ptx = version_for(form, 89)
    value = is_value_form(form)
    if value:
        imm = {k: (rng.randrange(256) if form.opcode == "lop3" else rng.randrange(32))
               for k, op in enumerate(form.operands) if op.kind == "i"}
        imm.update(IMMEDIATE_OPERANDS.get(form.opcode, {}))
        text, sources, outs = value_kernel(form, ptx, imm)
    else:
        text, _ = acceptance_module([instruction_text(form)], 89, ptx,
                                    ".param::func" in form.spaces)
    theirs = oracle.ptxas(text, "sm_89")
    if not theirs.ok:
        return "ptxas-refused", theirs.stderr.strip().splitlines()[0] if theirs.stderr else ""
    try:
        cubin, codes = codegen.generate_module(codegen.lower_ptx(text, "sm_89", "k.ptx"), "sm_89",
                                               filename="k.ptx")
    except CompileError as e:
        return "refused", e.message
    except Exception as e:          # noqa: BLE001 - an internal error is a finding, not a stop
        return "crash", f"{type(e).__name__}: {e}"
    try:
        if not _readback_ok(cubin, codes):
            return "readback", "nvdisasm reads our words otherwise"
    except Exception as e:          # noqa: BLE001
        return "readback", f"{type(e).__name__}: {e}"
    if not value:
        return "compiled", ""
    data = value_inputs(sources, rng)
    results = []
    for cub, hazards in ((cubin, True), (theirs.output, False)):
        out = np.zeros((THREADS, max(1, outs)), dtype=np.uint64)
        try:
            res = run(cub, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy()], hazard_check=hazards)
        except Exception as e:      # noqa: BLE001
            return "crash", f"emulator ({'ours' if hazards else 'ptxas'}): {type(e).__name__}: {e}"
        if hazards and res.hazards:
            return "hazard", str(res.hazards[0])
        results.append(out)
    differ = (results[0] != results[1]).any(axis=1)
    if form.spelling in PTXAS_DEVIATIONS:
        differ &= ~PTXAS_DEVIATIONS[form.spelling](data)
    if any(op.kind == "x" and op.type.startswith(NONDETERMINISTIC) for op in form.operands):
        return "ran", "values not comparable (a clock or timer)"
    bad = np.nonzero(differ)[0]
    if len(bad):
        t = bad[0]
        return "mismatch", (f"{len(bad)} threads differ; inputs {[hex(int(v)) for v in data[t]]}: "
                            f"ours {[hex(int(v)) for v in results[0][t]]}, "
                            f"ptxas {[hex(int(v)) for v in results[1][t]]}")
    return "match", ""


def coverage(forms: list[Form], seed: int = 0, progress=None) -> dict[str, tuple[str, str]]:
    out = {}
    for k, f in enumerate(forms):
        out[f.name] = check_form(f, seed)
        if progress:
            progress(k, f, out[f.name])
    return out


def sm89_forms() -> list[Form]:
    return [f for f in inventory.forms()
            if not f.arch_specific and f.valid_on(89, version_for(f, 89))]


def report(forms: list[Form], results: dict) -> str:
    by_chapter: dict[str, Counter] = defaultdict(Counter)
    for f in forms:
        status = results[f.name][0]
        if status != "ptxas-refused":
            by_chapter[f.chapter][status] += 1
    lines = [f"{'chapter':18} {'forms':>6} {'match':>6} {'%':>6}  other"]
    total = Counter()
    for ch in inventory.CHAPTERS + ("total",):
        c = total if ch == "total" else by_chapter.get(ch, Counter())
        if ch != "total":
            total.update(c)
        n = sum(c.values())
        if not n:
            continue
        other = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k != "match")
        lines.append(f"{ch:18} {n:6} {c['match']:6} {100 * c['match'] / n:5.1f}%  {other}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chapter")
    ap.add_argument("--opcode")
    ap.add_argument("--sample", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=30)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    forms = sm89_forms()
    if args.chapter:
        forms = [f for f in forms if f.chapter == args.chapter]
    if args.opcode:
        forms = [f for f in forms if f.opcode == args.opcode]
    if args.sample and args.sample < len(forms):
        forms = random.Random(args.seed).sample(forms, args.sample)
    results = coverage(forms, args.seed)
    print(report(forms, results))
    shown = 0
    for f in forms:
        status, detail = results[f.name]
        if status not in ("match", "compiled", "ran", "ptxas-refused") and shown < args.show:
            print(f"{status:9} {f.name}: {detail[:200]}")
            shown += 1
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=0, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
