"""Value kernels of the per-form checker for the sm_90 memory forms that reduce, store to or
read a multimem address, or update a vector in place: `multimem.ld_reduce` (`d, m` /
`V, m`), `multimem.st` and `multimem.red` (`m, r` / `m, W`), the vector `atom` (`V, m, W`)
and `red` (`m, W`), and the bulk reductions from shared memory (`cp.reduce.async.bulk`
and `multimem.cp[.reduce].async.bulk`, global destination, bulk group).

Each thread owns a 64-byte region of global memory (its output row's first 8 slots) filled
from its input row's first 8 slots; the form runs on the region at an offset its width
divides, with operand values from input slots 8..15 (element k in slot 8+k); afterwards the
region is in the output as it stands and the form's register results in output slots
8..15. `multimem.ld_reduce` reads the thread's input row instead (nothing written before
it). A multimem address is the emulator's one local copy of the multicast object
(emu/memory.py); the comparison is with ptxas's cubin in the emulator, bit for bit.

The bulk kinds copy the thread's 16-byte chunk (input slots 8..9, through its shared
memory) onto the first 16 bytes of its region with the form, then wait for the bulk group.
The forms that complete a transaction on an mbarrier (`st.async`, `red.async`, bulk copies
and reductions into shared memory) work on the thread's 16 bytes of shared memory
(`_cluster_kernel`); the 128-bit atom.exch/cas on the thread's 16 bytes (`_b128_kernel`).
"""
from __future__ import annotations

import random

import numpy as np

from ptx2sass.frontend.inventory import Form
from tools.inventory_kernels import WIDTH

THREADS = 64
REGION = 64
IN_SLOTS, OUT_SLOTS = 16, 16
VECTORS = {".v2": 2, ".v4": 4, ".v8": 8}
BULK_SPACES = (".global", ".shared::cta")


def _count(form: Form) -> int:
    return next((VECTORS[m] for m in form.modifiers if m in VECTORS), 1)


MBARRIER = ".mbarrier::complete_tx::bytes"


def _kind(form: Form) -> str | None:
    if form.arch_specific:
        return None
    kinds = tuple(op.kind for op in form.operands)
    spaces = tuple(form.spaces)
    if MBARRIER in form.modifiers and "tensor" not in form.spelling.split(".") \
            and ".multicast::cluster" not in form.modifiers:
        if form.opcode == "st" and kinds == ("m", "W", "m"):
            return "cluster"
        if form.opcode == "red" and kinds == ("m", "a", "m"):
            return "cluster"
        if form.opcode == "cp" and spaces in ((".shared::cluster", ".shared::cta"),
                                              (".shared::cluster", ".global"), (".shared::cta", ".global")) \
                and kinds in (("m", "m", "a", "m"), ("m", "m", "a", "m", "r")):
            return "cluster"
        return None
    parts = form.spelling.split(".")
    if form.opcode == "multimem" and parts[1] == "cp":      # (the copy has no type)
        if spaces == BULK_SPACES and kinds == ("m", "m", "a") and "bulk_group" in parts:
            return "bulk"
        return None
    if form.opcode == "atom" and form.types == (".b128",) and kinds in (("d", "m", "a"), ("d", "m", "a", "a")) \
            and spaces in ((), (".global",), (".shared",), (".shared::cta",)):
        return "b128"
    if len(form.types) != 1 or WIDTH.get(form.types[0], 0) not in (16, 32, 64):
        return None
    if form.opcode == "cp" and parts[1] == "reduce" and "tensor" not in parts:
        if spaces == BULK_SPACES and kinds in (("m", "m", "a"), ("m", "m", "a", "r")) and "bulk_group" in parts:
            return "bulk"
        return None
    if spaces not in ((), (".global",)):
        return None
    if form.opcode == "multimem":
        if parts[1] == "ld_reduce" and kinds in (("d", "m"), ("V", "m")):
            return "load"
        if parts[1] in ("st", "red") and kinds in (("m", "r"), ("m", "W")):
            return "update"
        return None
    if form.opcode == "atom" and kinds == ("V", "m", "W"):
        return "update"
    if form.opcode == "red" and kinds == ("m", "W"):
        return "update"
    return None


def is_reduce_form(form: Form) -> bool:
    return _kind(form) is not None


def reduce_kernel(form: Form, ptx: tuple[int, int], rng: random.Random, sm: int = 90):
    """(PTX text, input rows, output slots)."""
    kind = _kind(form)
    data = np.array([[rng.getrandbits(64) for _ in range(IN_SLOTS)] for _ in range(THREADS)],
                    dtype=np.uint64)
    if kind == "cluster":
        return _cluster_kernel(form, ptx, sm), data, OUT_SLOTS
    if kind == "b128":
        data[::2, 8:10] = data[::2, 0:2]        # cas: the even threads' compares match
        return _b128_kernel(form, ptx, sm), data, OUT_SLOTS
    ty = form.types[0] if form.types else ".b32"
    bits = WIDTH[ty]
    rb = max(16, bits)
    n = _count(form)
    width = n * bits // 8
    offset = 0 if kind == "bulk" else rng.randrange(REGION // width) * width
    glob = ".global" in form.spaces
    decls = [f".reg .b{rb} %v<{n}>, %w<{n}>;"]
    body = ["ld.param.u64 %rdo, [out];", "ld.param.u64 %rdi, [in];", "mov.u32 %tx, %tid.x;",
            f"mul.wide.u32 %rdt, %tx, {8 * IN_SLOTS};", "add.s64 %rdi, %rdi, %rdt;",
            f"mul.wide.u32 %rdt, %tx, {8 * OUT_SLOTS};", "add.s64 %rdo, %rdo, %rdt;",
            "cvta.to.global.u64 %rdgi, %rdi;", "cvta.to.global.u64 %rdgo, %rdo;"]
    # the region, as it starts
    body += [f"ld.global.b64 %x{k}, [%rdi+{8 * k}];\nst.global.b64 [%rdo+{8 * k}], %x{k};" for k in range(8)]
    vals = [f"%w{k}" for k in range(n)]
    res = [f"%v{k}" for k in range(n)]
    body += [f"ld.global.b{bits} {w}, [%rdi+{8 * (8 + k)}];" for k, w in enumerate(vals)]
    vec = (lambda regs: regs[0] if n == 1 else "{" + ", ".join(regs) + "}")
    outs: list[str] = []
    if kind == "load":
        addr = f"[{'%rdgi' if glob else '%rdi'}+{offset}]"
        body.append(f"{form.spelling} {vec(res)}, {addr};")
        outs = res
    elif kind == "update":
        addr = f"[{'%rdgo' if glob else '%rdo'}+{offset}]"
        if form.opcode == "atom":
            body.append(f"{form.spelling} {vec(res)}, {addr}, {vec(vals)};")
            outs = res
        else:
            body.append(f"{form.spelling} {addr}, {vec(vals)};")
    else:                                     # bulk: the thread's chunk through shared memory
        ops = ["[%rdgo]", "[%sa]", "16"]
        if form.operands[-1].kind == "r":
            body.append("createpolicy.fractional.L2::evict_last.b64 %pol, 1.0;")
            ops.append("%pol")
        body += ["mov.u32 %sa, sbuf;", "mad.lo.u32 %sa, %tx, 16, %sa;",
                 "ld.global.v2.b64 {%x0, %x1}, [%rdi+64];", "st.shared.v2.b64 [%sa], {%x0, %x1};",
                 "fence.proxy.async.shared::cta;",
                 f"{form.spelling} {', '.join(ops)};",
                 "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;"]
    body += [f"st.global.b{rb} [%rdo+{8 * (8 + k)}], {r};" for k, r in enumerate(outs)]
    text = (f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n"
            ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
            ".reg .b64 %rdi, %rdo, %rdt, %rdgi, %rdgo, %pol, %x<8>;\n.reg .b32 %tx, %sa;\n"
            + "\n".join(decls) + f"\n.shared .align 16 .b8 sbuf[{16 * THREADS}];\n"
            + "\n".join(body) + "\nret;\n}\n")
    return text, data, OUT_SLOTS


def _cluster_kernel(form: Form, ptx: tuple[int, int], sm: int) -> str:
    """st.async / red.async / a bulk copy or reduction completing a transaction on an
    mbarrier (`.mbarrier::complete_tx::bytes`), to the thread's 16 bytes of shared memory
    (a shared::cta address is a shared::cluster one of the CTA itself; no cluster launch):
    the 16 bytes start from input slots 0..1, the data from slots 8.. (a bulk source: its
    16 bytes of shared or global memory); thread 0 expects every thread's bytes on the
    mbarrier, all wait for the phase and write the 16 bytes out."""
    ty = form.types[0] if form.types else ".b32"
    bits = WIDTH.get(ty, 32)
    rb = max(16, bits)
    n = _count(form)
    bulk = form.opcode == "cp"
    size = 16 if bulk else n * bits // 8
    body = ["ld.param.u64 %rdo, [out];", "ld.param.u64 %rdi, [in];", "mov.u32 %tx, %tid.x;",
            f"mul.wide.u32 %rdt, %tx, {8 * IN_SLOTS};", "add.s64 %rdi, %rdi, %rdt;",
            f"mul.wide.u32 %rdt, %tx, {8 * OUT_SLOTS};", "add.s64 %rdo, %rdo, %rdt;",
            "mov.u32 %sa, sbuf;", "mad.lo.u32 %sd, %tx, 16, %sa;", f"add.u32 %ss, %sd, {16 * THREADS};",
            f"add.u32 %mb, %sa, {32 * THREADS};",
            "ld.global.v2.b64 {%x0, %x1}, [%rdi];", "st.shared.v2.b64 [%sd], {%x0, %x1};",
            "ld.global.v2.b64 {%x2, %x3}, [%rdi+64];", "st.shared.v2.b64 [%ss], {%x2, %x3};",
            "setp.ne.u32 %p, %tx, 0;", "@%p bra L_init;", "mbarrier.init.shared.b64 [%mb], 1;",
            f"mbarrier.arrive.expect_tx.shared.b64 %st, [%mb], {size * THREADS};", "L_init:",
            "bar.sync 0;"]
    if bulk:
        src = "[%ss]"
        if ".global" in form.spaces:
            body.append("add.s64 %rdg, %rdi, 64;\ncvta.to.global.u64 %rdg, %rdg;")
            src = "[%rdg]"
        else:
            body.append("fence.proxy.async.shared::cta;")
        ops = ["[%sd]", src, "16", "[%mb]"]
        if form.operands[-1].kind == "r":
            body.append("createpolicy.fractional.L2::evict_last.b64 %pol, 1.0;")
            ops.append("%pol")
        body.append(f"{form.spelling} {', '.join(ops)};")
    else:
        vals = [f"%w{k}" for k in range(n)]
        body += [f"ld.global.b{bits} {w}, [%rdi+{8 * (8 + k)}];" for k, w in enumerate(vals)]
        vec = vals[0] if n == 1 else "{" + ", ".join(vals) + "}"
        body.append(f"{form.spelling} [%sd], {vec}, [%mb];")
    body += ["L_wait:", "mbarrier.try_wait.parity.shared.b64 %q, [%mb], 0;", "@!%q bra L_wait;",
             "ld.shared.v2.b64 {%x0, %x1}, [%sd];", "st.global.v2.b64 [%rdo], {%x0, %x1};"]
    return (f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n"
            ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
            ".reg .b64 %rdi, %rdo, %rdt, %rdg, %pol, %st, %x<4>;\n.reg .b32 %tx, %sa, %sd, %ss, %mb;\n"
            f".reg .pred %p, %q;\n.reg .b{rb} %w<{max(n, 1)}>;\n"
            f".shared .align 16 .b8 sbuf[{32 * THREADS + 16}];\n"
            + "\n".join(body) + "\nret;\n}\n")


def _b128_kernel(form: Form, ptx: tuple[int, int], sm: int) -> str:
    """atom.exch/cas.b128 on the thread's 16 bytes (global, or its shared slot; a generic
    address names global memory), which start from input slots 0..1; the operands from
    slots 8..11 (a cas compares with 8..9: equal for the even threads); the 16 bytes after
    in output slots 0..1, the old value in 8..9."""
    shared = any(sp.startswith(".shared") for sp in form.spaces)
    glob = ".global" in form.spaces
    nops = sum(op.kind == "a" for op in form.operands)
    body = ["ld.param.u64 %rdo, [out];", "ld.param.u64 %rdi, [in];", "mov.u32 %tx, %tid.x;",
            f"mul.wide.u32 %rdt, %tx, {8 * IN_SLOTS};", "add.s64 %rdi, %rdi, %rdt;",
            f"mul.wide.u32 %rdt, %tx, {8 * OUT_SLOTS};", "add.s64 %rdo, %rdo, %rdt;",
            "cvta.to.global.u64 %rdgo, %rdo;",
            "mov.u32 %sa, sbuf;", "mad.lo.u32 %sd, %tx, 16, %sa;",
            "ld.global.v2.b64 {%x0, %x1}, [%rdi];"]
    if shared:
        body.append("st.shared.v2.b64 [%sd], {%x0, %x1};")
        addr = "[%sd]"
    else:
        body.append("st.global.v2.b64 [%rdo], {%x0, %x1};")
        addr = "[%rdgo]" if glob else "[%rdo]"
    ops = []
    for k in range(nops):
        body += [f"ld.global.v2.b64 {{%x2, %x3}}, [%rdi+{64 + 16 * k}];", f"mov.b128 %q{k + 1}, {{%x2, %x3}};"]
        ops.append(f"%q{k + 1}")
    body += [f"{form.spelling} %q0, {addr}, {', '.join(ops)};",
             "mov.b128 {%x2, %x3}, %q0;", "st.global.v2.b64 [%rdo+64], {%x2, %x3};"]
    if shared:
        body += ["ld.shared.v2.b64 {%x0, %x1}, [%sd];", "st.global.v2.b64 [%rdo], {%x0, %x1};"]
    return (f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n"
            ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
            ".reg .b64 %rdi, %rdo, %rdt, %rdgo, %x<4>;\n.reg .b32 %tx, %sa, %sd;\n.reg .b128 %q<3>;\n"
            f".shared .align 16 .b8 sbuf[{16 * THREADS}];\n"
            + "\n".join(body) + "\nret;\n}\n")
