"""YIELD in the PTX's loops that contain atomic operations, as ptxas writes it (a lock's
spin loop `while (atomicCAS(lock, 0, 1)) ;`, a histogram's loop of atomicAdd).

With independent thread scheduling, the lanes of a warp that took different ways run one
path at a time; YIELD lets the warp switch to another path, so a lane spinning on a lock
that a lane of its own warp holds does not keep that lane from reaching its release. ptxas
13.5 puts one at the top of every loop of the program with an `atom` in it, even one whose
result is unused (read off its code for spin locks, atomic histograms and CAS loops); loops
of `red`, of plain or of volatile loads get none, and neither do the compare-and-swap loops it makes itself for atomics the
hardware lacks (16-bit CAS, shared f64 add): hence loops of the IR, not of the machine code."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.mir import PSEUDOS, MFunction, MInstr

ATOMICS = ("atom",)          # a loop of `red` gets none (ptxas 13.5)


def insert_loop_yields(mf: MFunction, fn: ir.Function) -> int:
    """Put a YIELD first in the machine block of each such loop's header; returns how many."""
    if not any(ins.opcode in ATOMICS for b in fn.blocks for ins in b.instrs):
        return 0
    idom = ir.dominators(fn)
    bodies: dict[int, set[int]] = {}
    headers: dict[int, ir.Block] = {}
    for b in fn.blocks:
        for s in b.succs:
            if b in idom and s in idom and ir.dominates(idom, s, b):        # a back edge
                headers[id(s)] = s
                ir.reach_backwards([b], lambda p: p in idom, bodies.setdefault(id(s), {id(s)}))
    machine = {mb.name: mb for mb in mf.blocks}
    count = 0
    for h, body in bodies.items():
        if any(ins.opcode in ATOMICS for b in fn.blocks if id(b) in body for ins in b.instrs):
            mb = machine.get(headers[h].name)
            if mb is None:
                continue
            at = next((k for k, mi in enumerate(mb.instrs)
                       if mi.opcode not in PSEUDOS and mi.opcode != "BSYNC"), len(mb.instrs))
            mb.instrs.insert(at, MInstr("YIELD", (), [], 0))
            count += 1
    return count
