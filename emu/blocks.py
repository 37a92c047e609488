"""Straight-line runs of fast-path instructions fused into one generated Python function.

A ZLUDA-sized launch runs ~20 warp-instructions on groups of 1-64 lanes; per instruction,
the machine's loop (emu/machine.py `Machine._run_group`) looks the step up by PC, counts the
budget, tests the group's stop and merge PCs and the end of its turn, and picks the closure
for the group's width: about as much as a specialised single-lane closure costs itself. A
run of consecutive steps that the loop would send down its fast path one after the other
(`step.fast`) needs none of that between them: the loop checks once
that the whole run fits (budget, stop/merge PC, turn) and calls the run's function, which
calls each step's closure in order, with its guard, exactly as the loop would.

A run's function is generated code (`_generate`): its steps in pieces of CHUNK, each piece's
code compiled once per process for its shape (which steps are guarded, read the clock, or are
written out, and how) and bound to the run's steps, registers and immediates as parameter
defaults; each piece calls the next as its last act. A `compile()` per run (before emu26) cost
~36 us a step (~2 ms a run): 0.5 s of a first replay of the tinygrad programs' launches, and,
with emu32's loop-until-hot, 0.15 s landing in their third and fourth launches. Shared shapes
cost ~5 us a step, most of it the first few hundred shapes' compiles.

In the program's first launch a run is a Python loop over its steps (`_loop`) for its first
HOT uses, then generated; used in any later launch (the program is launched again), it is
generated at its first use there, so a program's third and later launches generate code only
for runs of code no earlier launch ran twice. Loop and code both call `step.run`/`step.run1`
through the step, so a step that specialises later (emu/program.py's tiers) is called in its
current form. Traced (the hazard checker on), groups take the machine's per-instruction loop:
runs that called the checker after each step measured
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

import weakref
from types import FunctionType

from ptx2sass.encoder.model import ConstRef, Imm, Reg

MIN_RUN = 2
MAX_RUN = 256           # a turn (machine.QUANTUM) is 256 instructions
HOT = 16                # uses of a run (per kind) as a loop in the program's first launch


class Run:
    """A fused run of `n` steps from offset `start`. Its functions, each made on first use:
    `one(g, active, unflushed)` for a group of one lane (the steps' `run1`), `many(...)` for
    any other group (`run`). `unflushed`: the instructions the group ran
    before the run and has not yet added to its warps' counts (a clock read counts them).
    Each returns None when every step ran, else
    (k, exception): steps before k ran, step k raised."""

    __slots__ = ("start", "n", "steps", "one", "many", "first")

    def __init__(self, start: int, steps: list, first=None):
        self.start = start
        self.n = len(steps)
        self.steps = steps
        self.one = self.many = None
        self.first = first          # the program's first launch (a weak reference), or None

    def make(self, kind: str, launch=None):
        """The function for `kind` ("one" or "many") on its first use: in the program's
        first launch the loop, which generates the code in its place after HOT uses or on
        its first use in a later launch; in a later launch the code (HOT 0: always)."""
        attr = "run1" if kind == "one" else "run"
        first = self.first
        if HOT > 0 and first is not None and first() is launch:
            fn = _loop(self, kind, attr, HOT, first)
        else:
            fn = _generate(self.steps, attr)
        setattr(self, kind, fn)
        return fn


def _loop(run: Run, kind: str, attr: str, hot: int, first=lambda: None):
    """`run`'s steps called one after the other, as the generated function calls them (the
    one-lane written-out steps through their closures, which compute the same updates);
    after `hot` calls, or on a call from a launch other than `first()`, it puts the
    generated function in its place on `run`. The step that raised is found from its
    offset, so the loop keeps no index."""
    steps = tuple(run.steps)
    start = run.start
    left = hot
    one = attr == "run1"
    clock = any(s.reads_clock for s in steps)
    guarded = any(s.guard is not None for s in steps)

    def hot_now():
        setattr(run, kind, _generate(run.steps, attr))

    if not clock and not guarded:
        if one:
            def loop(g, active, unflushed):
                nonlocal left
                left -= 1
                if not left or first() is not g.launch:
                    hot_now()
                s = None
                try:
                    for s in steps:
                        s.run1(g, s, active, active)
                except Exception as e:
                    return (s.offset - start) >> 4, e
                return None
        else:
            def loop(g, active, unflushed):
                nonlocal left
                left -= 1
                if not left or first() is not g.launch:
                    hot_now()
                s = None
                try:
                    for s in steps:
                        s.run(g, s, active, active)
                except Exception as e:
                    return (s.offset - start) >> 4, e
                return None
        return loop
    plan = tuple((s, s.guard, s.reads_clock) for s in steps)

    def loop(g, active, unflushed):
        nonlocal left
        left -= 1
        if not left or first() is not g.launch:
            hot_now()
        s = None
        try:
            for s, guard, reads in plan:
                if reads:
                    # the clock it reads counts the group's instructions not yet added
                    g.m.unflushed = unflushed + ((s.offset - start) >> 4) + 1
                f = s.run1 if one else s.run
                if guard is None:
                    f(g, s, active, active)
                else:
                    f(g, s, active, active & g.pred(guard))
        except Exception as e:
            return (s.offset - start) >> 4, e
        return None
    return loop


M32 = 0xFFFFFFFF
CHUNK = 8              # steps per piece of generated code
_CODE: dict = {}        # a piece's shape -> its code object, shared by every run in the process
_GLOBALS = {"__builtins__": __builtins__}


def _value(op, neg: bool = False) -> tuple | None:
    """(kind, parameters) of a plain 32-bit source of one lane, as the single-lane forms read
    it, with no modifier: "r" (index,) a register, "i" (value,) an integer immediate or RZ
    (0), "c" (bank, offset) `c[bank][offset]`; None otherwise. `neg`: the register negated
    (-x as ~x + 1, as the forms do: RZ's is ~0 + 1, which the sum's 32-bit mask makes 0)."""
    if op.__class__ is Reg and op.file == "R" and not (op.neg or op.abs or op.inv or op.suffix):
        if op.index == 255:
            return "i", (((0 ^ M32) + 1) if neg else 0,)
        return ("-r" if neg else "r"), (op.index,)
    if op.__class__ is Imm and op.text is None and not (op.neg or op.abs):
        return "i", (op.value & M32,)
    if op.__class__ is ConstRef and op.ureg is None and op.ubank is None and not (op.neg or op.abs or op.inv
                                                                                  or op.suffix):
        return "c", (op.bank, op.offset)
    return None


def _inline(step) -> tuple | None:
    """(shape, parameters) of a one-lane step simple enough to write inline: an unguarded MOV,
    IMAD.MOV or IADD3 (no carries, no predicates) into a general register, computing what
    emu/single_lane.py's closures compute. Shape: ("mov", kind) or ("add", (kind, kind, kind));
    parameters: the destination's index, then the sources' (see `_value`)."""
    zero = ("i", (0,))
    ins = step.ins
    if step.guard is not None:
        return None
    ops, mods = ins.operands, ins.modifiers
    d = ops[0] if ops else None
    if d.__class__ is not Reg or d.file != "R" or d.index == 255 or d.neg or d.abs or d.inv or d.suffix:
        return None
    if ins.opcode == "MOV" and len(ops) == 2 and not mods:
        v = _value(ops[1])
        return None if v is None else (("mov", v[0]), (d.index, *v[1]))
    if ins.opcode == "IMAD" and len(ops) == 4 and mods in (("MOV", "U32"), ("MOV",)) \
            and _value(ops[1]) == zero and _value(ops[2]) == zero:
        v = _value(ops[3])
        return None if v is None else (("mov", v[0]), (d.index, *v[1]))
    if ins.opcode == "IADD3" and len(ops) == 4 and not mods:
        terms, params = [], [d.index]
        for op in ops[1:]:
            neg = op.__class__ is Reg and op.file == "R" and op.neg and not (op.abs or op.inv or op.suffix)
            v = _value(Reg("R", op.index) if neg else op, neg)
            if v is None:
                return None
            terms.append(v[0])
            params += v[1]
        return ("add", tuple(terms)), tuple(params)
    return None


def _source(kind: str, names: list) -> str:
    if kind == "r":
        return f"R.item({names[0]}, lane)"
    if kind == "-r":
        return f"((R.item({names[0]}, lane)) ^ {M32}) + 1"
    if kind == "i":
        return names[0]
    return f"const({names[0]}, {names[1]}, 4)"


_WIDTH = {"r": 1, "-r": 1, "i": 1, "c": 2}


def _code(shape: tuple, attr: str, chained: bool):
    """The code object of a piece of a run: `shape` has one entry per step, ("call", guarded,
    reads the clock) or ("inline", its `_inline` shape). Step k is the parameter `s{k}`; an
    inline step's destination `d{k}` and sources `a{k}_{j}`; `top` the highest destination,
    `slow` the same piece with no step written out; `base` the index of its first step in
    the run; `nxt` (`chained`) the next piece, which it calls last, passing on `unflushed`
    plus its own steps (the next one's clock reads count them). Defaults bind them per run.
    The step that raised is read off the line the exception left the piece from (no
    per-step index kept: emu31's idea)."""
    key = (shape, attr, chained)     # (a piece has at most CHUNK steps: no CHUNK in its key)
    code = _CODE.get(key)
    if code is not None:
        return code
    params, body, at = [], [], []         # at: the step of each line of body
    inline = any(e[0] == "inline" for e in shape)
    for k, entry in enumerate(shape):
        if entry[0] == "inline":
            (how, what), names = entry[1], []
            params.append(f"d{k}")
            terms = [what] if how == "mov" else what
            srcs = []
            for j, kind in enumerate(terms):
                got = [f"a{k}_{j}_{i}" for i in range(_WIDTH[kind])]
                params += got
                srcs.append(_source(kind, got))
            value = srcs[0] if how == "mov" else f"({' + '.join(srcs)}) & {M32}"
            body.append(f"        R[d{k}, lane] = {value}")
            at.append(k)
            continue
        _, guarded, clock = entry
        params.append(f"s{k}")
        if clock:
            # the clock it reads counts the group's instructions not yet added, this one too
            body.append(f"        g.m.unflushed = unflushed + {k + 1}")
            at.append(k)
        if guarded:
            body.append(f"        mask = active & g.pred(s{k}.guard)")
            at.append(k)
        body.append(f"        s{k}.{attr}(g, s{k}, active, {'mask' if guarded else 'active'})")
        at.append(k)
    params += ["top", "slow"] if inline else []
    params += ["base", "nxt"] if chained else ["base"]
    lines = [f"def run(g, active, unflushed, {', '.join(params)}):"]
    if inline:
        # a launch whose register count the destinations exceed runs the closures (their fault)
        lines += ["    m = g.m", "    if m.regcount_limit <= top:", "        return slow(g, active, unflushed)",
                  "    R = m.R", "    lane = g.lane"]
        if any("const(" in line for line in body):
            lines.append("    const = g.launch.const.read")
    lines.append("    try:")
    first = len(lines) + 1                # the first body line's number
    step_of = {first + i: k for i, k in enumerate(at)}
    lines += [*body, "    except Exception as e:",
              f"        return base + {step_of!r}[e.__traceback__.tb_lineno], e",
              f"    return nxt(g, active, unflushed + {len(shape)})" if chained else "    return None"]
    code = compile("\n".join(lines), "<emu run>", "exec").co_consts[0]
    _CODE[key] = code
    return code


def _piece(steps: list, attr: str, inline: list, base: int = 0, nxt=None):
    """The function running `steps` (at most CHUNK, from index `base` of their run, `nxt`
    the function running the rest; `inline`: each step's `_inline` or None), from its
    shape's shared code."""
    shape, defaults = [], []
    for s, v in zip(steps, inline):
        if v is None:
            shape.append(("call", s.guard is not None, s.reads_clock))
            defaults.append(s)
        else:
            shape.append(("inline", v[0]))
            defaults += v[1]
    if any(v is not None for v in inline):
        defaults.append(max(v[1][0] for v in inline if v is not None))
        made = []

        def slow(g, active, unflushed):
            if not made:
                made.append(_piece(steps, attr, [None] * len(steps), base, nxt))
            return made[0](g, active, unflushed)
        defaults.append(slow)
    defaults += [base, nxt] if nxt is not None else [base]
    return FunctionType(_code(tuple(shape), attr, nxt is not None), _GLOBALS, "run", tuple(defaults))


def _generate(steps: list, attr: str):
    """A run's function: its steps in pieces of CHUNK, each calling the next, each piece's
    code shared with every piece of the same shape (compiled once per process: a `compile()`
    per run cost ~36 us a step). One lane: a run with two or more steps simple enough has
    them written out (fewer, and the set-up they need costs more than the calls)."""
    inline = [_inline(s) for s in steps] if attr == "run1" else []
    if sum(v is not None for v in inline) < 2:
        inline = [None] * len(steps)
    fn = None
    for base in reversed(range(0, len(steps), CHUNK)):
        fn = _piece(steps[base:base + CHUNK], attr, inline[base:base + CHUNK], base, fn)
    return fn


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
    made = Run(offset, run, decoded.__dict__.get("first_launch")) if len(run) >= MIN_RUN else False
    runs[offset] = made
    return made


def runs_of(decoded, launch=None) -> dict:
    """The runs made for a kernel's decoding (kept with it, made again when it is); the
    first launch to ask is the program's first (kept as a weak reference: its buffers are
    not held)."""
    runs = decoded.__dict__.get("runs")
    if runs is None:
        runs = decoded.runs = {}
        if launch is not None:
            decoded.first_launch = weakref.ref(launch)
    return runs
