"""List scheduling before register allocation, over virtual registers.

The scheduler after allocation (`sched.list_schedule`) can only reorder what the registers
allow: once the allocator has given the address and the result of one unrolled iteration's
load the same registers as the next one's, the loads stay one after another, each waiting
for the last. Before allocation the only dependences are the true ones, so the same critical
path ordering issues every independent load first and lets them overlap (what ptxas's code
does for an unrolled reduction).

The regions and what may move are those of `sched.list_schedule` (pure arithmetic and memory
instructions; memory instructions keep their order; anything else is a boundary), plus the
selector's COPY and IMPLICIT_DEF. A partial or guarded write reads the register too. Because
issuing early lengthens live ranges, a block keeps its new order only while its register
pressure stays within PRESSURE_LIMIT or the pressure it had, and its predicates within the
seven the file has (or what it needed before).

Where both the source order and that order need more than HIGH_PRESSURE registers (an
unrolled tinygrad kernel loads every operand first and then runs hundreds of FMAs), the block
is scheduled again for pressure: plain loads may pass each other (stores and strong loads
still order memory), and once the live registers reach PRESSURE_LIMIT the next instruction is
the one that adds the fewest, so each loaded value is consumed soon after it arrives.

Where the order chosen still needs more than DEFER_ABOVE registers, a deferred latency order
is tried too: an instruction that adds registers waits until it is near its latest start, so
values ready long before their use (an unrolled hash's message schedule) are computed near
it rather than in the first free slot; it is kept where it needs fewer registers at about
the same in-order estimate.

Where the order chosen needs more than CHAIN_ABOVE registers, a chain order is tried too:
only the instructions feeding the first few outputs not yet issued (stores, values live
after the block) may go, and those of the next few fill the slots they leave free, so
equal-height chains (four unrolled 64-bit hashes, each ending in its store) are computed a
few at a time instead of all side by side.

Where the order chosen needs more registers than the source order (up to PRESSURE_LIMIT),
the same latency order capped lower is tried too (`TRIM_COST`): outputs all ready at once
after a division's slow path (a lattice-Boltzmann collision's nine equilibria and
addresses) went far ahead of their stores, and a cap near the source order's pressure keeps
them near their stores at about the same in-order estimate.
"""
from __future__ import annotations

import heapq

from ptx2sass.encoder.model import Imm, Reg, SpecialReg
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, VMem, VOp, register_operands
from ptx2sass.regalloc.liveness import UNIT_BITS, fresh_writes, liveness, unit_liveness, unit_use_def, use_def
from ptx2sass.sched.latency import LatencyModel, model as latency_model, model_for
from ptx2sass.sched.list_schedule import FAR_LOAD, FAR_LOADS, MEMORY, PURE, issue_order, memory_spaces
from ptx2sass.sched import list_schedule
from ptx2sass.sched.memory_order import MemoryOrder, access_size, ranged, read_only_load, strong_store

# A loop's YIELD (ptx2sass.loop_yield) reads and writes nothing: it goes where the
# latency order has a free slot, not next to the loop's branch (both on the branch unit).
YIELD = "YIELD"
COLLECTIVES = frozenset({"VOTE", "SHFL", "REDUX", "MATCH"})
PASSING_COLLECTIVES = frozenset({"SHFL", "REDUX"})   # these pass each other (see _dependences)
PRESSURE_LIMIT = 64          # 32-bit registers live at once that scheduling may reach
PREDICATE_LIMIT = 6          # predicates (P0-P6; beyond, the allocator recomputes compares)
HIGH_PRESSURE = 128          # above this, lower pressure is worth more than latency
BUDGET_MARGIN = 16           # registers the allocator may need beyond the peak pressure
CAP_MARGIN = 24               # below PRESSURE_LIMIT where the capped latency order stops
                             # adding registers (an instruction may add several at once)
# Registers the capped latency order may fill (loads in flight and what they feed) when the
# register limit leaves room: an unrolled reduction keeps that many loads in flight where
# PRESSURE_LIMIT - CAP_MARGIN (40) let ten 128-bit loads go at a time, each next load waiting
# for the consumer of an earlier one (tinygrad logsumexp, 50 trips of ld.v4 fully unrolled:
# SM model 4396 cycles at 40, 2923 at 88; ptxas, 8-20 loads in flight in 94 registers: 2849).
LOAD_WINDOW = 88
# Registers a kernel counts beyond its peak pressure: R1 (the stack pointer) and the two
# ptxas reserves (codegen.REGISTERS_RESERVED); and what colouring usually loses to pair and
# quad alignment (tinygrad sum_uint64: pressure 87, highest register R89; pad_stride 93, R94).
REGISTERS_BEYOND_PRESSURE = 3
ALLOCATION_SLACK = 4
# below the occupancy ceiling, where the last capped latency order stops adding registers
CEILING_SLOP = 4
CEILING_STEP = 8              # caps tried above the ceiling when no order fits under it
# Whether the declared CTA size's occupancy bounds a new order too, not only a register
# limit: off. It closed tinygrad's register gaps (sum_uint64 92 -> 72, ptxas 80) but the SM
# model, which launches one or a few CTAs and so never sees the occupancy kept, measured the
# lost latency: mlp_forward_backward 1345 -> 1822 cycles (ptxas 1357), cnn_forward 2434 ->
# 2988, max_axis1_uint64 4143 -> 4847 (branch regs30). On again when the timing model runs
# full SMs (issue 20) and shows the gain.
OCCUPANCY_CEILING = False
# A kernel that bounds nothing (no CTA size, no register limit): where the order chosen needs
# more registers than let the SM hold its most threads (`launch_bounds.
# full_occupancy_registers` less REGISTERS_BEYOND_PRESSURE) and the source order needs no more,
# the capped latency orders and the orders for pressure that fit under that are tried and
# the fastest by the in-order estimate is kept where it is at most FULL_OCCUPANCY_COST above
# the order chosen (ptxas: spmv_csr's copied loops in 40 registers on sm_89, 32 on sm_80,
# where their latency order needs 50). None or 0: off (A/B runs). The estimate without far
# loads judges it (the copied loops' orders: +6% there, +37% with far loads, for SM cycles
# equal); with far loads it may be at most FULL_OCCUPANCY_FAR times the chosen's (sgemm
# dgemv's source order, its loads waited for one by one: 4.6x, 36 -> 15 registers, sm_80 SM
# cycles 4607 -> 5614).
FULL_OCCUPANCY_COST: float | None = 0.10
FULL_OCCUPANCY_FAR = 1.5
# A new order that needs more registers than the source order is kept only where the in-order
# estimate finds it faster (branch regs31: rounding_math rare_f64_functions' DFMA polynomial,
# 19 -> 61 live for no gain); off measures what the latency order did before.
NO_GAIN_NO_PRESSURE = True
# An order whose instructions that add registers each wait until DEFER_WINDOW cycles before
# their latest start (`_schedule_in_latency_order`'s `defer`), tried where the order chosen
# needs more than DEFER_ABOVE registers (at or below, sm_89 keeps its most warps anyway):
# kept where it needs fewer registers and its in-order estimate is at most DEFER_COST above.
DEFER_WINDOW: int | None = 512
DEFER_ABOVE = 32
DEFER_COST = 0.01
TRIM_COST = 0.02
TRIM_STEP = 8
TRIM_FLOOR = 16
# The chain order (`_chain_choice`), tried where the order chosen needs more than CHAIN_ABOVE
# registers, with (chains, chains filling free slots) as CHAIN_WIDTHS, fewest registers
# first: kept where it needs fewer registers at no more in-order estimate, or CHAIN_GAIN
# fewer at most CHAIN_COST above (a gain of one or two registers was not worth the order:
# flash_attn_causal's loop 58 -> 57 live at +1.6%, its row sums no longer overlapping the
# other row's MUFUs). Off (None) by default: on, the held-out tinygrad part got worse
# (registers x1.0021, SM cycles x1.0013; round_float64 60 -> 68 registers and twice the
# single-warp cycles at a lower in-order estimate) and large blocks compiled up to 70%
# slower (crypto_rounds); 0.02 is the setting measured (docs/STATUS.md, branch regs33).
CHAIN_COST: float | None = None
CHAIN_ABOVE = 32
CHAIN_GAIN = 8
CHAIN_WIDTHS = ((1, 0), (1, 1), (2, 0), (2, 1), (1, 2), (3, 0), (2, 2))
# the capped latency order counts a group of four filled part by part (a vector store's
# values copied in after an IMPLICIT_DEF) by the parts written, as `_pressure` does; False:
# whole at its IMPLICIT_DEF (A/B runs). Pairs too cost registers on f64 code (math_f64
# transcendental_f64 44 -> 60, Triton float64_ops 31 -> 36: their capped orders filled more)
PARTS_IN_CAP = True
PARTS_MIN_WIDTH = 4
# ... only groups a store of the region reads (a vector store's values); an mma's fragment
# groups stay whole at their IMPLICIT_DEF (counted by parts, held-out tinygrad
# matmul_f32_tf32_tc's capped order went 9007 -> 9418 SM cycles; docs/STATUS.md, quality34)
PARTS_STORED_ONLY = True
STORES = frozenset({"STS", "STG", "STL", "ST"})
# Loop accumulators (register_pressure many_accumulators, docs/STATUS.md quality34; False:
# A/B runs): `_pressure` and the bottom-up order count a value copied into a second register
# live after the block once (SHARED_COPIES); where every cap of the capped latency orders is
# at or below the source order's pressure, the bottom-up order for pressure up to the caps'
# own limit is tried (CAP_ABOVE_SOURCE); the bottom-up order keeps the live predicates within
# PREDICATE_LIMIT where it can (PRESSURE_ORDER_PREDICATES)
SHARED_COPIES = True
CAP_ABOVE_SOURCE = True
PRESSURE_ORDER_PREDICATES = True
# Where the source order's pressure is already at or above every cap's own limit (a loop
# holding 64 invariant table values, 91 live through it: the caps count from zero, so each
# capped order overshoots to 135-143 and CAP_ABOVE_SOURCE's goals, from the limit down to
# the source's pressure, are none), the bottom-up order for pressure is tried with goals
# SOURCE_SLACK_STEPS above the source's pressure, kept at the first whose pressure is at
# most SOURCE_SLACK above it at a lower in-order estimate (realworld viterbi_log8's loop:
# eight argmax chains one after another, in-order estimate 1236; at goal +4, 105 live
# against 98, estimate 615). 0: off (A/B runs).
# When the capped order is full and nothing ready frees a register, a global load goes
# only where nothing else is ready (`_least_adding`): it adds a register held until its
# chain runs, while the chain's own steps that add (a local read-modify-write, LDL then LOP3
# then STL freeing the address) free theirs soon after. Loads first, real-world dp_sequences
# lcs_bit_parallel's capped order issued all 64 byte loads ahead of the LDL chain (pressure
# 197 against a cap of 40), so the source order was kept, one load at a time.
FAR_LOADS_LAST_WHEN_FULL = True
SOURCE_SLACK = 8
SOURCE_SLACK_STEPS = (4, 8)
# the latency order lets a plain load pass an earlier one whose address or guard comes from
# a load of the region (an ELL product's guarded gathers held the next index load back:
# spmv_ell 6157 -> 2926 SM cycles, ptxas 2307); "all": every plain load passes every other
# (the 48-step f64 dot product's loads of one array then went first and the window's
# 92-register order won its estimate, tests/test_pre_schedule_load_window.py); False: loads
# keep their source order among themselves (A/B runs)
LOADS_PASS: bool | str = True
# a `COPY d <- u` of an IMPLICIT_DEF's u (the undefined default of a guarded write: if-
# converted code's `@!P LDG d` merges into whatever d held) is left out of the latency order
# as the IMPLICIT_DEF is, and put back just before d's first toucher: ready from the start
# and above every guarded load by height, the 80 such copies of an unrolled stencil's 16
# if-converted neighbour loads went first and counted 80 registers, so every order was
# refused and the source order kept, each load read at once (stencil_highorder
# diffusion_varcoef_2d: 104 registers in the latency order; False for A/B runs)
UNDEF_COPIES_AT_USE = True
# an order that overran PREDICATE_LIMIT itself is made again below it, as one that overran
# a higher limit is (`ordered`): refused for its 7th predicate, the stencil above kept its
# source order (False: only above the limit, for A/B runs)
RETRY_AT_LIMIT = True


# Special registers whose value is fixed for the thread, so reading them may move.
FIXED_SPECIALS = ("SR_TID", "SR_CTAID", "SR_LANEID", "SR_EQMASK", "SR_LTMASK", "SR_LEMASK",
                  "SR_GTMASK", "SR_GEMASK")


def _movable(ins: MInstr) -> bool:
    if ins.clobbers or ins.shown is not None:
        return False
    if ins.opcode in ("S2R", "S2UR"):
        return any(isinstance(op, SpecialReg) and op.name.startswith(FIXED_SPECIALS)
                   for op in ins.operands)
    return (ins.opcode in PURE or ins.opcode in MEMORY or ins.opcode in (COPY, IMPLICIT_DEF, YIELD)
            or _block_barrier(ins) or _collective(ins) or _uniform_constant_load(ins)
            or _uniform_arithmetic(ins) or _warp_sync(ins))


# A plain WARPSYNC moves (`_warp_sync`); False: every WARPSYNC ends a region (A/B runs)
WARPSYNC_MOVES = True


def _warp_sync(ins: MInstr) -> bool:
    """A plain `WARPSYNC mask` (not .EXCLUSIVE, whose groups run what follows apart): the
    lanes of the mask meet there. Only what does not depend on which lanes run together
    passes it (`_lane_neutral`: vector arithmetic, read-only loads); everything else keeps
    its side (match_any_aggregate's second `ld.global.nc` waited behind the WARPSYNC of the
    `match.any.sync` before it; ptxas issues both loads first). One that joins the groups
    of a `WARPSYNC.EXCLUSIVE` stays put (`_movables`): what passed it would run once a group."""
    return WARPSYNC_MOVES and ins.opcode == "WARPSYNC" and not ins.modifiers and ins.guard is None \
        and ins.ndefs == 0


def _movables(instrs: list[MInstr]) -> list[bool]:
    """`_movable` of each instruction of a block, but for a plain WARPSYNC after a
    WARPSYNC.EXCLUSIVE (with no plain one between): the join of its groups."""
    out = []
    exclusive = False
    for ins in instrs:
        if ins.opcode == "WARPSYNC":
            joins = exclusive and not ins.modifiers
            exclusive = "EXCLUSIVE" in ins.modifiers or (exclusive and not joins)
            out.append(not joins and _movable(ins))
            continue
        out.append(_movable(ins))
    return out


def _uniform_arithmetic(ins: MInstr) -> bool:
    """Integer arithmetic on the uniform datapath into virtual URs/UPs
    (isel/uniform_datapath.py): pure, ordered by its registers alone, as its vector twin."""
    return (ins.opcode in UNIFORM_ARITHMETIC and ins.guard is None and ins.ndefs >= 1
            and all(isinstance(d, VOp) or (isinstance(d, Reg) and d.is_zero) for d in ins.operands[:ins.ndefs]))


def _uniform_constant_load(ins: MInstr) -> bool:
    """`ULDC`/`LDCU` of a 32-bit constant into a virtual UR (isel/target_forms.py): a load
    from the never-written constant bank, so ordered by its register alone (not a fixed UR
    another instruction names by number)."""
    return (ins.opcode in UNIFORM_CONSTANT_LOADS and not ins.modifiers and ins.guard is None
            and ins.ndefs == 1 and isinstance(ins.operands[0], VOp) and ins.operands[0].reg.cls == "UR")


def _collective(ins: MInstr) -> bool:
    """A vote, shuffle or REDUX of the whole warp: inside a block every lane that runs one runs the
    others, so arithmetic moves past them (a lane test hoisted into a load's shadow, as ptxas
    does); votes keep their order among themselves and with shuffles and REDUXes (their own
    "warp" space), which pass each other (`_dependences`)."""
    return ins.opcode in COLLECTIVES and ins.guard is None


def _lane_neutral(ins: MInstr, reads, writes, vfile: dict[int, str]) -> bool:
    """Whether an instruction computes the same in each lane whichever lanes run it with
    it: vector arithmetic (R and P registers only) and loads of never-written bytes."""
    if read_only_load(ins.opcode, ins.modifiers):
        return True
    if not (ins.opcode in PURE or ins.opcode in (COPY, IMPLICIT_DEF) or ins.opcode in ("S2R",)):
        return False
    return all((vfile.get(r, "R") if isinstance(r, int) else r[0]) in ("R", "P") for r in (*reads, *writes))


def _block_barrier(ins: MInstr) -> bool:
    """`BAR.SYNC` of a constant barrier: it orders every memory access (as one touching every
    space does) but no register, so arithmetic moves past it (an address computed in the
    shadow of the load before the barrier, as ptxas does)."""
    return (ins.opcode == "BAR" and ins.modifiers in (("SYNC", "DEFER_BLOCKING"), ("SYNC",))
            and ins.ndefs == 0 and ins.guard is None and all(isinstance(op, Imm) for op in ins.operands))


def _footprint(ins: MInstr) -> tuple[list, list]:
    """(keys read, keys written): vreg ids, and physical registers as (file, index)."""
    reads, writes = [], []
    for _, op, is_def in register_operands(ins):
        if is_def:
            writes.append(op.reg.id)
            if op.part is not None or ins.guard is not None:
                reads.append(op.reg.id)
        else:
            reads.append(op.reg.id)
    add_physical(ins, reads, writes)
    return reads, writes


def add_physical(ins: MInstr, reads: list, writes: list) -> None:
    """The physical registers `ins` names (a call's, precoloured), as (file, index), added
    to its reads and writes; RZ and PT order nothing."""
    for i, op in enumerate(ins.operands):
        if isinstance(op, Reg) and not op.is_zero and not (op.file == "P" and op.index == 7):
            (writes if i < ins.ndefs else reads).append((op.file, op.index))
    if isinstance(ins.guard, Reg):
        reads.append((ins.guard.file, ins.guard.index))


def producer_latency(producer: MInstr, reader: MInstr, file: str, lat: LatencyModel) -> int:
    """Cycles from `producer` until `reader` may read its result in `file` (the table's; a
    variable-latency producer's estimate)."""
    op = "MOV" if producer.opcode == COPY else producer.opcode
    if producer.opcode == IMPLICIT_DEF:
        return 0
    if lat.is_variable(op):
        return lat.variable_latency(op)
    rd = "MOV" if reader.opcode == COPY else lat.reader_key(reader.opcode, tuple(reader.modifiers))
    return lat.read_latency(op, producer.modifiers, file, rd, False)


LOADS = frozenset({"LDG", "LDS", "LDL", "LD", "LDC", "LDGMC"})
UNIFORM_CONSTANT_LOADS = frozenset({"ULDC", "LDCU"})
UNIFORM_ARITHMETIC = frozenset({"UIADD3", "UIMAD", "ULEA", "USHF", "ULOP3", "UISETP", "USEL", "UMOV"})


def _plain_load(ins: MInstr) -> bool:
    """A load that may pass another load: weak, so no ordering is observable."""
    return ins.opcode in LOADS and "STRONG" not in ins.modifiers and "MMIO" not in ins.modifiers


def _dependences(region: list[MInstr], vfile: dict[int, str], loads_pass: bool, lat: LatencyModel):
    """Successors (index, latency) and predecessor counts of the region's dependence graph.
    Memory instructions keep their order where their spaces meet, except plain loads among
    themselves when `loads_pass` ("fed": a plain load passes only earlier ones fed by a load
    of the region), and shuffles and REDUXes among themselves (every lane that
    runs the block runs all of them, in whatever order; ptxas starts a reduction's next
    shuffle of one value before the last step's shuffles of the others, and runs a row of
    REDUXes into different uniform registers back to back)."""
    n = len(region)
    succs: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    npreds = [0] * n
    last_write: dict = {}
    reads_since: dict = {}
    order = MemoryOrder()
    fed = [False] * n               # reads a value a load of the region wrote (through others)
    sensitive: list[int] = []       # instructions not lane-neutral since the last WARPSYNC
    last_sync = None

    def edge(a: int, b: int, latency: int) -> None:
        succs[a].append((b, latency))
        npreds[b] += 1

    for j, ins in enumerate(region):
        reads, writes = _footprint(ins)
        if loads_pass == "fed":
            fed[j] = any(r in last_write and (region[last_write[r]].opcode in LOADS or fed[last_write[r]])
                         for r in reads)
        if _warp_sync(ins):
            for i in sensitive:
                edge(i, j, 1)
            sensitive = []
            last_sync = j
        elif not _lane_neutral(ins, reads, writes, vfile):
            if last_sync is not None:
                edge(last_sync, j, 1)
            sensitive.append(j)
        if ins.opcode in MEMORY or _block_barrier(ins) or _collective(ins):
            spaces = memory_spaces(ins.opcode, ins.modifiers)
            passing = (bool(loads_pass) and _plain_load(ins)) or ins.opcode in PASSING_COLLECTIVES
            passable = passing and (loads_pass != "fed" or fed[j] or not _plain_load(ins))
            for i in order.before(j, spaces, _address_range(ins, last_write), ins.opcode in LOADS, passing,
                                  passable, read_only=list_schedule.READ_ONLY_PASS
                                  and read_only_load(ins.opcode, ins.modifiers),
                                  strong=strong_store(ins.opcode, ins.modifiers)):
                edge(i, j, 1)
        for r in reads:
            if r in last_write:
                i = last_write[r]
                file = vfile.get(r, "R") if isinstance(r, int) else r[0]
                edge(i, j, producer_latency(region[i], ins, file, lat))
        for r in writes:
            for i in reads_since.get(r, ()):
                if i != j:
                    edge(i, j, 1)
            if r in last_write and last_write[r] != j:
                edge(last_write[r], j, 1)
        for r in reads:
            reads_since.setdefault(r, []).append(j)
        for r in writes:
            last_write[r] = j
            reads_since[r] = []
    return succs, npreds


def _address_range(ins: MInstr, last_write: dict) -> tuple | None:
    """(base key, offset, size) of a plain access's bytes (`sched.memory_order`): the base
    register with its last writer in the region (before `ins`'s own writes), so two accesses
    share a key only while the base holds one value; None where unknown."""
    if not ranged(ins.opcode, ins.modifiers):
        return None
    mem = next((op for op in ins.operands if isinstance(op, VMem)), None)
    if mem is None:
        return None
    key = []
    for base in (mem.base, mem.ubase):
        if base is None:
            continue
        if isinstance(base, VOp):
            key.append((base.reg.id, base.part, last_write.get(base.reg.id)))
        elif isinstance(base, Reg) and not base.is_zero:
            for k in range(2 if mem.wide and base is mem.base else 1):
                r = (base.file, base.index + k)
                key.append((r, last_write.get(r)))
        elif not isinstance(base, Reg):
            return None
    return (tuple(key), mem.offset, access_size(ins.modifiers))


def _tied_copies(instrs: list[MInstr]) -> dict[int, set[int]]:
    """A loop's induction copies: `COPY x <- d` early in a block and `COPY d <- s` later
    (the phi's value read at the top, the next value copied back at the bottom). x, d and
    s take one register, and the copies vanish, only if s is written after x's last
    read; {s: {x, ...}} for each such pair."""
    copied_from: dict[int, list[int]] = {}      # d -> the x copied from it so far
    tied: dict[int, set[int]] = {}
    for ins in instrs:
        if ins.opcode != COPY or len(ins.operands) != 2 or ins.guard is not None:
            continue
        dst, src = ins.operands
        if not (hasattr(dst, "reg") and hasattr(src, "reg")) or dst.part is not None or src.part is not None:
            continue
        for x in copied_from.get(dst.reg.id, ()):
            tied.setdefault(src.reg.id, set()).add(x)
        copied_from.setdefault(src.reg.id, []).append(dst.reg.id)
    return tied


def _tie_copies(region: list[MInstr], tied: dict[int, set[int]], succs, npreds) -> None:
    """Edges from each reader of x to the writer of s (`_tied_copies`), where that makes
    no cycle (a reader that needs s's value keeps its place)."""
    writer: dict[int, int] = {}
    readers: dict[int, list[int]] = {}
    for j, ins in enumerate(region):
        for _, op, is_def in register_operands(ins):
            if is_def:
                writer.setdefault(op.reg.id, j)
            else:
                readers.setdefault(op.reg.id, []).append(j)
    for s_id, xs in tied.items():
        w = writer.get(s_id)
        if w is None:
            continue
        reach = _reachable(succs, w)
        for x in xs:
            for i in readers.get(x, ()):
                if i != w and i not in reach and all(k != w for k, _ in succs[i]):
                    succs[i].append((w, 1))
                    npreds[w] += 1
                    reach = _reachable(succs, w)


def _yield_after_first_load(region: list[MInstr], succs, npreds) -> None:
    """A YIELD goes after the region's first load (else its first instruction), as ptxas
    places it: in the load's shadow, away from the loop's branch."""
    ys = [j for j, ins in enumerate(region) if ins.opcode == YIELD]
    if not ys:
        return
    loads = [j for j, ins in enumerate(region) if ins.opcode in LOADS]
    real = [j for j, ins in enumerate(region) if ins.opcode not in (COPY, IMPLICIT_DEF, YIELD)]
    first = (loads or real or [None])[0]
    if first is None:
        return
    for y in ys:
        succs[first].append((y, 1))
        npreds[y] += 1


def _reachable(succs, start: int) -> set[int]:
    seen, todo = {start}, [start]
    while todo:
        for k, _ in succs[todo.pop()]:
            if k not in seen:
                seen.add(k)
                todo.append(k)
    return seen


def _heights(region: list[MInstr], succs) -> list[int]:
    """Critical path to the region's end; copies first (they then cost no register). A
    global load's result is counted as arriving from beyond L1 (FAR_LOAD cycles, not the
    table's L1 hit): it goes ahead of arithmetic chains longer than an L1 hit (Philox
    rounds before a dropout's loads), as ptxas issues a kernel's loads first."""
    n = len(region)
    height = [0] * n
    for i in range(n - 1, -1, -1):
        far = region[i].opcode in FAR_LOADS
        height[i] = max(((max(l, FAR_LOAD) if far and l > 1 else l) + height[j] for j, l in succs[i]),
                        default=1)
    for i, ins in enumerate(region):
        # a copy goes as soon as its source is ready: its two sides then do not overlap
        # and the allocator can still give them one register
        if ins.opcode in (COPY, IMPLICIT_DEF):
            height[i] = 1 << 20
    return height


def _schedule_region(region: list[MInstr], vfile: dict[int, str], lat: LatencyModel,
                     live_after: set[int] = frozenset(), live_in: set[int] = frozenset(),
                     tied: dict[int, set[int]] | None = None, width: dict[int, int] | None = None,
                     register_limit: int | None = None, p_ids: set[int] | None = None,
                     predicate_limit: int = PREDICATE_LIMIT, defer: int | None = None,
                     chains: tuple[int, int] | None = None,
                     fixed: frozenset[int] = frozenset()) -> list[MInstr]:
    """The region in latency order (within `register_limit`, see below). An IMPLICIT_DEF (the start of a value written in parts)
    has no sources and would be ready first, opening every such live range at the top of
    the region: it is left out and put back just before the first instruction that came
    after it and touches its register (the graph keeps those instructions' order)."""
    if len(region) < 3:
        return region
    starts = [k for k, ins in enumerate(region) if ins.opcode == IMPLICIT_DEF]
    if not starts:
        return _schedule_in_latency_order(region, vfile, lat, live_after, live_in, tied, width,
                                          register_limit, p_ids, predicate_limit, defer, chains)
    if UNDEF_COPIES_AT_USE:
        starts = sorted({*starts, *_undefined_copies(region, live_in, fixed)})
    left_out = {id(region[k]) for k in starts}
    rest = [ins for ins in region if id(ins) not in left_out]
    order = {id(ins): k for k, ins in enumerate(region)}
    pending: dict[int, list[MInstr]] = {}           # vreg id -> its starts not yet placed
    for k in starts:
        pending.setdefault(region[k].operands[0].reg.id, []).append(region[k])
    out: list[MInstr] = []

    def place(ins: MInstr) -> None:
        """`ins` after the starts before it of the registers it names (an undefined copy's
        own source's IMPLICIT_DEF first)."""
        for _, op, _ in register_operands(ins):
            defs = pending.get(op.reg.id)
            while defs and order[id(defs[0])] < order[id(ins)]:
                place(defs.pop(0))
        out.append(ins)

    for ins in _schedule_in_latency_order(rest, vfile, lat, live_after, live_in, tied, width,
                                          register_limit, p_ids, predicate_limit, defer, chains):
        place(ins)
    # starts nothing later in the region touches (their registers live after it), in order
    for ins in sorted((d for defs in pending.values() for d in defs), key=lambda d: order[id(d)]):
        if ins in pending.get(ins.operands[0].reg.id, ()):
            pending[ins.operands[0].reg.id].remove(ins)
            place(ins)
    return out


def _undefined_copies(region: list[MInstr], live_in: set[int], fixed: frozenset[int] = frozenset()) -> list[int]:
    """Indices of the unguarded whole-register `COPY d <- u` whose u the region defines
    only by an IMPLICIT_DEF before it, and whose d nothing before it touches nor holds on
    entry (UNDEF_COPIES_AT_USE): put back before d's first later toucher, such a copy
    cannot overwrite a value an instruction the order moved past it still reads. Not where
    u or d is precoloured (`fixed`): an IMPLICIT_DEF of a calling-convention register marks
    the value the caller left there (a function's return address, saved by such a copy
    before a call of its own writes that register again through another vreg)."""
    undefined: set[int] = set()
    touched: set[int] = set(live_in)
    found: list[int] = []
    for k, ins in enumerate(region):
        if (ins.opcode == COPY and ins.guard is None and len(ins.operands) == 2
                and all(isinstance(op, VOp) and op.part is None for op in ins.operands)
                and ins.operands[1].reg.id in undefined and ins.operands[0].reg.id not in touched
                and ins.operands[0].reg.id not in fixed and ins.operands[1].reg.id not in fixed):
            found.append(k)
        for _, op, is_def in register_operands(ins):
            touched.add(op.reg.id)
            if is_def:
                if ins.opcode == IMPLICIT_DEF and op.part is None:
                    undefined.add(op.reg.id)
                else:
                    undefined.discard(op.reg.id)
    return found


def _schedule_in_latency_order(region: list[MInstr], vfile: dict[int, str], lat: LatencyModel,
                               live_after: set[int] = frozenset(),
                               live_in: set[int] = frozenset(),
                               tied: dict[int, set[int]] | None = None,
                               width: dict[int, int] | None = None,
                               register_limit: int | None = None,
                               p_ids: set[int] | None = None,
                               predicate_limit: int = PREDICATE_LIMIT,
                               defer: int | None = None,
                               chains: tuple[int, int] | None = None) -> list[MInstr]:
    """`register_limit` (with `width`, the R vregs' sizes): while that many 32-bit
    registers are live, an instruction that adds to them waits for one that does not (a
    load waits for the FMA that consumes an earlier load), as long as one is on its way.
    `p_ids`, where given: the predicate vregs (`vfile`'s "P" entries). `predicate_limit`:
    the predicates that may be live at once (PREDICATE_LIMIT, or what the block's source
    order already needs, `pre_schedule`). `defer` (with `width`): an instruction that adds
    registers waits until it is within `defer` cycles of its latest start (the region's
    critical path less its height), so a value computed for far ahead (an unrolled SHA-256's
    message schedule words, ready from the start, each read in its own round) is computed
    near its use instead of in the first free slot; loads never wait (their latency is the
    one worth covering)."""
    n = len(region)
    if n < 3:
        return region
    succs, npreds = _dependences(region, vfile, "fed" if LOADS_PASS is True else bool(LOADS_PASS), lat)
    if tied:
        _tie_copies(region, tied, succs, npreds)
    _yield_after_first_load(region, succs, npreds)
    height = _heights(region, succs)
    # Predicates: at most PREDICATE_LIMIT live at once where the order allows; a compare
    # waits while the file is full and something else is ready.
    pdefs = [[op.reg.id for _, op, d in register_operands(ins) if d and op.reg.cls == "P"]
             for ins in region]
    preads = [[op.reg.id for _, op, d in register_operands(ins) if not d and op.reg.cls == "P"]
              for ins in region]                    # one entry per operand that reads one
    readers: dict[int, int] = {}
    for reads in preads:
        for v in reads:
            readers[v] = readers.get(v, 0) + 1
    # predicates from before the region count until their last reader here (all of it for
    # those live through)
    live_p = {v for v in (live_in if p_ids is None else live_in & p_ids)
              if vfile.get(v) == "P" and (readers.get(v, 0) > 0 or v in live_after)}

    # what each instruction adds to the live predicates, kept until an issue brings the
    # reader count of a predicate it defines or reads to 1 or 0 (choose asks it of many
    # ready instructions at every step)
    touching: dict[int, list[int]] = {}
    for j in range(n):
        for v in {*pdefs[j], *preads[j]}:
            touching.setdefault(v, []).append(j)
    adds: dict[int, int] = {}

    def _adds_predicates(j: int) -> int:
        """Predicates live after `j` less before it (a PLOP3 joining two frees one)."""
        got = adds.get(j)
        if got is None:
            born = sum(1 for v in pdefs[j] if readers.get(v, 0) > 0 or v in live_after)
            dying = {v for v in preads[j] if readers.get(v) == 1 and v not in live_after}
            got = adds[j] = born - len(dying)
        return got

    # R registers, when capped: the region's values from their write to their last reader
    # here (or all of it for those live after), the live-in ones until their last reader
    capped = register_limit is not None and width is not None
    deferring = defer is not None and width is not None
    if capped or deferring:
        # counted per 32-bit part as `_pressure` counts: an IMPLICIT_DEF holds none of a group
        # filled part by part (a vector store's values copied in), each part written adds one
        by_parts = {op.reg.id for ins in region if not PARTS_STORED_ONLY or ins.opcode in STORES
                    for _, op, d in register_operands(ins)
                    if PARTS_IN_CAP and op.reg.id in width and width[op.reg.id] >= PARTS_MIN_WIDTH}
        rdefs = [[(op.reg.id, op.part if op.reg.id in by_parts else None)
                  for _, op, d in register_operands(ins) if d and op.reg.id in width] for ins in region]
        rreads = [[op.reg.id for _, op, d in register_operands(ins) if not d and op.reg.id in width]
                  for ins in region]
        rreaders: dict[int, int] = {}
        for reads in rreads:
            for v in set(reads):
                rreaders[v] = rreaders.get(v, 0) + 1
        live_r = {v for v in live_in if v in width and (rreaders.get(v, 0) > 0 or v in live_after)}
        held = {v: width[v] for v in live_r}        # v -> its parts counted
        parts: dict[int, set[int]] = {}               # v -> the parts written (part by part)
        r_cur = [sum(held.values())]
        none_held = [ins.opcode == IMPLICIT_DEF and all(
            op.reg.id in by_parts for _, op, d in register_operands(ins) if d)
            for ins in region]
    if deferring:
        top = max((h for h in height if h < 1 << 20), default=0)
        latest = [top - min(h, top) for h in height]
        clock = [0]

    def _wanted(v: int) -> bool:
        return rreaders.get(v, 0) > 0 or v in live_after

    def _born(j: int) -> int:
        """Registers `j`'s writes add (whole values: their width less what is held)."""
        if none_held[j]:
            return 0
        n = 0
        for v, part in set(rdefs[j]):
            if not _wanted(v):
                continue
            if part is None:
                n += width[v] - held.get(v, 0)
            elif part not in parts.get(v, ()) and held.get(v, 0) < width[v]:
                n += 1
        return n

    def _adds_registers(j: int) -> int:
        dying = sum(held.get(v, 0) for v in set(rreads[j]) if rreaders.get(v) == 1 and v not in live_after
                    and v in live_r)
        return _born(j) - dying

    def fits(j: int) -> bool:
        if len(live_p) >= predicate_limit and _adds_predicates(j) > 0:
            return False
        return not (capped and r_cur[0] >= register_limit and _adds_registers(j) > 0)

    def early(j: int) -> bool:
        return (latest[j] > clock[0] + defer and region[j].opcode not in LOADS
                and _adds_registers(j) > 0)

    def choose(ready, waiting, pop):
        full = len(live_p) >= predicate_limit or (capped and r_cur[0] >= register_limit)
        if full or deferring:
            # the first ready instruction in priority order that adds no predicate (nor
            # register, when capped) and is not early; the heap is popped only as far as
            # that one (a scan of all of it at every step made long blocks quadratic)
            passed, best = [], None
            while ready:
                item = heapq.heappop(ready)
                if (not full or fits(item[1])) and not (deferring and early(item[1])):
                    best = item
                    break
                passed.append(item)
            for item in passed:
                heapq.heappush(ready, item)
            if best is not None:
                return best[1]
            if waiting:
                return None      # only compares are ready: wait for something else
            if capped and r_cur[0] >= register_limit:
                return _least_adding(ready)
            if deferring:           # nothing on its way: the one due soonest
                best = min(ready, key=lambda item: (latest[item[1]], item))
                ready.remove(best)
                heapq.heapify(ready)
                return best[1]
        return pop(ready)

    def _least_adding(ready) -> int:
        """Nothing ready frees a register: the one adding the fewest, a value's registers
        shared out among its readers still to come. A value read in parts (the halves of
        an `ld.v4.b16`'s 64 bits, each taken out by a PRMT that adds a register before
        the max that frees them) is freed only after several instructions that each add:
        the priority order then issued the next load instead, and the unrolled loop's
        loads filled the registers with none consumed (tinygrad max_axis1_float16, 25 trips
        fully unrolled: pressure 103 against a cap of 40, so the source order was kept,
        one load at a time)."""
        def key(item):
            j = item[1]
            born = _born(j)
            shared = sum(held.get(v, 0) / rreaders[v] for v in set(rreads[j])
                         if v in live_r and v not in live_after and rreaders.get(v, 0) > 0)
            if PARTS_IN_CAP:
                # a part written into a group (a vector store's values) brings the store
                # that frees the whole group nearer: its share of it, as `shared` counts a
                # source's share (a constant's part against the next load: a tie the loads
                # won until every one was in flight)
                shared += sum(1 for v, part in set(rdefs[j]) if part is not None and _wanted(v))
            full = len(live_p) >= predicate_limit and _adds_predicates(j) > 0
            far = FAR_LOADS_LAST_WHEN_FULL and region[j].opcode in FAR_LOADS
            return (full, far, born - shared, item)
        best = min(ready, key=key)
        ready.remove(best)
        heapq.heapify(ready)
        return best[1]

    def issued(j: int) -> None:
        if capped or deferring:
            for v in set(rreads[j]):
                rreaders[v] -= 1
                if rreaders[v] == 0 and v not in live_after and v in live_r:
                    live_r.discard(v)
                    r_cur[0] -= held.pop(v, 0)
                    parts.pop(v, None)
            for v, part in set(rdefs[j]):
                if not _wanted(v):
                    continue
                live_r.add(v)
                if none_held[j]:
                    continue
                was = held.get(v, 0)
                if part is None:
                    held[v] = width[v]
                elif part not in parts.setdefault(v, set()):
                    parts[v].add(part)
                    held[v] = min(width[v], was + 1)
                r_cur[0] += held[v] - was
        for v in preads[j]:
            readers[v] -= 1
            if readers[v] <= 1:       # what _adds_predicates reads of v changes only here
                for k in touching[v]:
                    adds.pop(k, None)
            if readers[v] == 0 and v not in live_after:
                live_p.discard(v)
        for v in pdefs[j]:
            if readers.get(v, 0) > 0 or v in live_after:
                live_p.add(v)
    if chains is not None:
        choose, issued = _chain_choice(region, succs, live_after, chains, fits, choose, issued)
    units = [lat.queue_of(ins.opcode) for ins in region]
    return [region[j] for j in issue_order(succs, npreds, height, choose, issued, units=units,
                                           occupancy=lat.UNIT_OCCUPANCY,
                                           clock=clock if deferring else None)]


def _chain_choice(region: list[MInstr], succs, live_after: set[int], chains: tuple[int, int], fits, choose,
                  issued):
    """`choose` and `issued` for the chain order: each instruction belongs to the earliest
    of the region's outputs it feeds (a store, a value live after the region, anything not
    pure). `chains` = (first, filling): the instructions of the first `first` outputs not
    yet issued go in latency order among themselves (loads always may: their latency is the
    one worth covering); where none of them is ready, those of the next `filling` outputs
    fill the slot; the others wait while one of the first is on its way. Equal chains (four
    unrolled hashes, each ending in its store) are then computed a few at a time, the next
    starting as one ends, instead of all side by side with every one's values live
    (bits_hash splitmix_xorshift's block: 46 live in the latency order, 36 at (2, 2) at a
    lower in-order estimate; with regalloc/split_parts.py, 23 at (1, 1), 1.3% above)."""
    n = len(region)
    sink = [False] * n
    for j, ins in enumerate(region):
        defs = [op.reg.id for _, op, d in register_operands(ins) if d]
        sink[j] = (not defs or not (ins.opcode in PURE or ins.opcode in (COPY, IMPLICIT_DEF))
                   or any(v in live_after for v in defs))
    rank = [n] * n
    for i in range(n - 1, -1, -1):
        rank[i] = min([i if sink[i] else n] + [rank[k] for k, _ in succs[i]])
    pending = sorted(j for j in range(n) if sink[j])
    gone: set[int] = set()
    first, filling = chains

    def limit(count: int) -> int:
        """The `count`-th output not yet issued (n: fewer are left)."""
        while pending and pending[0] in gone:
            pending.pop(0)
        seen = 0
        for j in pending:
            if j not in gone:
                seen += 1
                if seen == count:
                    return j
        return n

    def allowed(j: int, top: int) -> bool:
        return rank[j] <= top or region[j].opcode in LOADS

    def among(ready, waiting, pop, top):
        """`choose` over the ready instructions `allowed` under `top` (None where there
        are none), the others put back after: the latency order's own choice among them
        (its unit-bound tie-break included)."""
        held = [item for item in ready if not allowed(item[1], top)]
        if len(held) == len(ready):
            return None
        if held:
            ready[:] = [item for item in ready if allowed(item[1], top)]
            heapq.heapify(ready)
        j = choose(ready, waiting, pop)
        for item in held:
            heapq.heappush(ready, item)
        return j

    def chain_choose(ready, waiting, pop):
        top = limit(first)
        j = among(ready, waiting, pop, top)
        if j is None and filling:
            j = among(ready, waiting, pop, limit(first + filling))   # a free slot for the next chains
        if j is not None:
            return j
        if any(allowed(k, top) for _, _, k in waiting):
            return None
        return choose(ready, waiting, pop)

    def chain_issued(j: int) -> None:
        if sink[j]:
            gone.add(j)
        issued(j)
    return chain_choose, chain_issued


def _schedule_for_pressure(region: list[MInstr], vfile: dict[int, str], lat: LatencyModel, width: dict[int, int],
                           live_after: set[int], limit: int) -> list[MInstr]:
    """Bottom-up list scheduling that keeps the live registers near `limit`.

    Going upwards, an instruction's results die where it is placed and its operands become
    live, so a value's producer is picked as soon as its last reader is placed; that is why
    this runs bottom-up (a top-down greedy choice cannot tell which of many loads will let
    something finish). Below the limit the choice is by latency: the instruction furthest
    from the region's start goes last, and one whose results are not yet due waits."""
    n = len(region)
    succs, _ = _dependences(region, vfile, True, lat)
    preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    nsuccs = [0] * n
    for i in range(n):
        for j, l in succs[i]:
            preds[j].append((i, l))
            nsuccs[i] += 1
    depth = [0] * n
    for j in range(n):
        depth[j] = max((depth[i] + l for i, l in preds[j]), default=0)
    effects = [use_def(ins) for ins in region]
    live = live_after & width.keys()        # (set operations: hundreds live through deep nests)
    if SHARED_COPIES:                       # (one value in two registers counts once)
        live -= _shared_copies(region, live)
    cur = sum(map(width.__getitem__, live))
    due = [0] * n                   # reverse time from which each instruction may be placed
    t = 0
    order: list[int] = []

    # A value's registers are shared out among its readers: the first reader placed need not
    # pay for all of a loaded quad whose other parts other readers want anyway.
    readers: dict[int, int] = {}
    for uses, _ in effects:
        for v in set(uses):
            readers[v] = readers.get(v, 0) + 1

    # delta(j) depends only on which of j's operands are live: kept until one of them
    # enters or leaves `live` (the choice below asks it of every candidate at every step)
    operand_sets = [(set(uses), set(kills)) for uses, kills in effects]
    touching: dict[int, list[int]] = {}
    for j, (uses, kills) in enumerate(operand_sets):
        for v in uses | kills:
            touching.setdefault(v, []).append(j)
    deltas: dict[int, float] = {}

    def delta(j: int) -> float:
        got = deltas.get(j)
        if got is None:
            uses, kills = operand_sets[j]
            born = sum(width[v] / readers[v] for v in uses if v in width and v not in live)
            dead = sum(width[v] for v in kills if v in live and v not in uses)
            got = deltas[j] = born - dead
        return got

    # Candidates whose results are due (due <= t) are `ready`: among them the latency order
    # is (-depth, -j), and under pressure (delta, -depth, -j), kept in two heaps (the
    # second re-keyed lazily when a candidate's delta changes: `version`). The others wait
    # in a heap by (due, -depth, -j); they were placed recently, so there are few. Keys end
    # in -j, so each choice is the unique minimum the full scan of every candidate found.
    state = [0] * n                 # 0: not yet a candidate, 1: waiting, 2: ready, 3: placed
    version = [0] * n
    by_latency: list[tuple] = []
    by_delta: list[tuple] = []
    waiting: list[tuple] = []
    dirty: set[int] = set()

    def changed(v: int) -> None:
        for k in touching.get(v, ()):
            deltas.pop(k, None)
            if state[k] == 2:
                dirty.add(k)

    def make_ready(j: int) -> None:
        state[j] = 2
        heapq.heappush(by_latency, (-depth[j], -j))
        heapq.heappush(by_delta, (delta(j), -depth[j], -j, version[j]))

    def add_candidate(j: int) -> None:
        if due[j] <= t:
            make_ready(j)
        else:
            state[j] = 1
            heapq.heappush(waiting, (due[j], -depth[j], -j))

    # predicates live (bottom-up: from a reader up to the writer); at PREDICATE_LIMIT an
    # instruction that adds one waits where another candidate does not
    p_uses = [{v for v in uses if vfile.get(v) == "P"} for uses, _ in effects]
    p_kills = [{v for v in kills if vfile.get(v) == "P"} for _, kills in effects]
    p_live = {v for v in live_after if vfile.get(v) == "P"}

    def p_delta(j: int) -> int:
        return (sum(1 for v in p_uses[j] if v not in p_live)
                - sum(1 for v in p_kills[j] if v in p_live and v not in p_uses[j]))

    def candidates():
        return (k for k in range(n) if state[k] in (1, 2))

    for j in range(n):
        if nsuccs[j] == 0:
            add_candidate(j)
    left = sum(1 for j in range(n) if nsuccs[j] == 0)
    while left:
        while waiting and (waiting[0][0] <= t or state[-waiting[0][2]] != 1):
            j = -heapq.heappop(waiting)[2]
            if state[j] == 1:
                make_ready(j)
        while by_latency and state[-by_latency[0][1]] != 2:
            heapq.heappop(by_latency)
        while by_delta and (state[-by_delta[0][2]] != 2
                            or by_delta[0][3] != version[-by_delta[0][2]]):
            heapq.heappop(by_delta)
        if cur >= limit:
            best = None
            if by_delta:
                d, neg_depth, neg_j, _ = by_delta[0]
                best = (d, t, neg_depth, neg_j)
            for _, neg_depth, neg_j in waiting:
                if state[-neg_j] == 1:
                    key = (delta(-neg_j), due[-neg_j], neg_depth, neg_j)
                    if best is None or key < best:
                        best = key
            j = -best[3]
        elif by_latency:
            j = -by_latency[0][1]
        else:
            j = -waiting[0][2]
        if PRESSURE_ORDER_PREDICATES and len(p_live) >= PREDICATE_LIMIT and p_delta(j) > 0:
            # the predicate file is full: a candidate that frees one (a carry's or a
            # compare's writer), else one that adds none, goes first where there is one
            other = min(((p_delta(k), state[k] != 2, -depth[k], -k) for k in candidates()
                         if p_delta(k) <= 0), default=None)
            if other is not None:
                j = -other[3]
        state[j] = 3
        left -= 1
        order.append(j)
        p_live.difference_update(p_kills[j] - p_uses[j])
        p_live.update(p_uses[j])
        placed = max(due[j], t)
        t = placed + 1
        uses, kills = operand_sets[j]
        for v in kills:
            if v in live and v not in uses:
                live.discard(v)
                cur -= width[v]
                changed(v)
        for v in uses:
            if v in width and v not in live:
                live.add(v)
                cur += width[v]
                changed(v)
        for k in dirty:
            version[k] += 1
            heapq.heappush(by_delta, (delta(k), -depth[k], -k, version[k]))
        dirty.clear()
        for i, l in preds[j]:
            due[i] = max(due[i], placed + l)
            nsuccs[i] -= 1
            if nsuccs[i] == 0:
                left += 1
                add_candidate(i)
    return [region[j] for j in reversed(order)]


def _in_order_cycles(instrs: list[MInstr], vfile: dict[int, str], lat: LatencyModel,
                     far: int = 0) -> int:
    """Cycles to issue the list in order, one per cycle, each waiting for its producers'
    latencies (the latency table's; a load's is its L1 hit): what a reordering must beat.
    `far`: a global load's result arrives that many cycles after it issues at the least."""
    return _issue_cycles(instrs, _dependences(instrs, vfile, False, lat)[0], far)


def _in_order_pair(instrs: list[MInstr], vfile: dict[int, str], lat: LatencyModel) -> tuple[int, int]:
    """`_in_order_cycles` without and with far loads (FAR_LOAD), the dependences found once."""
    succs, _ = _dependences(instrs, vfile, False, lat)
    return _issue_cycles(instrs, succs, 0), _issue_cycles(instrs, succs, FAR_LOAD)


def _issue_cycles(instrs: list[MInstr], succs, far: int) -> int:
    ready = [0] * len(instrs)
    t = 0
    for j in range(len(instrs)):
        t = max(t + 1, ready[j])
        slow = far if instrs[j].opcode in FAR_LOADS else 0
        for k, latency in succs[j]:
            ready[k] = max(ready[k], t + max(latency, slow if latency > 1 else latency))
    return t


def units_in(units_out: dict[int, set[int]], width: dict[int, int]) -> set[int]:
    """Every unit of `units_out`'s sets whose register `width` counts: `_pressure`'s `units`,
    found once per function (filtering each block's live set costs its size per call)."""
    return {u for u in set().union(*units_out.values()) if u >> UNIT_BITS in width}


def _pressure(instrs: list[MInstr], live_out: set[int], width: dict[int, int],
              fresh: set = frozenset(), units: set[int] | None = None,
              live_count: int | None = None) -> int:
    """The most registers of `width`'s vregs live at once, counted per part as the
    allocator's liveness does (`liveness.unit_liveness`; `live_out` holds such units): a
    group filled part by part (an mma fragment gathered by COPYs after its IMPLICIT_DEF)
    holds only the parts written so far, so copying a value into a part costs no register,
    and a pair whose high half is dead holds one. `units` (`units_in`): a superset of
    `live_out`'s units of `width`'s registers holding no others. `live_count`
    (`_live_count`), where known: how many of `live_out`'s units `width` counts; then only
    the units the instructions name are looked up (deep loop nests keep hundreds of units
    live through a block of four instructions, and pre_schedule asks each block's pressure
    up to six times)."""
    if live_count is None:
        effects = None
        live = live_out & units if units is not None else {u for u in live_out if u >> UNIT_BITS in width}
        cur = peak = len(live)
    else:
        effects = [unit_use_def(ins, fresh) for ins in reversed(instrs)]
        live = {u for uses, kills, _ in effects for u in (*uses, *kills)
                if u in live_out and u >> UNIT_BITS in width}
        cur = peak = live_count
    if SHARED_COPIES:
        shared = _shared_copy_units(instrs, live, fresh)
        live -= shared
        cur = peak = cur - len(shared)
    for k, ins in enumerate(reversed(instrs)):
        uses, kills, _ = effects[k] if effects is not None else unit_use_def(ins, fresh)
        for k in kills:
            if k in live:
                live.discard(k)
                cur -= 1
        for u in uses:
            if u not in live and u >> UNIT_BITS in width:
                live.add(u)
                cur += 1
        peak = max(peak, cur)
    return peak


def _final_copies(instrs: list[MInstr]) -> list[MInstr]:
    """Whole unguarded `COPY d <- s` (same width) with neither d nor s written after it."""
    found: list[MInstr] = []
    written: set[int] = set()
    for ins in reversed(instrs):
        ops = ins.operands
        if (ins.opcode == COPY and ins.guard is None and len(ops) == 2
                and all(isinstance(op, VOp) and op.part is None for op in ops)
                and ops[0].reg.width == ops[1].reg.width
                and ops[0].reg.id not in written and ops[1].reg.id not in written):
            found.append(ins)
        for _, op, is_def in register_operands(ins):
            if is_def:
                written.add(op.reg.id)
    return found


def _shared_copies(instrs: list[MInstr], live: set[int]) -> set[int]:
    """`_shared_copy_units` by vreg: the destinations of such copies, both registers in `live`."""
    return {ins.operands[0].reg.id for ins in _final_copies(instrs)
            if ins.operands[0].reg.id in live and ins.operands[1].reg.id in live}


def _shared_copy_units(instrs: list[MInstr], live: set[int], fresh) -> set[int]:
    """Units of the destinations of `_final_copies` whose d and s are both in `live` (live
    after the block): one value in two registers, which the allocator coalesces. A loop that
    copies each new value into its phi register and reads the new values after the loop too
    had both counted from the copy on (register_pressure many_accumulators: 82 counted, 49
    allocated)."""
    shared: set[int] = set()
    for ins in _final_copies(instrs):
        src, dst, _ = unit_use_def(ins, fresh)
        if dst and all(u in live for u in dst) and all(u in live for u in src):
            shared.update(dst)
    return shared


def _live_count(live_out: set[int], width: dict[int, int], units: set[int] | None = None) -> int:
    """`_pressure`'s starting count: `live_out`'s units of `width`'s registers."""
    if units is not None:
        return len(live_out & units)
    return sum(1 for u in live_out if u >> UNIT_BITS in width)


def _reorderable(instrs: list[MInstr]) -> bool:
    """Has the block a movable region of two or more instructions? Without one, every
    schedule below gives the block back as it is."""
    run = 0
    for movable in _movables(instrs):
        run = run + 1 if movable else 0
        if run > 1:
            return True
    return False


def _live_at_region_bounds(instrs: list[MInstr], live_out: set[int]) -> dict[int, set[int]]:
    """k -> the registers live just before instruction k, for the k that `_reorder_block`
    asks about: where a movable region starts, and just past where one ends. (A copy for
    every instruction costs the square of a long block's length.)"""
    bounds = {len(instrs)}
    movable = _movables(instrs)
    for k in range(len(instrs)):
        if not movable[k] or k == 0 or not movable[k - 1]:
            bounds.add(k)
    live = set(live_out)
    out = {len(instrs): set(live)}
    for k in range(len(instrs) - 1, -1, -1):
        uses, kills = use_def(instrs[k])
        live.difference_update(kills)
        live.update(uses)
        if k in bounds:
            out[k] = set(live)
    return out


def _reorder_block(instrs: list[MInstr], live_before: dict[int, set[int]], schedule) -> list[MInstr]:
    """The block with each movable region replaced by `schedule(region, live_after, live_in)`."""
    out: list[MInstr] = []
    region: list[MInstr] = []
    start = 0
    movable = _movables(instrs)
    for k, ins in enumerate(instrs):
        if movable[k]:
            if not region:
                start = k
            region.append(ins)
            continue
        out.extend(schedule(region, live_before[k], live_before[start]))
        region = []
        out.append(ins)
    out.extend(schedule(region, live_before[len(instrs)], live_before[start]))
    return out


def _for_pressure(instrs, live_before, units_out, fresh, vfile, width, limit, lat, units=None,
                  live_count=None):
    """The block scheduled for pressure around `limit`, and the pressure it reaches."""
    out = _reorder_block(instrs, live_before,
                         lambda region, after, _: _schedule_for_pressure(region, vfile, lat, width, after, limit))
    return out, _pressure(out, units_out, width, fresh, units, live_count)


def pre_schedule(mf: MFunction, register_limit: int | None = None, solved: dict | None = None,
                 bounded: bool = False, threads: int | None = None, plain: dict | None = None) -> int:
    """Reorder each block's movable regions; returns the number of blocks reordered.
    `register_limit`: what the allocator must fit (None: the file's 255). `solved`: the
    liveness of this very code where a pass before has it (`fresh`, `live_out`,
    `units_out`: `isel.remat_invariants`'s facts when nothing changed since). `bounded`: the
    kernel says how many registers it may use (its block size, `.maxnreg`, -maxrregcount), so
    the capped order may fill up to LOAD_WINDOW of them; otherwise it stops at
    PRESSURE_LIMIT - CAP_MARGIN, as 64 registers let any block size launch (a 48-step f64
    dot product of tests/test_pre_schedule_capped.py: 92 registers at the window, which a
    1024-thread block cannot launch with; ptxas: 38). `threads`: the CTA size the kernel
    declares (`.maxntid`/`.reqntid`): no block's new order may need more registers than
    keep as many CTAs resident as the source order's pressure does (`_occupancy_ceiling`),
    nor more than `register_limit` where the source order fits it. `plain`: filled, for each
    block the full-occupancy goal (FULL_OCCUPANCY_COST) reordered, with its order without
    that goal (block index -> instruction list), for the caller to take where allocation
    misses the goal anyway."""
    budget = (register_limit or 255) - BUDGET_MARGIN
    fixed = frozenset(mf.precolored)
    high = min(HIGH_PRESSURE, budget)
    window = PRESSURE_LIMIT - CAP_MARGIN
    if bounded:
        window = max(window, min(LOAD_WINDOW, budget - CAP_MARGIN))
    lat = model_for(mf.target) if mf.target is not None else latency_model("ampere")
    vfile = {v.id: v.cls for v in mf.vregs}
    width = {v.id: v.width for v in mf.vregs if v.cls == "R"}
    preds = {v.id: 1 for v in mf.vregs if v.cls == "P"}
    if solved:
        fresh, live_out, units_out = solved["fresh"], solved["live_out"], solved["units_out"]
    else:
        live_out = liveness(mf)
        fresh = fresh_writes(mf)
        units_out = unit_liveness(mf, fresh)
    r_units = units_in(units_out, width)
    p_units = units_in(units_out, preds)
    p_ids = set(preds)
    changed = 0
    befores: dict[int, tuple[int, int]] = {}      # block index -> (live count at its end, pressure)
    for bi, b in enumerate(mf.blocks):
        if _reorderable(b.instrs):
            count = _live_count(units_out[bi], width, r_units)
            befores[bi] = count, _pressure(b.instrs, units_out[bi], width, fresh, r_units, count)
    full = None
    if FULL_OCCUPANCY_COST and threads is None and register_limit is None and mf.target is not None:
        from ptx2sass.launch_bounds import full_occupancy_registers
        full = full_occupancy_registers(mf.target) - REGISTERS_BEYOND_PRESSURE
    ceiling = _occupancy_ceiling(max((p for _, p in befores.values()), default=0), register_limit,
                                 threads, mf.target)

    def block(bi: int, b):
        """Block `bi`'s new order (None: keep it), `select`'s function for the order kept
        within a pressure, and the pressure of an order of it."""
        live_before = _live_at_region_bounds(b.instrs, live_out[bi])
        tied = _tied_copies(b.instrs)
        count, before = befores[bi]
        p_count = _live_count(units_out[bi], preds, p_units)
        p_before = _pressure(b.instrs, units_out[bi], preds, fresh, live_count=p_count)

        def ordered(p_limit, cap=None, defer=None, chains=None):
            """The latency order (capped at `cap` registers) keeping at most `p_limit`
            predicates live where it can. At or above PREDICATE_LIMIT (RETRY_AT_LIMIT), an
            order that went past it (only compares were ready, the guards they lead to
            waiting for them) is made again with the limit lowered by the excess."""
            def once(p_cap):
                return _reorder_block(b.instrs, live_before,
                                      lambda region, after, before: _schedule_region(
                                          region, vfile, lat, after, before, tied,
                                          width if cap is not None or defer is not None else None,
                                          cap, p_ids, p_cap, defer, chains, fixed))
            got = once(p_limit)
            if (p_limit > PREDICATE_LIMIT or RETRY_AT_LIMIT and p_limit == PREDICATE_LIMIT) and got != b.instrs:
                over = _pressure(got, units_out[bi], preds, fresh, live_count=p_count) - p_limit
                if over > 0:
                    got = once(max(1, p_limit - over))
            return got

        def select(p_limit):
            """The block's new order at `p_limit` predicates, or None to keep it; and a
            function of a pressure, `full`, giving the order kept within it where one fits
            within FULL_OCCUPANCY_COST (else the same order)."""
            allowed = min(PRESSURE_LIMIT, ceiling)
            out = ordered(p_limit)
            after = _pressure(out, units_out[bi], width, fresh, r_units, count) if out != b.instrs else before
            if min(before, after) > high:
                low, low_pressure = _for_pressure(b.instrs, live_before, units_out[bi], fresh, vfile, width,
                                                  PRESSURE_LIMIT, lat, r_units, count)
                if low_pressure > high:
                    # the block needs many registers whatever the order: use the room up to
                    # the budget for latency rather than stop at the usual limit
                    roomy, roomy_pressure = _for_pressure(b.instrs, live_before, units_out[bi], fresh, vfile,
                                                          width, low_pressure, lat, r_units, count)
                    if roomy_pressure <= budget:
                        low, low_pressure = roomy, roomy_pressure
                if low_pressure < min(before, after):
                    out, after = low, low_pressure
            elif after > max(before, PRESSURE_LIMIT):
                # the latency order needs too many registers (a fully unrolled dot product loads
                # every operand first) while the source order waits for each load in turn: the
                # latency order capped at the window keeps as many loads in flight as it allows
                base = _in_order_cycles(b.instrs, vfile, lat)
                tries = [PRESSURE_LIMIT - CAP_MARGIN] + ([window] if window > PRESSURE_LIMIT - CAP_MARGIN else [])
                top = ceiling - CEILING_SLOP         # the largest cap whose order may fit the ceiling
                best_far = None

                def attempt(cap: int, limit: int) -> None:
                    nonlocal best_far, out, after, allowed
                    capped = ordered(p_limit, cap)
                    capped_pressure = _pressure(capped, units_out[bi], width, fresh, r_units, count)
                    if (capped_pressure <= max(before, limit)
                            and _in_order_cycles(capped, vfile, lat) < base):
                        far = _in_order_cycles(capped, vfile, lat, FAR_LOAD)
                        if best_far is None or far < best_far:
                            best_far = far
                            out, after = capped, capped_pressure
                            allowed = limit
                caps = {min(cap, top) for cap in tries if min(cap, top) > 0}
                for cap in sorted(caps):
                    attempt(cap, min(cap + CAP_MARGIN, ceiling))
                # every cap at or below what the source order keeps live (a loop's 40
                # accumulators, register_pressure many_accumulators): the capped orders hold
                # no load in flight; the order for pressure up to the caps' own limit does (it
                # overshoots its goal: lower goals down to the source's pressure). Up to the
                # ceiling alone, an unbounded kernel's (crypto_rounds keccak_f1600) went
                # 84 -> 161 registers
                limit = min(max(caps, default=0) + CAP_MARGIN, ceiling)
                if CAP_ABOVE_SOURCE and best_far is None and caps and all(cap <= before for cap in caps):
                    for goal in range(min(top, limit - CEILING_SLOP), before, -2):
                        low, low_pressure = _for_pressure(b.instrs, live_before, units_out[bi], fresh, vfile,
                                                          width, goal, lat, r_units, count)
                        if low_pressure <= max(before, limit):
                            if _in_order_cycles(low, vfile, lat) < base:
                                out, after, allowed = low, low_pressure, limit
                            break
                if SOURCE_SLACK and best_far is None and caps and before >= limit:
                    for step in SOURCE_SLACK_STEPS:
                        goal = min(before + step, top)
                        low, low_pressure = _for_pressure(b.instrs, live_before, units_out[bi], fresh, vfile,
                                                          width, goal, lat, r_units, count)
                        if low_pressure <= min(before + SOURCE_SLACK, ceiling) \
                                and _in_order_cycles(low, vfile, lat) < base:
                            out, after, allowed = low, low_pressure, low_pressure
                            break
                if best_far is None and top < window:
                    # no capped order fits the ceiling (a greedy order can overshoot a tight cap
                    # by far: sum_uint64's at 40 needs 515): the lowest cap up to the window
                    # whose order stays near it, so latency is not given up for nothing
                    for cap in range(max(top, 0) + CEILING_STEP, window + CEILING_STEP, CEILING_STEP):
                        attempt(min(cap, window), min(cap, window) + CAP_MARGIN)
                        if best_far is not None:
                            break
            if DEFER_WINDOW is not None and after > DEFER_ABOVE:
                # the order with each register-adding instruction issued near its latest
                # start: kept where it needs fewer registers for no more than DEFER_COST of
                # the in-order estimate
                lazy = ordered(p_limit, defer=DEFER_WINDOW)
                if lazy != out and lazy != b.instrs:
                    lazy_pressure = _pressure(lazy, units_out[bi], width, fresh, r_units, count)
                    if lazy_pressure < after and (_in_order_cycles(lazy, vfile, lat, FAR_LOAD)
                                                  <= (1 + DEFER_COST) * _in_order_cycles(out, vfile, lat, FAR_LOAD)):
                        out, after = lazy, lazy_pressure
            if TRIM_COST is not None and max(before, TRIM_FLOOR) < after <= PRESSURE_LIMIT and out != b.instrs:
                # the latency order capped below the pressure it reached: kept where it needs
                # fewer registers for no more than TRIM_COST of the in-order estimate (above
                # PRESSURE_LIMIT the capped orders above chose how many loads stay in flight)
                limit_far = (1 + TRIM_COST) * _in_order_cycles(out, vfile, lat, FAR_LOAD)
                for cap in range(max(before, TRIM_FLOOR), after, TRIM_STEP):
                    trimmed = ordered(p_limit, cap)
                    if trimmed == out or trimmed == b.instrs:
                        continue
                    trimmed_pressure = _pressure(trimmed, units_out[bi], width, fresh, r_units, count)
                    if trimmed_pressure < after and _in_order_cycles(trimmed, vfile, lat, FAR_LOAD) <= limit_far:
                        out, after = trimmed, trimmed_pressure
                        break
            if CHAIN_COST is not None and after > CHAIN_ABOVE and out != b.instrs:
                # whole chains a few at a time (`_chain_choice`): kept where that needs fewer
                # registers for no more than CHAIN_COST of the in-order estimate
                limit_far = (1 + CHAIN_COST) * _in_order_cycles(out, vfile, lat, FAR_LOAD)
                for width_ in CHAIN_WIDTHS:
                    chained = ordered(p_limit, chains=width_)
                    if chained == out or chained == b.instrs:
                        continue
                    chained_pressure = _pressure(chained, units_out[bi], width, fresh, r_units, count)
                    est = _in_order_cycles(chained, vfile, lat, FAR_LOAD)
                    if chained_pressure < after and (est <= limit_far / (1 + CHAIN_COST) or (
                            chained_pressure <= after - CHAIN_GAIN and est <= limit_far)):
                        out, after = chained, chained_pressure
                        break
            plain = finish(out, after, allowed)

            def squeeze(full):
                if not before <= full < after or out == b.instrs:
                    return plain
                near, far = _in_order_pair(out, vfile, lat)
                limit_near, limit_far = (1 + FULL_OCCUPANCY_COST) * near, FULL_OCCUPANCY_FAR * far
                fitting = []                # (near estimate, order, pressure) of the orders that fit within the cost

                def judge(tried) -> bool | None:
                    """True: `tried` fits and is kept; False: it fits not; None: it costs too much."""
                    if tried == b.instrs:
                        return False
                    near, far = _in_order_pair(tried, vfile, lat)
                    if near > limit_near or far > limit_far:
                        return None
                    pressure = _pressure(tried, units_out[bi], width, fresh, r_units, count)
                    if pressure > full:
                        return False
                    fitting.append((near, tried, pressure))
                    return True
                for goal in range(full, max(before, full - TRIM_STEP), -4):
                    judge(_for_pressure(b.instrs, live_before, units_out[bi], fresh, vfile, width,
                                       goal, lat, r_units, count)[0])
                # the capped orders from the highest cap down: the in-order estimate grows as
                # the cap falls, so the first that costs too much ends the search (not the first
                # that fits: local_array_dynamic's fastest fitting order is a lower cap's)
                for cap in range(full, max(before, full - 2 * TRIM_STEP), -2):
                    if judge(ordered(p_limit, cap)) is None:
                        break
                if not fitting:
                    return plain
                _, best, pressure = min(fitting, key=lambda f: f[0])
                return finish(best, pressure, allowed)
            return plain, squeeze

        def finish(out, after, allowed):
            """`out` (needing `after` registers) as the block's new order, or None to keep it."""
            if out == b.instrs:
                return None
            if NO_GAIN_NO_PRESSURE and after > before and (_in_order_cycles(out, vfile, lat, FAR_LOAD)
                                   >= _in_order_cycles(b.instrs, vfile, lat, FAR_LOAD)):
                # more registers for no latency: a DFMA polynomial's 24 f64 constants (48
                # moves with no sources) went first in the latency order, 19 -> 61 live
                # (rounding_math rare_f64_functions; 64 registers, ptxas 34)
                return None
            p_after = _pressure(out, units_out[bi], preds, fresh, live_count=p_count)
            if after <= max(before, allowed) and p_after <= max(p_before, PREDICATE_LIMIT):
                return out
            return None

        def choose():
            """The block's new order (None: keep it), and `select`'s function for the order
            kept within a pressure."""
            out, squeeze = select(PREDICATE_LIMIT)
            if p_before <= PREDICATE_LIMIT:
                return out, squeeze
            # the source order itself needs more predicates than PREDICATE_LIMIT: the orders
            # may keep as many as it does, and the one an in-order estimate with far loads
            # finds faster goes. A fully unrolled conv2d (tinygrad conv2d_f32_pad_stride, 3
            # trips) keeps 8 load guards live through its block; at PREDICATE_LIMIT every
            # `rem`'s compare waited, the addresses and loads behind it too, every order
            # needed 118-124 registers and the source order was kept, one load at a time (SM
            # model 7113 cycles; ptxas 4104; at the source order's 9: 4451). Taken whenever
            # it fits, the wider order lost 1-5% on bf16/fp8 elementwise kernels (add_bfloat16
            # 1539 -> 1564) while sqrt_float16_software gained (3242 -> 2321): the estimate
            # picks each of those.
            wide, wide_squeeze = select(p_before)
            return faster(out, wide), lambda full: faster(squeeze(full), wide_squeeze(full))

        def faster(out, wide):
            if wide is not None and (out is None or _in_order_cycles(wide, vfile, lat, FAR_LOAD)
                                     < _in_order_cycles(out, vfile, lat, FAR_LOAD)):
                return wide
            return out

        out, squeeze = choose()
        return out, squeeze, lambda order: before if order is None else _pressure(
            order, units_out[bi], width, fresh, r_units, count)

    chosen = {bi: block(bi, b) for bi, b in enumerate(mf.blocks) if bi in befores}
    orders = {bi: out for bi, (out, _, _) in chosen.items()}
    if full is not None:
        # the kernel's registers are its fullest block's: the blocks above `full` are kept
        # within it only where each of them can be (none with its source order above it)
        over = [bi for bi, (out, _, pressure) in chosen.items() if pressure(out) > full]
        squeezed: dict | None = {} if over and all(befores[bi][1] <= full for bi in over) else None
        for bi in over if squeezed is not None else ():
            got = chosen[bi][1](full)
            if chosen[bi][2](got) > full:
                squeezed = None
                break
            squeezed[bi] = got
        for bi, got in (squeezed or {}).items():
            if plain is not None:
                # the order without the goal, for the caller where allocation misses it
                plain[bi] = list(orders[bi] if orders[bi] is not None else mf.blocks[bi].instrs)
                _sink_uniform_copies(plain[bi], live_out[bi], vfile)
            orders[bi] = got
    for bi, out in orders.items():
        b = mf.blocks[bi]
        if out is not None:
            b.instrs = out
            changed += 1
        if _sink_uniform_copies(b.instrs, live_out[bi], vfile) and out is None:
            changed += 1
    return changed


def _occupancy_ceiling(pressure: int, register_limit: int | None, threads: int | None, target) -> int:
    """The pressure a new order may reach in a kernel whose source order needs `pressure`:
    the registers that keep as many CTAs of `threads` resident (launch_bounds.
    occupancy_ceiling) and fit `register_limit`, less what allocation adds beyond the
    pressure (REGISTERS_BEYOND_PRESSURE); never below `pressure` itself. Unbounded (255)
    where neither the CTA size nor a limit is known. ptxas stays within the first on 111
    of tinygrad's 120 tuning kernels on sm_89 (16-thread CTAs: 80 registers keep 24 resident)."""
    from ptx2sass.launch_bounds import occupancy_ceiling
    if not OCCUPANCY_CEILING:
        threads = None
    if threads is None and register_limit is None:
        return 255
    file = register_limit or 255
    needed = pressure + REGISTERS_BEYOND_PRESSURE
    if needed > file:
        return pressure                       # the source order already spills: no more
    registers = occupancy_ceiling(threads, needed, target, file) if threads and target is not None else file
    return max(pressure, registers - REGISTERS_BEYOND_PRESSURE - ALLOCATION_SLACK)


def _sink_uniform_copies(instrs: list[MInstr], live_out: set[int], vfile: dict[int, str]) -> bool:
    """Move each vector copy of a uniform value (`COPY R <- UR`, isel/uniform_datapath.py),
    and an instruction reading it whose other general-register sources stay live anyway,
    down to just before its first reader, as ptxas's `IMAD.U32 R6, RZ, RZ, UR4` then
    `IMAD.WIDE.U32 R6, R8, 0x8, R6` before the store: the latency order issues them as
    soon as the uniform value is ready, and the general registers then hold the copy across
    everything between (Triton int64_rows' store address). True when something moved."""
    def uniform_copy(ins: MInstr) -> bool:
        # (into a general register or predicate: a copy between uniform registers, a loop's
        # phi copy of its counter, is none; with it, the counter's compares sank below its
        # increment and the two UR pairs overlapped: two UMOVs on matmul_int8's back edge)
        return (ins.opcode == COPY and ins.guard is None and len(ins.operands) == 2
                and isinstance(ins.operands[0], VOp) and ins.operands[0].part is None
                and vfile.get(ins.operands[0].reg.id) in ("R", "P")
                and isinstance(ins.operands[1], VOp) and vfile.get(ins.operands[1].reg.id) in ("UR", "UP"))

    copies = {ins.operands[0].reg.id for ins in instrs if uniform_copy(ins)}
    if not copies:
        return False
    moved = False
    # bottom up, each instruction once: a copy's reader sinks first, then the copy after it
    for i in range(len(instrs) - 2, -1, -1):
            x = instrs[i]
            if x.guard is not None or not _movable(x) or x.opcode in MEMORY or x.opcode == IMPLICIT_DEF:
                continue
            ops = register_operands(x)
            defs = {op.reg.id for _, op, d in ops if d}
            if not defs or any(d and op.part is not None for _, op, d in ops):
                continue
            srcs = {op.reg.id for _, op, d in ops if not d}
            copy = uniform_copy(x)
            copied_in = srcs & copies
            if not copy and not copied_in:
                continue
            j = i + 1
            while j < len(instrs):
                here = register_operands(instrs[j])
                if any(op.reg.id in defs or (d and op.reg.id in srcs) for _, op, d in here):
                    break
                j += 1
            if j == len(instrs) or j == i + 1 or not any(
                    op.reg.id in defs and not d for _, op, d in register_operands(instrs[j])):
                continue
            # sinking x lengthens the general registers it reads last (but for the copies
            # feeding it: they sink next) and shortens its result: no more of the former
            later = {op.reg.id for y in instrs[j:] for _, op, d in register_operands(y) if not d} | live_out
            size = {op.reg.id: op.reg.width for _, op, _d in ops}
            longer = sum(size[s] for s in srcs if vfile.get(s) == "R" and s not in later and s not in copied_in)
            if longer > sum(size[d] for d in defs if vfile.get(d) == "R") or any(
                    vfile.get(s) == "P" and s not in later for s in srcs):
                continue
            instrs.insert(j - 1, instrs.pop(i))
            moved = True
    return moved
