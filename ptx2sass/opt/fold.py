"""Constant folding of integer arithmetic whose inputs are all immediates (what propagation
leaves behind in index arithmetic), and of the approximate f32 functions ptxas evaluates at
compile time (fold_approx): the instruction becomes `mov d, result`. Operands that
an earlier fold of the same pass (or a copy of an immediate) made constant count as
immediates, so a chain of such arithmetic folds in one pass, not one link per round."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.fold_approx import FUNCTIONS as APPROX_FUNCTIONS, folded_bits
from ptx2sass.opt.propagate import copy_source

INT_KINDS = ("u", "s", "b")
INT_FOLDABLE = frozenset({"add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr"})  # _evaluator's
FOLDABLE = INT_FOLDABLE | frozenset(APPROX_FUNCTIONS)


def signed_value(value: int, bits: int) -> int:
    """`value`'s low `bits` bits read as a two's-complement number."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _evaluator(opcode: str, modifiers: tuple, ty: str):
    """(width, mask, function of the operands' values) for a spelling `_fold` folds, or
    None. The function masks the values to the width itself (a shift's amount: its low
    32 bits) and may return more bits than the width."""
    bits = _FOLD_BITS.get(ty)
    if bits is None:
        return None
    mask = (1 << bits) - 1
    plain, lo = not modifiers, modifiers == ("lo",)
    if opcode == "add" and plain:
        def f(a): return (a[0] & mask) + (a[1] & mask)
    elif opcode == "sub" and plain:
        def f(a): return (a[0] & mask) - (a[1] & mask)
    elif opcode == "mul" and lo:
        def f(a): return (a[0] & mask) * (a[1] & mask)
    elif opcode == "mad" and lo:
        def f(a): return (a[0] & mask) * (a[1] & mask) + (a[2] & mask)
    elif opcode == "and" and plain:
        def f(a): return a[0] & a[1] & mask
    elif opcode == "or" and plain:
        def f(a): return (a[0] | a[1]) & mask
    elif opcode == "xor" and plain:
        def f(a): return (a[0] ^ a[1]) & mask
    elif opcode == "not":
        def f(a): return ~(a[0] & mask)
    elif opcode == "shl":
        def f(a):
            amount = a[1] & 0xFFFFFFFF
            return (a[0] & mask) << amount if amount < bits else 0
    elif opcode == "shr" and ty[0] == "s":
        def f(a): return signed_value(a[0], bits) >> min(a[1] & 0xFFFFFFFF, bits - 1)
    elif opcode == "shr":
        def f(a):
            amount = a[1] & 0xFFFFFFFF
            return (a[0] & mask) >> amount if amount < bits else 0
    else:
        return None
    return bits, mask, f


# integer types `_fold` folds -> their width
_FOLD_BITS = {ty: bits for ty, (kind, bits) in ir.TYPES.items()
              if kind in INT_KINDS and bits in (16, 32, 64)}
_EVALUATORS: dict[tuple, tuple | None] = {}     # (opcode, modifiers, type) -> `_evaluator`'s


def _fold(ins: ir.Instr, known: dict[int, ir.Const] | None = None) -> ir.Const | None:
    """The constant `ins` computes when its operands are immediates or values in `known`."""
    if ins.opcode not in FOLDABLE or ins.guard is not None or len(ins.dests) != 1 \
            or not ins.srcs:
        return None
    if ins.opcode in APPROX_FUNCTIONS:
        return _fold_approx(ins, known)
    key = (ins.opcode, ins.modifiers, ins.type)
    rule = _EVALUATORS.get(key, False)
    if rule is False:
        rule = _EVALUATORS[key] = _evaluator(*key)
    if rule is None:
        return None
    bits, mask, evaluate = rule
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
    if dest_type != ins.type and ir.TYPES.get(dest_type, (None, None))[1] != bits:
        return None
    return Const(evaluate(args) & mask, ins.type)


def _fold_approx(ins: ir.Instr, known: dict[int, ir.Const] | None) -> ir.Const | None:
    if len(ins.srcs) != 1 or ins.dests[0].type not in ("f32", "b32"):
        return None
    s = ins.srcs[0]
    if type(s) is ir.Value:
        s = known.get(s.id) if known else None
    if type(s) is not ir.Const:
        return None
    bits = folded_bits(ins.opcode, ins.modifiers, ins.type, s.value)
    return None if bits is None else ir.Const(bits, "f32")


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
