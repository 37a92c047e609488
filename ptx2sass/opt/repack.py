"""A value split into parts and joined again is the value itself.

Triton unpacks every `ldmatrix` register into its two f16 halves (`mov.b32 {%h1, %h0}, %r`)
and packs them again for `mma.sync` (`mov.b32 %s, {%h1, %h0}`), and in a pipelined loop it
carries the halves of the next tile across the back edge as phis. Selected literally, each
half costs a PRMT, each pack another, and the mma operands are assembled by copies every
iteration; ptxas keeps the packed registers. Two rewrites:

* a pack whose parts are, in order, all the parts of one unguarded unpack is that unpack's
  source;
* a pack of phis of one block whose incoming values on every edge are, in order, all the
  parts of one unpack (or all constants) is a new phi of those unpacks' sources (or of the
  constant they make).

The halves and their phis are left to dead-code elimination when nothing else reads them.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.uses import substitute


def _bits(ty: str) -> int:
    return ir.type_bits(ty) if ty in ir.TYPES else -1


def _is_unpack(ins: ir.Instr) -> bool:
    return (ins.opcode == "mov" and ins.guard is None and len(ins.srcs) == 1 and len(ins.dests) > 1
            and isinstance(ins.srcs[0], ir.Value))


def _is_pack(ins: ir.Instr) -> bool:
    return (ins.opcode == "mov" and ins.guard is None and len(ins.dests) == 1 and len(ins.srcs) > 1
            and all(isinstance(s, ir.Value) for s in ins.srcs))


def repack(fn: ir.Function) -> bool:
    part_of: dict[int, tuple[ir.Instr, int]] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if _is_unpack(ins):
                for k, d in enumerate(ins.dests):
                    part_of[d.id] = (ins, k)

    def joined(parts, width: int) -> ir.Value | None:
        """The value whose unpack gave exactly `parts`, in order."""
        first = part_of.get(parts[0].id) if isinstance(parts[0], ir.Value) else None
        if first is None:
            return None
        unpack = first[0]
        if len(unpack.dests) != len(parts) or _bits(unpack.srcs[0].type) != width:
            return None
        if any(not isinstance(p, ir.Value) or part_of.get(p.id) != (unpack, k)
               for k, p in enumerate(parts)):
            return None
        return unpack.srcs[0]

    phi_home: dict[int, tuple[ir.Block, ir.Phi]] = {}
    for block in fn.blocks:
        for phi in block.phis:
            phi_home[phi.dest.id] = (block, phi)
    new_phis: dict[tuple[int, ...], ir.Value] = {}

    def joined_phis(parts, width: int, ty: str) -> ir.Value | None:
        """A phi of the joined values, where every part is a phi of one block joining the
        parts of one unpack on each edge."""
        homes = [phi_home.get(p.id) for p in parts]
        if any(h is None for h in homes) or len({id(h[0]) for h in homes}) != 1:
            return None
        key = tuple(p.id for p in parts)
        if key in new_phis:
            return new_phis[key]
        block = homes[0][0]
        incoming = []
        for pred, _ in homes[0][1].incoming:
            values = [dict((id(b), v) for b, v in h[1].incoming).get(id(pred)) for h in homes]
            source = joined(values, width)
            if source is None and all(isinstance(v, ir.Const) for v in values):
                part = width // len(values)      # constant parts (a zeroed accumulator): one constant
                source = ir.Const(sum((v.value & ((1 << part) - 1)) << (part * k)
                                      for k, v in enumerate(values)), ty)
            if source is None:
                return None
            incoming.append((pred, source))
        dest = fn.new_value(ty, "repacked")
        block.phis.append(ir.Phi(dest, incoming))
        new_phis[key] = dest
        return dest

    subst: dict[int, object] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if not _is_pack(ins):
                continue
            d = ins.dests[0]
            width = _bits(d.type)
            source = joined(ins.srcs, width) or joined_phis(ins.srcs, width, d.type)
            if source is not None and source is not d:
                subst[d.id] = source
    return substitute(fn, subst) if subst else False
