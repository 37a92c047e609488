"""Loads from a `.local` variable take the value its stores left, where the stores are known:
`st.local [a+32], 7; ...; ld.local r, [a+32]` -> `mov r, 7`.

A local array filled with constants and then read at constant offsets (a lookup table the
thread keeps, the fuzz generator's `g_loc` arrays) costs ptxas nothing at run time: it reads
the constants. Ours stored sixteen words and loaded them back, holding the loaded vectors in
registers (fuzz seed 21000155: 67 registers, ptxas 40). With the loads gone the stores are
unread and `dead_local_stores` removes them.

A variable qualifies when every store into it is an unguarded, non-volatile `st.local` at a
constant offset from its symbol, all in one block B, and its address reaches nothing but
local loads and stores and the arithmetic deriving addresses (`dead_local_stores`'s
points-to analysis: no call, no generic access, no store of the address can write it). A
load at a constant offset then reads what B's stores before it wrote (in B) or what B left
(in a block B dominates: every path there passes B last among the writers); its bytes come
from constants (the loaded value is computed, sign- or zero-extended as the load's type says)
or all from one stored value of the load's size at its offset (that value is used)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.dead_local_stores import DERIVING, _address_origins, _origin


def _size(ty: str) -> int:
    return ir.type_bits(ty) // 8


def _bad_and_stores(fn: ir.Function, names: set[str], points_to):
    bad: set[str] = set()
    stores: dict[str, list[tuple[ir.Block, ir.Instr]]] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            for i, src in enumerate(ins.srcs):
                origin = _origin(src, points_to, names)
                if not origin:
                    continue
                at_address = i == 0 and isinstance(src, ir.Address) and ins.space == "local"
                if at_address and ins.opcode in ("ld", "ldu"):
                    continue
                if at_address and ins.opcode == "st":
                    if (isinstance(src.base, ir.Symbol) and ins.guard is None and "volatile" not in ins.modifiers
                            and ins.type in ir.TYPES):
                        stores.setdefault(src.base.name, []).append((block, ins))
                    else:
                        bad |= origin
                    continue
                if (ins.opcode in DERIVING and ins.dests and ins.dests[0].id in points_to
                        and not isinstance(src, ir.Address)):
                    continue
                bad |= origin
            if ins.opcode not in DERIVING:
                for m in ins.merge:
                    bad |= _origin(m, points_to, names)
    return bad, stores


def _write(state: dict, ins: ir.Instr) -> None:
    size = _size(ins.type)
    base = ins.srcs[0].offset
    for k, v in enumerate(ins.srcs[1:]):
        at = base + k * size
        for byte in range(size):
            if isinstance(v, ir.Const):
                state[at + byte] = ("const", (v.value >> (8 * byte)) & 0xFF)
            else:
                state[at + byte] = ("value", v, at, size)


def _read(state: dict, ins: ir.Instr) -> list | None:
    """The operands the load's destinations take, or None."""
    size = _size(ins.type)
    base = ins.srcs[0].offset
    out = []
    for k, d in enumerate(ins.dests):
        at = base + k * size
        parts = [state.get(at + byte) for byte in range(size)]
        if any(p is None for p in parts):
            return None
        if all(p[0] == "const" for p in parts):
            value = sum(p[1] << (8 * byte) for byte, p in enumerate(parts))
            bits = ir.type_bits(d.type) if d.type in ir.TYPES else 8 * size
            if ins.type[0] == "s" and value >> (8 * size - 1):
                value -= 1 << (8 * size)
            out.append(ir.Const(value & ((1 << bits) - 1), d.type))
            continue
        first = parts[0]
        if (first[0] == "value" and all(p == first for p in parts) and first[2] == at and first[3] == size
                and isinstance(first[1], ir.Value) and first[1].type in ir.TYPES
                and ir.type_bits(first[1].type) == ir.type_bits(d.type) == 8 * size):
            out.append(first[1])
            continue
        return None
    return out


def forward_local_stores(fn: ir.Function) -> bool:
    names = {v.name for v in fn.locals if v.space == "local"}
    if not names:
        return False
    points_to = _address_origins(fn, names)
    if points_to is None:
        return False
    bad, stores = _bad_and_stores(fn, names, points_to)
    idom = children = None
    changed = False
    for name, writes in stores.items():
        home = writes[0][0]
        if name in bad or any(b is not home for b, _ in writes):
            continue
        if idom is None:
            idom = ir.dominators(fn)
            children = {}
            for b, d in idom.items():
                if d is not None:
                    children.setdefault(id(d), []).append(b)
        if home not in idom:
            continue
        dominated, stack = set(), [home]         # home's subtree of the dominator tree
        while stack:
            b = stack.pop()
            dominated.add(id(b))
            stack.extend(children.get(id(b), ()))
        final: dict = {}
        mine = {id(w) for _, w in writes}
        for ins in home.instrs:
            if id(ins) in mine:
                _write(final, ins)
        for block in fn.blocks:
            if id(block) not in dominated:
                continue
            state = {} if block is home else final
            out = []
            for ins in block.instrs:
                addr = ins.srcs[0] if ins.srcs else None
                ours = (isinstance(addr, ir.Address) and isinstance(addr.base, ir.Symbol)
                        and addr.base.name == name and ins.space == "local")
                if ours and block is home and ins.opcode == "st":
                    _write(state, ins)
                elif (ours and ins.opcode in ("ld", "ldu") and ins.guard is None and ins.type in ir.TYPES
                        and "volatile" not in ins.modifiers):
                    got = _read(state, ins)
                    if got is not None:
                        for d, v in zip(ins.dests, got):
                            out.append(ir.Instr("mov", dests=[d], srcs=[v], type=d.type, line=ins.line))
                        changed = True
                        continue
                out.append(ins)
            block.instrs = out
    return changed
