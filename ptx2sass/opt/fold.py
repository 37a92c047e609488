"""Constant folding of integer arithmetic whose inputs are all immediates (what propagation
leaves behind in index arithmetic): the instruction becomes `mov d, result`."""
from __future__ import annotations

from ptx2sass import ir

INT_KINDS = ("u", "s", "b")


def signed_value(value: int, bits: int) -> int:
    """`value`'s low `bits` bits read as a two's-complement number."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _shift_amount(c: ir.Const) -> int:
    return c.value & 0xFFFFFFFF


def _eval(ins: ir.Instr, bits: int, args: list[int]) -> int | None:
    op, signed = ins.opcode, ins.type[0] == "s"
    if op == "add" and not ins.modifiers:
        return args[0] + args[1]
    if op == "sub" and not ins.modifiers:
        return args[0] - args[1]
    if op == "mul" and ins.modifiers == ("lo",):
        return args[0] * args[1]
    if op == "mad" and ins.modifiers == ("lo",):
        return args[0] * args[1] + args[2]
    if op in ("and", "or", "xor") and not ins.modifiers:
        a, b = args
        return a & b if op == "and" else a | b if op == "or" else a ^ b
    if op == "not":
        return ~args[0]
    if op == "shl":
        return args[0] << args[1] if args[1] < bits else 0
    if op == "shr":
        if signed:
            return signed_value(args[0], bits) >> min(args[1], bits - 1)
        return args[0] >> args[1] if args[1] < bits else 0
    return None


def _fold(ins: ir.Instr) -> ir.Const | None:
    ty = ins.type
    if ins.guard is not None or len(ins.dests) != 1 or ty is None or ty[0] not in INT_KINDS \
            or ty not in ir.TYPES or not ins.srcs or not all(isinstance(s, ir.Const) for s in ins.srcs):
        return None
    bits = ir.type_bits(ty)
    if bits not in (16, 32, 64) or ir.type_bits(ins.dests[0].type) != bits:
        return None
    args = [s.value & ((1 << bits) - 1) for s in ins.srcs]
    if ins.opcode in ("shl", "shr"):
        args[1] = _shift_amount(ins.srcs[1])
    result = _eval(ins, bits, args)
    if result is None:
        return None
    return ir.Const(result & ((1 << bits) - 1), ty)


def fold_constants(fn: ir.Function) -> bool:
    changed = False
    for block in fn.blocks:
        for k, ins in enumerate(block.instrs):
            if ins.opcode == "mov":
                continue
            const = _fold(ins)
            if const is not None:
                block.instrs[k] = ir.Instr("mov", dests=ins.dests, srcs=[const], type=ins.type,
                                           line=ins.line)
                changed = True
    return changed
