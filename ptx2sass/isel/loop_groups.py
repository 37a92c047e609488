"""Register groups carried around a loop stay in one aligned group (mma accumulators and
the ldmatrix tiles of a pipelined matmul).

PTX names each fragment register on its own, so a Triton matmul loop carries its
accumulators and its next A/B tiles as scalar phis; selected literally, every iteration
gathers the phis into fresh quads for HMMA (copies), scatters the results out (copies), and
moves them back into the phis' registers at the back edge (copies), and the allocator cannot
remove them because each scalar would have to sit in the part of several quads at once.
ptxas accumulates in place (`HMMA R4, R12, R2, R4`) and loads the next tile straight into
the registers the mma reads.

A group is planned on the IR of a loop that is one block H, or H and one body block B that
H enters and that returns to H (tinygrad's `bra END; LOOP: B; END: H`; below, B is H for a
one-block loop): phis p_0..p_{n-1} of H whose values from B are, in order, all the results
of one instruction X of B (an mma or an ldmatrix), and whose only readers are mma fragments of H that name p_0..p_{n-1} in order
(or, for A and B, an aligned run of them). A fragment read as an accumulator (C) must be the phis' only reader,
and the accumulation may go on through mmas in H whose results feed only the next one's C,
ending at X (`C -> mma -> mma -> back edge`). Then one wide register G, X's result
register, holds the phis, every such fragment, the chain's intermediate results and X's
results: the selection's copies between them become copies of G to itself and go, the
gathers' IMPLICIT_DEFs go, and the predecessors outside the loop fill G's parts after one
IMPLICIT_DEF. This is sound because nothing reads a phi after X (or after the first chain
mma, which rewrites G in place only where the phis had no other reader), and X's results
stay in G until the next iteration's first write of G.

The phis may also reach the chain through one step each (flash attention rescales its
accumulators, `acc_k = acc_k * alpha`, before the mma): p_k's only reader is one unguarded
instruction E_k of B, and E_k's results q_0..q_{n-1} are read only, in order, as the first
chain mma's C. q_k then takes G's part k too, so E_k rewrites that part in place (`FMUL R8,
R8, R58`, as ptxas's); this is kept only where E_k was selected as one instruction, the
only write of q_k and the only reader of p_k (`_steps_in_place`).

Where X comes before a reader (the next tile loaded before the mmas read the current one),
the phis get a group of their own instead: the readers take it in place, and the back edge
copies X's results into it, part by part (the copies ptxas makes too); accumulators are
never read after their chain's end, so this case has no C readers.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.isel.mma import mma_fragments
from ptx2sass.isel.wgmma import wgmma_accumulator
from ptx2sass.mir import COPY, IMPLICIT_DEF, MInstr, VOp, VReg, register_operands
from ptx2sass.opt.uses import reads
from ptx2sass.regalloc.allocate import move_source


def _is_mma(ins: ir.Instr) -> bool:
    """An mma or a `wgmma.mma_async` that reads C (D = C is one group rewritten in place)."""
    return ins.opcode == "mma" or wgmma_accumulator(ins) is not None


def _fragments(ins: ir.Instr) -> list[list]:
    """The mma's A, B, C source groups (a wgmma's: C only; its A and B are descriptors or
    registers the loop does not carry)."""
    if ins.opcode == "wgmma":
        c = wgmma_accumulator(ins)
        return [] if c is None else [[], [], c]
    sizes = mma_fragments(ins)
    if sizes is None:
        return []
    n_a, n_b, n_c = sizes
    return [ins.srcs[:n_a], ins.srcs[n_a:n_a + n_b], ins.srcs[n_a + n_b:n_a + n_b + n_c]]


def _same(values, group) -> bool:
    return len(values) == len(group) and all(isinstance(v, ir.Value) and v is g
                                             for v, g in zip(values, group))


def _offset_in(values, group) -> int | None:
    """Where `values` sit in `group` as an aligned run, in order (None: they do not)."""
    n = len(values)
    for start in range(0, len(group) - n + 1, n):
        if _same(values, group[start:start + n]):
            return start
    return None


class LoopGroups:
    def note_wide(self, ins: ir.Instr, d: VReg, fragments: tuple) -> None:
        """Record an mma's or ldmatrix's result register and fragment groups; its results
        (unguarded: they are then exactly the group's parts) can be read in place."""
        self.wide_regs[id(ins)] = (d, fragments)
        if self.guard is None and d.width == len(ins.dests):
            for k, v in enumerate(ins.dests):
                self.part_home[v.id] = (d, k)

    def plan_loop_groups(self) -> list[dict]:
        # a group's producer is an mma or an ldmatrix (`_plan_block`): without one, no plan,
        # and no natural-loop walk per loop header (quadratic in a loop nest's depth)
        if not any(_is_mma(ins) or ins.opcode == "ldmatrix" for b in self.fn.blocks for ins in b.instrs):
            return []
        readers: dict[int, list[tuple[ir.Instr, int]]] = {}     # value id -> (reader, group)
        for b in self.fn.blocks:
            for ins in b.instrs:
                for g, frag in enumerate(_fragments(ins) if _is_mma(ins) else ()):
                    for v in frag:
                        if isinstance(v, ir.Value):
                            readers.setdefault(v.id, []).append((ins, g))
        other_uses: dict[int, set[int]] = {}     # value id -> blocks with another kind of use
        plain: dict[int, list[tuple[ir.Block, ir.Instr | None]]] = {}    # value id -> its reads
        for block, who, v in reads(self.fn):
            plain.setdefault(v.id, []).append((block, who))
            if who is None or not _is_mma(who) or not _fragments(who) \
                    or (who.opcode == "wgmma" and not any(v is c for c in _fragments(who)[2])):
                other_uses.setdefault(v.id, set()).add(id(block))
        plans = []
        order = {id(b): i for i, b in enumerate(ir.reverse_postorder(self.fn))}
        for h in self.fn.blocks:
            if not h.phis:
                continue
            # the loop: H alone, or H and one body block B between H and the back edge
            # (tinygrad's `bra END; LOOP: body; END: test; @p bra LOOP`)
            bodies = [b for b in h.succs if b is h or (b.succs == [h] and b.preds == [h])]
            if len(bodies) == 1:
                plans += self._plan_block(h, bodies[0], readers, other_uses, plain)
            elif any(order.get(id(p), -1) >= order.get(id(h), 0) for p in h.preds):
                # (a retreating edge: H heads a loop; a join's walk would cost the whole CFG)
                latch = self._latch(h)
                if latch is not None:
                    plans += self._plan_block(h, latch, readers, other_uses, plain, strict=True)
        return plans

    def _latch(self, h: ir.Block) -> ir.Block | None:
        """The block B of a loop of more blocks (a GEMM mainloop's mbarrier wait loop
        between its loads and its wgmma) that holds the back edge to H, where B runs at most
        once per iteration: the one predecessor of H inside H's natural loop, whose other
        successors leave the loop. None for any other shape."""
        latches = []
        for b in h.preds:
            if b is h:
                return None
            loop, work = {id(h)}, [b]
            while work:
                x = work.pop()
                if id(x) in loop:
                    continue
                if x is self.fn.entry:
                    break                        # reached without H: not a back edge
                loop.add(id(x))
                work += x.preds
            else:
                latches.append((b, loop))
        if len(latches) != 1:
            return None
        b, loop = latches[0]
        return b if all(s is h or id(s) not in loop for s in b.succs) else None

    def _plan_block(self, h: ir.Block, body: ir.Block, readers, other_uses, plain,
                    strict: bool = False) -> list[dict]:
        pos = {id(ins): i for i, ins in enumerate(body.instrs)}
        by_back: dict[int, list[ir.Phi]] = {}
        for phi in h.phis:
            for b, v in phi.incoming:
                if b is body and isinstance(v, ir.Value):
                    by_back.setdefault(v.id, []).append(phi)
        # where a phi may be read otherwise: nowhere in a one-block loop (X's results replace
        # it in the group before the loop is left), outside the body in a two-block one (the
        # loop is left from H, where the group holds the phis)
        # (a loop of more blocks, `strict`: nowhere either)
        barred = {id(body)} if body is not h and not strict else None
        plans, taken = [], set()
        for x in body.instrs:
            if not (_is_mma(x) or x.opcode == "ldmatrix") or x.guard is not None or len(x.dests) < 2:
                continue
            phis = [by_back.get(d.id, []) for d in x.dests]
            if any(len(p) != 1 for p in phis) or any(id(p[0]) in taken for p in phis):
                continue
            group = [p[0].dest for p in phis]
            if any(sum(1 for b, _ in p[0].incoming if b is body) != 1 for p in phis):
                continue
            # the phis read each by one instruction of the body whose results are the
            # accumulator of one mma (flash attention's rescaled `acc *= alpha`): those
            # results stand for the phis in the group (`steps`)
            steps = None
            if not any(p.id in readers for p in group):
                steps = _steps(group, body, pos, readers, other_uses, plain)
            if steps is None and any(p.id in other_uses and (barred is None or other_uses[p.id] & barred)
                                     for p in group):
                continue
            read = [e.dests[0] for e in steps] if steps else group
            uses = {(id(m), g): (m, g) for p in read for m, g in readers.get(p.id, [])}
            ok = bool(uses)
            chain: list[ir.Instr] = []
            placed = []
            # X before a reader (the next tile loaded before the mmas read this one): the
            # phis get a group of their own, which X's results are copied into at the back edge
            own = any(id(m) in pos and pos[id(m)] > pos[id(x)] for m, _ in uses.values())
            for m, g in uses.values():
                start = _offset_in(_fragments(m)[g], read)
                placed.append((m, g, start))
                if id(m) not in pos or start is None or (g == 2 and (own or len(_fragments(m)[g]) != len(group))):
                    ok = False
                elif g == 2:                     # read as the accumulator: rewritten in place
                    chain = self._chain(m, x, pos, readers, other_uses)
                    ok = ok and chain is not None and len(uses) == 1
            if not ok or (_is_mma(x) and not chain) or (steps and (own or not chain)):
                continue
            taken.update(id(p[0]) for p in phis)
            plans.append({"phis": [p[0] for p in phis], "producer": x, "readers": placed,
                          "chain": chain, "own": own, "header": h, "body": body, "steps": steps or [],
                          "exits": [] if own else self._exit_phis(
                              h, x.dests if body is h else group, body, taken)})
        return plans

    @staticmethod
    def _exit_phis(h: ir.Block, values, body: ir.Block, taken: set[int]) -> list[tuple[ir.Block, list[ir.Phi]]]:
        """Phis of the loop's exits that take, in order, all the values the group holds
        when the loop is left (X's results from a one-block loop, the phis from H of a
        two-block one): they can be the group too, so the copies into them leave the loop."""
        out = []
        for e in h.succs:
            if e is h or e is body:
                continue
            found = []
            for d in values:
                match = [phi for phi in e.phis if id(phi) not in taken
                         and [v for b, v in phi.incoming if b is h] == [d]]
                if len(match) != 1:
                    break
                found.append(match[0])
            if len(found) == len(values):
                taken.update(id(phi) for phi in found)
                out.append((e, found))
        return out

    @staticmethod
    def _chain(first: ir.Instr, x: ir.Instr, pos, readers, other_uses):
        """mmas from `first` to `x`, each one's results read only as the next one's C."""
        chain, m = [first], first
        while m is not x:
            results = m.dests
            nxt = {id(r): r for d in results for r, g in readers.get(d.id, []) if g == 2}
            if len(nxt) != 1 or any(d.id in other_uses or len(readers.get(d.id, [])) != 1
                                    for d in results):
                return None
            m = next(iter(nxt.values()))
            if id(m) not in pos or pos[id(m)] > pos[id(x)] or not _same(_fragments(m)[2], results):
                return None
            chain.append(m)
        return chain

    def _steps_in_place(self, plan: dict) -> bool:
        """Whether each step of `plan` was selected as one instruction that reads its phi's
        register, which nothing else reads, and is its result's only write: only then may
        the phi and the result share a part of the group (an expansion that wrote its result
        before its last read of the phi would overwrite it)."""
        if not plan["steps"]:
            return True
        writes: dict[int, list[MInstr]] = {}
        reads_of: dict[int, list[MInstr]] = {}
        for mb in self.mf.blocks:
            for mi in mb.instrs:
                for _, op, is_def in register_operands(mi):
                    (writes if is_def else reads_of).setdefault(op.reg.id, []).append(mi)
        for phi, step in zip(plan["phis"], plan["steps"]):
            p, q = self.vreg(phi.dest), self.vreg(step.dests[0])
            if p.width != 1 or q.width != 1 or len(writes.get(q.id, ())) != 1:
                return False
            mi = writes[q.id][0]
            read = {op.reg.id for _, op, d in register_operands(mi) if not d}
            if mi.guard is not None or p.id not in read or any(r is not mi for r in reads_of.get(p.id, ())):
                return False
        return True

    def group_register(self, plan: dict) -> VReg:
        """X's result register, or the phis' own group when X comes before a reader."""
        if "register" not in plan:
            x_reg = self.wide_regs[id(plan["producer"])][0]
            plan["register"] = self.mf.new_vreg("R", x_reg.width) if plan["own"] else x_reg
        return plan["register"]

    def place_loop_groups(self, plans: list[dict]) -> None:
        """Rename the planned values' registers to parts of one group register (see the
        module docstring) and drop the copies and IMPLICIT_DEFs that become void."""
        plans = [plan for plan in plans if self._steps_in_place(plan)]
        if not plans:
            return
        renames: dict[int, tuple[VReg, int | None]] = {}
        groups: set[int] = set()
        temps = {id(phi): tmp for b in self.fn.blocks for phi, tmp in self.phi_temps.get(id(b), [])}
        for plan in plans:
            g = self.group_register(plan)
            groups.add(g.id)
            for k, phi in enumerate(plan["phis"]):
                renames[self.vreg(phi.dest).id] = (g, k)
                renames[temps[id(phi)].id] = (g, k)
            for k, step in enumerate(plan["steps"]):
                renames[self.vreg(step.dests[0]).id] = (g, k)
            for m, frag, start in plan["readers"]:
                reg = self.wide_regs[id(m)][1][frag].reg
                renames[reg.id] = (g, None if reg.width == g.width else start)
            if plan["own"]:
                continue
            for k, d in enumerate(plan["producer"].dests):
                renames[self.vreg(d).id] = (g, k)
            for _, phis in plan["exits"]:
                for k, phi in enumerate(phis):
                    renames[self.vreg(phi.dest).id] = (g, k)
                    renames[temps[id(phi)].id] = (g, k)
            for m in plan["chain"]:
                d, frags = self.wide_regs[id(m)]
                renames[d.id] = (g, None)
                renames[frags[2].reg.id] = (g, None)
                for k, v in enumerate(m.dests):
                    renames[self.vreg(v).id] = (g, k)

        def rename(op):
            if isinstance(op, VOp) and op.reg.id in renames:
                g, start = renames[op.reg.id]
                part = op.part if start is None else start + (op.part or 0)
                return VOp(g, part, op.neg, op.abs, op.inv, op.suffix)
            return op
        for mb in self.mf.blocks:
            kept: list[MInstr] = []
            for mi in mb.instrs:
                for i, op in enumerate(mi.operands):
                    new = rename(op)
                    if new is not op and op.part is None and op.reg.width > 1 and new.part is not None:
                        mi.widths[i] = op.reg.width      # a pair read from within the group
                    mi.operands[i] = new
                if mi.opcode == IMPLICIT_DEF and isinstance(mi.operands[0], VOp) \
                        and mi.operands[0].reg.id in groups:
                    continue
                if _self_copy(mi):
                    continue
                kept.append(mi)
            mb.instrs = kept
        # the predecessors outside the loop fill a group part by part: define it first
        for plan in plans:
            g, h = self.group_register(plan), plan["header"]
            edges = [(pred, h) for pred in h.preds if pred is not plan["body"]] + \
                [(pred, e) for e, _ in plan["exits"] for pred in e.preds if pred is not h]
            for pred, succ in edges:
                mb = self.phi_copy_blocks.get((id(pred), id(succ)))
                if mb is None:
                    continue
                first = next((i for i, mi in enumerate(mb.instrs) if any(
                    d and op.reg is g for _, op, d in register_operands(mi))), None)
                if first is not None:
                    mb.instrs.insert(first, MInstr(IMPLICIT_DEF, (), [VOp(g)], 1))


def _steps(group, body: ir.Block, pos, readers, other_uses, plain) -> list[ir.Instr] | None:
    """For phis p_0..p_{n-1}: the instructions E_k of `body`, one per phi, where E_k is p_k's
    only reader (unguarded, one result q_k) and q_0..q_{n-1} are read only, in order, as the
    accumulator of one mma after them; else None."""
    steps, mma = [], None
    for p in group:
        rs = plain.get(p.id, [])
        e = rs[0][1] if rs else None
        if e is None or any(b is not body or w is not e for b, w in rs) or e.guard is not None \
                or len(e.dests) != 1 or id(e) not in pos or e.opcode in ("mma", "wgmma") or e in steps:
            return None
        q = e.dests[0]
        uses = readers.get(q.id, [])
        if q.id in other_uses or len(uses) != 1 or uses[0][1] != 2 or (mma is not None and uses[0][0] is not mma):
            return None
        mma = uses[0][0]
        steps.append(e)
    if mma is None or id(mma) not in pos or any(pos[id(e)] > pos[id(mma)] for e in steps) \
            or not _same(_fragments(mma)[2], [e.dests[0] for e in steps]):
        return None
    return steps


def _self_copy(mi: MInstr) -> bool:
    src = move_source(mi) if mi.guard is None else None
    return src is not None and src == mi.operands[0]
