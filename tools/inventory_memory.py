"""Value kernels of the per-form checker for loads and stores (`ld`, `ldu`, `st` in every
state space): each thread owns a 64-byte region of the form's space filled from its input
row; a load reads its registers from the region at an offset the form's size divides and
writes them out; a store writes registers from the input row into the region, which is
then copied out whole. Besides ptxas's cubin, the results are checked against a NumPy
model of the PTX semantics (bytes little-endian; a sub-word load sign-extends `.s` types
and zero-extends the others to the register; a sub-word store keeps the register's low
bytes), so a form where ptxas's code departs from the manual is told apart from ours.

Spaces: `.global`/`.shared[::cta|::cluster]`/`.local` regions filled by the kernel; generic
addresses point into global memory for even threads and shared memory for odd ones;
`.const` reads an initialised module array (a 64-byte window per thread modulo 4);
`.param`/`.param::entry` a by-value kernel parameter (the same for every thread);
`.param::func` a by-value parameter of a `.func` the kernel calls with the thread's row."""
from __future__ import annotations

import random

import numpy as np

from ptx2sass.frontend.inventory import Form
from tools.inventory_kernels import WIDTH

REGION = 64             # bytes a thread's region holds
IN_SLOTS = 16           # input row: 8 slots of the region's bytes, 8 slots of store values
OUT_SLOTS = 8
SPACES = ((), (".global",), (".shared",), (".shared::cta",), (".shared::cluster",), (".local",),
          (".const",), (".param",), (".param::entry",), (".param::func",))
VECTORS = {".v2": 2, ".v4": 4, ".v8": 8}


def _space(form: Form) -> tuple[str, ...]:
    return tuple(s for s in form.spaces if s not in VECTORS and s.startswith((".global", ".shared", ".local",
                                                                                ".const", ".param")))


def _count(form: Form) -> int:
    return next((VECTORS[m] for m in form.modifiers if m in VECTORS), 1)


def is_memory_form(form: Form) -> bool:
    """A plain load or store of registers (`V, m[, policy]` / `m, W[, policy]`)."""
    kinds = tuple(op.kind for op in form.operands)
    if form.opcode in ("ld", "ldu"):
        # `d, m`: the inventory's b128 load (PTX 8.3)
        ok = kinds in (("V", "m"), ("V", "m", "r"), ("d", "m"))
    elif form.opcode == "st":
        ok = kinds in (("m", "W"), ("m", "W", "r"), ("m", "r")) and ".async" not in form.modifiers
    else:
        return False
    if not ok or len(form.types) != 1 or _space(form) not in SPACES:
        return False
    bits = WIDTH.get(form.types[0], 0)
    n = _count(form)
    return bits in (8, 16, 32, 64, 128) and n * bits // 8 <= REGION and _slots(bits, n) <= OUT_SLOTS


def _slots(bits: int, n: int) -> int:
    return n * (2 if bits == 128 else 1)


def _reg_bits(bits: int) -> int:
    return max(16, bits)


def memory_kernel(form: Form, ptx: tuple[int, int], rng: random.Random, sm: int = 89):
    """(PTX text, input slot types, output slots, extra launch parameters, model) where
    model(data) gives the expected output rows from the input rows."""
    from ptx2sass.emu.launch import Param
    ty = form.types[0]
    bits = WIDTH[ty]
    size = bits // 8
    n = _count(form)
    width = n * size
    offset = rng.randrange(REGION // width) * width
    space = (_space(form) or ("",))[0]
    is_load = form.opcode in ("ld", "ldu")
    rb = _reg_bits(bits)
    regs = [f"%v{k}" for k in range(n)]
    decls = [f".reg .b{rb} {', '.join(regs)};"]
    if bits == 128:
        decls.append(".reg .b64 %lo, %hi;")
    const_bytes = bytes(rng.getrandbits(8) for _ in range(4 * REGION)) if space == ".const" else b""
    param_bytes = bytes(rng.getrandbits(8) for _ in range(REGION)) if space in (".param", ".param::entry") else b""
    head = [f".version {ptx[0]}.{ptx[1]}", f".target sm_{sm}", ".address_size 64"]
    if const_bytes:
        head.append(f".const .align 16 .b8 cdata[{4 * REGION}] = {{{', '.join(str(b) for b in const_bytes)}}};")
    entry_params = ".param .u64 out, .param .u64 in"
    if param_bytes:
        entry_params += f", .param .align 16 .b8 kp[{REGION}]"
    body = ["ld.param.u64 %rdo, [out];", "ld.param.u64 %rdi, [in];",
            "mov.u32 %tx, %tid.x;",
            f"mul.wide.u32 %rdt, %tx, {8 * IN_SLOTS};", "add.s64 %rdi, %rdi, %rdt;",
            f"mul.wide.u32 %rdt, %tx, {8 * OUT_SLOTS};", "add.s64 %rdo, %rdo, %rdt;",
            "mov.u32 %sa, sbuf;", f"mad.lo.u32 %sa, %tx, {REGION}, %sa;"]
    region = [f"ld.global.b64 %x{k}, [%rdi+{8 * k}];" for k in range(8)]
    decls.append(".reg .b64 %x<8>;")
    body += region
    func = ""
    addr = ""
    readback: list[str] = []
    shared = space.startswith(".shared")
    if space in (".global", ""):
        if is_load:
            addr_reg = "%rdi"
        else:
            body += [f"st.global.b64 [%rdo+{8 * k}], %x{k};" for k in range(8)]
            addr_reg = "%rdo"
        if space == "" and width < 32:
            # odd threads: a generic address of the thread's shared region (not for 256-bit
            # accesses: the PTX ISA takes those in the global window only, and ptxas's code
            # for a generic one is STG/LDG.E.ENL2.256)
            body += [f"st.shared.b64 [%sa+{8 * k}], %x{k};" for k in range(8)]
            body += ["and.b32 %odd, %tx, 1;", "setp.ne.u32 %podd, %odd, 0;",
                     "cvta.shared.u64 %rds, sbuf;", f"mul.wide.u32 %rdt, %tx, {REGION};",
                     "add.s64 %rds, %rds, %rdt;", f"selp.b64 %rda, %rds, {addr_reg}, %podd;"]
            addr = f"[%rda+{offset}]"
            if not is_load:
                readback = ["@!%podd bra L_done;"] + [f"ld.shared.b64 %x{k}, [%sa+{8 * k}];\n"
                                                         f"st.global.b64 [%rdo+{8 * k}], %x{k};" for k in range(8)]
        else:
            addr = f"[{addr_reg}+{offset}]"
    elif shared:
        body += [f"st.shared.b64 [%sa+{8 * k}], %x{k};" for k in range(8)]
        addr = f"[%sa+{offset}]"
        readback = [f"ld.shared.b64 %x{k}, [%sa+{8 * k}];\nst.global.b64 [%rdo+{8 * k}], %x{k};" for k in range(8)]
    elif space == ".local":
        body += [f"st.local.b64 [lbuf+{8 * k}], %x{k};" for k in range(8)]
        addr = f"[lbuf+{offset}]"
        readback = [f"ld.local.b64 %x{k}, [lbuf+{8 * k}];\nst.global.b64 [%rdo+{8 * k}], %x{k};" for k in range(8)]
    elif space == ".const":
        body += ["mov.u64 %rdc, cdata;", "and.b32 %odd, %tx, 3;", f"mul.wide.u32 %rdt, %odd, {REGION};",
                 "add.s64 %rdc, %rdc, %rdt;"]
        addr = f"[%rdc+{offset}]"
    elif space in (".param", ".param::entry"):
        addr = f"[kp+{offset}]"
    # .param::func: the form runs in fbody, below
    values: list[str] = []
    if not is_load:
        for k, r in enumerate(regs):
            if bits == 128:
                values += [f"ld.global.b64 %lo, [%rdi+{8 * (8 + 2 * k)}];",
                           f"ld.global.b64 %hi, [%rdi+{8 * (9 + 2 * k)}];",
                           f"mov.b128 {r}, {{%lo, %hi}};"]
            else:
                values.append(f"ld.global.{'u8' if bits == 8 else f'b{bits}'} {r}, [%rdi+{8 * (8 + k)}];")
    policy = ""
    extra_op = ""
    if len(form.operands) == 3:         # `V, m, r` / `m, W, r`: an L2 cache policy
        policy = "createpolicy.fractional.L2::evict_last.b64 %pol, 1.0;"
        extra_op = ", %pol"
    vec = regs[0] if n == 1 else "{" + ", ".join(regs) + "}"
    instr = (f"{form.spelling} {vec}, {addr}{extra_op};" if is_load
             else f"{form.spelling} {addr}, {vec}{extra_op};")
    outs: list[str] = []
    if is_load:
        slot = 0
        for r in regs:
            if bits == 128:
                outs += [f"mov.b128 {{%lo, %hi}}, {r};", f"st.global.b64 [%rdo+{8 * slot}], %lo;",
                         f"st.global.b64 [%rdo+{8 * slot + 8}], %hi;"]
                slot += 2
            else:
                outs.append(f"st.global.b{rb} [%rdo+{8 * slot}], {r};")
                slot += 1
    if space == ".param::func":
        fregs = decls[:]
        func = (f".func fbody(.param .align 16 .b8 fp[{REGION}], .param .b64 fo)\n{{\n"
                + "\n".join(fregs) + "\n.reg .b64 %rdo;\n"
                + "ld.param.b64 %rdo, [fo];\n"
                + f"{form.spelling} {vec}, [fp+{offset}];\n" + "\n".join(outs) + "\nret;\n}\n")
        # the caller writes the fields the callee reads, at their width (the region's bytes)
        body += ["{", f".param .align 16 .b8 a0[{REGION}];", ".param .b64 a1;"]
        ld_type = "u8" if bits == 8 else f"b{min(bits, 64)}"
        for k in range(n * max(1, bits // 64)):
            at = offset + k * min(size, 8)
            body += [f"ld.global.{ld_type} %e{k}, [%rdi+{at}];", f"st.param.{ld_type.replace('u', 'b')} [a0+{at}], %e{k};"]
            decls.append(f".reg .b{_reg_bits(min(bits, 64))} %e{k};")
        body += ["st.param.b64 [a1], %rdo;", "call.uni fbody, (a0, a1);", "}"]
        main = []
    else:
        main = values + ([policy] if policy else []) + [instr] + (outs if is_load else readback)
    text = "\n".join(head) + "\n" + func + (
        f".visible .entry k({entry_params})\n{{\n"
        ".reg .b64 %rdi, %rdo, %rdt, %rds, %rda, %rdc, %pol;\n.reg .b32 %tx, %sa, %odd;\n.reg .pred %podd;\n"
        + "\n".join(dict.fromkeys(decls)) + "\n"
        f".shared .align 16 .b8 sbuf[{REGION * 64}];\n.local .align 16 .b8 lbuf[{REGION}];\n"
        + "\n".join(body + main) + "\nL_done:\nret;\n}\n")
    sources = [".b64"] * 8 + [ty if bits < 128 else ".b64"] * 8
    extra = [Param(type="bytes", value=param_bytes)] if param_bytes else []

    def model(data: np.ndarray) -> np.ndarray:
        return _model(form, data, offset, const_bytes, param_bytes, is_load, space)
    return text, sources, OUT_SLOTS, extra, model


def _model(form: Form, data: np.ndarray, offset: int, const_bytes: bytes, param_bytes: bytes,
           is_load: bool, space: str) -> np.ndarray:
    """Expected output rows (threads x 8 u64) from the PTX ISA's ld/st semantics."""
    ty = form.types[0]
    bits = WIDTH[ty]
    size = bits // 8
    n = _count(form)
    rb = _reg_bits(bits)
    out = np.zeros((data.shape[0], OUT_SLOTS), dtype=np.uint64)
    for t in range(data.shape[0]):
        row = data[t].astype("<u8").tobytes()
        if space == ".const":
            region = const_bytes[(t % 4) * REGION:(t % 4 + 1) * REGION]
        elif space in (".param", ".param::entry"):
            region = param_bytes
        else:
            region = row[:REGION]
        if is_load:
            slot = 0
            for k in range(n):
                chunk = region[offset + k * size:offset + (k + 1) * size]
                v = int.from_bytes(chunk, "little")
                if ty.startswith(".s") and bits < rb and v >> (bits - 1):
                    v |= ((1 << rb) - 1) ^ ((1 << bits) - 1)
                for part in range(max(1, bits // 64)):
                    out[t, slot] = (v >> (64 * part)) & ((1 << min(64, rb)) - 1)
                    slot += 1
        else:
            mem = bytearray(region)
            for k in range(n):
                if bits == 128:
                    v = int(data[t, 8 + 2 * k]) | int(data[t, 9 + 2 * k]) << 64
                else:
                    v = int(data[t, 8 + k])
                mem[offset + k * size:offset + (k + 1) * size] = (v & ((1 << bits) - 1)).to_bytes(size, "little")
            out[t] = np.frombuffer(bytes(mem), dtype="<u8")
    return out
