"""A scalar interpreter for one-thread launches: no NumPy on the hot path.

153 of the ZLUDA corpus's 179 launches are one thread of ~20 instructions; through the
machine each instruction pays for a group (NumPy index arrays), the step loop's bookkeeping
and, off the specialised forms, a NumPy handler on one lane. Here the thread's registers
are Python lists, and each instruction is a closure made once per kernel (and register
limit) from emu/single_lane.py's forms with list accessors (`LIST`): the same semantics,
bit for bit, as the machine's single-lane forms; control flow (BRA, CALL, RET, EXIT),
ULDC, special registers and no-ops have small forms of their own here.

Anything else (an instruction without a form, an access off the forms' fast path, a fault,
the budget running out) hands the thread to the machine at that instruction, a clean step
boundary: a one-warp `Machine` gets the registers, predicates, PC and counts, and runs the
rest (so it, not this, raises every fault). A launch under the hazard checker runs here too
when the checker watches the machine only as TimingModel does (`run_traced`, below: each
instruction's register reads and writes recorded as the machine records them, and handed to
the checker); a trace recorder or explicit reconvergence always takes the machine.
"""
from __future__ import annotations

import weakref
from types import SimpleNamespace
from typing import Callable

from ptx2sass.encoder.model import ConstRef, Imm, Label, Mem, Reg, SpecialReg

from .errors import EmuFault
from .ops_control import _target
from .scalar_forms import FORMS as OWN
from .scalar_runs import fuse
from .single_lane import FORMS, M32, M64, address_parts
from .blocks import _inline
from .specialise import _access, _imm32


class _Off(Exception):
    """An instruction off the scalar path: the machine runs it."""


class Thread:
    """The one thread's state. `m` is the thread itself and `lane` 0, as the single-lane
    forms read them (`w.m.tracing`, `address(m, w.lane)`)."""
    __slots__ = ("R", "P", "UR", "UP", "launch", "m", "bridge", "shared")
    tracing = False
    lane = 0
    warp = 0

    def __init__(self, launch):
        self.R = [0] * 256
        self.P = [False] * 7 + [True]
        self.UR = [0] * 256
        self.UP = [False] * 7 + [True]
        self.launch = launch
        self.m = self
        self.bridge = None      # (machine, group) once a step has needed the machine
        # the CTA's shared memory (a machine the thread meets takes it over: `_one_lane`)
        size = -(-launch.shared_total // 16) * 16
        fill = getattr(launch, "shared_fill", 0)
        self.shared = bytearray(size) if not fill else bytearray([fill]) * size


# --------------------------------------------------------------------------- operands

def _signed(get: Callable, inv: bool, negate: bool) -> Callable:
    if inv and negate:
        return lambda t: -(get(t) ^ M32) & M32
    if inv:
        return lambda t: get(t) ^ M32
    if negate:
        return lambda t: -get(t) & M32
    return get


def src(op, neg: bool = True) -> Callable | None:
    """f(t) → a source's 32-bit value, `~` applied, and `-` where `neg`."""
    negate = neg and getattr(op, "neg", False)
    inv = getattr(op, "inv", False)
    if op.__class__ is Reg and op.file in ("R", "UR"):
        i = op.index
        if op.is_zero:
            v = M32 if inv else 0
            v = -v & M32 if negate else v
            return lambda t: v
        get = (lambda t: t.R[i]) if op.file == "R" else (lambda t: t.UR[i])
        return _signed(get, inv, negate)
    if op.__class__ is Imm:
        v = int(_imm32(op)[0])
        v = -v & M32 if negate else v
        return lambda t: v
    if op.__class__ is ConstRef and op.ureg is None:
        bank, offset = op.bank, op.offset
        return _signed(lambda t: t.launch.const.read(bank, offset, 4), inv, negate)
    return None


def pred(op) -> Callable | None:
    if op.__class__ is Reg and op.file in ("P", "UP"):
        i, inv = op.index, op.inv
        if i == 7:
            return lambda t: not inv
        if op.file == "UP":
            return (lambda t: not t.UP[i]) if inv else (lambda t: t.UP[i])
        return (lambda t: not t.P[i]) if inv else (lambda t: t.P[i])
    return None


def _discard(t, v, mask) -> None:
    """The writer of RZ / PT: the value goes nowhere."""


def _r_dst_index(op, limit: int) -> int | None:
    """The R register a plain or traced writer stores to: its index (255: RZ, a discard), or
    None where the write is not this path's (another file, a suffix, an index at or past the
    launch's register limit: the machine's fault)."""
    if op.__class__ is not Reg or op.file != "R" or op.suffix:
        return None
    return op.index if op.index == 255 or op.index < limit else None


def _p_dst_index(op) -> int | None:
    """The predicate a plain or traced writer sets (7: PT, a discard), or None."""
    return op.index if op.__class__ is Reg and op.file == "P" else None


def _dst(limit: int) -> Callable:
    def dst(op) -> Callable | None:
        i = _r_dst_index(op, limit)
        if i is None or i == 255:
            return None if i is None else _discard

        def write(t, v, mask):
            t.R[i] = v
        return write
    return dst


def dst_pred(op) -> Callable | None:
    i = _p_dst_index(op)
    if i is None or i == 7:
        return None if i is None else _discard

    def write(t, v, mask):
        t.P[i] = bool(v)
    return write


def pair(i: int) -> Callable:
    if i == 255:
        return lambda t: 0
    if i + 1 >= 255:
        return lambda t: t.R[i]
    return lambda t: t.R[i] | t.R[i + 1] << 32


def const64(op: ConstRef) -> Callable:
    bank, offset = op.bank, op.offset
    return lambda t: t.launch.const.read(bank, offset, 8)


def address(mem) -> Callable | None:
    parts = address_parts(mem)
    if parts is None:
        return None
    i, off = parts
    if i + 1 >= 255:
        return lambda t, lane: t.R[i] + off & M64
    return lambda t, lane: (t.R[i + 1] << 32 | t.R[i]) + off & M64


_LISTS: dict[int, SimpleNamespace] = {}


def lists(limit: int) -> SimpleNamespace:
    """The forms' accessors for a thread's lists, under a register limit."""
    x = _LISTS.get(limit)
    if x is None:
        x = _LISTS[limit] = SimpleNamespace(src=src, pred=pred, dst=_dst(limit), dst_pred=dst_pred,
                                            pair=pair, const64=const64, address=address)
    return x


def _off(*args):
    raise _Off()


# --------------------------------------------------------------------------- uniform forms
# The uniform integer instructions run the handlers of their general forms (emu/registry),
# which read and write whatever files the operands name: the single-lane forms of those,
# with destinations in the uniform files, compute the same.

UNIFORM = {"UIADD3": "IADD3", "UMOV": "MOV", "USEL": "SEL", "UISETP": "ISETP", "UPRMT": "PRMT",
           "ULOP3": "LOP3", "UPOPC": "POPC"}


def _udst(op) -> Callable | None:
    if op.__class__ is not Reg or op.file != "UR" or op.suffix:
        return None
    i = op.index
    if i == 255:
        return _discard

    def write(t, v, mask):
        t.UR[i] = v
    return write


def _udst_pred(op) -> Callable | None:
    if op.__class__ is not Reg or op.file != "UP":
        return None
    i = op.index
    if i == 7:
        return _discard

    def write(t, v, mask):
        t.UP[i] = bool(v)
    return write


UNIFORM_LISTS = SimpleNamespace(src=src, pred=pred, dst=_udst, dst_pred=_udst_pred, pair=None, const64=None,
                                address=None)


# --------------------------------------------------------------------------- forms of its own
# Plain forms are f(t, s, active, mask) as the single-lane forms; control forms are f(t) → the
# next PC, or -1 when the thread exits.

def _uldc_parts(ins) -> tuple | None:
    """(UR index, bank, offset, size) of a ULDC this path runs, else None."""
    d, c = ins.operands
    mods = set(ins.modifiers)
    if not isinstance(c, ConstRef) or c.ureg is not None or c.inv or mods - {"64"} \
            or d.__class__ is not Reg or d.file != "UR" or d.is_zero or d.index >= 254:
        return None
    return d.index, c.bank, c.offset, 8 if "64" in mods else 4


def _uldc(ins, x):
    parts = _uldc_parts(ins)
    if parts is None:
        return None
    i, bank, offset, size = parts

    def uldc(t, s, active, mask):
        v = t.launch.const.read(bank, offset, size)
        t.UR[i] = v & M32
        if size == 8:
            t.UR[i + 1] = v >> 32
    return uldc


def _s2r(ins, x):
    d, sr = ins.operands
    write = x.dst(d)
    if not isinstance(sr, SpecialReg) or write is None:
        return None
    name, axis = sr.name, {"X": 0, "Y": 1, "Z": 2}.get(sr.name[-1])
    if name == "SR_LANEID" or axis is not None and name[:-1] in ("SR_TID.", "SR_CTAID."):
        return lambda t, s, active, mask: write(t, 0, mask)       # the one thread of the one CTA
    if axis is not None and name[:-1] in ("SR_NTID.", "SR_NCTAID."):
        dims = "block" if name.startswith("SR_NTID") else "grid"
        return lambda t, s, active, mask: write(t, getattr(t.launch, dims)[axis], mask)
    return None


def _operand_preds(ins) -> list | None:
    """Predicate operands that must hold as well as the guard (`EXIT P1`, `BRA.U !UP0`)."""
    preds = [pred(op) for op in ins.operands if op.__class__ is Reg and op.file in ("P", "UP")]
    return None if None in preds else preds


def _bra(ins, offset):
    if set(ins.modifiers) - {"U", "ANY"}:
        return None         # BRA.DIV/CONV: the machine's
    if any(op.__class__ is Reg and op.file not in ("P", "UP") for op in ins.operands):
        return None
    target, preds = _target(SimpleNamespace(ins=ins)), _operand_preds(ins)
    if preds is None or len(preds) > 1:
        return None
    if preds:
        p, nxt = preds[0], offset + 16
        return lambda t: target if p(t) else nxt
    return lambda t: target


def _call(ins, offset):
    from .externs import EXTERN_BASE, WINDOW
    if ins.modifiers != ("REL", "NOINC") or any(op.__class__ is Reg for op in ins.operands):
        return None
    target = _target(SimpleNamespace(ins=ins))
    if EXTERN_BASE <= target < EXTERN_BASE + WINDOW:
        return None
    return lambda t: target


def _ret(ins, offset):
    ops = ins.operands
    regs = [o for o in ops if o.__class__ is Reg and o.file in ("R", "UR")]
    if len(regs) != 1 or any(o.__class__ is Reg and o.file in ("P", "UP") for o in ops):
        return None
    base = next((o.offset or 0 for o in ops if isinstance(o, Label)), 0)
    base += sum(o.value for o in ops if isinstance(o, Imm))
    get = src(regs[0], neg=False)
    return lambda t: get(t) + base


def _exit(ins, offset):
    preds = _operand_preds(ins)
    if preds is None:
        return None
    nxt = offset + 16
    if not preds:
        return lambda t: -1
    return lambda t: -1 if all(p(t) for p in preds) else nxt


PLAIN = {"ULDC": _uldc, "S2R": _s2r}
CONTROL = {"BRA": _bra, "CALL": _call, "RET": _ret, "EXIT": _exit}


def _span(op) -> range:
    """The registers an operand may name: up to four from its index (a 128-bit access)."""
    if op.__class__ is Reg:
        if op.is_zero or op.index == 7 and op.file in ("P", "UP"):
            return range(0)
        return range(op.index, min(op.index + (1 if op.file in ("P", "UP") else 4), 255))
    base = getattr(op, "base", None)
    return _span(base) if base is not None else range(0)


# the register-valued fields of an operand: an address's base, uniform term and descriptor,
# a constant's index register (`c[0x3][R4]`, `c[0x0][UR4+0x10]`) and bindless bank
_REG_FIELDS = ("base", "ubase", "desc", "ureg", "ubank")


def _operand_regs(op) -> list:
    """Every register an operand names (itself, or the registers inside it)."""
    if op.__class__ is Reg:
        return [op]
    regs = []
    for name in _REG_FIELDS:
        r = getattr(op, name, None)
        if r.__class__ is Reg:
            regs.append(r)
    return regs


def _bridge(step, offset: int) -> Callable | None:
    """f(t, s, active, mask) running a plain step through the machine's handler on the
    thread's lane: the registers its operands name are copied to a one-lane machine (made at
    the launch's first such step, and kept: its shared and local memory with it), and back."""
    ins = step.ins
    if not step.plain or step.reads_clock or "MMA" in ins.opcode or step.releases:
        return None
    files = {"R": set(), "P": set(), "UR": set(), "UP": set()}
    for op in ins.operands + ((step.guard,) if step.guard is not None else ()):
        for r in _operand_regs(op):
            if r.file in files:
                files[r.file].update(_span(r))
    rs, ps, urs, ups = (sorted(files[k]) for k in ("R", "P", "UR", "UP"))

    def bridged(t, s, active, mask):
        if t.bridge is None:
            t.bridge = _one_lane(t)
        m, g = t.bridge
        R, P, UR, UP = m.R, m.P, m.UR, m.UP
        tR, tP, tUR, tUP = t.R, t.P, t.UR, t.UP
        for j in rs:
            R[j, 0] = tR[j]
        for j in ps:
            P[j, 0] = tP[j]
        for j in urs:
            UR[0, j] = tUR[j]
        for j in ups:
            UP[0, j] = tUP[j]
        m._general(g, step, offset)
        for j in rs:
            tR[j] = R.item(j, 0)
        for j in ps:
            tP[j] = P.item(j, 0)
        for j in urs:
            tUR[j] = UR.item(0, j)
        for j in ups:
            tUP[j] = UP.item(0, j)
    return bridged


def _one_lane(t: Thread):
    """A one-warp machine for the thread, on the thread's shared memory."""
    import numpy as np
    from .machine import _ONE_WARP, Group, Machine
    m = Machine(t.launch, [(0, 0, 0)])
    m.shared_data = np.frombuffer(t.shared, dtype=np.uint8)
    if t.tracing:                   # a traced thread: the machine carries on with its clock
        t.launch.timing_model.attach(m)
        m.clocks[0] = t.own_clock()
        m.timing = _Deferring(t)    # (until the machine takes over: `_machine`)
    return m, Group(m, m._live_lanes, _ONE_WARP, 0)


def _entry(decoded, offset: int, x):
    """(f, guard index, guard value that skips, control) for the instruction at `offset`, or
    False: the machine runs it."""
    from .ops_int import op_nop
    step = decoded.step(offset)
    if step is None:
        return False
    ins = step.ins
    g = step.guard
    if g is not None and g.file != "P":
        return False
    gi, skip = (None, None) if g is None else (g.index, bool(g.inv))
    op = ins.opcode
    make = CONTROL.get(op)
    if make is not None:
        f = make(ins, offset)
        return False if f is None else (f, gi, skip, True)
    if step.handler is op_nop:
        return (lambda t, s, active, mask: None, gi, skip, False)
    if not step.plain or step.reads_clock and op != "S2R":
        return False
    make = PLAIN.get(op)
    f = make(ins, x) if make is not None else None
    bridged = _bridge(step, offset)
    if f is None and op in FORMS:
        f = FORMS[op](step, bridged or _off, x)
    if f is None and op in OWN:
        f = OWN[op](step, bridged or _off, x)
    if f is None and op in UNIFORM:
        f = FORMS[UNIFORM[op]](step, bridged or _off, UNIFORM_LISTS)
    f = f or bridged
    return False if f is None else (f, gi, skip, False)


def suits(launch) -> bool:
    """Whether `launch` may run here: one thread, no observer, optimistic reconvergence."""
    return launch.threads_per_cta == 1 and launch.grid == (1, 1, 1) and launch.timing_model is None \
        and launch.reconverge == "optimistic" and getattr(launch, "recorder", None) is None


def run(launch) -> None:
    """Run the launch's one thread; hand it to the machine where this cannot go on."""
    decoded = launch.decoded
    limit = launch.regcount_limit
    cache = decoded.__dict__.setdefault("scalar", {})
    code = cache.get(limit)
    if code is None:
        code = cache[limit] = {}
    runs = decoded.__dict__.setdefault("scalar_runs", {}).setdefault(limit, {})
    x = lists(limit)
    t = Thread(launch)
    P = t.P
    budget = launch.budget
    used, most = budget.used, budget.limit
    start = used
    pc = 0
    try:
        while True:
            r = runs.get(pc, _UNSEEN)
            if r is _UNSEEN:
                r = fuse(code, runs, pc, limit, decoded, _CAUGHT, _written)
            if r is not None and used + r[1] <= most:
                k = r[0](t)
                if k >= 0:          # step k raised: the machine runs it (and the rest)
                    used += k
                    pc += 16 * k
                    break
                used += r[1]
                pc += 16 * r[1]
                continue
            e = code.get(pc)
            if e is None:
                e = code[pc] = _entry(decoded, pc, x)
            if e is False or used >= most:
                break
            f, g, skip, control = e
            if g is not None and P[g] is skip:
                pc += 16
            elif control:
                nxt = f(t)
                if nxt < 0:
                    used += 1
                    pc = -1
                    break
                pc = nxt
            else:
                f(t, None, True, True)
                pc += 16
            used += 1
    except (_Off, EmuFault):
        pass
    budget.used = used
    launch.thread_instructions += used - start
    try:
        if pc >= 0:
            _machine(launch, t, pc, used - start)
    finally:
        # the thread is its own `m` (a cycle): broken here, so that reference counting frees
        # the thread, its registers and its launch, not the cycle collector
        t.m = None
        if t.bridge is not None:
            t.bridge[0].release()
            t.bridge = None


def _written(step, limit: int) -> tuple | None:
    """(shape, parameters) of an unguarded step a fused run (emu/scalar_runs.py) writes out:
    emu/blocks.py's `_inline` moves and adds into a register under `limit`; a ULDC `_uldc`
    runs; a 4- or 8-byte LD/LDG/ST/STG single_lane's `_load`/`_store` takes (a 64-bit base
    register below R254, registers under `limit`), whose form runs where the access is off
    its fast path; else None."""
    ins = step.ins
    op = ins.opcode
    if op in ("MOV", "IMAD", "IADD3"):
        v = _inline(step)
        return (("inline", v[0]), v[1]) if v is not None and v[1][0] < limit else None
    if op == "ULDC":
        parts = _uldc_parts(ins)
        return None if parts is None else (("uldc", parts[3]), parts[:3])
    if op not in ("LD", "LDG", "ST", "STG") or len(ins.operands) != 2:
        return None
    load = op in ("LD", "LDG")
    reg, mem = ins.operands if load else ins.operands[::-1]
    acc = _access(ins.modifiers)
    parts = address_parts(mem) if isinstance(mem, Mem) else None
    if acc is None or acc[0] not in (4, 8) or parts is None or parts[0] + 1 >= 255 \
            or reg.__class__ is not Reg or reg.file != "R" or reg.index + acc[0] // 4 > min(limit, 255):
        return None
    return (("ld" if load else "st"), acc[0], op in ("LD", "ST"), True), (reg.index, *parts)


_UNSEEN = object()          # a PC whose run (emu/scalar_runs.py) is not known yet
_CAUGHT = (_Off, EmuFault)


def _machine(launch, t: Thread, pc: int, executed: int) -> None:
    """The machine from instruction `pc` on, with the thread's state."""
    import numpy as np
    if t.bridge is None:
        t.bridge = _one_lane(t)           # (released with the thread: scalar.run)
    m = t.bridge[0]
    if m.timing is not None:
        m.timing = launch.timing_model
    m.R[:, 0] = np.array(t.R, dtype=np.uint32)
    m.P[:, 0] = t.P
    m.UR[0, :] = np.array(t.UR, dtype=np.uint32)
    m.UP[0, :] = t.UP
    m.pc[0] = pc
    m.sel_pc[0] = pc
    m.executed[0] = executed
    m.run(launch.budget)


# --------------------------------------------------------------------------- with the checker
# A one-thread launch checked by the plain TimingModel runs here too: the thread records the
# registers each instruction reads and writes, as the machine's one-lane group does (the same
# single-lane forms, through accessors that record what emu/single_lane.py's `LANE` records),
# and hands them to the checker's `end` after each instruction, guarded-off ones included.
# Steps without a form run through the one-lane machine (`_general`, which calls the checker
# itself); anything else hands the thread, and its clock, to the machine.

class TracedThread(Thread):
    """A thread whose instructions the checker sees: its reads and writes, and its clock.

    The checker's `end` calls wait in `trail` as (step, lanes, reads, writes), a bridged
    step's too (`_Deferring`), until the machine takes the thread over, the trail reaches
    MAX_TRAIL at a branch, or the launch is over: `flush` makes them, in order, on the clock
    as it stands (`own_clock`)."""
    __slots__ = ("reads", "writes", "clock", "trail", "end", "flushed")
    tracing = True

    def __init__(self, launch):
        super().__init__(launch)
        self.reads: list = []
        self.writes: list = []
        self.clock = None           # made when first needed (`own_clock`: a kept trail needs none)
        self.trail: list = []
        self.end = launch.timing_model.end
        self.flushed = False        # whether the clock has been needed before the launch's end

    def own_clock(self):
        clock = self.clock
        if clock is None:
            clock = self.clock = self.launch.timing_model.new_clock()
        return clock

    def flush(self) -> None:
        """The waiting `end` calls, made now; the clock is current after."""
        trail, end, clock = self.trail, self.end, self.own_clock()
        for step, lanes, reads, writes in trail:
            end(clock, step, lanes, reads, writes)
        trail.clear()
        self.flushed = True


class _Deferring:
    """The checker as the thread's one-lane machine sees it while the thread runs here: a
    bridged step's `step` call joins the thread's trail. (`TimingModel.step` on one warp
    that owns its one clock, the thread's, comes to `end(clock, step, lanes, reads, writes)`;
    the machine reuses its lists, so they are copied.)"""
    __slots__ = ("trail",)

    def __init__(self, t: "TracedThread"):
        self.trail = t.trail

    def step(self, machine, step, warps, lanes, reads, writes) -> None:
        self.trail.append((step, int(lanes[0]), list(reads), list(writes)))


_OFF = (False,)         # a guarded-off instruction's mask (forms test `mask[0]`)


def _tsrc(op, neg: bool = True) -> Callable | None:
    if op.__class__ is Reg and op.file in ("R", "UR") and not op.is_zero:
        i, key = op.index, (op.file, op.index)
        if op.file == "R":
            def get(t):
                t.reads.append(key)
                return t.R[i]
        else:
            def get(t):
                t.reads.append(key)
                return t.UR[i]
        return _signed(get, getattr(op, "inv", False), neg and getattr(op, "neg", False))
    return src(op, neg)


def _tpred(op) -> Callable | None:
    if op.__class__ is not Reg or op.file != "P":
        return None                 # (uniform predicates: the machine's forms have none)
    i, inv = op.index, op.inv
    if i == 7:
        return lambda t: not inv
    key = ("P", i)

    def read(t):
        t.reads.append(key)
        return not t.P[i] if inv else t.P[i]
    return read


def _tdst(limit: int) -> Callable:
    def dst(op) -> Callable | None:
        i = _r_dst_index(op, limit)
        if i is None or i == 255:
            return None if i is None else _discard
        key = ("R", i)

        def write(t, v, mask):
            t.writes.append(key)
            if mask is True or mask[0]:
                t.R[i] = v
        return write
    return dst


def _tdst_pred(op) -> Callable | None:
    i = _p_dst_index(op)
    if i is None or i == 7:
        return None if i is None else _discard
    key = ("P", i)

    def write(t, v, mask):
        t.writes.append(key)
        if mask is True or mask[0]:
            t.P[i] = bool(v)
    return write


def _tpair(i: int) -> Callable:
    if i == 255:
        return lambda t: 0
    keys = [("R", i), ("R", i + 1)]
    if i + 1 >= 255:
        def read(t):
            t.reads += keys
            return t.R[i]
        return read

    def read(t):
        t.reads += keys
        return t.R[i] | t.R[i + 1] << 32
    return read


def _tupred(op) -> Callable | None:
    if op.__class__ is not Reg or op.file != "UP":
        return _tpred(op)
    i, inv = op.index, op.inv
    if i == 7:
        return lambda t: not inv
    key = ("UP", i)

    def read(t):
        t.reads.append(key)
        return not t.UP[i] if inv else t.UP[i]
    return read


def _tudst(op) -> Callable | None:
    write = _udst(op)
    if write is None or write is _discard:
        return write
    i, key = op.index, ("UR", op.index)

    def write(t, v, mask):
        t.writes.append(key)
        t.UR[i] = v
    return write


def _tudst_pred(op) -> Callable | None:
    write = _udst_pred(op)
    if write is None or write is _discard:
        return write
    i, key = op.index, ("UP", op.index)

    def write(t, v, mask):
        t.writes.append(key)
        t.UP[i] = bool(v)
    return write


# the uniform forms' accessors for a traced thread (UNIFORM_LISTS with what they touch recorded)
TRACED_UNIFORM_LISTS = SimpleNamespace(src=_tsrc, pred=_tupred, dst=_tudst, dst_pred=_tudst_pred, pair=None,
                                       const64=None, address=None, traced=True)


_TRACED: dict[int, SimpleNamespace] = {}


def traced_lists(limit: int) -> SimpleNamespace:
    """The forms' accessors for a traced thread's lists: what they read and write recorded."""
    x = _TRACED.get(limit)
    if x is None:
        x = _TRACED[limit] = SimpleNamespace(src=_tsrc, pred=_tpred, dst=_tdst(limit), dst_pred=_tdst_pred,
                                             pair=_tpair, const64=const64, address=address, traced=True)
    return x


def _tuldc(ins):
    d, c = ins.operands
    mods = set(ins.modifiers)
    if not isinstance(c, ConstRef) or c.ureg is not None or c.inv or mods - {"64"} \
            or d.__class__ is not Reg or d.file != "UR" or d.is_zero or d.index >= 254:
        return None
    size = 8 if "64" in mods else 4
    bank, offset, i = c.bank, c.offset, d.index
    keys = [("UR", i), ("UR", i + 1)] if size == 8 else [("UR", i)]

    def uldc(t, s, active, mask):
        v = t.launch.const.read(bank, offset, size)
        t.writes += keys
        t.UR[i] = v & M32
        if size == 8:
            t.UR[i + 1] = v >> 32
    return uldc


def _tret(ins, offset):
    f = _ret(ins, offset)
    reg = next(o for o in ins.operands if o.__class__ is Reg and o.file in ("R", "UR"))
    if f is None or reg.is_zero:
        return f
    key = (reg.file, reg.index)

    def ret(t):
        t.reads.append(key)
        return f(t)
    return ret


def _tbra(ins, offset):
    return _bra(ins, offset) if _operand_preds(ins) == [] else None


def _texit(ins, offset):
    return _exit(ins, offset) if _operand_preds(ins) == [] else None


def _no_address_registers(ins) -> bool:
    from .specialise import shared_address_parts
    mem = next((o for o in ins.operands if isinstance(o, Mem)), None)
    parts = shared_address_parts(mem) if mem is not None else None
    return parts is not None and parts[0] is None and parts[1] is None


# emu/scalar_forms.py's forms (unguarded) record what their handlers do, read through the
# traced accessors (`x.traced`: DFMA/DMUL/F2F/IMAD.HI read sources again as their handlers
# do), except VOTEU (it writes its uniform registers unrecorded); LDS/STS read an address
# register unrecorded (`_TRACED_OWN`: only those reading none).
# (tests/test_emu_scalar_traced.py compares every `end` call with the machine's.)
_UNTRACED_OWN = frozenset(("VOTEU",))
_TRACED_OWN = {"LDS": _no_address_registers, "STS": _no_address_registers}


# control forms with the checker: the machine records a guard's read and, for RET, its register
TCONTROL = {"BRA": _tbra, "CALL": _call, "RET": _tret, "EXIT": _texit}
_PLAIN, _CONTROL, _BRIDGED = 0, 1, 2


def _tentry(decoded, offset: int, x):
    """(f, guard index, guard value that skips, kind, step) for the instruction at `offset`
    with the checker, or False: the machine runs it."""
    from .ops_int import op_nop
    step = decoded.step(offset)
    if step is None:
        return False
    ins = step.ins
    g = step.guard
    if g is not None and g.file != "P":
        return False
    gi, skip = (None, None) if g is None else (g.index, bool(g.inv))
    op = ins.opcode
    make = TCONTROL.get(op)
    if make is not None:
        if g is not None and op in ("CALL", "RET"):
            return False
        f = make(ins, offset)
        return False if f is None else (f, gi, skip, _CONTROL, step)
    if step.handler is op_nop and step.fast:
        return (lambda t, s, active, mask: None, gi, skip, _PLAIN, step)
    if not step.plain or step.reads_clock and op != "S2R":
        return False
    f = None
    if op == "ULDC" and g is None:
        f = _tuldc(ins)
    elif op == "S2R" and step.fast:
        f = _s2r(ins, x)
    bridged = _bridge(step, offset)
    fallback = _off if bridged is None else _bridged_fallback(bridged)
    if f is None and op in FORMS and step.fast:
        f = FORMS[op](step, fallback, x)
    if f is None and g is None and op in OWN and op not in _UNTRACED_OWN and step.fast \
            and _TRACED_OWN.get(op, bool)(ins):
        f = OWN[op](step, fallback, x)
    if f is None and g is None and op in UNIFORM and step.fast:
        f = FORMS[UNIFORM[op]](step, fallback, TRACED_UNIFORM_LISTS)
    if f is not None:
        return (f, gi, skip, _PLAIN, step)
    return False if bridged is None else (bridged, None, None, _BRIDGED, step)


class _Bridged(Exception):
    """A form's fallback ran the step on the one-lane machine, the checker's call included."""


def _bridged_fallback(bridged):
    def fallback(t, s, active, mask):
        bridged(t, s, True, True)   # (the machine's `_general` calls the checker)
        raise _Bridged()
    return fallback


_OBSERVES = ("step", "end", "new_clock", "attach", "finish", "barrier_release", "sole_clock")


def _plain_checker(cls) -> bool:
    """Whether TimingModel subclass `cls` observes a machine as TimingModel does (it may
    judge with another latency model, as the hazard stress test's does), kept per class."""
    ok = _CHECKERS.get(cls)
    if ok is None:
        from .hazards import TimingModel
        ok = _CHECKERS[cls] = issubclass(cls, TimingModel) and \
            all(getattr(cls, name) is getattr(TimingModel, name) for name in _OBSERVES)
    return ok


_CHECKERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def suits_traced(launch) -> bool:
    """Whether `launch` may run here with its checker: one thread, a checker that watches
    the machine only as TimingModel does (`_plain_checker`), optimistic reconvergence, no
    trace recorder."""
    return launch.threads_per_cta == 1 and launch.grid == (1, 1, 1) \
        and _plain_checker(type(launch.timing_model)) \
        and launch.reconverge == "optimistic" and getattr(launch, "recorder", None) is None


_PKEYS = [("P", i) for i in range(8)]
# Kept trails per decoding (`_memo_entries`): a launch whose steps ran on the scalar path alone
# (no one-lane machine, not handed over) and whose trail equals a kept one's ends with the
# same clock and the same `_flag` calls. `end` is a function of the clock it starts from
# (each launch's is a fresh `new_clock()`), of each call's step (its facts), lanes, reads
# and writes, and of the checker's latency model and methods: the key holds those.
MEMO_TRAILS = 4             # trails kept per (decoding, register limit, checker)
MAX_TRAIL = 1 << 14         # a longer trail is flushed at a branch (memory), and kept by no one


def _memo_entries(decoded, tm, limit) -> list | None:
    if MEMO_TRAILS <= 0 or type(tm).end is not _pure_end():
        return None                 # (an `end` wrapped in place, as a test's, sees every call)
    from .checker_trail import memo_list
    return memo_list(decoded, "scalar_traced_memo", (limit, type(tm), id(tm.lat), tm.serialised), tm.lat)


def _pure_end():
    global _PURE_END
    if _PURE_END is None:
        from .hazards import PURE_END
        _PURE_END = PURE_END
    return _PURE_END


_PURE_END = None


def _finish_alone(t: TracedThread, tm, entries) -> int:
    """The clock's final cycle for a launch that ran on the scalar path alone: a kept trail's
    (its `_flag` calls made again, in order), or its own `end` calls made now (and kept)."""
    trail = t.trail
    if entries is None:
        t.flush()
        return t.clock.t
    for kept in entries:
        if kept[0] == trail:
            flag = tm._flag
            for offset, message in kept[2]:
                flag(offset, message)
            return kept[1]
    flags: list = []
    flag = tm._flag

    def recording(offset, message):
        flags.append((offset, message))
        flag(offset, message)
    t.trail = list(trail)
    tm._flag = recording
    try:
        t.flush()
    finally:
        del tm._flag
    entries.insert(0, (trail, t.clock.t, flags))
    del entries[MEMO_TRAILS:]
    return t.clock.t


def run_traced(launch) -> None:
    """Run the launch's one thread under its checker; hand it (and its clock) to the machine
    where this cannot go on. The checker's calls for scalar steps wait in the thread's trail
    (`TracedThread.flush`); a launch that runs here alone and retraces a kept trail takes its
    outcome (`_finish_alone`)."""
    tm = launch.timing_model
    decoded = launch.decoded
    limit = launch.regcount_limit
    cache = decoded.__dict__.setdefault("scalar_traced", {})
    code = cache.get(limit)
    if code is None:
        code = cache[limit] = {}
    x = traced_lists(limit)
    t = TracedThread(launch)
    P, trail, pkeys = t.P, t.trail, _PKEYS
    add = trail.append
    budget = launch.budget
    used, most = budget.used, budget.limit
    start = used
    pc = 0
    try:
        while True:
            e = code.get(pc)
            if e is None:
                e = code[pc] = _tentry(decoded, pc, x)
            if e is False or used >= most:
                break
            f, g, skip, kind, step = e
            if kind == _BRIDGED:
                f(t, None, True, True)      # (the machine's `_general` calls the checker)
                pc += 16
                used += 1
                continue
            t.reads = reads = []
            t.writes = writes = []
            on = True
            if g is not None:
                if g != 7:
                    reads.append(pkeys[g])
                on = P[g] is not skip
            if kind == _CONTROL:
                nxt = f(t) if on else pc + 16
                add((step, 1, reads, writes))
                used += 1
                if len(trail) >= MAX_TRAIL:
                    t.flush()
                if nxt < 0:
                    pc = -1
                    break
                pc = nxt
            else:
                try:
                    f(t, step, True, True if on else _OFF)
                except _Bridged:
                    pass
                else:
                    add((step, 1, reads, writes))
                pc += 16
                used += 1
    except (_Off, EmuFault):
        pass
    except BaseException:
        t.flush()
        raise
    budget.used = used
    launch.thread_instructions += used - start
    try:
        if pc >= 0:
            t.flush()
            _machine(launch, t, pc, used - start)
            tm.finish(t.bridge[0])
        elif t.flushed:
            t.flush()
            tm.cycles = max(tm.cycles, t.clock.t)
        else:       # (a one-lane machine's clock is the thread's: `finish` would read it alone)
            tm.cycles = max(tm.cycles, _finish_alone(t, tm, _memo_entries(decoded, tm, limit)))
    finally:
        t.m = None
        tm._parts = None
        if t.bridge is not None:
            t.bridge[0].release()
            t.bridge = None
