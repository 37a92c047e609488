"""Stores into `.local` variables that nothing reads go, and so do the variables once
nothing refers to them (ptxas does both: a kernel that only writes a local array has no
stack frame).

A local variable is private to its thread, so only this function can read it, and only
through an address derived from its symbol. The pass follows those addresses through integer
arithmetic, `cvta` and phis; a variable whose address reaches anything else (a load of
any space, a store of any space but as a `.local` store's address, a stored value, a
call, a predicate) is live. If some local access uses an address of unknown origin (a pointer
loaded from memory, a stack allocation), any variable might be its target and nothing is
removed."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.dce import PURE

# Operations whose integer result may be an address into any variable an operand points
# into (the union is kept: arithmetic never makes an address point elsewhere, and a generic
# address from `cvta` is followed like any other).
DERIVING = PURE | {"cvta"}


def remove_dead_local_stores(fn: ir.Function) -> bool:
    names = {v.name for v in fn.locals if v.space == "local"}
    if not names:
        return False
    points_to = _address_origins(fn, names)
    if points_to is None:
        return False
    live: set[str] = set()
    stores: list[tuple[ir.Block, ir.Instr, set[str]]] = []
    for block in fn.blocks:
        for ins in block.instrs:
            for i, src in enumerate(ins.srcs):
                origin = _origin(src, points_to, names)
                if not origin:
                    continue
                if (i == 0 and isinstance(src, ir.Address) and ins.opcode == "st"
                        and ins.space == "local" and "volatile" not in ins.modifiers):
                    stores.append((block, ins, origin))
                elif not (ins.opcode in DERIVING and ins.dests
                          and ins.dests[0].id in points_to and not isinstance(src, ir.Address)):
                    live |= origin
            if ins.opcode not in DERIVING:      # a guarded write's kept value flows on
                for m in ins.merge:
                    live |= _origin(m, points_to, names)
    changed = False
    dead = names - live
    for block, ins, origin in stores:
        if origin <= dead:
            block.instrs.remove(ins)
            changed = True
    referenced = _referenced_symbols(fn)
    kept = [v for v in fn.locals if v.space != "local" or v.name in referenced]
    if len(kept) != len(fn.locals):
        fn.locals = kept
        changed = True
    return changed


def _origin(operand, points_to: dict[int, set[str]], names: set[str]) -> set[str]:
    """The local variables an operand (a value, a symbol or an address) may point into."""
    base = operand.base if isinstance(operand, ir.Address) else operand
    if isinstance(base, ir.Symbol):
        return {base.name} if base.name in names else set()
    if isinstance(base, ir.Value):
        return points_to.get(base.id, set())
    return set()


def _address_origins(fn: ir.Function, names: set[str]) -> dict[int, set[str]] | None:
    """Value id → the local variables it may point into, or None where a local access
    goes through an address of unknown origin."""
    points_to: dict[int, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for block in fn.blocks:
            for phi in block.phis:
                origin = set().union(*(_origin(v, points_to, names) for _, v in phi.incoming))
                if origin - points_to.get(phi.dest.id, set()):
                    points_to.setdefault(phi.dest.id, set()).update(origin)
                    changed = True
            for ins in block.instrs:
                if ins.opcode not in DERIVING or len(ins.dests) != 1:
                    continue
                if ins.dests[0].type not in ("u32", "s32", "b32", "u64", "s64", "b64"):
                    continue
                origin = set().union(*(_origin(s, points_to, names)
                                       for s in [*ins.srcs, *ins.merge]
                                       if not isinstance(s, ir.Address)))
                if origin - points_to.get(ins.dests[0].id, set()):
                    points_to.setdefault(ins.dests[0].id, set()).update(origin)
                    changed = True
    for block in fn.blocks:
        for ins in block.instrs:
            if ins.space != "local":
                continue
            for src in ins.srcs:
                if isinstance(src, ir.Address) and not _origin(src, points_to, names):
                    return None
    return points_to


def _referenced_symbols(fn: ir.Function) -> set[str]:
    out = set()
    for block in fn.blocks:
        for ins in block.instrs:
            for s in ins.srcs:
                base = s.base if isinstance(s, ir.Address) else s
                if isinstance(base, ir.Symbol):
                    out.add(base.name)
    return out
