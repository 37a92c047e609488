"""Full unrolling of counted loops, as ptxas does for short ones.

tinygrad writes every reduction as a loop over a constant range (`ridx = -1; bra END; LOOP:
body; END: ridx += 1; setp.lt p, ridx, 16; @p bra LOOP`). Run as a loop, each iteration waits
for its load before the next begins; ptxas unrolls it completely, issues all the loads at once
and folds the induction variable into each address. Unrolling changes nothing a thread
computes: the same instructions run in the same order, the loop branch (uniform: its
condition depends only on constants) disappears.

Loops of more than MAX_TRIPS unroll fully only where their trips are as short as LONG_FULL
says (ptxas's measured limits). Other loops of more than MAX_TRIPS, and those of more than
FULL_ONLY_TRIPS too long to unroll fully,
whose body count is a multiple of one of PARTIAL (the largest that fits) keep their loop but
run that many copies of the body per exit test (`_unroll_partially`).

A loop qualifies when it is innermost and simple: a header H ending in a conditional branch to
a body block B that branches straight back (or H branching to itself), entered from one
preheader; its trip count is found by evaluating H's induction arithmetic from the phis'
constant initial values (integer add/sub/mul/mad/shl/and/or/xor/shr, setp), at most
MAX_TRIPS times and FULL_INSTRUCTIONS instructions in all (MAX_INSTRUCTIONS where a trip is
longer than FULL_TRIP_INSTRUCTIONS, as ptxas keeps such loops). The copies are straight-line code in
H: per iteration the phis become movs of the previous copy's values (constants then propagate),
the branches go, and uses after the loop take the last copy's values.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.fold import _fold, signed_value
from ptx2sass.opt.uses import substitute

# loops of up to MAX_TRIPS trips unroll fully when the copies fit FULL_INSTRUCTIONS (64, was
# 32: tinygrad logsumexp's 50 trips of 128-bit loads ran 10 copies per exit test, five waits for
# memory, SM model 1.68x ptxas's, which unrolls it fully (ptxas 13.5 unrolls such a loop fully
# up to at least 300 trips); fully, with the pre-scheduler's LOAD_WINDOW: 1.03x); those of up
# to FULL_ONLY_TRIPS that do not fit stay loops, longer ones run copies per exit test
MAX_TRIPS = 64
FULL_ONLY_TRIPS = 16
# longer loops: the body this many times per exit test, the first that divides the count and
# fits MAX_INSTRUCTIONS. Up to 32: a reduction over 256 or 1024 elements with few threads is
# bound by its loads' latency, and each exit test waits for the copies' loads; ptxas unrolls
# such loops 64x or fully (H200 GPU check: 8 copies ran 1.5-2x ptxas's time). 2 measured worse.
# The largest divisor that fits wins: with only (32, 16, 8, 4, 5, 3, 7) a 50-trip loop of
# 128-bit loads (tinygrad logsumexp) ran 5 copies, ten waits for memory where 10 copies wait
# five times (ptxas unrolls it fully and keeps 8-20 loads in flight).
PARTIAL = tuple(range(32, 2, -1))
MAX_SIMULATED = 1 << 12      # trip counts found by evaluation up to this
# instructions of the unrolled code (or of a partially unrolled body: more copies of a
# load-heavy body outgrow the pre-allocation scheduler's 64 live registers and its loads go
# back to one at a time: tinygrad matvec with 16 copies, 4.6x ptxas's SM cycles)
MAX_INSTRUCTIONS = 400
# instructions of a fully unrolled loop of short trips: straight-line code the pre-scheduler
# keeps loads of in flight up to its LOAD_WINDOW (cnn_forward's 25 trips, 534 SASS
# instructions: SM model 3877 cycles as 5 copies per exit test, 2855 fully; ptxas 3388 with
# 893 instructions). A loop of longer trips unrolls fully only within MAX_INSTRUCTIONS, as
# ptxas 13.5 does: a barrier loop (`bar.sync`, shared load, hash rounds, shared store) of
# 73 PTX instructions a trip (76 here) it unrolls fully at 8 trips, of 77 (80) it keeps at 8,
# 16 and 64 trips; of 33 at 32 trips and 17 at 64 it unrolls fully; longer trips only up to
# 388-485 PTX instructions in all (97 x 4 unrolled, 97 x 5 not, 169 x 2 unrolled, 169 x 3
# not). CUB's block radix sort (8 passes of 122) unrolled fully went 167 -> 922 instructions
# (ptxas 160, a loop). Measured with tests/test_unroll_fits_schedule.py's `_barrier_loop`.
FULL_INSTRUCTIONS = 1000
FULL_TRIP_INSTRUCTIONS = 76
# loops of more than MAX_TRIPS unroll fully where a trip is short: (instructions a trip at most,
# trips at most). ptxas 13.5 unrolls tinygrad's 256-trip sum_uint64/sum_float64 loop (8 here:
# the header's increment and compare, two phis, an address, one load and an add) fully, and
# that loop with its bound changed up to 368 trips (2680 SASS instructions), not at 376 (64
# copies per exit test); with two more loads and adds a trip (12) up to 96 trips, not at 112.
# Partially (16 copies), every exit test waited for the copies' loads: SM model 1.88x / 1.40x
# ptxas's. tinygrad matmul_f32_odd's 65 trips of two loads and an FMA (11) unroll fully under
# the second pair, as ptxas's do.
LONG_FULL = ((8, 368), (12, 96))
# registers the copies' loads may hold at once: the same limit for loads of 64-bit values
# (32 copies of a 64-bit sum on sm_90: 3.5x ptxas's SM cycles, 16: below 8's)
MAX_LOADED_WORDS = 48
INT_COMPARES = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"}


def _compare(cmp: str, a: int, b: int, ty: str) -> bool | None:
    bits = ir.type_bits(ty)
    if ty[0] == "s" and cmp in ("lt", "le", "gt", "ge"):
        a, b = signed_value(a, bits), signed_value(b, bits)
    else:
        a, b = a & ((1 << bits) - 1), b & ((1 << bits) - 1)
    op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def _evaluate(ins: ir.Instr, known: dict[int, int]) -> int | bool | None:
    """The value `ins` computes when its sources are known integers (None otherwise)."""
    srcs = []
    for s in ins.srcs:
        if isinstance(s, ir.Const):
            srcs.append(s)
        elif isinstance(s, ir.Value) and s.id in known and not isinstance(known[s.id], bool):
            srcs.append(ir.Const(known[s.id], s.type))
        else:
            return None
    if ins.guard is not None or len(ins.dests) != 1 or ins.type is None or ins.type not in ir.TYPES:
        return None
    if ins.opcode == "setp":
        if len(srcs) != 2 or ins.type[0] not in "sub" or len(ins.modifiers) != 1 \
                or ins.modifiers[0] not in INT_COMPARES:
            return None
        return _compare(ins.modifiers[0], srcs[0].value, srcs[1].value, ins.type)
    if ins.opcode == "mov":
        return srcs[0].value if len(srcs) == 1 and ins.dests[0].type != "pred" else None
    const = _fold(ir.Instr(ins.opcode, dests=ins.dests, srcs=srcs, modifiers=ins.modifiers,
                           type=ins.type))
    return None if const is None else const.value


def _shape(h: ir.Block):
    """(preheader, body or None for a one-block loop, exit) of a simple loop headed by h."""
    if not h.instrs or h.instrs[-1].opcode != "bra" or h.instrs[-1].guard is None or len(h.succs) != 2:
        return None
    if len(h.preds) != 2:
        return None
    if h in h.succs:
        body = None
        exit_ = h.succs[1] if h.succs[0] is h else h.succs[0]
        others = [p for p in h.preds if p is not h]
    else:
        cands = [s for s in h.succs if s.preds == [h] and s.succs == [h] and s is not h]
        if len(cands) != 1 or cands[0] not in h.preds:
            return None
        body = cands[0]
        exit_ = h.succs[1] if h.succs[0] is body else h.succs[0]
        if any(i.opcode in ir.TERMINATORS and i is not body.instrs[-1] for i in body.instrs):
            return None
        if body.instrs and body.instrs[-1].opcode in ir.TERMINATORS and \
                (body.instrs[-1].opcode != "bra" or body.instrs[-1].guard is not None):
            return None
        others = [p for p in h.preds if p is not body]
    if len(others) != 1 or exit_ is h or exit_ is body:
        return None
    if any(i.opcode in ir.TERMINATORS for i in h.instrs[:-1]):
        return None
    return others[0], body, exit_


def _trip_count(h: ir.Block, pre: ir.Block, back: ir.Block, body,
                limit: int = MAX_TRIPS) -> int | None:
    """How many times h runs (its branch leaves the loop on the last), or None."""
    latch_target = body if body is not None else h
    known: dict[int, int | bool] = {}
    for phi in h.phis:
        v = dict((id(b), x) for b, x in phi.incoming)[id(pre)]
        if isinstance(v, ir.Const):
            known[phi.dest.id] = v.value
    branch = h.instrs[-1]
    for runs in range(1, limit + 2):
        for ins in h.instrs[:-1]:
            value = _evaluate(ins, known)
            for d in ins.dests:
                known.pop(d.id, None)
            if value is not None:
                known[ins.dests[0].id] = value
        cond = known.get(branch.guard.id)
        if not isinstance(cond, bool):
            return None
        taken = cond != branch.guard_negated
        if (h.succs[0] if taken else h.succs[1]) is not latch_target:
            return runs
        if runs > limit:
            return None
        # a two-block loop's body runs between the tests: its induction step may be there
        for ins in (body.instrs if body is not None else ()):
            if ins.opcode in ir.TERMINATORS:
                continue
            value = _evaluate(ins, known)
            for d in ins.dests:
                known.pop(d.id, None)
            if value is not None:
                known[ins.dests[0].id] = value
        nxt = {}
        for phi in h.phis:
            v = dict((id(b), x) for b, x in phi.incoming)[id(back)]
            if isinstance(v, ir.Const):
                nxt[phi.dest.id] = v.value
            elif isinstance(v, ir.Value) and v.id in known and not isinstance(known[v.id], bool):
                nxt[phi.dest.id] = known[v.id]
        for phi in h.phis:
            known.pop(phi.dest.id, None)
        known.update(nxt)
    return None


def _clone(fn: ir.Function, ins: ir.Instr, env: dict[int, object]) -> ir.Instr:
    def m(v):
        if isinstance(v, ir.Value):
            return env.get(v.id, v)
        if isinstance(v, ir.Address) and isinstance(v.base, ir.Value):
            return ir.Address(env.get(v.base.id, v.base), v.offset)
        return v
    dests = []
    for d in ins.dests:
        nd = fn.new_value(d.type, d.name)
        env[d.id] = nd
        dests.append(nd)
    return ir.Instr(ins.opcode, dests=dests, srcs=[m(s) for s in ins.srcs], modifiers=ins.modifiers,
                    type=ins.type, types=ins.types, guard=m(ins.guard), guard_negated=ins.guard_negated,
                    merge=[m(x) for x in ins.merge], space=ins.space, align=ins.align, line=ins.line,
                    attrs=dict(ins.attrs))


def _unroll(fn: ir.Function, h: ir.Block) -> bool:
    if h.nounroll:                        # `.pragma "nounroll"` on the loop's header
        return False
    shape = _shape(h)
    if shape is None:
        return False
    pre, body, exit_ = shape
    back = body if body is not None else h
    runs = _trip_count(h, pre, back, body)
    body_instrs = [] if body is None else [i for i in body.instrs if i.opcode not in ir.TERMINATORS]
    trip = len(h.instrs) - 1 + len(h.phis) + len(body_instrs)
    # only LONG_FULL's loops skip the size limit: the first count returns up to MAX_TRIPS + 1
    # header runs (a tinygrad loop of 64 trips runs its header 65 times), and quality29's
    # `runs > MAX_TRIPS` test let every such loop unroll fully whatever its size (tinygrad
    # matmul_f32_256, 64 trips of 123 instructions: 6742 SASS instructions, SM model 34043
    # cycles against 31415 as a loop; ptxas keeps it a loop, one copy per exit test)
    long_full = False
    if runs is None:
        runs = _trip_count(h, pre, back, body, MAX_SIMULATED)
        if runs is None:
            return False
        if not any(runs - (body is not None) <= most and trip <= size for size, most in LONG_FULL):
            return _unroll_partially(fn, h, body, body_instrs, runs, exit_)
        long_full = True
    size = runs * (len(h.instrs) - 1 + len(h.phis)) + (runs - 1) * len(body_instrs)
    if long_full:
        pass                              # a long loop of short trips: fully, as ptxas
    elif size > (FULL_INSTRUCTIONS if trip <= FULL_TRIP_INSTRUCTIONS else MAX_INSTRUCTIONS):
        # too long to unroll fully: copies per exit test instead, as for longer loops
        return runs > FULL_ONLY_TRIPS and _unroll_partially(fn, h, body, body_instrs, runs, exit_)
    out: list[ir.Instr] = []
    env: dict[int, object] = {}
    for k in range(runs):
        incoming = []
        for phi in h.phis:
            src = dict((id(b), x) for b, x in phi.incoming)[id(pre if k == 0 else back)]
            if k and isinstance(src, ir.Value):
                src = env.get(src.id, src)
            incoming.append(src)
        for phi, src in zip(h.phis, incoming):
            d = fn.new_value(phi.dest.type, phi.dest.name)
            out.append(ir.Instr("mov", dests=[d], srcs=[src], type=phi.dest.type))
            env[phi.dest.id] = d
        for ins in h.instrs[:-1]:
            out.append(_clone(fn, ins, env))
        if k < runs - 1 and body is not None:
            for ins in body_instrs:
                out.append(_clone(fn, ins, env))
    # h becomes the straight-line block: entered from pre, falling through to the exit.
    h.phis = []
    h.instrs = out
    h.succs = [exit_]
    if body is not None:
        fn.blocks.remove(body)
    h.preds = [pre]
    substitute(fn, {vid: v for vid, v in env.items()})
    return True


def unroll_counted_loops(fn: ir.Function) -> bool:
    changed = False
    present = {id(b) for b in fn.blocks}       # (a search of fn.blocks per block was quadratic)
    for h in list(fn.blocks):
        if id(h) in present and h is not fn.entry and _unroll(fn, h):
            changed = True
            present = {id(b) for b in fn.blocks}
    return changed


class _Blocks:
    """The blocks of `fn` other than one, for `substitute`."""

    def __init__(self, fn: ir.Function, skip: ir.Block):
        self.blocks = [b for b in fn.blocks if b is not skip]


def _loaded_words(instrs: list[ir.Instr]) -> int:
    """32-bit registers the loads among `instrs` write: what one copy keeps in flight."""
    return sum(max(1, ir.type_bits(d.type) // 32) for i in instrs if i.opcode in ("ld", "ldu")
               for d in i.dests if d.type in ir.TYPES)


def _unroll_partially(fn: ir.Function, h: ir.Block, body, body_instrs, runs: int, exit_) -> bool:
    """The loop body k times per exit test (k from PARTIAL, dividing the trip count): the header's
    tests in between would all have continued. Two-block loops: B runs runs-1 times, and
    becomes B; H'; B; H'; ... (H' the header without its branch). One-block loops: H runs
    `runs` times and becomes H'; H'; ...; H with the branch."""
    bodies = runs - 1 if body is not None else runs
    header = h.instrs[:-1]
    size = len(header) + len(h.phis) + len(body_instrs)
    loaded = _loaded_words(header + body_instrs)
    copies = next((k for k in PARTIAL if bodies >= 2 * k and bodies % k == 0
                   and k * size <= MAX_INSTRUCTIONS and k * loaded <= MAX_LOADED_WORDS), None)
    if copies is None:
        return False
    back = body if body is not None else h
    env: dict[int, object] = {}
    out: list[ir.Instr] = []

    def next_iteration():
        incoming = []
        for phi in h.phis:
            src = dict((id(b), x) for b, x in phi.incoming)[id(back)]
            incoming.append(env.get(src.id, src) if isinstance(src, ir.Value) else src)
        for phi, src in zip(h.phis, incoming):
            d = fn.new_value(phi.dest.type, phi.dest.name)
            out.append(ir.Instr("mov", dests=[d], srcs=[src], type=phi.dest.type))
            env[phi.dest.id] = d

    if body is not None:
        out.extend(body_instrs)                      # iteration 0 after H's own test
        for _ in range(copies - 1):
            next_iteration()
            out.extend(_clone(fn, ins, env) for ins in header)
            out.extend(_clone(fn, ins, env) for ins in body_instrs)
        term = [i for i in body.instrs if i.opcode in ir.TERMINATORS]
        body.instrs = out + term
    else:
        out.extend(header)                           # iteration 0: H's own instructions
        for _ in range(copies - 1):
            next_iteration()
            out.extend(_clone(fn, ins, env) for ins in header)
        out.append(_clone(fn, h.instrs[-1], env))    # the exit test, on the last copy
        h.instrs = out
        # after the loop, H's values are the last copy's
        substitute(_Blocks(fn, h), {vid: v for vid, v in env.items()})
    for phi in h.phis:
        phi.incoming = [(b, env.get(v.id, v) if b is back and isinstance(v, ir.Value) else v)
                        for b, v in phi.incoming]
    return True
