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


# integer types `_fold` folds -> their width
_FOLD_BITS = {ty: bits for ty, (kind, bits) in ir.TYPES.items()
              if kind in INT_KINDS and bits in (16, 32, 64)}


def _fold(ins: ir.Instr, known: dict[int, ir.Const] | None = None) -> ir.Const | None:
    """The constant `ins` computes when its operands are immediates or values in `known`."""
    if ins.opcode not in FOLDABLE or ins.guard is not None:
        return None
    ty = ins.type
    bits = _FOLD_BITS.get(ty)
    if bits is None or len(ins.dests) != 1 or not ins.srcs:
        return None
    mask = (1 << bits) - 1
    args = []
    Const, Value = ir.Const, ir.Value
    for s in ins.srcs:
        t = type(s)
        if t is Value:
            if not known:
                return None
            s = known.get(s.id)
            if s is None:
                return None
        elif t is not Const:
            return None
        args.append(s.value)
    dest_type = ins.dests[0].type
    if dest_type != ty and ir.TYPES.get(dest_type, (None, None))[1] != bits:
        return None
    if ins.opcode in ("shl", "shr"):        # the shift amount: its low 32 bits
        args = [args[0] & mask, args[1] & 0xFFFFFFFF]
    else:
        args = [a & mask for a in args]
    result = _eval(ins, bits, args)
    if result is None:
        return None
    return Const(result & mask, ty)


def fold_constants(fn: ir.Function) -> bool:
    """Each foldable instruction whose operands are known becomes `mov d, result`, in place
    (the instruction keeps its results and line; what else it had is reset as a fresh
    `mov` has it: it has no guard, `_fold` refuses guarded ones)."""
    changed = False
    known: dict[int, ir.Const] = {}         # value id -> the immediate propagation gives it
    Const = ir.Const
    for block in fn.blocks:
        for ins in block.instrs:
            op = ins.opcode
            if op != "mov":
                if op not in FOLDABLE:
                    continue
                const = _fold(ins, known)
                if const is None:
                    continue
                ins.opcode = "mov"
                ins.srcs = [const]
                ins.modifiers = ins.types = ()
                ins.guard_negated = False
                ins.space = ins.align = None
                if ins.merge:
                    ins.merge = []
                if ins.attrs:
                    ins.attrs = {}
                changed = True
                known[ins.dests[0].id] = const      # what copy_source says of that mov
                continue
            src = copy_source(ins)
            if type(src) is Const:
                known[ins.dests[0].id] = src
    return changed
