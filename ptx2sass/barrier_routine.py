"""Non-aligned CTA barriers where the warp may be diverged.

`barrier[.cta].arrive` and `barrier[.cta].sync` without `.aligned` may be executed by the
threads of a warp apart (the PTX ISA: each thread waits for the non-exited threads of its
warp, and the warp's arrival is marked). A BAR instruction counts the warp once each time
it runs, so two halves of a warp at two BARs would count it twice: ptxas 13.5 (sm_7x/8x)
tests the warp where the code may be diverged (inside a reconvergence region, or after a
divergent branch that has none) with `BRA.CONV ~URZ` and runs the plain BAR when it is
converged (sm_75: `BRA.DIV` to the call when not, and `BMOV.32.CLEAR RZ, Bk` before the
BSSY of the region around it); otherwise it calls a routine
`$__cuda_sm70_barrier_<arrive|sync>[_<id>][_count]`
(`WARPSYNC 0xffffffff`, the BAR, RET) in which the warp's lanes meet at one BAR. In
straight-line code it writes the BAR alone.

On sm_90 and later ptxas writes no routine: a diverged warp (`BRA.DIV`) runs the BAR
with its lanes together in a `WARPSYNC.COLLECTIVE.ALL` ... `ENDCOLLECTIVE` section of its
own at the end of the function (`Target.nonaligned_barrier_collective`).

Ours: isel marks the BAR (`mark`); after the reconvergence regions are known
(ptx2sass.reconverge) each marked BAR in possibly diverged code gets the test and the call
(`expand`). The routine is a slow-path subroutine (ptx2sass.slow_paths), compiled from a
one-line function of the same barrier whose selection puts the WARPSYNC first; a barrier id
or count held in a register travels in R4/R5.
"""
from __future__ import annotations

from ptx2sass import abi
from ptx2sass.encoder.model import Imm, Label, Reg
from ptx2sass.mir import COPY, IMPLICIT_DEF, MBlock, MFunction, MInstr, VOp

NOT_URZ = Reg("UR", 255, inv=True)    # `~URZ`: BRA.CONV's operand as ptxas writes it


def mark(mf: MFunction, mi: MInstr, operands: list) -> None:
    """`mi` (a BAR of a non-aligned barrier) must meet its warp first where it may be
    diverged; `operands`: the barrier id and the count if any, each an Imm or a register
    (before the BAR packs two registers into one). A reduction (BAR.RED, its B2R.RESULT
    next): on sm_7x/8x its routine takes the predicate as 0/1 after the id and count and
    returns the result (popc, or and/or as 0/1)."""
    mf.nonaligned_barriers.append((mi, operands))


def _cut_after(b: MBlock, at: int, after: MBlock):
    """Cut `b` before its barrier at `at`: `after` takes what followed the barrier and `b`'s
    successors; returns a reduction's result (its B2R.RESULT, right after the BAR, which both
    paths read), taken out of `after`, or None."""
    bar, rest = b.instrs[at], b.instrs[at + 1:]
    del b.instrs[at:]
    result = rest.pop(0) if "RED" in bar.modifiers else None
    assert result is None or result.opcode == "B2R", result
    after.instrs = rest
    after.succs, after.fallthrough = b.succs, b.fallthrough
    for s in b.succs:
        s.preds[:] = [after if p is b else p for p in s.preds]
    return result


def _next_marked(b: MBlock, marked: dict) -> int | None:
    """The index of `b`'s first marked BAR (a guarded one stays as it is: its lanes are the
    guard's, which a routine called by all of them would not keep)."""
    return next((i for i, mi in enumerate(b.instrs) if id(mi) in marked and mi.guard is None), None)


def kind_of(mi: MInstr, operands: list) -> tuple:
    """The routine's slow-path kind: ("barrier", mode, id or None, counted). As in ptxas's
    routines called from more than one place, a constant id is part of the routine and the
    count comes in a register."""
    mode = ("red_" + mi.modifiers[1].lower() if "RED" in mi.modifiers
            else "arrive" if "ARV" in mi.modifiers else "sync")
    bar_id = operands[0].value if isinstance(operands[0], Imm) else None
    return ("barrier", mode, bar_id, len(operands) > 1)


def routine_arguments(operands: list) -> list:
    """What the routine receives in registers, in order: a register id, then the count."""
    return ([] if isinstance(operands[0], Imm) else [operands[0]]) + list(operands[1:])


def expand(mf: MFunction, inside: set[int]) -> set[int]:
    """Each marked BAR in a block of `inside` (ids of blocks a diverged warp may run):
    `BRA.CONV ~URZ, fast`, the routine's call, a branch over `fast: BAR`. Returns the ids of
    the blocks that now call a routine (the blocks as they were, ending in the test)."""
    from ptx2sass import slow_paths
    marked = {id(mi): ops for mi, ops in mf.nonaligned_barriers}
    calling: set[int] = set()
    if mf.target.nonaligned_barrier_collective:
        _expand_collective(mf, inside, marked)
        return calling
    for b in list(mf.blocks):
        if id(b) not in inside:
            continue
        at = _next_marked(b, marked)
        while at is not None:
            calling.add(id(b))
            bar = b.instrs[at]
            n = len(mf.blocks)
            call, back, fast, after = (MBlock(f"{b.name}$bar{k}{n}") for k in ("call", "ret", "fast", "after"))
            result = _cut_after(b, at, after)
            div = mf.target.diverged_warp_test == "div"
            if div:         # sm_75: to the call when diverged, the call after the code
                b.instrs.append(MInstr("BRA", ("DIV",), [Label(call.name)], 0, None, bar.line, uniform=True))
                b.succs, b.fallthrough = [call, fast], fast
            else:
                b.instrs.append(MInstr("BRA", ("CONV",), [NOT_URZ, Label(fast.name)], 0, None, bar.line,
                                       uniform=True))
                b.succs, b.fallthrough = [fast, call], call
            operands = marked[id(bar)]
            sub = slow_paths.subroutine(kind_of(bar, operands), mf.target)
            uses = []
            arguments = routine_arguments(operands)
            if result is not None:      # the predicate as 0/1 (`SEL R, RZ, 0x1, !P`, as ptxas)
                from ptx2sass.isel.common import RZ
                bit, pred = VOp(mf.new_vreg()), bar.operands[-1]
                negated = (VOp(pred.reg, pred.part, inv=not pred.inv) if isinstance(pred, VOp)
                           else Reg(pred.file, pred.index, inv=not pred.inv))
                call.instrs.append(MInstr("SEL", (), [bit, RZ, Imm(1), negated], 1, None, bar.line))
                arguments.append(bit)
            for op, (reg, width) in zip(arguments, sub.args):
                r = VOp(mf.fixed_vreg("R", reg, width))
                call.instrs.append(MInstr("MOV" if isinstance(op, Imm) else COPY, (), [r, op], 1, None, bar.line))
                uses.append(r)
            ra = mf.fixed_vreg("R", abi.RETURN_ADDRESS, 2)
            call.instrs.append(MInstr(IMPLICIT_DEF, (), [VOp(ra)], 1))
            call.instrs.append(MInstr("MOV", (), [VOp(ra, 0), Label(back.name)], 1, None, bar.line))
            call.instrs.append(MInstr("MOV", (), [VOp(ra, 1), Reg("R", 255)], 1, None, bar.line))
            if result is None:
                call.instrs.append(MInstr("CALL", ("REL", "NOINC"), [Label(abi.label_of(sub.name)), *uses, VOp(ra)],
                                          0, None, bar.line, clobbers=sub.clobbers, shown=(0,)))
            else:
                got = VOp(mf.fixed_vreg("R", *sub.result))
                call.instrs.append(MInstr("CALL", ("REL", "NOINC"),
                                          [got, Label(abi.label_of(sub.name)), *uses, VOp(ra)],
                                          1, None, bar.line, clobbers=sub.clobbers, shown=(1,)))
            if sub.name not in mf.calls:
                mf.calls.append(sub.name)
            call.succs, call.fallthrough = [back], back
            if result is not None:      # the routine's result where the B2R.RESULT puts it
                from ptx2sass.isel.common import PT, RZ
                if result.ndefs == 1:
                    back.instrs.append(MInstr(COPY, (), [result.operands[0], got], 1, None, bar.line))
                else:
                    back.instrs.append(MInstr("ISETP", ("NE", "U32", "AND"),
                                              [result.operands[1], PT, got, RZ, PT], 2, None, bar.line))
            back.instrs.append(MInstr("BRA", (), [Label(after.name)], 0, None, bar.line, uniform=True))
            back.succs, back.fallthrough = [after], None
            fast.instrs.append(bar)
            if result is not None:
                fast.instrs.append(result)
            fast.succs, fast.fallthrough = [after], after
            call.preds, back.preds, fast.preds, after.preds = [b], [call], [b], [back, fast]
            i = mf.blocks.index(b)
            if div:
                mf.blocks[i + 1:i + 1] = [fast, after]
                mf.blocks.extend([call, back])
            else:
                mf.blocks[i + 1:i + 1] = [call, back, fast, after]
            inside.update(id(x) for x in (call, back, fast, after))
            b = after
            at = _next_marked(b, marked)
    return calling


def clear_before(mf: MFunction, bssys: list[MInstr]) -> None:
    """sm_75: `BMOV.32.CLEAR RZ, Bk` before the BSSY of each region that calls a barrier
    routine, as ptxas writes it there."""
    from ptx2sass.isel.common import RZ
    wanted = {id(mi) for mi in bssys}
    for b in mf.blocks:
        out = []
        for mi in b.instrs:
            if id(mi) in wanted:
                out.append(MInstr("BMOV", ("32", "CLEAR"), [RZ, mi.operands[0]], 1))
            out.append(mi)
        b.instrs[:] = out


def _expand_collective(mf: MFunction, inside: set[int], marked: dict) -> None:
    """sm_90 and later, as ptxas: `BRA.DIV` (a diverged warp) to a section at the end of the
    function, `WARPSYNC.COLLECTIVE.ALL` ... the BAR with the id and count packed in one
    register ... `ENDCOLLECTIVE`, then back; a converged warp runs the plain BAR."""
    from ptx2sass.isel.common import NOT_PT, RZ
    for b in list(mf.blocks):
        if id(b) not in inside:
            continue
        at = _next_marked(b, marked)
        while at is not None:
            bar = b.instrs[at]
            operands = marked[id(bar)]
            n = len(mf.blocks)
            fast, after, slow, end = (MBlock(f"{b.name}$bar{k}{n}") for k in ("fast", "after", "slow", "end"))
            result = _cut_after(b, at, after)
            ur = VOp(mf.new_vreg("UR"))
            b.instrs.append(MInstr("UMOV", (), [ur, Imm(0xFFFFFFFF)], 1, None, bar.line))
            b.instrs.append(MInstr("BRA", ("DIV",), [ur, Label(slow.name)], 0, None, bar.line, uniform=True))
            b.succs, b.fallthrough = [fast, slow], fast
            fast.instrs.append(bar)
            if result is not None:
                fast.instrs.append(result)
            fast.succs, fast.fallthrough, fast.preds = [after], after, [b]
            regs = []
            for op in operands:
                if isinstance(op, Imm):
                    r = VOp(mf.new_vreg())
                    slow.instrs.append(MInstr("MOV", (), [r, op], 1, None, bar.line))
                    op = r
                regs.append(op)
            slow.instrs.append(MInstr("WARPSYNC", ("COLLECTIVE", "ALL"), [Label(end.name)], 0, None, bar.line))
            if len(regs) > 1:
                shifted, packed = VOp(mf.new_vreg()), VOp(mf.new_vreg())
                slow.instrs.append(MInstr("SHF", ("L", "U32"), [shifted, regs[1], Imm(0x10), RZ], 1, None, bar.line))
                slow.instrs.append(MInstr("LOP3", ("LUT",), [packed, shifted, Imm(0xF), regs[0], Imm(0xF8), NOT_PT],
                                          1, None, bar.line))
                ops = [packed, packed]
            else:
                ops = regs
            if result is not None:      # BAR.RED's predicate, after the id and count
                ops = ops + [bar.operands[-1]]
            slow.instrs.append(MInstr("BAR", bar.modifiers, ops, 0, None, bar.line))
            if result is not None:
                slow.instrs.append(MInstr("B2R", result.modifiers, list(result.operands), result.ndefs,
                                          None, result.line))
            slow.instrs.append(MInstr("ENDCOLLECTIVE", (), [], 0, None, bar.line))
            slow.succs, slow.fallthrough, slow.preds = [end], end, [b]
            end.instrs.append(MInstr("BRA", (), [Label(after.name)], 0, None, bar.line, uniform=True))
            end.succs, end.fallthrough, end.preds = [after], None, [slow]
            after.preds = [fast, end]
            i = mf.blocks.index(b)
            mf.blocks[i + 1:i + 1] = [fast, after]
            mf.blocks.extend([slow, end])
            inside.update(id(x) for x in (fast, after, slow, end))
            b = after
            at = _next_marked(b, marked)


def name_of(kind: tuple) -> str:
    """ptxas's name of the routine (less its `$__internal_N_$` prefix)."""
    _, mode, bar_id, counted = kind
    return (f"$__cuda_sm70_barrier_{mode}" + ("" if bar_id is None else f"_{bar_id}")
            + ("_count" if counted else ""))


def routine_text(kind: tuple, arch: str) -> tuple[str, int]:
    """(PTX of the routine's one-line function, number of register arguments)."""
    _, mode, bar_id, counted = kind
    ops = [str(bar_id) if bar_id is not None else "%a0"]
    params = [] if bar_id is not None else [".reg .b32 %a0"]
    if counted:
        ops.append(f"%a{len(params)}")
        params.append(f".reg .b32 %a{len(params)}")
    if not mode.startswith("red_"):
        return (f".version 9.0\n.target {arch}\n.address_size 64\n"
                f".func slow_path({', '.join(params)})\n{{\n"
                f"\tbarrier.{mode} {', '.join(ops)};\n\tret;\n}}\n"), len(params)
    # a reduction: the predicate (0/1) last, the result (popc, or and/or as 0/1) returned
    op, bit = mode[4:], f"%a{len(params)}"
    params.append(f".reg .b32 {bit}")
    body = (f"\t.reg .pred %p, %r;\n\tsetp.ne.u32 %p, {bit}, 0;\n" +
            (f"\tbarrier.red.popc.u32 %q, {', '.join(ops)}, %p;\n" if op == "popc" else
             f"\tbarrier.red.{op}.pred %r, {', '.join(ops)}, %p;\n\tselp.u32 %q, 1, 0, %r;\n"))
    return (f".version 9.0\n.target {arch}\n.address_size 64\n"
            f".func (.reg .b32 %q) slow_path({', '.join(params)})\n{{\n{body}\tret;\n}}\n"), len(params)
