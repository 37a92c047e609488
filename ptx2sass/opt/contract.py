"""Floating-point contraction: a multiply feeding adds becomes fused multiply-adds.

ptxas contracts by default (`--fmad=true`, off at -O0), and the rounding differs (one
rounding instead of two), so matching its results bit for bit needs the same rule. Measured
on ptxas 13.5 (see tests/test_contract.py):

* `mul` and `add`/`sub` of f32, f64, f16 or f16x2, in the same block, neither with an explicit
  rounding modifier (`.rn` forbids contraction), with the same `.ftz`; `.sat` on the add
  carries over to the fma, `.sat` on the multiply forbids it;
* the multiply is contracted only when every reader is such an add (a multiply that is also
  stored stays a multiply), a `neg` in between just flips the product's sign;
* an add of two products fuses its first operand's; a subtraction negates the addend (`a*b - c`)
  or the product (`c - a*b`);
* `div.full.f32` and `div.approx.f32` end in a multiply by the reciprocal, and ptxas fuses
  that one by the same rule (with `-use_fast_math` every `a / b + c` is such a pair): so
  a division read by an add is split here into the reciprocal part and a plain `mul`.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import readers as uses_of

CONTRACT_TYPES = ("f32", "f64", "f16", "f16x2")
# an instruction's attrs key: the id of the PTX block it was written in, set where
# if-conversion joins blocks (opt/if_convert.py); a product and an add of different blocks
# stay apart, as ptxas contracts within a block only
ORIGIN = "origin_block"
ADD_MODIFIERS = {"ftz", "sat"}


def _is_product(ins: ir.Instr) -> bool:
    return ins.opcode == "mul" and ins.guard is None and len(ins.dests) == 1 \
        and ins.type in CONTRACT_TYPES and set(ins.modifiers) <= {"ftz"}


DIVISION_MODIFIERS = ({"full"}, {"full", "ftz"}, {"approx"}, {"approx", "ftz"})


def _read_by_an_add(value: ir.Value, readers: dict[int, list]) -> bool:
    """Whether an add/sub reads `value`, directly or through a `neg`."""
    for u in readers.get(value.id, []):
        if not isinstance(u, ir.Instr):
            continue
        if u.opcode in ("add", "sub"):
            return True
        if u.opcode == "neg" and len(u.dests) == 1 and any(
                isinstance(w, ir.Instr) and w.opcode in ("add", "sub")
                for w in readers.get(u.dests[0].id, [])):
            return True
    return False


def _origin_of(ins: ir.Instr) -> dict:
    """The attrs that carry `ins`'s ORIGIN over to what replaces it."""
    return {ORIGIN: ins.attrs[ORIGIN]} if ORIGIN in ins.attrs else {}


def _split_divisions(fn: ir.Function, readers: dict[int, list]) -> bool:
    """An f32 division read by an add ends in a multiply that ptxas fuses: split it off.
    div.approx.ftz q, a, b → rcp.approx.ftz r, b; mul.ftz q, a, r. div.full / div.approx
    q, a, b → div (r, a'), a, b (the reciprocal and the scaled numerator, isel/ieee.py and
    isel/floating.py); mul q, r, a'."""
    changed = False
    for block in fn.blocks:
        out = []
        for ins in block.instrs:
            if not (ins.opcode == "div" and ins.type == "f32" and ins.guard is None
                    and set(ins.modifiers) in DIVISION_MODIFIERS and len(ins.dests) == 1
                    and _read_by_an_add(ins.dests[0], readers)):
                out.append(ins)
                continue
            ftz = tuple(m for m in ins.modifiers if m == "ftz")
            origin = _origin_of(ins)
            if set(ins.modifiers) == {"approx", "ftz"}:
                r = fn.new_value("f32")
                out.append(ir.Instr("rcp", dests=[r], srcs=[ins.srcs[1]], modifiers=ins.modifiers,
                                    type="f32", line=ins.line, attrs=origin))
                out.append(ir.Instr("mul", dests=ins.dests, srcs=[ins.srcs[0], r], modifiers=ftz,
                                    type="f32", line=ins.line, attrs=dict(origin)))
            else:
                r, scaled = fn.new_value("f32"), fn.new_value("f32")
                out.append(ir.Instr("div", dests=[r, scaled], srcs=ins.srcs, modifiers=ins.modifiers,
                                    type="f32", line=ins.line, attrs=origin))
                out.append(ir.Instr("mul", dests=ins.dests, srcs=[r, scaled], modifiers=ftz,
                                    type="f32", line=ins.line, attrs=dict(origin)))
            changed = True
        block.instrs[:] = out
    return changed


def _fusible_add(ins, product: ir.Instr, block_instrs: set[int]) -> bool:
    return isinstance(ins, ir.Instr) and id(ins) in block_instrs and ins.opcode in ("add", "sub") \
        and ins.guard is None and ins.type == product.type and set(ins.modifiers) <= ADD_MODIFIERS \
        and ("ftz" in ins.modifiers) == ("ftz" in product.modifiers) \
        and all(s is not None for s in ins.srcs[:2]) \
        and ins.attrs.get(ORIGIN) == product.attrs.get(ORIGIN)


def _is_negation(ins, product: ir.Instr, block_instrs: set[int]) -> bool:
    return isinstance(ins, ir.Instr) and id(ins) in block_instrs and ins.opcode == "neg" \
        and ins.guard is None and len(ins.dests) == 1 and ins.type == product.type \
        and set(ins.modifiers) <= {"ftz"} and ins.attrs.get(ORIGIN) == product.attrs.get(ORIGIN)


def contract_multiply_add(fn: ir.Function) -> bool:
    readers = uses_of(fn)
    changed = False
    if _split_divisions(fn, readers):
        readers, changed = uses_of(fn), True
    for block in fn.blocks:
        here = {id(ins) for ins in block.instrs}
        # value id -> (product instruction, negated): products whose readers are all adds
        products: dict[int, tuple[ir.Instr, bool]] = {}
        for ins in block.instrs:
            if not _is_product(ins):
                continue
            value, negated = ins.dests[0], False
            users = readers.get(value.id, [])
            if ins.opcode == "mul" and len(users) == 1 and _is_negation(users[0], ins, here):
                value, negated = users[0].dests[0], True      # -(a*b) + c
                users = readers.get(value.id, [])
            if users and all(_fusible_add(u, ins, here) for u in users):
                products[value.id] = (ins, negated)
        if not products:
            continue
        for k, ins in enumerate(block.instrs):
            if ins.opcode not in ("add", "sub") or ins.guard is not None:
                continue
            for pos in (0, 1):
                src = ins.srcs[pos]
                found = products.get(src.id) if isinstance(src, ir.Value) else None
                if found is None or not _fusible_add(ins, found[0], here):
                    continue
                fused = _fuse(ins, pos, *found)
                if fused is not None:
                    block.instrs[k] = fused
                    changed = True
                    break
    return changed


def _fuse(add: ir.Instr, pos: int, product: ir.Instr, negated: bool) -> ir.Instr | None:
    """The fma computing `add` with its operand `pos` fused."""
    addend = add.srcs[1 - pos]
    negate_product = negated ^ (add.opcode == "sub" and pos == 1)
    negate_addend = add.opcode == "sub" and pos == 0
    x, y = product.srcs[0], product.srcs[1]
    negate = {2} if negate_addend else set()
    if isinstance(x, ir.Const):
        x, y = y, x
    if isinstance(x, ir.Const):
        return None             # two constants: folding's business
    if negate_product:
        negate.add(0)
    mods = ("rn",) + tuple(m for m in ("ftz", "sat") if m in add.modifiers)
    return ir.Instr("fma", dests=add.dests, srcs=[x, y, addend], modifiers=mods, type=add.type,
                    line=add.line, attrs={"negate": frozenset(negate), **_origin_of(add)})
