"""Fixed uniform-register address computations out of loops, and not repeated in a block.

Selection writes some addresses into fixed uniform registers right before each reader: an
mbarrier in shared memory is `S2UR UR9, SR_CgaCtaId; UMOV UR8, off; ULEA UR8, UR9, UR8, 0x18`
(isel/mbarrier_syncs.py), a kernel parameter `ULDC UR8, c[0x0][..]`. A wait loop
(`LAB_WAIT: mbarrier.test_wait ...; @!p bra LAB_WAIT`) then paid the S2UR's latency and
three instructions every spin, and consecutive arrivals on one object each computed it
again; ptxas computes it once, before the loop (`[UR5]` in the loop).

A *run* is a maximal sequence, in one block, of unguarded uniform instructions that write
fixed uniform registers from nothing but immediates, constant-bank words, special registers
that do not change while the kernel runs, and registers the run itself wrote before (other
instructions may stand between its members as long as they neither read nor write what the
run writes). Its value is the same wherever it runs. Two changes:

- **hoist**: in a natural loop with a preheader, when every instruction of the loop that
  writes one of these registers belongs to a run, the runs writing a register are all the
  same, and every read of such a register in the loop or in code after it follows, in its
  block, a write of it (the values before and after the loop are then never read), the
  loop's runs go (one copy of each) to the end of the preheader. Only where the preheader
  is outside divergent code (`uniform_datapath._divergent_region`): a
  uniform register held across the loop there could be written by the other side of a
  divergent branch between two spins.
- **repeat**: a run whose value its registers already hold on every path to it (an
  equal run before it, nothing writing them since) goes, outside divergent code (where a
  block runs, the whole warp has run everything before it).

Switch: `HOIST_UNIFORM_RUNS`."""
from __future__ import annotations

from ptx2sass.encoder.model import ConstRef, Imm, Mem, Reg, SpecialReg
from ptx2sass.mir import MBlock, MFunction, MInstr, VMem, VOp

HOIST_UNIFORM_RUNS = True        # A/B flag
INVARIANT_SPECIAL = frozenset({"SR_CgaCtaId", "SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z"})


def _width(mi: MInstr, i: int) -> int:
    if i in mi.widths:
        return mi.widths[i]
    return 4 if "128" in mi.modifiers else 2 if "64" in mi.modifiers else 1


def _urs(reg, width: int = 1) -> set[int]:
    if type(reg) is Reg and reg.file == "UR" and not reg.is_zero:
        return set(range(reg.index, reg.index + width))
    return set()


def _writes(mi: MInstr) -> set[int]:
    out = {k for f, k in mi.clobbers if f == "UR"}
    for i, op in enumerate(mi.operands[:mi.ndefs]):
        out |= _urs(op, _width(mi, i))
    return out


def _reads(mi: MInstr) -> set[int]:
    out: set[int] = set()
    for i, op in enumerate(mi.operands):
        if i < mi.ndefs:
            continue
        if type(op) is Reg:
            out |= _urs(op, _width(mi, i))
        elif isinstance(op, (Mem, VMem)):
            ub = op.ubase
            out |= _urs(ub, 2 if type(ub) is Reg and ".64" in ub.suffix else 1)
            out |= _urs(getattr(op, "desc", None), 2)
            out |= _urs(op.base if isinstance(op, Mem) else None,
                        2 if isinstance(op, Mem) and type(op.base) is Reg and ".64" in op.base.suffix else 1)
        elif type(op) is ConstRef:
            out |= _urs(op.ureg) | _urs(op.ubank)
    return out


def _invariant_member(mi: MInstr) -> bool:
    """An unguarded uniform instruction that writes only fixed uniform registers and reads
    only values that do not change while the kernel runs (or fixed uniform registers)."""
    if mi.guard is not None or mi.clobbers or mi.ndefs < 1 or mi.warp_combine is not None:
        return False
    if not (mi.opcode.startswith("U") or mi.opcode in ("S2UR", "LDCU")):
        return False
    if not all(type(d) is Reg and d.file == "UR" and not d.is_zero for d in mi.operands[:mi.ndefs]):
        return False
    for op in mi.operands[mi.ndefs:]:
        t = type(op)
        if t is Imm:
            continue
        if t is Reg and op.file == "UR":
            continue
        if t is SpecialReg and op.name in INVARIANT_SPECIAL:
            continue
        if t is ConstRef and op.ureg is None and op.ubank is None:
            continue
        return False
    return True


def _key(mi: MInstr) -> tuple:
    return (mi.opcode, mi.modifiers, tuple(mi.operands), mi.ndefs, tuple(sorted(mi.widths.items())))


def _runs(b: MBlock, watched: set[int] | None = None) -> tuple[list[list[MInstr]], bool]:
    """The block's runs, and whether every read of a register a run writes (or of
    `watched`) follows a write of it in the block."""
    runs: list[list[MInstr]] = []
    current: list[MInstr] = []
    written: set[int] = set()          # written in the block so far
    cur_writes: set[int] = set()
    ok = True
    for mi in b.instrs:
        w, r = _writes(mi), _reads(mi)
        if watched is not None and (r & watched) - written:
            ok = False
        written |= w
        if _invariant_member(mi) and r <= cur_writes:
            current.append(mi)
            cur_writes |= w
            continue
        if current and (w | r) & cur_writes:
            runs.append(current)
            current, cur_writes = [], set()
    if current:
        runs.append(current)
    return runs, ok


def hoist_uniform_runs(mf: MFunction) -> None:
    """See the module docstring."""
    if not HOIST_UNIFORM_RUNS:
        return
    from ptx2sass.isel.uniform_datapath import _divergent_region, _left_alone
    if _left_alone(mf) or not any(mi.opcode == "S2UR" or mi.opcode.startswith("U") and mi.ndefs
                                  for b in mf.blocks for mi in b.instrs):
        return
    region = _divergent_region(mf)
    _hoist(mf, region)
    _drop_available(mf, region)


def _hoist(mf: MFunction, region: set[int]) -> None:
    from ptx2sass.isel.target_forms import _append_before_exit, _loop_preheaders
    preheaders = _loop_preheaders(mf)
    if not preheaders:
        return
    loops: dict[int, tuple[MBlock, set[int]]] = {}
    for pre, body in preheaders.values():
        loops[id(pre)] = (pre, body)
    for pre, body in loops.values():
        if id(pre) in region:
            continue
        blocks = [b for b in mf.blocks if id(b) in body]
        runs: list[list[MInstr]] = []
        members: set[int] = set()
        for b in blocks:
            rs, _ok = _runs(b)
            runs.extend(rs)
            members |= {id(mi) for run in rs for mi in run}
        if not runs:
            continue
        run_writes = set().union(*(_writes(mi) for run in runs for mi in run))
        # every writer of those registers in the loop belongs to a run
        if any(_writes(mi) & run_writes and id(mi) not in members for b in blocks for mi in b.instrs):
            continue
        # the runs writing a register are all the same
        by_regs: dict[frozenset, tuple] = {}
        same = True
        for run in runs:
            regs = frozenset().union(*(_writes(mi) for mi in run))
            key = tuple(_key(mi) for mi in run)
            if by_regs.setdefault(regs, key) != key:
                same = False
        if not same or sum(len(r) for r in by_regs) != len(set().union(*by_regs)):
            continue                   # (two different runs share a register)
        # every read of them in the loop or after it follows a write in its block
        after, todo = set(body), [s for b in blocks for s in b.succs]
        while todo:
            s = todo.pop()
            if id(s) not in after:
                after.add(id(s))
                todo.extend(s.succs)
        if not all(_runs(b, run_writes)[1] for b in mf.blocks if id(b) in after):
            continue
        first: dict[frozenset, list[MInstr]] = {}
        for run in runs:
            first.setdefault(frozenset().union(*(_writes(mi) for mi in run)), run)
        gone = {id(mi) for run in runs for mi in run}
        for b in blocks:
            b.instrs[:] = [mi for mi in b.instrs if id(mi) not in gone]
        _append_before_exit(pre, [mi for run in first.values() for mi in run])


def _drop_available(mf: MFunction, region: set[int]) -> None:
    """Remove each run whose value its registers already hold on every path to it (forward
    availability over the blocks: a run makes its value available, any other write of one
    of its registers ends that), outside divergent code."""
    runs_of: dict[int, dict[int, tuple[int, tuple, frozenset]]] = {}   # block -> member -> (run, key, regs)
    for b in mf.blocks:
        info = {}
        for k, run in enumerate(_runs(b)[0]):
            key = tuple(_key(mi) for mi in run)
            regs = frozenset().union(*(_writes(mi) for mi in run))
            for mi in run:
                info[id(mi)] = (k, key, regs, mi is run[0], mi is run[-1])
        runs_of[id(b)] = info
    everything = {(v[1], v[2]) for info in runs_of.values() for v in info.values()}
    if not everything:
        return

    def walk(b: MBlock, avail: set, gone: set | None) -> set:
        avail = set(avail)
        info = runs_of[id(b)]
        skip = None
        for mi in b.instrs:
            v = info.get(id(mi))
            if v is not None and v[0] == skip:
                continue
            if v is not None and v[3] and (v[1], v[2]) in avail and gone is not None \
                    and id(b) not in region:
                gone.add((id(b), v[0]))
                skip = v[0]
                continue
            w = _writes(mi)
            if w:
                avail = {a for a in avail if not a[1] & w}
            if v is not None and v[4]:
                avail.add((v[1], v[2]))
        return avail

    entry = mf.blocks[0]
    out = {id(b): set(everything) for b in mf.blocks}
    out[id(entry)] = walk(entry, set(), None)
    changed = True
    while changed:
        changed = False
        for b in mf.blocks:
            if b is entry:
                continue
            preds = [out[id(p)] for p in b.preds]
            avail = set.intersection(*preds) if preds else set()
            new = walk(b, avail, None)
            if new != out[id(b)]:
                out[id(b)] = new
                changed = True
    for b in mf.blocks:
        if id(b) in region:
            continue
        preds = [out[id(p)] for p in b.preds]
        avail = set.intersection(*preds) if preds and b is not entry else set()
        gone: set = set()
        walk(b, avail, gone)
        if gone:
            info = runs_of[id(b)]
            b.instrs[:] = [mi for mi in b.instrs
                           if id(mi) not in info or (id(b), info[id(mi)][0]) not in gone]
