"""PTX text for inventory forms: one instruction line per form, with operands of the right
kinds and widths, inside a kernel that declares everything they name. Used by
tools/inventory_check.py (does ptxas accept what the inventory says?) and the per-form
coverage checker."""
from __future__ import annotations

import re

from ptx2sass.frontend.inventory import Form, Operand
from ptx2sass.frontend.instructions import TARGET_MIN_VERSION

WIDTH = {".pred": 1, ".b8": 8, ".u8": 8, ".s8": 8, ".e4m3": 8, ".e5m2": 8, ".e2m1x2": 8,
         ".b16": 16, ".u16": 16, ".s16": 16, ".f16": 16, ".bf16": 16, ".e4m3x2": 16,
         ".e5m2x2": 16, ".e2m3x2": 16, ".e3m2x2": 16, ".ue8m0x2": 16, ".e4m3x4": 32, ".e5m2x4": 32,
         ".b32": 32, ".u32": 32, ".s32": 32, ".f32": 32, ".f16x2": 32, ".bf16x2": 32,
         ".tf32": 32, ".u16x2": 32, ".s16x2": 32, ".b64": 64, ".u64": 64, ".s64": 64,
         ".f64": 64, ".f32x2": 64, ".b128": 128, ".u4": 32, ".s4": 32, ".b1": 32}
# register file per width (8-bit values live in 16-bit registers, as nvcc writes them)
REG = {8: "%h", 16: "%h", 32: "%r", 64: "%rd", 128: "%q"}

MODULE_DECLS = """.global .texref tex0;
.global .surfref surf0;
.func fdummy()
{
ret;
}
"""
MODULE_NAMES = ("tex0", "surf0", "fdummy")
KERNEL_DECLS = """.reg .b16 %h<40>;
.reg .b32 %r<40>;
.reg .b64 %rd<40>;
.reg .pred %p<8>;
.shared .align 8 .b8 sbuf[64];
"""


def version_for(form: Form, sm: int) -> tuple[int, int]:
    """The lowest PTX version at which the form can be tried on sm_<sm>."""
    first = form.min_ptx_for(sm) or max(v for v, _ in form.requires)
    return max(first, TARGET_MIN_VERSION.get(f"sm_{sm}", (7, 8)))


class _Regs:
    def __init__(self):
        self.next = {w: 1 for w in REG.values()}

    def take(self, ty: str | None) -> str:
        prefix = REG[max(8, WIDTH.get(ty or ".b32", 32))]
        n = self.next[prefix]
        self.next[prefix] = n % 30 + 1
        return f"{prefix}{n}"


def _vector_count(form: Form) -> int:
    for m in form.modifiers:
        if m in (".v2", ".v4", ".v8"):
            return int(m[2:])
    return 1


def _accumulators(count: int) -> str:
    """A braced vector of the `%acc` registers (declared where a line names one): wgmma's and
    tcgen05's up to 128-register vectors, which `_Regs`'s 30 names a width would repeat."""
    return "{" + ", ".join(f"%acc{j}" for j in range(count)) + "}"


def operand_text(form: Form, op: Operand, regs: _Regs) -> str:
    k, ty = op.kind, op.type
    if k in ("d", "r", "a"):
        return "%p1" if ty == ".pred" else regs.take(ty)
    if k == "i":
        return "0x96" if form.opcode == "lop3" else "1"
    if k == "p":
        return "%p1"
    if k == "q":
        return "%p2"
    if k == "dp":
        return f"{regs.take(ty)}|%p3"
    if k == "pp":
        return "%p1|%p3"
    if k == "m":
        if ".param" in form.spaces or ".param::entry" in form.spaces:
            return "[kparam]"
        if ".param::func" in form.spaces:
            return "[fparam]"
        return "[%rd30]"
    if k in ("V", "W"):
        n = _vector_count(form)
        names = [regs.take(ty) for _ in range(n)]
        return names[0] if n == 1 else "{" + ", ".join(names) + "}"
    if k == "l":
        return "L_end"
    if k == "L":
        return "L_targets"
    if k == "f":
        return "fdummy"
    if k == "x":
        return ty
    if k == "T":
        return "[tex0]"
    if k == "U":
        return "[surf0]"
    if k == "g":                    # a warpgroup accumulator: N/2 words of .m64nN, N/4 for f16
        n = int(re.search(r"\.m64n(\d+)k", form.spelling).group(1))
        return _accumulators(n // 4 if form.types and form.types[0] == ".f16" else n // 2)
    if k == "n":                    # tcgen05.ld/st: .xN times the shape's words a lane
        per = {".16x128b": 2, ".16x256b": 4}.get(next((m for m in form.modifiers if m in
                                                        (".16x128b", ".16x256b")), ""), 1)
        return _accumulators(per * int(next(m for m in form.modifiers
                                            if m[:2] == ".x" and m[2:].isdigit())[2:]))
    n = int(k[1:])
    if k[0] == "v":
        return "{" + ", ".join(regs.take(ty) for _ in range(n)) + "}"
    coords = "{" + ", ".join(regs.take(".b32") for _ in range(n)) + "}"
    if k[0] == "t":
        return f"[tex0, {coords}]"
    if k[0] == "S":
        return f"[surf0, {coords}]"
    if k[0] == "M":                 # a tensor map's generic address in a 64-bit register
        return f"[%rd29, {coords}]"
    raise ValueError(f"operand kind {k}")


def instruction_text(form: Form, spelling: str | None = None, optional: bool = True) -> str:
    """One line: the form (or `spelling` with the form's operand shape), with its optional
    operands when `optional`."""
    regs = _Regs()
    ops = [operand_text(form, op, regs) for op in form.operands if optional or not op.optional]
    text = spelling or form.spelling
    return f"{text} {', '.join(ops)};" if ops else f"{text};"


def acceptance_module(lines: list[str], sm: int, ptx: tuple[int, int],
                      in_function: bool = False) -> tuple[str, int]:
    """A module holding `lines` in one kernel (or .func); returns (text, line number of the
    first instruction line)."""
    # the module handles and the function only where a line names them (a module .texref
    # is refused on sm_90, which would refuse every form's kernel there)
    uses = any(name in line for line in lines for name in MODULE_NAMES)
    head = (f".version {ptx[0]}.{ptx[1]}\n.target sm_{sm}\n.address_size 64\n"
            + (MODULE_DECLS if uses else ""))
    if in_function:
        head += ".func fbody(.param .b64 fparam)\n{\n"
    else:
        head += ".visible .entry kbody(.param .u64 kparam)\n{\n"
    head += KERNEL_DECLS + (".reg .b128 %q<8>;\n" if ptx >= (8, 3) else "")
    if any("%acc" in line for line in lines):
        head += ".reg .b32 %acc<128>;\n"
    head += "L_targets: .branchtargets L_end;\n"
    first = head.count("\n") + 1
    return head + "\n".join(lines) + "\nL_end:\nret;\n}\n", first
