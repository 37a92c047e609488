"""Per-form coverage of the PTX inventory for sm_89 (or `--arch 75|80|86|90|100|103|110|120|121`): for each form ptxas accepts, a
generated kernel compiled by ptxas and by us; where the form computes values from
registers (the "value" forms), both cubins run in the emulator over edge and random inputs
and must agree bit for bit, ours with zero hazards; nvdisasm must read our words back as
the instructions we meant.

    py -m tools.inventory_coverage [--arch 100] [--chapter integer] [--opcode lop3] [--sample N]
                                    [--seed S] [--show 30] [--json FILE] [--log FILE.jsonl]
                                    [--only FILE.jsonl] [--compile-only]

`--log` appends one JSON line per form as it is checked and skips forms already in the file,
so a long run (the full matrix takes hours on a loaded machine) can stop and resume.
`--only` checks just the forms a previous log gave a status other than match/ptxas-refused.

Status per form: match (counts as covered), mismatch, hazard, readback (nvdisasm disagrees),
refused (our CompileError), crash (any other exception in our compiler or emulator),
compiled (we compile it and nvdisasm reads it back, but the form has no value kernel yet, so
it is not counted as covered), ran (a clock/timer read: both run hazard-free, values not
comparable; not counted), deviation (a load/store whose results in ours equal the PTX ISA's
model while ptxas's cubin's differ; not counted), ptxas-refused (the form is not for the arch
at this version).
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
from tools.inventory_async import async_kernel, is_async_form
from tools.inventory_memory import is_memory_form, memory_kernel
from tools.inventory_reduce import is_reduce_form, reduce_kernel
from tools.inventory_sync import cluster_shape, form_instructions_missing, is_sync_form, sync_kernel
from tools.inventory_texture import is_surface_form, is_texture_form, surface_kernel, texture_kernel

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
        if op.kind == "x" and not (op.type.startswith("%") or op.type.isdigit()):
            return False    # a special register or a fixed immediate (alloca's alignment)
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


def value_kernel(form: Form, ptx: tuple[int, int], imm: dict[int, int],
                 sm: int = 89) -> tuple[str, list, int]:
    """(PTX text, the source operands' types in input-slot order, number of output slots)."""
    decls, loads, stores, ops = [], [], [], []
    sources: list[str] = []
    outs = 0
    # ptxas 13.5 takes an 8-bit integer operand of a bf16 conversion in an 8-bit register
    # only ("Arguments mismatch" with a 16-bit one, which it takes for f16)
    narrow = form.opcode == "cvt" and ".bf16" in form.types

    def reg(ty: str, name: str) -> str:
        if narrow and ty != ".pred" and WIDTH[ty] == 8:
            decls.append(f".reg {ty} {name};")
            return name
        width = max(16, WIDTH[ty]) if ty != ".pred" else 1
        decls.append(f".reg .{'pred' if ty == '.pred' else f'b{width}'} {name};")
        return name

    def store(name: str, ty: str) -> None:
        nonlocal outs
        if ty == ".pred":
            t = reg(".b32", f"%sp{outs}")
            stores.append(f"selp.b32 {t}, 1, 0, {name};")
            stores.append(f"st.global.b32 [%rdo+{8 * outs}], {t};")
        elif narrow and WIDTH[ty] == 8:
            stores.append(f"st.global{ty} [%rdo+{8 * outs}], {name};")
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
.target sm_{sm}
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


ATOMIC_SPACES = ((), (".global",), (".shared",), (".shared::cta",))


def is_atomic_form(form: Form) -> bool:
    """atom/red on one scalar in global, shared or generic memory (`d, m, a[, a]` / `m, a`)."""
    kinds = tuple(op.kind for op in form.operands)
    return form.opcode in ("atom", "red") and form.spaces in ATOMIC_SPACES and len(form.types) == 1 \
        and WIDTH.get(form.types[0], 0) in (16, 32, 64) \
        and kinds in (("d", "m", "a"), ("d", "m", "a", "a"), ("m", "a"),
                      ("d", "m", "a", "r"), ("d", "m", "a", "a", "r"), ("m", "a", "r"))


def atomic_kernel(form: Form, ptx: tuple[int, int], sm: int = 89) -> tuple[str, list, int]:
    """(PTX text, source types, output slots) for an atom/red form: each thread's own memory
    word (no two threads share one, so the results do not depend on the order of the
    warps) starts at input 0; the form runs with inputs 1 (and 2) as its operands; out
    slot 0 gets the word afterwards, slot 1 atom's old value."""
    ty = form.types[0]
    bits = WIDTH[ty]
    b = f"b{max(16, bits)}"
    shared = form.spaces and form.spaces[0].startswith(".shared")
    generic = not form.spaces
    values = [op for op in form.operands if op.kind == "a"]
    regs = [f"%v{k}" for k in range(1 + len(values))]
    loads = "\n".join(f"ld.global.{b} {r}, [%rdi+{8 * k}];" for k, r in enumerate(regs))
    ops = (["%old"] if form.operands[0].kind == "d" else []) + ["[%addr]"] + regs[1:]
    policy = ""
    if form.operands[-1].kind == "r":        # an L2 cache policy
        ops.append("%pol")
        policy = "createpolicy.fractional.L2::evict_last.b64 %pol, 1.0;"
    if shared:
        setup = (f"mov.u32 %sa, sbuf;\nmad.lo.u32 %sa, %tx, 8, %sa;\nst.shared.{b} [%sa], %v0;\n"
                 f"cvt.u64.u32 %addr, %sa;")
        readback = f"ld.shared.{b} %after, [%sa];\nst.global.{b} [%rdo], %after;"
    else:
        setup = (f"st.global.{b} [%rdo], %v0;\n"
                 + ("mov.b64 %addr, %rdo;" if generic else "mov.b64 %addr, %rdo;"))
        readback = ""
    if shared:
        ops[ops.index("[%addr]")] = "[%sa]"
    store_old = f"st.global.{b} [%rdo+8], %old;" if form.operands[0].kind == "d" else ""
    text = f""".version {ptx[0]}.{ptx[1]}
.target sm_{sm}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdi, %rdo, %rdt, %addr, %pol;
.reg .b32 %tx, %sa;
.reg .{b} %v<3>, %old, %after;
.shared .align 8 .b8 sbuf[{8 * THREADS}];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
cvta.to.global.u64 %rdo, %rdo;
cvta.to.global.u64 %rdi, %rdi;
mov.u32 %tx, %tid.x;
mul.wide.u32 %rdt, %tx, {8 * len(regs)};
add.s64 %rdi, %rdi, %rdt;
mul.wide.u32 %rdt, %tx, 16;
add.s64 %rdo, %rdo, %rdt;
{loads}
{setup}
{policy}
{form.spelling} {', '.join(ops)};
{readback}
{store_old}
ret;
}}
"""
    return text, [ty] * len(regs), 2


def is_mbarrier_form(form: Form) -> bool:
    """The mbarrier forms on an object in memory (and cp.async.mbarrier.arrive): checked by
    mbarrier_kernel, not as value forms (pending_count, on a state alone, is one)."""
    return (form.opcode == "mbarrier" or form.opcode == "cp" and ".mbarrier" in form.modifiers) \
        and any(op.kind == "m" for op in form.operands)


def mbarrier_kernel(form: Form, ptx: tuple[int, int], sm: int = 89) -> tuple[str, int]:
    """(PTX text, output slots) for an mbarrier form: 16 barriers in shared memory, 8 per
    warp (so no two warps race on one: the states each lane gets back are then the same
    for any order of the warps), initialised to expect 2..6 arrivals; every thread arrives
    once (a state to test, phases under way), runs the form on its warp's barrier
    tid % 8 (init: thread t < 16 re-initialises barrier t) and stores the form's results,
    its state and, after a CTA barrier, the barrier's words. Count operands are 1..3
    (init: 1..5), parities the thread's index times 3."""
    generic = not form.spaces
    ops, stores = [], []
    outs = 0
    init = ".init" in form.modifiers
    for op in form.operands:
        if op.kind == "m":
            ops.append("[%g]" if generic else "[%sa]")
        elif op.kind == "a":
            ops.append("%a")
        elif op.kind == "r":
            ops.append("%st")
        elif op.kind == "x":            # the sink `_` of a remote (shared::cluster) arrive
            ops.append(op.type)
        elif op.kind == "d":
            ops.append("%d")
            stores.append(f"st.global.b64 [%rdo+{8 * outs}], %d;")
            outs += 1
        elif op.kind == "p":
            ops.append("%p")
            stores.append(f"selp.b32 %v, 1, 0, %p;\nst.global.b32 [%rdo+{8 * outs}], %v;")
            outs += 1
    if ".parity" in form.modifiers:
        count = "mul.lo.u32 %a, %tx, 3;"
    elif init:
        count = "rem.u32 %a, %tx, 5;\nadd.u32 %a, %a, 1;"
    else:
        count = "rem.u32 %a, %tx, 3;\nadd.u32 %a, %a, 1;"
    body = f"{form.spelling} {', '.join(ops)};"
    if init:          # thread t < 16 on barrier t
        body = ("setp.ge.u32 %q, %tx, 16;\n@%q bra L_skip;\nmov.u32 %sa, bars;\nmad.lo.u32 %sa, %tx, 8, %sa;\n"
                "cvta.shared.u64 %g, bars;\nmul.wide.u32 %rdt, %tx, 8;\nadd.s64 %g, %g, %rdt;\n"
                f"{body}\nL_skip:")
    text = f""".version {ptx[0]}.{ptx[1]}
.target sm_{sm}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdt, %g, %st, %d, %words;
.reg .b32 %tx, %w, %bi, %sa, %own, %a, %n, %v;
.reg .pred %p, %q;
.shared .align 8 .b64 bars[16];
ld.param.u64 %rdo, [out];
mov.u32 %tx, %tid.x;
mul.wide.u32 %rdt, %tx, {8 * (outs + 2)};
add.s64 %rdo, %rdo, %rdt;
shr.u32 %w, %tx, 5;
and.b32 %bi, %tx, 7;
mad.lo.u32 %bi, %w, 8, %bi;
setp.ge.u32 %q, %tx, 16;
@%q bra L_inited;
mov.u32 %own, bars;
mad.lo.u32 %own, %tx, 8, %own;
rem.u32 %n, %tx, 5;
add.u32 %n, %n, 2;
mbarrier.init.shared.b64 [%own], %n;
L_inited:
bar.sync 0;
mov.u32 %sa, bars;
mad.lo.u32 %sa, %bi, 8, %sa;
cvta.shared.u64 %g, bars;
mul.wide.u32 %rdt, %bi, 8;
add.s64 %g, %g, %rdt;
{count}
mbarrier.arrive.shared.b64 %st, [%sa];
{body}
bar.sync 0;
mov.u32 %sa, bars;
mad.lo.u32 %sa, %bi, 8, %sa;
ld.shared.u64 %words, [%sa];
{chr(10).join(stores)}
st.global.b64 [%rdo+{8 * outs}], %st;
st.global.b64 [%rdo+{8 * outs + 8}], %words;
ret;
}}
"""
    return text, outs + 2


def wmma_registers(spelling: str) -> dict[str, int] | None:
    """Fragment registers per operand (a, b, c, d) of a wmma form ptx2sass lowers, else None."""
    from ptx2sass.wmma import INPUT_WORDS, SHAPES, n_acc
    parts = spelling.split(".")
    shape = next((p for p in parts if p in SHAPES), None)
    if shape is None:
        return None
    if parts[1] == "mma":
        types = parts[parts.index(shape) + 1:]
        types = [t for t in types if t not in ("satfinite", "rn", "rz", "rm", "rp")]
        a_type, c_type = ("f16", types[1]) if len(types) == 2 else (types[1], types[3])
        if (shape, a_type) not in INPUT_WORDS:
            return None
        n_a, n_b = INPUT_WORDS[(shape, a_type)]
        return {"a": n_a, "b": n_b, "c": n_acc(c_type, shape), "d": n_acc(types[0], shape)}
    frag, ty = parts[2], parts[-1]
    if frag in ("a", "b"):
        words = INPUT_WORDS.get((shape, ty))
        return None if words is None else {frag: words[0 if frag == "a" else 1]}
    return {frag: n_acc(ty, shape)}


def wmma_kernel(form: Form, ptx: tuple[int, int], sm: int = 89) -> tuple[str, list, int] | None:
    """(PTX text, input slots, output slots) for a wmma form, or None where ptx2sass does not
    lower it. 64 threads (two warps). The input rows (16 random words a thread) are the
    matrix memory loads read, and the fragment registers mma and store take (fragments are
    plain registers: any bits are a fragment); a load's or mma's registers are written out
    per thread; a store writes its warp's half of `out` (through shared memory for .shared,
    copied out after a CTA barrier). Stride: 32 elements, an immediate (b1: 128, one row of
    16 bytes, as PTX asks a stride of a multiple of 16 bytes; ptxas loads shared b1 tiles
    with LDSM)."""
    regs = wmma_registers(form.spelling)
    if regs is None:
        return None
    parts = form.spelling.split(".")
    space = "shared" if "shared" in parts else "global" if "global" in parts else None
    frag_regs = {k: [f"%w{k}{i}" for i in range(n)] for k, n in regs.items()}
    wide = "f64" in parts          # f64 fragments: one .f64 register per element
    stride = 128 if "b1" in parts else 32
    reg_type, size = (".f64", 8) if wide else (".b32", 4)
    decls = [f".reg {reg_type} {', '.join(r)};" for r in frag_regs.values()]
    body = ["mov.u32 %tx, %tid.x;", "mul.wide.u32 %rdt, %tx, 128;", "add.s64 %rdi, %rdin, %rdt;",
            "shr.u32 %wp, %tx, 5;", "mul.wide.u32 %rdw, %wp, 4096;"]
    text = ".".join(parts)

    def fill(names, first):
        return [f"ld.global{reg_type} {r}, [%rdi+{size * (first + i)}];" for i, r in enumerate(names)]

    def write(names):
        return [f"st.global{reg_type} [%rdo+{8 * i}], {r};" for i, r in enumerate(names)]
    body.append("add.s64 %rdo, %rdout, %rdt;")
    if parts[1] == "load":
        (frag, names), = frag_regs.items()
        if space == "shared":
            body += ["mul.lo.u32 %o, %tx, 128;", "mov.u32 %sa, smat;", "add.u32 %sa, %sa, %o;"]
            body += [f"ld.global.b32 %v, [%rdi+{4 * i}];\nst.shared.b32 [%sa+{4 * i}], %v;" for i in range(32)]
            body += ["bar.sync 0;", "mov.u32 %sa, smat;"]
            address = "[%sa]"
        else:
            address = "[%rdin]"
        body.append(f"{text} {{{', '.join(names)}}}, {address}, {stride};")
        body += write(names)
    elif parts[1] == "store":
        (frag, names), = frag_regs.items()
        body += fill(names, 0)
        if space == "shared":
            body += ["mul.lo.u32 %o, %wp, 4096;", "mov.u32 %sa, smat;", "add.u32 %sa, %sa, %o;"]
            body.append(f"{text} [%sa], {{{', '.join(names)}}}, {stride};")
            body += ["bar.sync 0;", "mul.lo.u32 %o, %tx, 128;", "mov.u32 %sa, smat;", "add.u32 %sa, %sa, %o;"]
            body += [f"ld.shared.b32 %v, [%sa+{4 * i}];\nst.global.b32 [%rdo+{4 * i}], %v;" for i in range(32)]
        else:
            body += ["add.s64 %rdq, %rdout, %rdw;"]
            body.append(f"{text} [%rdq], {{{', '.join(names)}}}, {stride};")
    else:
        body += fill(frag_regs["a"], 0) + fill(frag_regs["b"], 8)
        c_first = 12 if wide else 16         # within the 128-byte row
        body += [f"ld.global{reg_type} {r}, [%rdi+{size * (c_first + i)}];" for i, r in enumerate(frag_regs["c"])]
        ops = ", ".join("{" + ", ".join(frag_regs[k]) + "}" for k in "dabc")
        body.append(f"{text} {ops};")
        body += write(frag_regs["d"])
    ptx_text = (f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n"
                ".shared .align 16 .b8 smat[8192];\n"
                ".visible .entry k(.param .u64 pout, .param .u64 pin)\n{\n"
                ".reg .b64 %rdin, %rdout, %rdt, %rdi, %rdo, %rdw, %rdq;\n.reg .b32 %tx, %wp, %v, %o, %sa;\n"
                + "\n".join(decls) + "\nld.param.u64 %rdout, [pout];\nld.param.u64 %rdin, [pin];\n"
                + "\n".join(body) + "\nret;\n}\n")
    return ptx_text, [".b64"] * 16, 16        # 128-byte rows in and out


def mma_kernel(form: Form, ptx: tuple[int, int], sm: int = 89) -> tuple[str, list, int] | None:
    """(PTX text, input slots, output slots) for an `mma` form: every fragment register (and
    mma.sp's metadata) read from the thread's input row, 8 bytes a register, the result
    registers written out the same way; the selector is the form's immediate. 64 threads
    (two warps); any bits are a fragment."""
    ops = form.operands
    if not ops or not ops[0].kind.startswith("v"):
        return None
    decls, loads, names, dests = [], [], [], []
    slot = 0
    for j, op in enumerate(ops):
        if op.kind == "x":
            names.append(op.type)
            continue
        n = int(op.kind[1:]) if op.kind.startswith("v") else 1
        regs = [f"%m{j}_{i}" for i in range(n)]
        decls.append(f".reg {op.type} {', '.join(regs)};")
        names.append("{" + ", ".join(regs) + "}" if op.kind.startswith("v") else regs[0])
        if j == 0:
            dests = [(r, op.type) for r in regs]
            continue
        for r in regs:
            loads.append(f"ld.global{op.type} {r}, [%rdi+{8 * slot}];")
            slot += 1
    if slot > 16:
        return None
    stores = [f"st.global{ty} [%rdo+{8 * i}], {r};" for i, (r, ty) in enumerate(dests)]
    text = (f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n"
            ".visible .entry k(.param .u64 pout, .param .u64 pin)\n{\n"
            ".reg .b64 %rdin, %rdout, %rdt, %rdi, %rdo;\n.reg .b32 %tx;\n" + "\n".join(decls)
            + "\nld.param.u64 %rdout, [pout];\nld.param.u64 %rdin, [pin];\n"
            "mov.u32 %tx, %tid.x;\nmul.wide.u32 %rdt, %tx, 128;\nadd.s64 %rdi, %rdin, %rdt;\n"
            "add.s64 %rdo, %rdout, %rdt;\n" + "\n".join(loads)
            + f"\n{form.spelling} {', '.join(names)};\n" + "\n".join(stores) + "\nret;\n}\n")
    return text, [".b64"] * 16, 16


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
    from ptx2sass.encoder.model import Label, Reloc
    from ptx2sass.encoder.sass_text import format_instruction, parse_listing

    def norm(ins):
        # (a whole-symbol relocation, `(.nv.unified.texrefDescSize), reads back as a label)
        ops = tuple(Label("L", op.offset) if isinstance(op, Label) else
                    Label("L", None) if isinstance(op, Reloc) and op.half == "abs" else op for op in ins.operands)
        return format_instruction(type(ins)(ins.opcode, ins.modifiers, ops, ins.guard, ins.control))
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    for code in codes:
        # (a kernel's subroutines, ptx2sass/slow_paths.py, follow it in its section under
        # symbols of their own: the listing shows them as functions of that section)
        fn = [f for f in listing.functions if f.section == f".text.{code.name}"]
        if not fn or [norm(e.instruction) for f in fn for e in f.entries] != [norm(i) for i in code.instructions]:
            return False
    return True


def has_value_kernel(form: Form, sm: int = 89) -> bool:
    """Whether check_form runs the form in the emulator (else it can say "compiled" at best)."""
    ptx = version_for(form, sm)
    return (is_sync_form(form) or is_surface_form(form) or is_texture_form(form) or is_async_form(form)
            or is_memory_form(form) or is_reduce_form(form) or is_mbarrier_form(form) or is_atomic_form(form)
            or (form.opcode == "wmma" and wmma_kernel(form, ptx, sm) is not None)
            or (form.opcode == "mma" and mma_kernel(form, ptx, sm) is not None) or is_value_form(form))


def check_form(form: Form, seed: int = 0, sm: int = 89, compile_only: bool = False) -> tuple[str, str]:
    """(status, detail) for one form on sm_`sm`; `compile_only`: stop after our compiler
    (status compiled / refused / crash / ptxas-refused)."""
    from ptx2sass.emu.launch import run
    from tools.inventory_kernels import acceptance_module, instruction_text
    rng = random.Random(f"{form.name}/{seed}")
    ptx = version_for(form, sm)
    arch = f"sm_{sm}"
    value = is_value_form(form)
    sources: list[str] = []
    extra: list = []
    model = None
    inputs = objects = without = None
    if is_sync_form(form):
        value = True
        text, inputs, outs, without = sync_kernel(form, ptx, rng, sm)
    elif is_surface_form(form):
        value = True
        text, inputs, outs, objects = surface_kernel(form, ptx, rng, sm)
    elif is_texture_form(form):
        value = True
        text, inputs, outs, objects = texture_kernel(form, ptx, rng, sm)
    elif is_async_form(form):
        value = True
        text, inputs, outs, model = async_kernel(form, ptx, rng, sm)
    elif is_memory_form(form):
        value = True
        text, sources, outs, extra, model = memory_kernel(form, ptx, rng, sm)
    elif is_reduce_form(form):
        value = True
        text, inputs, outs = reduce_kernel(form, ptx, rng, sm)
    elif is_mbarrier_form(form):
        value = True
        text, outs = mbarrier_kernel(form, ptx, sm)
    elif is_atomic_form(form):
        value = True
        text, sources, outs = atomic_kernel(form, ptx, sm)
    elif form.opcode == "wmma" and wmma_kernel(form, ptx, sm) is not None:
        value = True
        text, sources, outs = wmma_kernel(form, ptx, sm)
    elif form.opcode == "mma" and mma_kernel(form, ptx, sm) is not None:
        value = True
        text, sources, outs = mma_kernel(form, ptx, sm)
    elif value:
        imm = {k: (rng.randrange(256) if form.opcode == "lop3" else rng.randrange(32))
               for k, op in enumerate(form.operands) if op.kind == "i"}
        imm.update(IMMEDIATE_OPERANDS.get(form.opcode, {}))
        text, sources, outs = value_kernel(form, ptx, imm, sm)
    else:
        text, _ = acceptance_module([instruction_text(form)], sm, ptx,
                                    ".param::func" in form.spaces)
    try:
        theirs = oracle.ptxas(text, arch)
    except oracle.OracleFailed as e:       # ptxas crashes on a few forms (sub-word .v8 loads)
        return "ptxas-refused", str(e)
    if not theirs.ok:
        return "ptxas-refused", theirs.stderr.strip().splitlines()[0] if theirs.stderr else ""
    try:
        cubin, codes = codegen.generate_module(codegen.lower_ptx(text, arch, "k.ptx"), arch,
                                               filename="k.ptx")
    except CompileError as e:
        return "refused", e.message
    except Exception as e:          # noqa: BLE001 - an internal error is a finding, not a stop
        return "crash", f"{type(e).__name__}: {e}"
    if compile_only:
        return "compiled", ""
    try:
        if not _readback_ok(cubin, codes):
            return "readback", "nvdisasm reads our words otherwise"
    except Exception as e:          # noqa: BLE001
        return "readback", f"{type(e).__name__}: {e}"
    if not value:
        return "compiled", ""
    data = inputs if inputs is not None else value_inputs(sources, rng)
    results, bound_after = [], []
    for cub, hazards in ((cubin, True), (theirs.output, False)):
        out = np.zeros((THREADS, max(1, outs)), dtype=np.uint64)
        bound = objects() if objects else None
        try:
            res = run(cub, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy(), *extra],
                      hazard_check=hazards, textures=bound, cluster=cluster_shape(form))
        except Exception as e:      # noqa: BLE001
            return "crash", f"emulator ({'ours' if hazards else 'ptxas'}): {type(e).__name__}: {e}"
        if hazards and res.hazards:
            return "hazard", str(res.hazards[0])
        results.append(out)
        bound_after.append({name: obj.data.tobytes() for name, obj in (bound or {}).items()})
    for name in bound_after[0]:
        if bound_after[0][name] != bound_after[1][name]:
            a, b = (np.frombuffer(x[name], np.uint8) for x in bound_after)
            at = int(np.nonzero(a != b)[0][0])
            return "mismatch", f"{name}'s bytes differ afterwards from byte {at}: ours {a[at]:#x}, ptxas {b[at]:#x}"
    differ = (results[0] != results[1]).any(axis=1)
    if form.spelling in PTXAS_DEVIATIONS:
        differ &= ~PTXAS_DEVIATIONS[form.spelling](data)
    if any(op.kind == "x" and op.type.startswith(NONDETERMINISTIC) for op in form.operands):
        return "ran", "values not comparable (a clock or timer)"
    bad = np.nonzero(differ)[0]
    if model is not None:
        expected = model(data)
        ours_ok = (results[0] == expected).all(axis=1)
        theirs_ok = (results[1] == expected).all(axis=1)
        if ours_ok.all() and not theirs_ok.all():
            t = np.nonzero(~theirs_ok)[0][0]
            return "deviation", (f"ours = the PTX model, ptxas's differs in {int((~theirs_ok).sum())} threads: "
                                 f"thread {t} ptxas {[hex(int(v)) for v in results[1][t]]}, "
                                 f"model {[hex(int(v)) for v in expected[t]]}")
        if not len(bad) and not ours_ok.all():
            t = np.nonzero(~ours_ok)[0][0]
            return "mismatch", (f"ours = ptxas's but not the PTX model in {int((~ours_ok).sum())} threads: "
                                f"thread {t} ours {[hex(int(v)) for v in results[0][t]]}, "
                                f"model {[hex(int(v)) for v in expected[t]]}")
    if not len(bad) and without is not None:
        base = oracle.ptxas(without, arch)
        missing = form_instructions_missing(cubin, theirs.output, base.output) if base.ok else ["?"]
        if missing:
            return "mismatch", f"ptxas writes {'; '.join(missing)} for the form, ours does not"
    if len(bad):
        t = bad[0]
        return "mismatch", (f"{len(bad)} threads differ; inputs {[hex(int(v)) for v in data[t]]}: "
                            f"ours {[hex(int(v)) for v in results[0][t]]}, "
                            f"ptxas {[hex(int(v)) for v in results[1][t]]}")
    return "match", ""


def read_log(path: str) -> dict[str, tuple[str, str]]:
    """{form name: (status, detail)} from a `--log` file (the last line per form wins)."""
    out = {}
    try:
        with open(path) as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    out[row["form"]] = (row["status"], row["detail"])
    except FileNotFoundError:
        pass
    return out


def coverage(forms: list[Form], seed: int = 0, progress=None, log: str | None = None,
             sm: int = 89, compile_only: bool = False) -> dict[str, tuple[str, str]]:
    out = read_log(log) if log else {}
    out = {f.name: out[f.name] for f in forms if f.name in out}
    fh = open(log, "a") if log else None
    try:
        for k, f in enumerate(forms):
            if f.name in out:
                continue
            out[f.name] = check_form(f, seed, sm, compile_only)
            if fh:
                fh.write(json.dumps({"form": f.name, "status": out[f.name][0],
                                     "detail": out[f.name][1]}) + "\n")
                fh.flush()
            if progress:
                progress(k, f, out[f.name])
    finally:
        if fh:
            fh.close()
    return out


def sm89_forms(sm: int = 89) -> list[Form]:
    """The forms ptxas takes for sm_`sm` (arch-specific `a` variants left out)."""
    return [f for f in inventory.forms()
            if not f.arch_specific and f.valid_on(sm, version_for(f, sm))]


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
    ap.add_argument("--arch", type=int, default=89, help="sm number (75, 80, 86, 89, 90, 100, 103, 110, 120, 121; "
                    "the arch-specific `a`/`f` forms are left out)")
    ap.add_argument("--chapter")
    ap.add_argument("--opcode")
    ap.add_argument("--sample", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--log", help="append one JSON line per form; resume from it")
    ap.add_argument("--only", help="only the forms this log did not give match/ptxas-refused")
    ap.add_argument("--compile-only", action="store_true",
                    help="only which forms ptxas accepts that we refuse (no emulator, no read-back)")
    ap.add_argument("--reverse", action="store_true",
                    help="check the forms last to first (a second process on the same matrix)")
    ap.add_argument("--without-kernel", action="store_true",
                    help="only count the forms that have no value kernel, by opcode and operand kinds")
    args = ap.parse_args(argv)
    forms = sm89_forms(args.arch)
    if args.without_kernel:
        left = Counter((f.spelling.split(".")[0] + "." + f.spelling.split(".")[1] if "." in f.spelling else f.opcode,
                        ",".join(op.kind for op in f.operands))
                       for f in forms if not has_value_kernel(f, args.arch))
        print(f"{sum(left.values())} of {len(forms)} forms have no value kernel")
        for (what, kinds), n in left.most_common(args.show):
            print(f"{n:6} {what} {kinds}")
        return 0
    if args.chapter:
        forms = [f for f in forms if f.chapter == args.chapter]
    if args.opcode:                 # one opcode or several, comma-separated
        forms = [f for f in forms if f.opcode in args.opcode.split(",")]
    if args.only:
        earlier = read_log(args.only)
        forms = [f for f in forms
                 if earlier.get(f.name, ("",))[0] not in ("match", "ptxas-refused")]
    if args.sample and args.sample < len(forms):
        forms = random.Random(args.seed).sample(forms, args.sample)
    results = coverage(forms[::-1] if args.reverse else forms, args.seed, log=args.log, sm=args.arch,
                       compile_only=args.compile_only)
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
