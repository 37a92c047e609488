"""Constant folding of integer arithmetic whose inputs are all immediates (what propagation
leaves behind in index arithmetic): the instruction becomes `mov d, result`. Operands that
an earlier fold of the same pass (or a copy of an immediate) made constant count as
immediates, so a chain of such arithmetic folds in one pass, not one link per round."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.propagate import copy_source

INT_KINDS = ("u", "s", "b")
FOLDABLE = frozenset({"add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr"})  # _eval's


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


def _fold(ins: ir.Instr, known: dict[int, ir.Const] | None = None) -> ir.Const | None:
    """The constant `ins` computes when its operands are immediates or values in `known`."""
    ty = ins.type
    if ins.opcode not in FOLDABLE or ins.guard is not None or len(ins.dests) != 1 or ty is None \
            or ty[0] not in INT_KINDS or ty not in ir.TYPES or not ins.srcs:
        return None
    srcs = []
    for s in ins.srcs:
        if known and isinstance(s, ir.Value):
            s = known.get(s.id, s)
        if not isinstance(s, ir.Const):
            return None
        srcs.append(s)
    bits = ir.type_bits(ty)
    if bits not in (16, 32, 64) or ir.type_bits(ins.dests[0].type) != bits:
        return None
    mask = (1 << bits) - 1
    args = [s.value & mask for s in srcs]
    if ins.opcode in ("shl", "shr"):
        args[1] = _shift_amount(srcs[1])
    result = _eval(ins, bits, args)
    if result is None:
        return None
    return ir.Const(result & mask, ty)


def fold_constants(fn: ir.Function) -> bool:
    changed = False
    known: dict[int, ir.Const] = {}         # value id -> the immediate propagation gives it
    for block in fn.blocks:
        for k, ins in enumerate(block.instrs):
            if ins.opcode != "mov":
                const = _fold(ins, known)
                if const is None:
                    continue
                ins = block.instrs[k] = ir.Instr("mov", dests=ins.dests, srcs=[const],
                                                 type=ins.type, line=ins.line)
                changed = True
            src = copy_source(ins)
            if isinstance(src, ir.Const):
                known[ins.dests[0].id] = src
    return changed
