"""Copy and constant propagation: an unguarded `mov d, x` of one value or one immediate of
the same width makes every use of d a use of x (the `mov` itself is then dead). `cvta` between
the generic and the global space is a copy too: global addresses are generic addresses.

A `cvt` that narrows an integer back to the width it was widened from (`cvt.u64.u32 %rd, %r;
cvt.u32.u64 %r2, %rd`: NVVM writes this for C's `(uint64_t)n` read back as a shift amount) is
a copy of the narrow value too: the low bits of any extension are the value itself. Without it
both registers stay live (Keccak's 25 rotate amounts were held once per width across the loop)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import substitute


def _width(ty: str) -> int:
    return ir.type_bits(ty) if ty in ir.TYPES else -1


def copy_source(ins: ir.Instr):
    """What every use of `ins`'s result may read instead (the value or immediate it copies),
    or None where `ins` is not such a copy."""
    is_copy = ins.opcode == "mov" or (ins.opcode == "cvta" and ins.space in (None, "global"))
    if not is_copy or ins.guard is not None or len(ins.dests) != 1 or len(ins.srcs) != 1:
        return None
    d, s = ins.dests[0], ins.srcs[0]
    if isinstance(s, ir.Value):
        if _width(s.type) != _width(d.type) or (s.type == "pred") != (d.type == "pred"):
            return None
    elif isinstance(s, ir.Const):
        if d.type == "pred" or _width(s.type) != _width(d.type):
            return None
    else:
        return None
    return s


_COPY_OPCODES = frozenset(("mov", "cvta"))       # what copy_source may call a copy
_INTEGER = frozenset(t + str(b) for t in "usb" for b in (8, 16, 32, 64))


def _integer_cvt(ins: ir.Instr) -> tuple[int, int] | None:
    """(destination bits, source bits) of an unguarded plain integer `cvt`, or None."""
    if (ins.opcode != "cvt" or ins.guard is not None or ins.modifiers or len(ins.types) != 1
            or len(ins.dests) != 1 or len(ins.srcs) != 1 or ins.type not in _INTEGER
            or ins.types[0] not in _INTEGER or not isinstance(ins.srcs[0], ir.Value)):
        return None
    return ir.type_bits(ins.type), ir.type_bits(ins.types[0])


def _narrowed_extensions(fn: ir.Function) -> dict[int, ir.Value]:
    """Results of `cvt`s that narrow an extension back to its source's width -> that source.
    Only 32-bit results: a narrower type's register may hold other high bits (a `s16` value
    sign-extended, a `u16` one zero-extended) than the narrowing's result would."""
    widened: dict[int, ir.Value] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            bits = _integer_cvt(ins)
            if bits is not None and bits[0] > bits[1]:
                src = ins.srcs[0]
                if _width(src.type) == bits[1]:
                    widened[ins.dests[0].id] = src
    out: dict[int, ir.Value] = {}
    if not widened:
        return out
    for block in fn.blocks:
        for ins in block.instrs:
            bits = _integer_cvt(ins)
            if bits is None or bits[0] >= bits[1]:
                continue
            inner = widened.get(ins.srcs[0].id)
            d = ins.dests[0]
            if inner is not None and _width(inner.type) == bits[0] == _width(d.type) == 32:
                out[d.id] = inner
    return out


def propagate_copies(fn: ir.Function) -> bool:
    subst: dict[int, object] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if ins.opcode in _COPY_OPCODES:       # (asked first: most instructions are not)
                s = copy_source(ins)
                if s is not None:
                    subst[ins.dests[0].id] = s
    subst.update(_narrowed_extensions(fn))
    return bool(subst) and substitute(fn, subst)
