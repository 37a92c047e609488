"""Integer values the whole warp shares, computed on the uniform datapath (UR/UP registers,
U-opcodes), as ptxas does on sm_80+ (docs/STATUS.md, branch quality23 and uniform24).

ptxas's rule, read off its Triton code: a value goes to a uniform register when every
source is a kernel parameter (`ULDC`), `%ctaid` (`S2UR`), an immediate or another uniform
value, loop-carried values included (a pipelined stage index `UIADD3 +1; UISETP; USEL`).
A vector instruction reads such a value directly in its constant/immediate slot
(`IADD3 R, R, UR4, RZ`, `LOP3 R, R, UR`), so the work leaves the vector pipes and the
value no general register.

Run on the machine IR after selection and slot legalisation, before scheduling and
allocation. A virtual register becomes uniform (class "UR", or "UP" for a predicate) when
* every instruction writing it is unguarded and has a uniform form the target's table
  encodes (IADD3 -> UIADD3, IMAD -> UIMAD, LEA -> ULEA, SHF -> USHF, LOP3 -> ULOP3,
  ISETP -> UISETP, SEL -> USEL, MOV -> UMOV/ULDC, S2R SR_CTAID -> S2UR, COPY) whose
  register sources are themselves uniform (parameters in constant bank 0 are loaded with
  ULDC first: the U-opcodes read no constant bank);
* none of those writes sits where a divergent branch has split the warp (between a
  conditional branch not marked uniform and its immediate post-dominator): there lanes
  take different paths, so a merge of two writes would differ between lanes, and two
  uniform values live on different paths could share a register that the paths'
  interleaving (independent thread scheduling) would clobber;
* every other reader takes a uniform register in that operand slot (the table again);
  guards, addresses and constant-bank indices take general registers, and a copy into a
  general register would cost a `MOV R, UR` where coalescing made it free, so such
  readers keep the value vector (codegen still lowers UR/UP copies of either direction).
  Except where `Target.shared_uniform_address_term` (sm_90+): a shared access whose whole
  32-bit base is the value reads it as its address's UR term (`LDS R7, [UR4+0x10]`), and
  an IADD3 adding it to a lane's offset that only shared accesses read counts as a uniform
  reader (isel/shared_addresses.py `fold_uniform_shared_terms` turns it into `[R+UR+o]`,
  ptxas's form); the window base itself starts with `S2UR SR_CgaCtaId`
  (`Target.uniform_cga_rank`).
The largest set with these properties is found by removing what breaks them until nothing
changes (a loop counter and its increment stay together).

64-bit values (register pairs built by IMAD.WIDE or by their halves: UIMAD.WIDE.U32,
UIADD3 with a UP carry, USHF.L.U64.HI) become UR pairs too; one that only vector
instructions read (a row base the lane's IMAD.WIDE adds to) is still worth it outside loops,
as ptxas computes it: the vector copy goes just before the reader (and sched/pre_schedule.py
sinks it there again), so no general register holds the base meanwhile. A vector copy of a
single value is made only when a uniform instruction other than the value's own increment
or loop copy reads it. On by default where `Target.uniform_datapath_default` (sm_90+;
docs/STATUS.md, branch q100_28). Functions with calls (which
clobber every uniform register) or warp-splitting WARPSYNC.EXCLUSIVE are left alone.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Reg, SpecialReg
from ptx2sass.isel.shared_addresses import UNIFORM_TERM_ACCESSES, encodes_uniform_term
from ptx2sass.isel.target_forms import _width
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, VMem, VOp, register_operands

# Vector opcode -> its uniform-datapath twin (same modifiers, same operand order).
UNIFORM_TWINS = {"IADD3": "UIADD3", "IMAD": "UIMAD", "LEA": "ULEA", "SHF": "USHF",
                 "LOP3": "ULOP3", "ISETP": "UISETP", "SEL": "USEL"}
UNIFORM_SPECIALS = ("SR_CTAID.",)
# Vector instructions that read a whole 64-bit source from a UR pair (`DFMA R, R, UR, R`):
# a double constant whose low word an immediate cannot hold (`MOV` pair) goes there, as
# ptxas's `UMOV UR8, 0x88e368f1; UMOV UR9, 0x3ee4f8b5 ... DMUL R28, R28, UR8` (sm_90)
WIDE_UNIFORM_READERS = frozenset({"DADD", "DMUL", "DFMA"})
WIDE_READS = True       # A/B flag for the above
# ... and where `Target.uniform_cga_rank`, the CTA's rank in its cluster (a shared window base)
CGA_RANK = ("SR_CgaCtaId",)
# shared-memory accesses whose address may add a UR (`Target.shared_uniform_address_term`)
SHARED_ACCESSES = UNIFORM_TERM_ACCESSES
URZ, UPT = Reg("UR", 255), Reg("UP", 7)
# ir.Function attribute: True turns the pass on for that function (the hidden
# --uniform-datapath option sets it on every function; default Target.uniform_datapath_default:
# off on sm_8x, where on our timing models it measured slower (docs/STATUS.md, uniform24), on
# for sm_90 and later (q100_28))
UNIFORM_DATAPATH = "uniform_datapath"
# What the pass may spend (docs/STATUS.md, branch uniform24, measured each): `const_loads`,
# a ULDC for a parameter a converted instruction reads in place; `copies`, a vector copy
# for readers that cannot take a UR/UP when at least `copy_readers` uniform instructions
# read the value; `s2ur`, %ctaid read by S2UR; `loops_only`, only values written inside a
# loop. These defaults are ptxas's rule; the narrower settings measured no better.
POLICY = {"const_loads": True, "copies": True, "copy_readers": 1, "s2ur": True, "loops_only": False,
          "wide": True, "wide_copy_readers": 0}
# Uniform registers the code generator writes itself: UR4/UR5 hold the global-memory
# descriptor (codegen's ULDC.64 UR4, c[0x0][0x118]).
RESERVED_UR = frozenset({4, 5})
UR_COUNT, UP_COUNT = 63, 7          # UR0..UR62 (URZ is 63 on the wire), UP0..UP6


def _is_zero_reg(op, file: str) -> bool:
    return type(op) is Reg and op.file == file and op.is_zero


def _uniform_form(mi: MInstr, specials: tuple = UNIFORM_SPECIALS) -> tuple[str, tuple, list] | None:
    """(opcode, modifiers, operands) of `mi` on the uniform datapath, register zeros as
    URZ/UPT and constant-bank operands left as they are (the caller loads them with ULDC);
    None when the instruction has no such form here."""
    op, mods, ops = mi.opcode, tuple(mi.modifiers), list(mi.operands)
    if op == "S2R" and POLICY["s2ur"] and len(ops) == 2 and isinstance(ops[1], SpecialReg) \
            and ops[1].name.startswith(specials):
        return "S2UR", (), ops
    if op == "IMAD" and mods == ("MOV", "U32") and len(ops) == 4 \
            and _is_zero_reg(ops[1], "R") and _is_zero_reg(ops[2], "R"):
        op, mods, ops = "MOV", (), [ops[0], ops[3]]
    if op == "IMAD" and mods == ("IADD",) and len(ops) == 4 and ops[2] == Imm(1):
        op, mods, ops = "IADD3", (), [ops[0], ops[1], ops[3], Reg("R", 255)]
    if op == "LDC" and not mods and len(ops) == 2 and isinstance(ops[1], ConstRef):
        # (sm_90+'s 32-bit constant load: target_forms keeps it vector when a reader cannot take
        # the UR in place, `IADD3 R, R107, 0x1f, RZ`; uniform, that reader is UIADD3)
        op = "MOV"
    if op == "MOV":
        if mods or len(ops) != 2:
            return None
        src = ops[1]
        if isinstance(src, ConstRef):
            return ("ULDC", (), ops) if _plain_constant(src) else None
        return "UMOV", (), [ops[0], _to_uniform(src)]
    twin = UNIFORM_TWINS.get(op)
    if twin is None or "HI" in mods and op == "IMAD":
        return None
    return twin, mods, [_to_uniform(o) for o in ops]


def _whole_or_part(o: VOp) -> bool:
    return o.part is None or 0 <= o.part < o.reg.width


def _plain_constant(c: ConstRef) -> bool:
    return c.bank == 0 and c.ureg is None and c.ubank is None and not c.abs and not c.suffix


def _to_uniform(op):
    if type(op) is Reg and op.is_zero and op.file in ("R", "P"):
        return Reg("U" + op.file, op.index, inv=op.inv)
    return op


def _probe(op, uniform: set[int]):
    """The operand as the encodability probe sees it: a register of its (future) file."""
    if isinstance(op, VOp):
        if op.reg.id in uniform:
            file = "UP" if op.reg.cls == "P" else "UR"
        else:
            file = op.reg.cls
        index = 0 if file.endswith("P") else 4
        return Reg(file, index, neg=op.neg, abs=op.abs, inv=op.inv, suffix=op.suffix)
    if isinstance(op, (Reg, Imm, ConstRef, SpecialReg)):
        return op
    return None


def _encodable(arch: str, opcode: str, mods: tuple, ops: list, uniform: set[int]) -> bool:
    from ptx2sass.isel.operand_slots import _encodable as table_encodes
    probes = tuple(_probe(o, uniform) for o in ops)
    if any(p is None for p in probes):
        return False
    return table_encodes(arch, opcode, mods, probes)


_REVERSED = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}


def _lut_swap(lut: int, i: int, j: int) -> int:
    """LOP3's truth table with inputs i and j (0: a, 1: b, 2: c) exchanged."""
    bi, bj = 2 - i, 2 - j                 # a is the table index's bit 2
    out = 0
    for k in range(8):
        x, y = (k >> bi) & 1, (k >> bj) & 1
        m = (k & ~((1 << bi) | (1 << bj))) | (y << bi) | (x << bj)
        if (lut >> k) & 1:
            out |= 1 << m
    return out


def _orders(mi: MInstr):
    """(modifiers, operands) forms of vector instruction `mi` computing the same thing:
    itself, then its commuted sources (so that a uniform register can reach the one slot
    that takes it: IADD3 R, R, UR, R; LOP3 R, R, UR, R; IMAD R, R, UR, R; ISETP with the
    comparison reversed; SEL with the predicate inverted; an IMAD.MOV as MOV)."""
    op, mods, ops, n = mi.opcode, tuple(mi.modifiers), list(mi.operands), mi.ndefs
    yield mods, ops
    if op == "IADD3" and len(ops) >= n + 3:
        for i, j in ((0, 1), (1, 2), (0, 2)):
            t = list(ops)
            t[n + i], t[n + j] = ops[n + j], ops[n + i]
            yield mods, t
    elif op == "IMAD" and mods == ("MOV", "U32") and len(ops) == 4:
        yield (), [ops[0], ops[3]]
    elif op == "IMAD" and "MOV" not in mods and "IADD" not in mods and "SHL" not in mods and len(ops) >= n + 3:
        t = list(ops)
        t[n], t[n + 1] = ops[n + 1], ops[n]
        yield mods, t
    elif op == "LOP3" and mods == ("LUT",) and len(ops) >= n + 4 and isinstance(ops[n + 3], Imm):
        for i, j in ((0, 1), (1, 2), (0, 2)):
            t = list(ops)
            t[n + i], t[n + j] = ops[n + j], ops[n + i]
            t[n + 3] = Imm(_lut_swap(ops[n + 3].value, i, j))
            yield mods, t
    elif op == "ISETP" and "EX" not in mods and mods and mods[0] in _REVERSED and len(ops) >= n + 2:
        t = list(ops)
        t[n], t[n + 1] = ops[n + 1], ops[n]
        yield (_REVERSED[mods[0]],) + mods[1:], t
    elif op in ("DADD", "DMUL", "DFMA") and len(ops) >= n + 2:
        t = list(ops)
        t[n], t[n + 1] = ops[n + 1], ops[n]
        yield mods, t
    elif op == "SEL" and len(ops) == 4 and isinstance(ops[3], (VOp, Reg)):
        yield mods, [ops[0], ops[2], ops[1], replace(ops[3], inv=not ops[3].inv)]


def _into_handle(arch: str, opcode: str, mods: tuple, ops: list, uniform: set[int]) -> bool:
    """Whether a uniform value would take a slot that names a handle or descriptor
    (`Target.handle_fields`): the table matches forms by operand shape, so sm_100's
    `TEX.LL R4, R6, R4, UR0, 2D` with the level -32.0 in UR0 encodes, UR0 read as the
    texture's handle (tests/test_codegen_texture.py). True when it cannot tell."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.arch import target
    from ptx2sass.encoder.model import Instruction
    from ptx2sass.encoder.target_spelling import respell
    t = target(arch)
    bits = {b for op, b in t.handle_fields if op == opcode}
    if not bits:
        return False
    probes = tuple(_probe(o, uniform) for o in ops)
    taken = codec.slots_taken(respell(Instruction(opcode, mods, probes), t), arch)
    if taken is None:
        return True
    return any(isinstance(o, VOp) and o.reg.id in uniform
               and min(slot["fields"][0]["bits"], default=-1) in bits
               for o, slot in zip(ops, taken) if slot["fields"])


def _place(mi: MInstr, uniform: set[int], arch: str):
    """The first of `_orders(mi)` the table encodes with the uniform values in uniform
    registers, none of them in a handle's slot, or None."""
    for mods, ops in _orders(mi):
        opcode = "MOV" if mi.opcode == "IMAD" and len(ops) == 2 else mi.opcode
        if _encodable(arch, opcode, mods, ops, uniform) and not _into_handle(arch, opcode, mods, ops, uniform):
            return opcode, mods, ops
    return None


def _divergent_region(mf: MFunction) -> set[int]:
    """Ids of the machine blocks between a divergent conditional branch (a guarded BRA not
    marked uniform, a BRX) and its immediate post-dominator; without one, everything the
    branch reaches."""
    blocks = mf.blocks
    ipdom = ir.immediate_dominators([b for b in blocks if not b.succs], lambda b: b.preds, lambda b: b.succs)
    region: set[int] = set()
    for b in blocks:
        split = any((i.opcode == "BRA" and i.guard is not None and not i.uniform) or i.opcode == "BRX"
                    for i in b.instrs)
        if not split or len(b.succs) < 2:
            continue
        meet = ipdom.get(id(b))
        stop = id(meet) if meet is not None else None
        todo = [s for s in b.succs]
        seen: set[int] = set()
        while todo:
            n = todo.pop()
            if id(n) == stop or id(n) in seen:
                continue
            seen.add(id(n))
            todo.extend(n.succs)
        region |= seen
    return region


def _physical_uniforms(mf: MFunction) -> tuple[set[int], set[int]]:
    """UR and UP indices the code names as physical registers (with room for pairs/quads)."""
    urs, ups = set(RESERVED_UR), set()

    def note(o):
        if type(o) is Reg:
            if o.file == "UR" and not o.is_zero:
                urs.update(range(o.index, o.index + 4))
            elif o.file == "UP" and not o.is_zero:
                ups.add(o.index)
        elif o is not None and hasattr(o, "__dataclass_fields__") and not isinstance(o, (VOp, Imm)):
            for name in ("base", "ubase", "desc", "ureg", "ubank"):
                if hasattr(o, name):
                    note(getattr(o, name))

    for b in mf.blocks:
        for ins in b.instrs:
            for o in ins.operands:
                note(o)
            for k, width in ins.widths.items():     # a fixed group wider than 4 (tcgen05.mma's ::2 lane mask)
                o = ins.operands[k] if k < len(ins.operands) else None
                if type(o) is Reg and o.file == "UR" and not o.is_zero:
                    urs.update(range(o.index, o.index + width))
            note(ins.guard)
            for f, k in ins.clobbers:
                if f == "UR":
                    urs.add(k)
                elif f == "UP":
                    ups.add(k)
    return urs, ups


def uniform_pools(mf: MFunction) -> dict[str, list[int]]:
    """The physical URs and UPs virtual uniform registers may take (`MFunction.uniform_registers`):
    those the code does not name itself."""
    urs_taken, ups_taken = _physical_uniforms(mf)
    return {"UR": [k for k in range(UR_COUNT) if k not in urs_taken],
            "UP": [k for k in range(UP_COUNT) if k not in ups_taken]}


def _left_alone(mf: MFunction) -> bool:
    for b in mf.blocks:
        for ins in b.instrs:
            if ins.clobbers or ins.opcode in ("CALL", "RET") or (
                    ins.opcode == "WARPSYNC" and "EXCLUSIVE" in ins.modifiers):
                return True
    return False


def _only_loaded(vid: int, writes: dict, seen: frozenset = frozenset()) -> bool:
    """Every write of `vid` a plain parameter load (ULDC form), directly or through COPYs."""
    ws = writes.get(vid, ())
    if not any(w.opcode != IMPLICIT_DEF for w in ws) or vid in seen or not seen and not any(
            w.opcode in (IMPLICIT_DEF, COPY) for w in ws):
        return False
    for w in ws:
        if w.opcode == IMPLICIT_DEF:          # (a value written by halves)
            continue
        if w.opcode == COPY:
            src = w.operands[1]
            if not (isinstance(src, VOp) and _only_loaded(src.reg.id, writes, seen | {vid})):
                return False
        elif (_uniform_form(w) or ("",))[0] != "ULDC":
            return False
    return True


def _copied_in(vid: int, writes: dict) -> set[int]:
    """The instructions whose results reach `vid` through copies alone (a loop's phi copies:
    `v1 = COPY t; t = COPY v2; v2 = LOP3 v1, 1`, the wgmma K loop's mbarrier phase): they
    update the value itself, so they are no readers that make a vector copy of it worth it
    (with them counted, the phase's per-trip SHF took a `MOV R, UR` each trip)."""
    found: set[int] = set()
    todo, seen = [vid], {vid}
    while todo:
        for w in writes.get(todo.pop(), ()):
            if w.opcode != COPY:
                continue
            for _, op, is_def in register_operands(w):
                if is_def or op.reg.id in seen:
                    continue
                seen.add(op.reg.id)
                for x in writes.get(op.reg.id, ()):
                    found.add(id(x))
                todo.append(op.reg.id)
    return found


def _uniform_branch(ins: MInstr) -> bool:
    """A conditional branch the whole warp takes or not (`divergence`'s mark), to one label."""
    return ins.opcode == "BRA" and ins.uniform and not ins.modifiers and len(ins.operands) == 1 \
        and type(ins.operands[0]).__name__ == "Label"


def _compares_uniforms(writers: list[MInstr], cand: set[int]) -> bool:
    """Whether a predicate's writer is the high half of a 64-bit compare (ISETP.EX) of
    uniform values (the high words and the low half's predicate): as vector code it would
    need the pair copied into two registers, while UISETP + `PLOP3 P, PT, PT, PT, UP` needs
    none (ptxas's matmul_int8 K loop on sm_90/100: `UISETP.GE.U32.AND(.EX) UP0, ...` of the
    64-bit counter and bound, then PLOP3 into P4). A 32-bit compare of a counter ptxas keeps
    vector (matmul_bf16's `ISETP.GE.AND P0, PT, R45, UR6`)."""
    for w in writers:
        if w.opcode != "ISETP" or "EX" not in w.modifiers:
            continue
        srcs = {(op.reg.id, op.part) for i, op, d in register_operands(w)
                if not d and i >= 0 and (op.reg.id in cand or op.reg.cls in ("UR", "UP"))}
        if len(srcs) >= 2:
            return True
    return False


def _steers_branch_only(ins: MInstr, reads: dict, depth: int = 0) -> bool:
    """A compare whose predicate only branches (through a 64-bit compare's high half): the
    loop's exit test, which, like a counter's own increment, is no reader that makes a
    vector copy of the counter worth it (with it counted, matmul_bf16's 32-bit K counter
    went to a UR with a copy for its in-loop compare; ptxas keeps it vector)."""
    if ins.opcode != "ISETP" or depth > 2:
        return False
    defs = [op for _, op, d in register_operands(ins) if d and op.reg.cls == "P"]
    if not defs:
        return False
    for d in defs:
        readers = reads.get(d.reg.id, ())
        if not readers:
            return False
        for r, i, _ in readers:
            if r.opcode == "BRA" and i < 0:
                continue
            if not _steers_branch_only(r, reads, depth + 1):
                return False
    return True


def _copyable(writers: list[MInstr], readers, where: dict, depth: dict) -> bool:
    """Whether `_copy_for_readers` can serve `readers` ((instruction, operand index)) with
    vector copies: each gets one just before it unless it sits in a deeper loop than every
    writer, where one copy after the only writer serves it instead."""
    top = max(depth[where[id(w)]] for w in writers)
    return len(writers) == 1 or all(depth[where[id(r)]] <= top for r, _ in readers)


def _copy_for_readers(mf: MFunction, vid: int, writers: list[MInstr], readers, where: dict,
                      depth: dict) -> None:
    """Vector copies of uniform value `vid` read instead by `readers` ((instruction, operand
    index or -1 for the guard)). A copy goes just before the first such reader of a block
    (reused by the next ones until `vid` is written again), so that the general register
    lives only from there, as ptxas's `IMAD.U32 R6, RZ, RZ, UR4` before the IMAD.WIDE that
    adds a lane's offset to a uniform row base; readers in a deeper loop than every writer
    share one copy after the (only) writer instead, outside the loop."""
    v = mf.vregs[vid]
    top = max(depth[where[id(w)]] for w in writers)

    def swap(o, w):
        if isinstance(o, VOp) and o.reg is v:
            return replace(o, reg=w)
        if isinstance(o, VMem) and isinstance(o.base, VOp) and o.base.reg is v:
            return replace(o, base=replace(o.base, reg=w))
        if isinstance(o, ConstRef) and isinstance(o.ureg, VOp) and o.ureg.reg is v:
            return replace(o, ureg=replace(o.ureg, reg=w))
        return o

    def serve(ins, slots, w):
        for i in slots:
            if i < 0:
                ins.guard = swap(ins.guard, w)
            else:
                ins.operands[i] = swap(ins.operands[i], w)

    hoisted = [(r, i) for r, i in readers if depth[where[id(r)]] > top]
    local: dict[int, list[int]] = {}
    for r, i in readers:
        if depth[where[id(r)]] <= top:
            local.setdefault(id(r), []).append(i)
    if hoisted:
        w = mf.new_vreg(v.cls, v.width)
        for b in mf.blocks:
            k = next((k for k, ins in enumerate(b.instrs) if ins is writers[0]), None)
            if k is not None:
                b.instrs.insert(k + 1, MInstr(COPY, (), [VOp(w), VOp(v)], 1, None, writers[0].line))
                break
        for r, i in hoisted:
            serve(r, [i], w)
    if not local:
        return
    writer_ids = {id(w) for w in writers}
    for b in mf.blocks:
        out: list[MInstr] = []
        current = None
        for ins in b.instrs:
            slots = local.get(id(ins))
            if slots is not None:
                if current is None:
                    current = mf.new_vreg(v.cls, v.width)
                    out.append(MInstr(COPY, (), [VOp(current), VOp(v)], 1, None, ins.line))
                serve(ins, slots, current)
            out.append(ins)
            if id(ins) in writer_ids:
                current = None
        b.instrs[:] = out


def _uniform_address(ins: MInstr, mem: VMem, op: VOp, arch: str) -> bool:
    """Whether shared access `ins` can read `op`, its whole 32-bit base, as a UR term
    (`[UR+o]`) instead: the target's table encodes the form."""
    if ins.opcode not in SHARED_ACCESSES or mem.wide or mem.uniform_zero or mem.ubase is not None \
            or not isinstance(mem.base, VOp) or mem.base != op or op.part is not None or op.reg.width != 1:
        return False
    return encodes_uniform_term(arch, ins, ins.operands.index(mem), with_base=False)


def _uniform_bases(ins: MInstr, cand: set) -> None:
    """A shared access's base that became uniform moves to the address's UR term."""
    for k, o in enumerate(ins.operands):
        if isinstance(o, VMem) and isinstance(o.base, VOp) and o.base.reg.id in cand \
                and ins.opcode in SHARED_ACCESSES and not o.wide and o.ubase is None:
            ins.operands[k] = replace(o, base=None, ubase=o.base)


def _feeds_shared_only(ins: MInstr, reads: dict) -> bool:
    """`ins` is a plain IADD3 whose one result only shared accesses read, as their 32-bit base."""
    if ins.opcode != "IADD3" or ins.modifiers or ins.ndefs != 1 or ins.guard is not None:
        return False
    d = ins.operands[0]
    if not isinstance(d, VOp) or d.part is not None or d.reg.width != 1:
        return False
    rs = reads.get(d.reg.id, ())
    return bool(rs) and all(r.opcode in SHARED_ACCESSES and isinstance(r.operands[i], VMem)
                            and not r.operands[i].wide and r.operands[i].base == op for r, i, op in rs)


def _in_ubase(ins: MInstr, op: VOp) -> bool:
    return any(isinstance(o, VMem) and o.ubase is op for o in ins.operands)


def select_uniform_datapath(mf: MFunction, arch: str) -> int:
    """Move the uniform integer values of `mf` to UR/UP registers (module docstring);
    returns how many virtual registers moved."""
    if _left_alone(mf):
        return 0
    region = _divergent_region(mf)
    urs_taken, ups_taken = _physical_uniforms(mf)
    ur_pool = [k for k in range(UR_COUNT) if k not in urs_taken]
    up_pool = [k for k in range(UP_COUNT) if k not in ups_taken]
    writes: dict[int, list[MInstr]] = {}
    reads: dict[int, list[tuple[MInstr, int, VOp]]] = {}
    where: dict[int, int] = {}
    for b in mf.blocks:
        for ins in b.instrs:
            where[id(ins)] = id(b)
            for i, op, is_def in register_operands(ins):
                if is_def:
                    writes.setdefault(op.reg.id, []).append(ins)
                else:
                    reads.setdefault(op.reg.id, []).append((ins, i, op))
    from ptx2sass.regalloc.loops import loop_depths
    depth = {id(b): d for b, d in zip(mf.blocks, loop_depths(mf))}
    in_loop = {k for k, d in depth.items() if d > 0}
    cand: set[int] = set()
    for vid, ws in writes.items():
        if POLICY["loops_only"] and not any(where[id(w)] in in_loop for w in ws):
            continue
        v = mf.vregs[vid]
        if not (v.width == 1 and v.cls in ("R", "P") or v.width == 2 and v.cls == "R" and POLICY["wide"]) \
                or vid in mf.precolored:
            continue
        if all(w.guard is None and not w.widths and w.shown is None and where[id(w)] not in region for w in ws):
            cand.add(vid)

    def def_ok(ins: MInstr) -> bool:
        defs = [op for _, op, d in register_operands(ins) if d]
        if any(not _whole_or_part(d) or d.reg.id not in cand for d in defs):
            return False
        if ins.opcode == IMPLICIT_DEF:
            return True
        if ins.opcode not in (COPY, "IMAD") and any(d.width != 1 for d in defs):
            return False                # 64-bit: IMAD.WIDE, or a value written by its halves
        if ins.opcode == COPY:
            s = ins.operands[1]
            return (isinstance(s, VOp) and (s.reg.id in cand or s.reg.cls in ("UR", "UP")) and _whole_or_part(s) and s.width == defs[0].width
                    and not s.neg and not s.abs and not s.suffix and (not s.inv or s.reg.cls == "P")) \
                or (isinstance(s, Imm) and defs[0].reg.cls == "R" and defs[0].width == 1)
        form = _uniform_form(ins, specials)
        if form is None:
            return False
        opcode, mods, ops = form
        for k, o in enumerate(ops):
            if k < ins.ndefs:
                if not (isinstance(o, VOp) or (type(o) is Reg and o.is_zero and o.file in ("UR", "UP"))):
                    return False
            elif isinstance(o, VOp):
                # (a UR already: target_forms' uniform constant loads, LDCU/ULDC)
                if not (o.reg.id in cand or o.reg.cls in ("UR", "UP")) or not _whole_or_part(o):
                    return False
            elif type(o) is Reg:
                if not (o.is_zero and o.file in ("UR", "UP")):
                    return False
            elif isinstance(o, ConstRef):
                if opcode != "ULDC" and (not _plain_constant(o) or not POLICY["const_loads"]
                                         or _width(ins, k) != 1):
                    return False
            elif not isinstance(o, (Imm, SpecialReg)):
                return False
        trial = [Reg("UR", 4) if isinstance(o, ConstRef) and opcode != "ULDC" else o for o in ops]
        return _encodable(arch, uldc if opcode == "ULDC" else opcode, mods, trial, cand)

    def read_ok(ins: MInstr, index: int, op: VOp) -> bool:
        """A reader that stays on the vector datapath can take the uniform value."""
        if index < 0 and branches_on_up and _uniform_branch(ins):
            return True                           # `BRA.U UPn` (sm_100+)
        if WIDE_READS and index >= 0 and op.width == 2 and op.part is None and ins.opcode in WIDE_UNIFORM_READERS:
            return _place(ins, cand, arch) is not None      # `DMUL R, R, UR6`: a constant pair
        if index < 0 or op.width != 1:
            return False                          # a guard; another whole wide value
        o = ins.operands[index]
        if isinstance(o, VMem) and shared_term and _uniform_address(ins, o, op, arch):
            return True                           # `LDS R, [UR8+0x10]` (sm_90+)
        if isinstance(o, (VMem, ConstRef)):
            return False                          # an address or constant-bank index
        if ins.opcode in (COPY, IMPLICIT_DEF, "BRA", "BRX", "EXIT"):
            # a copy into a general register costs a MOV where coalescing made it free
            return False
        return _place(ins, cand, arch) is not None

    from ptx2sass.encoder.arch import target
    branches_on_up = target(arch).uniform_predicate_branch
    shared_term = target(arch).shared_uniform_address_term
    specials = UNIFORM_SPECIALS + (CGA_RANK if target(arch).uniform_cga_rank else ())
    uldc = dict(target(arch).renamed_opcodes).get("ULDC", "ULDC")     # (sm_100+: LDCU)
    needs_copy: dict[int, list[tuple[MInstr, int]]] = {}    # vreg id -> readers served by a copy
    changed = True
    while changed:
        changed = False
        converted: set[int] = set()
        for vid in sorted(cand):
            if not all(def_ok(w) for w in writes[vid]):
                cand.discard(vid)
                changed = True
        for vid in sorted(cand):
            for w in writes[vid]:
                converted.add(id(w))
        needs_copy.clear()
        for vid in sorted(cand):
            bad = [(r, i) for r, i, op in reads.get(vid, ()) if id(r) not in converted and not read_ok(r, i, op)]
            if not bad:
                continue
            # a value uniform readers share is worth one vector copy for the others (ptxas's
            # `IMAD.U32 R, RZ, RZ, UR` / `PLOP3 P, PT, PT, PT, UP`); without them it stays
            # (a loop counter's own increment, or the copy closing its loop, is no reader
            # that makes it worth a copy: the tests/test_cs2r_zero_pairs.py loop on sm_90
            # had a `MOV R4, UR1` per trip for the compare)
            own = {id(w) for w in writes[vid]} | _copied_in(vid, writes) | {
                id(r) for r, _, _ in reads.get(vid, ()) if _steers_branch_only(r, reads)}
            uniform_readers = sum(id(r) in converted and id(r) not in own and r.opcode != COPY
                                  for r, _, _ in reads.get(vid, ()))
            if mf.vregs[vid].cls == "P" and _compares_uniforms(writes[vid], cand):
                uniform_readers += 1
            if shared_term:
                # an add of a lane's offset that only shared accesses read folds into their
                # address (`[R+UR+o]`, fold_uniform_shared_terms): it goes as a uniform one does
                uniform_readers += sum(id(r) not in converted and (r, i) not in bad
                                       and _feeds_shared_only(r, reads) for r, i, _ in reads.get(vid, ()))
            # a 64-bit row base read only by vector instructions is worth its copies
            # (ptxas: the IMAD.WIDE adding a lane's offset), but not once per loop trip
            # (a computed one: a 64-bit parameter loaded as two halves, sm_8x's `MOV R, c[]`
            # pair, would only become ULDC + MOV R, UR per half: zluda's shr 10 -> 14
            # instructions on sm_89, branch u89_28)
            wide = mf.vregs[vid].width > 1 and all(depth[where[id(r)]] == 0 for r, _ in bad) \
                and not _only_loaded(vid, writes)
            if POLICY["copies"] and _copyable(writes[vid], bad, where, depth) and uniform_readers >= (
                    POLICY["wide_copy_readers"] if wide else POLICY["copy_readers"]):
                needs_copy[vid] = bad
            else:
                cand.discard(vid)
                changed = True
        if changed:
            continue
        # what the files hold: keep the first ones (a value and its sources come first);
        # every constant a converted instruction reads takes a UR of its own (ULDC)
        loads = sum(isinstance(o, ConstRef) for vid in cand if mf.vregs[vid].cls == "R"
                    for w in writes[vid] if w.opcode not in (COPY, IMPLICIT_DEF)
                    for o in _uniform_form(w, specials)[2] if _uniform_form(w, specials)[0] != "ULDC")
        for cls, room in (("R", len(ur_pool) - loads), ("P", len(up_pool))):
            mine = sorted(v for v in cand if mf.vregs[v].cls == cls)
            used, keep = 0, set()
            for vid in mine:            # a pair takes two (and, aligned, may waste one)
                w = mf.vregs[vid].width
                if used + 2 * w - 1 <= room:
                    used += w
                    keep.add(vid)
            if len(keep) < len(mine):
                for vid in mine:
                    if vid not in keep:
                        cand.discard(vid)
                changed = True
    if not cand:
        return 0
    for vid, bad in needs_copy.items():
        _copy_for_readers(mf, vid, writes[vid], bad, where, depth)
    single = {vid for vid in cand if len(writes[vid]) == 1}
    for b in mf.blocks:
        out: list[MInstr] = []
        loaded: dict[ConstRef, object] = {}     # this block's ULDCs (one per constant)
        for ins in b.instrs:
            defs = [op for _, op, d in register_operands(ins) if d]
            if ins.opcode == "BRA" and isinstance(ins.guard, VOp) and ins.guard.reg.id in cand:
                # (read_ok let only a uniform branch on a target with `BRA.U UPn` through)
                ins.modifiers, ins.operands = ("U",), [VOp(ins.guard.reg, inv=ins.guard.inv), *ins.operands]
                ins.guard = None
                out.append(ins)
                continue
            if not defs or defs[0].reg.id not in cand or ins.opcode in (COPY, IMPLICIT_DEF):
                if ins.opcode not in (COPY, IMPLICIT_DEF) and any(
                        op.reg.id in cand for _, op, d in register_operands(ins) if not d):
                    if shared_term:
                        _uniform_bases(ins, cand)       # `[b+o]` -> `[UR+o]`
                    if any(op.reg.id in cand for _, op, d in register_operands(ins)
                           if not d and not _in_ubase(ins, op)):
                        ins.opcode, ins.modifiers, ops = _place(ins, cand, arch)   # a vector reader
                        ins.operands = list(ops)
                out.append(ins)
                continue
            opcode, mods, ops = _uniform_form(ins, specials)
            if opcode != "ULDC":
                for k, o in enumerate(ops):
                    if isinstance(o, ConstRef):
                        key = replace(o, neg=False, inv=False)
                        t = loaded.get(key)
                        if t is None:
                            t = loaded[key] = mf.new_vreg("UR")
                            out.append(MInstr(uldc, (), [VOp(t), key], 1, None, ins.line))
                        ops[k] = VOp(t, neg=o.neg, inv=o.inv)
            elif ops[0].reg.id in single:
                loaded.setdefault(ops[1], ops[0].reg)
            if opcode == "UMOV" and isinstance(ops[1], VOp):
                opcode, mods = COPY, ()          # between uniform registers: coalescing may drop it
            elif opcode == "ULDC":
                opcode = uldc
            ins.opcode, ins.modifiers, ins.operands = opcode, tuple(mods), ops
            out.append(ins)
        b.instrs[:] = out
    for vid in cand:
        v = mf.vregs[vid]
        v.cls = "UP" if v.cls == "P" else "UR"
    mf.uniform_registers = {"UR": ur_pool, "UP": up_pool}
    return len(cand)
