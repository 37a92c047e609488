"""Compares decided by constants: `setp`/`set` whose operands are immediates (what propagation
and folding leave, `setp.eq.u32 p, 1, 0`), predicate logic (`and/or/xor/not/mov.pred`) on
predicates so decided, and what reads them: guards, branches (unconditional, or gone with the
path they led to), `selp`. ptxas deletes such paths: a never-taken call inside one leaves no
CRS_STACK_SIZE record, a never-taken store no `@!P0 EXIT`.

Semantics are the PTX ISA's (`setp`, `set`): integer `lt/le/gt/ge` compare signed for `.s`
types, unsigned for `.u`/`.b`; `lo/ls/hi/hs` unsigned. Float `eq/ne/lt/le/gt/ge` are false
when an operand is NaN, `equ/neu/ltu/leu/gtu/geu` true, `num` is "neither NaN", `nan` "either";
`.ftz` compares subnormal inputs as zero of their sign. With `.and/.or/.xor` the result is
`cmp OP c` and the second result `!cmp OP c`."""
from __future__ import annotations

import math
import struct

from ptx2sass import ir
from ptx2sass.opt.exit_guards import apply_decided, remove_unreachable
from ptx2sass.opt.fold import signed_value
from ptx2sass.opt.uses import substitute

_INT = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
# float compare -> (ordered compare, its value when an operand is NaN)
_FLOAT = {c: (c, False) for c in ("eq", "ne", "lt", "le", "gt", "ge")}
_FLOAT.update({c + "u": (c, True) for c in ("eq", "ne", "lt", "le", "gt", "ge")})
_FLOAT_ONLY = {"num", "nan"}
_BOOL = {"and": lambda a, b: a and b, "or": lambda a, b: a or b, "xor": lambda a, b: a != b}
# float type -> (decode of its bits, smallest normal magnitude)
_FLOATS = {
    "f32": (lambda v: struct.unpack("<f", struct.pack("<I", v))[0], 2.0 ** -126),
    "f64": (lambda v: struct.unpack("<d", struct.pack("<Q", v))[0], 2.0 ** -1022),
    "f16": (lambda v: struct.unpack("<e", struct.pack("<H", v))[0], 2.0 ** -14),
    "bf16": (lambda v: struct.unpack("<f", struct.pack("<I", v << 16))[0], 2.0 ** -126),
}
# `set`'s destination type -> the bits of true (false is zero)
_SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "b32": 0xFFFFFFFF, "f32": 0x3F800000}


def compare(cmp: str, ty: str, a: int, b: int, ftz: bool = False) -> bool | None:
    """`setp.cmp.ty` of two bit patterns, or None for a comparison or type not decided here."""
    kind, bits = ir.TYPES.get(ty, (None, 0))
    mask = (1 << bits) - 1
    a, b = a & mask, b & mask
    if kind in ("u", "s", "b") and bits in (16, 32, 64):
        if cmp in _UNSIGNED:
            return _INT[_UNSIGNED[cmp]](a, b)
        if cmp not in _INT:
            return None
        if kind == "s":
            a, b = signed_value(a, bits), signed_value(b, bits)
        return _INT[cmp](a, b)
    if ty not in _FLOATS:
        return None
    decode, tiny = _FLOATS[ty]
    x, y = decode(a), decode(b)
    if ftz:
        x, y = (math.copysign(0.0, v) if abs(v) < tiny else v for v in (x, y))
    unordered = math.isnan(x) or math.isnan(y)
    if cmp in _FLOAT_ONLY:
        return unordered == (cmp == "nan")
    if cmp not in _FLOAT:
        return None
    ordered, if_nan = _FLOAT[cmp]
    return if_nan if unordered else _INT[ordered](x, y)


def _const_bits(op, ty: str) -> int | None:
    """An immediate operand's bits, or None. A float compare reads immediates of its own
    width only; an integer one, any immediate's low bits (as selection does)."""
    if type(op) is not ir.Const:
        return None
    if ty in _FLOATS and ir.TYPES.get(op.type, (None, 0))[1] != ir.TYPES[ty][1]:
        return None
    return op.value


class _Facts:
    """Predicates decided so far (id -> value) and predicates equal to another (id -> it)."""

    def __init__(self):
        self.known: dict[int, bool] = {}
        self.same: dict[int, ir.Value] = {}

    def of(self, op):
        """A predicate operand's value: True/False, an undecided predicate Value, or None."""
        if type(op) is ir.Const:
            return bool(op.value)
        if type(op) is not ir.Value:
            return None
        while op.id in self.same:
            op = self.same[op.id]
        return self.known.get(op.id, op)

    def define(self, dest: ir.Value, value) -> bool:
        if isinstance(value, bool):
            self.known[dest.id] = value
            return True
        if type(value) is ir.Value and value.id != dest.id:
            self.same[dest.id] = value
            return True
        return False


def _combine(boolop, r: bool, c):
    """`r boolop c` where c is a bool or an undecided predicate; None where not decided."""
    if boolop is None:
        return r
    if isinstance(c, bool):
        return _BOOL[boolop](r, c)
    if boolop == "and":
        return c if r else False
    if boolop == "or":
        return True if r else c
    return c if not r else None             # xor with true: the complement of c


def _compare_of(ins: ir.Instr, facts: _Facts, ty: str):
    """(compare result, boolop, its predicate operand) of a `setp`/`set` of immediates, or None."""
    mods = ins.modifiers
    cmp = next((m for m in mods if m in _INT or m in _UNSIGNED or m in _FLOAT or m in _FLOAT_ONLY), None)
    boolop = next((m for m in mods if m in _BOOL), None)
    if cmp is None or len(ins.srcs) != (3 if boolop else 2):
        return None
    a, b = (_const_bits(s, ty) for s in ins.srcs[:2])
    if a is None or b is None:
        return None
    r = compare(cmp, ty, a, b, "ftz" in mods)
    if r is None:
        return None
    return r, boolop, facts.of(ins.srcs[2]) if boolop else None


def _logic(ins: ir.Instr, facts: _Facts):
    """The value of a predicate `not/and/or/xor/mov`: a bool, an equal predicate, or None."""
    ops = [facts.of(s) for s in ins.srcs]
    if any(o is None for o in ops):
        return None
    if ins.opcode == "mov":
        return ops[0] if len(ops) == 1 else None
    if ins.opcode == "not":
        return (not ops[0]) if len(ops) == 1 and isinstance(ops[0], bool) else None
    if len(ops) != 2:
        return None
    a, b = ops
    if isinstance(a, bool) and isinstance(b, bool):
        return _BOOL[ins.opcode](a, b)
    if isinstance(b, bool):
        a, b = b, a
    if isinstance(a, bool):
        return _combine(ins.opcode, a, b)
    if a.id != b.id:
        return None
    return False if ins.opcode == "xor" else a


def _to_mov(ins: ir.Instr, src) -> None:
    ins.opcode, ins.srcs, ins.modifiers, ins.types = "mov", [src], (), ()
    if ins.attrs:
        ins.attrs = {}


def fold_compares(fn: ir.Function) -> bool:
    """Decide what immediates decide (blocks in reverse postorder: an operand's definition
    is seen before its use, phis aside), then rewrite guards, branches and `selp`s and drop
    the blocks no path reaches any more."""
    facts = _Facts()
    changed = False
    for block in ir.reverse_postorder(fn):
        for ins in block.instrs:
            op = ins.opcode
            if ins.guard is not None or not ins.dests:
                continue
            if op == "setp":
                found = _compare_of(ins, facts, ins.type)
                if found is None:
                    continue
                r, boolop, c = found
                for k, d in enumerate(ins.dests[:2]):
                    facts.define(d, _combine(boolop, r != (k == 1), c))
            elif op in ("and", "or", "xor", "not", "mov") and ins.type == "pred":
                facts.define(ins.dests[0], _logic(ins, facts))
            elif op == "set" and ins.type in _SET_TRUE:
                found = _compare_of(ins, facts, ins.types[0] if ins.types else ins.type)
                value = found and _combine(found[1], found[0], found[2])
                if isinstance(value, bool):
                    _to_mov(ins, ir.Const(_SET_TRUE[ins.type] if value else 0, ins.type))
                    changed = True
            elif op == "selp" and len(ins.srcs) == 3:
                c = facts.of(ins.srcs[2])
                if isinstance(c, bool):
                    _to_mov(ins, ins.srcs[0] if c else ins.srcs[1])
                    changed = True
    if facts.same:
        changed |= substitute(fn, facts.same)
    if not facts.known:
        return changed
    subst: dict[int, object] = {}
    decided = False
    for block in fn.blocks:
        decided |= apply_decided(block, facts.known, subst)
    if decided:
        if subst:
            substitute(fn, subst)
        remove_unreachable(fn)
    return changed or decided
