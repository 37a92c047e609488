"""Straight-line runs of the one-thread interpreter (emu/scalar.py) fused into one function.

In a ZLUDA pass the scalar path's time per instruction is mostly memory latency, not work:
a launch of `add` (11 instructions) takes ~7 us run again and again, ~30 us when 150 other
kernels ran in between (the corpus pass the benchmark times), each instruction's entry
(a tuple in a dict), its form's closure, the accessor closures it calls and their cells
being fetched from far caches (~20 objects an instruction). A run of consecutive plain
entries (no control flow) is called as one function: the loop's per-instruction lookups
and checks are done once for the run, and the commonest unguarded steps are written out as
the list updates their forms make, with no closure (scalar.py's `_written` picks them):
what emu/blocks.py's `_inline` writes out for the machine's one-lane runs (MOV, IMAD.MOV,
IADD3 without carries, from registers, integer immediates and constants, into a register
under the launch's limit), a ULDC, and a 4- or 8-byte LD/LDG/ST/STG, whose form runs where
the access is off its fast path (a window, another buffer, misalignment).

A run is made from entries already made (so from a program's second launch on, or a loop's
second pass), at a PC where the loop arrives, as long as the entries that follow are known
plain ones; its code is compiled once per shape (which steps are calls, guarded calls or
written out, and how) and bound to the run's closures and registers as parameter defaults.
The run returns -1 when every step ran, else the index of the step that raised `_Off` or
`EmuFault` (steps before it ran): the interpreter hands the thread to the machine there,
as it does when a single step raises.
"""
from __future__ import annotations

from types import FunctionType

from .single_lane import _WINDOWS, _element

MIN_RUN = 2
MAX_RUN = 64
M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
_CODE: dict = {}                  # shape -> code object, shared by every run of that shape
CODE_LIMIT = 4096                 # shapes kept (a process running many kernels compiles again past it)
_GLOBALS = {"__builtins__": __builtins__}
_WIDTH = {"r": 1, "-r": 1, "i": 1, "c": 2}


def _source(kind: str, names: list) -> str:
    if kind == "r":
        return f"R[{names[0]}]"
    if kind == "-r":
        return f"(R[{names[0]}] ^ {M32}) + 1"
    if kind == "i":
        return names[0]
    return f"const({names[0]}, {names[1]}, 4)"


def _written(k: int, entry: tuple, params: list) -> list:
    """The lines of written-out step k (its parameters appended to `params`)."""
    kind = entry[0]
    if kind == "inline":                       # emu/blocks.py's `_inline` shapes
        how, what = entry[1]
        params.append(f"d{k}")
        srcs = []
        for j, src in enumerate([what] if how == "mov" else what):
            got = [f"a{k}_{j}_{i}" for i in range(_WIDTH[src])]
            params += got
            srcs.append(_source(src, got))
        return [f"R[d{k}] = " + (srcs[0] if how == "mov" else f"({' + '.join(srcs)}) & {M32}")]
    if kind == "uldc":                         # scalar._uldc's update
        params += [f"d{k}", f"b{k}", f"o{k}"]
        if entry[1] == 4:
            return [f"UR[d{k}] = const(b{k}, o{k}, 4) & {M32}"]
        return [f"v = const(b{k}, o{k}, 8)", f"UR[d{k}] = v & {M32}", f"UR[d{k} + 1] = v >> 32"]
    # "ld" / "st" (single_lane's _load / _store on a thread's lists): (kind, size, generic
    # space, base has a high register); the form itself where the access is off its fast path
    _, size, generic, high = entry
    params += [f"f{k}", f"d{k}", f"i{k}", f"o{k}"]
    lines = [f"a = (R[i{k} + 1] << 32 | R[i{k}]) + o{k} & {M64}" if high else f"a = R[i{k}] + o{k} & {M64}",
             f"at = None if {_WINDOWS[0]} <= a < {_WINDOWS[1]} else element(gmem, a, {size})" if generic
             else f"at = element(gmem, a, {size})",
             "if at is None:", f"    f{k}(t, None, True, True)", "else:"]
    if kind == "ld":
        if size == 4:
            return lines + [f"    R[d{k}] = at[0].item(at[1])"]
        return lines + ["    v = at[0].item(at[1])", f"    R[d{k}] = v & {M32}", f"    R[d{k} + 1] = v >> 32"]
    if size == 4:
        return lines + [f"    at[0][at[1]] = R[d{k}] & {M32}"]
    return lines + [f"    at[0][at[1]] = R[d{k}] | R[d{k} + 1] << 32"]


def _code(shape: tuple):
    """The code object of a run of `shape`: per step ("call",), ("guarded",) or a written-out
    shape (`_written`). Step k's closure is `f{k}` (guard `g{k}`, value that skips `k{k}`)."""
    code = _CODE.get(shape)
    if code is not None:
        return code
    params, body = [], []                      # body: (line, step)
    for k, entry in enumerate(shape):
        if entry[0] == "guarded":
            params += [f"f{k}", f"g{k}", f"k{k}"]
            body.append((f"if P[g{k}] is not k{k}: f{k}(t, None, True, True)", k))
        elif entry[0] == "call":
            params.append(f"f{k}")
            body.append((f"f{k}(t, None, True, True)", k))
        else:
            body += [(line, k) for line in _written(k, entry, params)]
    lines = [f"def run(t, {', '.join(params)}, caught, element):", "    R = t.R", "    P = t.P"]
    text = "\n".join(line for line, _ in body)
    if "UR[" in text:
        lines.append("    UR = t.UR")
    if "const(" in text:
        lines.append("    const = t.launch.const.read")
    if "gmem" in text:
        lines.append("    gmem = t.launch.gmem")
    lines.append("    try:")
    first = len(lines) + 1
    step_of = {first + n: k for n, (_, k) in enumerate(body)}
    lines += ["        " + line for line, _ in body]
    lines += ["    except caught as e:", f"        return {step_of!r}[e.__traceback__.tb_lineno]", "    return -1"]
    code = compile("\n".join(lines), "<scalar run>", "exec").co_consts[0]
    if len(_CODE) >= CODE_LIMIT:
        _CODE.clear()
    _CODE[shape] = code
    return code


def fuse(code: dict, runs: dict, pc: int, limit: int, decoded, caught: tuple, written):
    """(function, steps) of the run from `pc`, or None; kept in `runs` once known. Made of
    the entries in `code` from `pc` on that are plain (not False, not control flow); while
    the entry after them is not made yet and they are too few, nothing is kept (asked
    again on a later arrival). `written(step, limit)`: (shape, parameters) of a step to
    write out, or None (called through its entry)."""
    shape, defaults = [], []
    p = pc
    while len(shape) < MAX_RUN:
        e = code.get(p)
        if e is None:
            if len(shape) < MIN_RUN:
                return None                 # not known yet: asked again later
            break
        if e is False or e[3]:
            break
        f, g, skip, _ = e
        step = decoded.steps.get(p)
        v = written(step, limit) if step is not None and g is None else None
        if v is not None:
            shape.append(v[0])
            defaults += [f] if v[0][0] in ("ld", "st") else []
            defaults += v[1]
        elif g is None:
            shape.append(("call",))
            defaults.append(f)
        else:
            shape.append(("guarded",))
            defaults += [f, g, skip]
        p += 16
    if len(shape) < MIN_RUN:
        runs[pc] = None
        return None
    defaults += [caught, _element]
    fn = FunctionType(_code(tuple(shape)), _GLOBALS, "run", tuple(defaults))
    got = runs[pc] = (fn, len(shape))
    return got
