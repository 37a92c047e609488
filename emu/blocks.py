"""Straight-line runs of fast-path instructions fused into one generated Python function.

A ZLUDA-sized launch runs ~20 warp-instructions on groups of 1-64 lanes; per instruction,
the machine's loop (emu/machine.py `Machine._run_group`) looks the step up by PC, counts the
budget, tests the group's stop and merge PCs and the end of its turn, and picks the closure
for the group's width: about as much as a specialised single-lane closure costs itself. A
run of consecutive steps that the loop would send down its fast path one after the other
(`step.fast`) needs none of that between them: the loop checks once
that the whole run fits (budget, stop/merge PC, turn) and calls the run's function, which
calls each step's closure in order, with its guard, exactly as the loop would.

For its first HOT uses a run is a Python loop over its steps (`_loop`); on the next it is
generated (source by `compile()` of our own text, kept on the kernel's `Decoded`): a
`compile()` costs ~1.5 ms, which a run used a few times in a launch never earns back (emu31:
a kernel's second launch, where its runs are made, cost more than its first), while the
loop, warm, costs ~2% more than the generated code. Both call `step.run`/`step.run1` through
the step, so a step that specialises later (emu/program.py's tiers) is called in its current
form. Traced (the hazard
checker on), groups take the loop: runs that called the checker after each step measured
slower (0.91-0.96x on the ZLUDA corpus), for reasons not found. A closure that raises stops
the run there: the function returns how many steps it finished and the
exception, and the loop accounts for them and handles it as its own (`PerWarp`: the step
runs per warp; a fault: located at that step).

In a one-lane run the simplest steps (unguarded MOV, IMAD.MOV, IADD3 without
carries into a general register, from registers, integer immediates and constants) are
written out as the register updates emu/single_lane.py's closures make, with no call.

Runs are made on a PC's second visit (straight-line code after it is decoded by then) and
only of steps already decoded; a run shorter than MIN_RUN is not made.
"""
from __future__ import annotations

from ptx2sass.encoder.model import ConstRef, Imm, Reg

MIN_RUN = 2
MAX_RUN = 256           # a turn (machine.QUANTUM) is 256 instructions
HOT = 16                # uses of a run (per kind) as a loop before its code is generated


class Run:
    """A fused run of `n` steps from offset `start`. Its functions, each made on first use:
    `one(g, active, unflushed)` for a group of one lane (the steps' `run1`), `many(...)` for
    any other group (`run`). `unflushed`: the instructions the group ran
    before the run and has not yet added to its warps' counts (a clock read counts them).
    Each returns None when every step ran, else
    (k, exception): steps before k ran, step k raised."""

    __slots__ = ("start", "n", "steps", "one", "many")

    def __init__(self, start: int, steps: list):
        self.start = start
        self.n = len(steps)
        self.steps = steps
        self.one = self.many = None

    def make(self, kind: str):
        """The function for `kind` ("one" or "many") on its first use: the loop, which
        generates the code in its place once HOT uses have run (or the code, HOT 0)."""
        attr = "run1" if kind == "one" else "run"
        fn = _loop(self, kind, attr, HOT) if HOT > 0 else _generate(self.steps, attr)
        setattr(self, kind, fn)
        return fn


def _loop(run: Run, kind: str, attr: str, hot: int):
    """`run`'s steps called one after the other, as the generated function calls them (the
    one-lane written-out steps through their closures, which compute the same updates);
    after `hot` calls it puts the generated function in its place on `run`."""
    plan = tuple((k, s, s.guard, s.reads_clock) for k, s in enumerate(run.steps))
    left = hot
    one = attr == "run1"

    def loop(g, active, unflushed):
        nonlocal left
        left -= 1
        if not left:
            setattr(run, kind, _generate(run.steps, attr))
        k = 0
        try:
            for k, s, guard, clock in plan:
                if clock:
                    # the clock it reads counts the group's instructions not yet added
                    g.m.unflushed = unflushed + k + 1
                f = s.run1 if one else s.run
                if guard is None:
                    f(g, s, active, active)
                else:
                    f(g, s, active, active & g.pred(guard))
        except Exception as e:
            return k, e
        return None
    return loop


M32 = 0xFFFFFFFF


def _value(op) -> str | None:
    """Python source for a plain 32-bit source of one lane (`R`, `RZ`, an integer immediate,
    `c[bank][offset]`) with no modifier, as the single-lane forms read it; None otherwise."""
    if op.__class__ is Reg and op.file == "R" and not (op.neg or op.abs or op.inv or op.suffix):
        return "0" if op.index == 255 else f"R.item({op.index}, lane)"
    if op.__class__ is Imm and op.text is None and not (op.neg or op.abs):
        return str(op.value & M32)
    if op.__class__ is ConstRef and op.ureg is None and op.ubank is None and not (op.neg or op.abs or op.inv
                                                                                  or op.suffix):
        return f"const({op.bank}, {op.offset}, 4)"
    return None


def _inline(step) -> tuple[int, str] | None:
    """(destination, value source) of a one-lane step simple enough to write inline: an
    unguarded MOV, IMAD.MOV or IADD3 (no carries, no predicates) into a general register,
    computing what emu/single_lane.py's closures compute."""
    ins = step.ins
    if step.guard is not None:
        return None
    ops, mods = ins.operands, ins.modifiers
    d = ops[0] if ops else None
    if d.__class__ is not Reg or d.file != "R" or d.index == 255 or d.neg or d.abs or d.inv or d.suffix:
        return None
    if ins.opcode == "MOV" and len(ops) == 2 and not mods:
        v = _value(ops[1])
        return None if v is None else (d.index, v)
    if ins.opcode == "IMAD" and len(ops) == 4 and mods in (("MOV", "U32"), ("MOV",)) \
            and _value(ops[1]) == "0" and _value(ops[2]) == "0":
        v = _value(ops[3])
        return None if v is None else (d.index, v)
    if ins.opcode == "IADD3" and len(ops) == 4 and not mods:
        terms = []
        for op in ops[1:]:
            neg = op.__class__ is Reg and op.file == "R" and op.neg and not (op.abs or op.inv or op.suffix)
            v = _value(Reg("R", op.index) if neg else op)
            if v is None:
                return None
            terms.append(f"(({v}) ^ {M32}) + 1" if neg else v)   # -x as ~x + 1, as the forms do
        return d.index, f"({' + '.join(terms)}) & {M32}"
    return None


def _generate(steps: list, attr: str, inline_ok: bool = True):
    args = ", ".join(f"s{k}=s{k}" for k in range(len(steps)))
    head = "g, active, unflushed"
    lines = [f"def run({head}, {args}):", "    k = 0"]
    # one lane: the simplest steps' register updates written out (no closures);
    # a launch whose register count their destinations exceed runs the closures (their fault)
    inline = {k: _inline(s) for k, s in enumerate(steps)} if attr == "run1" and inline_ok else {}
    inline = {k: v for k, v in inline.items() if v is not None}
    if len(inline) > 1:
        top = max(d for d, _ in inline.values())
        lines += ["    m = g.m", f"    if m.regcount_limit <= {top}:", "        return slow(g, active, unflushed)",
                  "    R = m.R", "    lane = g.lane", "    const = g.launch.const.read"]
    else:
        inline = {}
    lines.append("    try:")
    for k, step in enumerate(steps):
        if k in inline:
            if k:
                lines.append(f"        k = {k}")
            d, v = inline[k]
            lines.append(f"        R[{d}, lane] = {v}")
            continue
        mask = "active" if step.guard is None else "mask"
        if k:
            lines.append(f"        k = {k}")
        if step.reads_clock:
            # the clock it reads counts the group's instructions not yet added, this one too
            lines.append(f"        g.m.unflushed = unflushed + {k + 1}")
        if step.guard is not None:
            lines.append(f"        mask = active & g.pred(s{k}.guard)")
        lines.append(f"        s{k}.{attr}(g, s{k}, active, {mask})")
    lines += ["    except Exception as e:", "        return k, e", "    return None"]
    namespace = {f"s{k}": s for k, s in enumerate(steps)}
    if inline:
        namespace["slow"] = _generate(steps, attr, inline_ok=False)
    exec(compile("\n".join(lines), f"<emu run at 0x{steps[0].offset:x}>", "exec"), namespace)
    return namespace["run"]


def fusable(step) -> bool:
    return step is not None and step.fast


def visit(decoded, offset: int):
    """What the machine keeps for `offset` in `decoded.runs` after this visit: a `Run` from
    there, 1 (seen once), or False (no run worth making)."""
    runs = decoded.runs
    seen = runs.get(offset)
    if seen is None:
        runs[offset] = 1
        return 1
    steps = decoded.steps
    run = []
    at = offset
    while len(run) < MAX_RUN:
        step = steps.get(at)
        if not fusable(step):
            break
        run.append(step)
        at += 16
    made = Run(offset, run) if len(run) >= MIN_RUN else False
    runs[offset] = made
    return made


def runs_of(decoded) -> dict:
    """The runs made for a kernel's decoding (kept with it, made again when it is)."""
    runs = decoded.__dict__.get("runs")
    if runs is None:
        runs = decoded.runs = {}
    return runs
