"""The slow paths of the IEEE sequences (isel/ieee.py: `div.rn`, `rcp.rn`, `sqrt.rn` on f32,
with and without .ftz, and on f64) and 64-bit integer `div`/`rem` by a register
(isel/intdiv.py) as subroutines: one copy per kernel that uses them,
after its code, reached with `CALL.REL.NOINC` from each use's fast path (only by the lanes
the range test rejects) and left with `RET.REL.NODEC`.

ptxas 13.5.37 does the same on sm_75..sm_120 (nvdisasm of one kernel with all nine: one
`$__internal_N_$__cuda_sm20_…`/`sm3x_…` subroutine each, called from every use), so each
use costs its fast path and a call instead of a copy of the slow path (physics_sim
lbm_d2q9, two `div.rn.f32`: 514 instructions inlined, 439 called, ptxas's 425). Which
kinds are called, and from how many uses on, is `MIN_USES` (measured: f32 kinds used twice
or more; the rest stay inline).

The convention is private (both sides ours, the subroutine compiled first): the operands
in R4 up (64-bit ones in even pairs), the result back in R4 (R4:R5), the return address in
R2:R3 as for out-of-line functions (ptx2sass.abi); the subroutine saves nothing, and the
CALL instead names every register and predicate it writes as clobbered, so the
caller's allocator keeps values live across the call elsewhere. The subroutine is
compiled from a one-instruction PTX function whose `SLOW_PATH` attribute makes isel/ieee.py
select the slow path alone.
"""
from __future__ import annotations

from ptx2sass import abi, ir
from ptx2sass.records import dataclass

SLOW_PATH = "ieee_slow_path"     # ir.Function attribute: the function is this kind's body

# (opcode, type, ftz) -> the subroutine's name (ptxas's, less its `$__internal_N_$` prefix;
# `$` keeps it apart from any PTX function name)
NAMES = {
    ("div", "f32", False): "$__cuda_sm3x_div_rn_noftz_f32_slowpath",
    ("div", "f32", True): "$__cuda_sm3x_div_rn_ftz_f32_slowpath",
    ("rcp", "f32", False): "$__cuda_sm20_rcp_rn_f32_slowpath",
    ("rcp", "f32", True): "$__cuda_sm20_rcp_rn_ftz_f32_slowpath",
    ("sqrt", "f32", False): "$__cuda_sm20_sqrt_rn_f32_slowpath",
    ("sqrt", "f32", True): "$__cuda_sm20_sqrt_rn_ftz_f32_slowpath",
    ("div", "f64", False): "$__cuda_sm20_div_rn_f64_full",
    ("rcp", "f64", False): "$__cuda_sm20_dblrcp_rn_slowpath_v3",
    ("sqrt", "f64", False): "$__cuda_sm20_dsqrt_rn_f64_mediumpath_v1",
    # 64-bit integer division by a register (isel/intdiv.py): ptxas calls these from every
    # use, signs and by-zero results inside
    ("div", "u64", False): "$__cuda_sm20_div_u64",
    ("rem", "u64", False): "$__cuda_sm20_rem_u64",
    ("div", "s64", False): "$__cuda_sm20_div_s64",
    ("rem", "s64", False): "$__cuda_sm20_rem_s64",
}


# A kernel with fewer uses of a kind than this keeps that slow path inline (ptxas calls
# even for one): one use gains no code from a call and pays its moves, its return and its
# register constraints. f64 kinds stay inline (None): called, they cost SM cycles on the
# corpora (complex_double_ops +4%, special_f64 +3%; A/B in docs/STATUS.md, branch divsub33).
# 64-bit integer division stays inline too: called from the second use on, it cost SM
# cycles (tinygrad mod_uint64 E_125_2_4, four independent `rem.u64`: 1831 -> 2045, the
# inline copies interleave and the calls do not; dsp_fixed sqrt_q16 2409 -> 2444; branch
# idiv33).
MIN_USES = {"f32": 2, "f64": None, "u64": None, "s64": None}


def called(kind, uses: int) -> bool:
    """Whether a kernel with `uses` instructions needing slow path `kind` calls it."""
    least = MIN_USES[kind[1]]
    return least is not None and uses >= least


def kind_of(ins) -> tuple | None:
    """The slow path an IR instruction needs (a key of NAMES), or None. A 64-bit division
    by a constant has none (isel/intdiv.py's estimate is known at compile time)."""
    if ins.opcode in ("div", "rem") and ins.type in ("u64", "s64"):
        return None if isinstance(ins.srcs[1], ir.Const) else (ins.opcode, ins.type, False)
    if ins.opcode not in ("div", "rcp", "sqrt") or "rn" not in ins.modifiers:
        return None
    if ins.type == "f32":
        return (ins.opcode, "f32", "ftz" in ins.modifiers)
    return (ins.opcode, "f64", False) if ins.type == "f64" else None


@dataclass
class Subroutine:
    """One compiled slow path: its name, where its operands and result travel ((register,
    width) each) and what a call of it destroys."""
    name: str
    args: list
    result: tuple
    clobbers: tuple
    compiled: object


INTEGER = ("u64", "s64")

_compiled: dict = {}          # (arch name, kind) -> Subroutine


def _order(kind, n: int) -> list:
    """The operands in the order the subroutine receives them: an integer division takes
    its divisor first (R4:R5, where its body's allocation wants it: with the dividend
    there, each call began with six moves swapping the two pairs)."""
    return [1, 0] if kind[1] in INTEGER else list(range(n))


def _text(kind, arch: str) -> str:
    opcode, ty, ftz = kind
    n = 2 if opcode in ("div", "rem") else 1
    params = ", ".join(f".reg .{ty} %a{k}" for k in _order(kind, n))
    srcs = ", ".join(f"%a{k}" for k in range(n))
    mods = ".rn.ftz" if ftz else "" if ty in INTEGER else ".rn"
    return (f".version 9.0\n.target {arch}\n.address_size 64\n"
            f".func (.reg .{ty} %q) slow_path({params})\n{{\n"
            f"\t{opcode}{mods}.{ty} %q, {srcs};\n\tret;\n}}\n")


def subroutine(kind, info) -> Subroutine:
    """The slow path of `kind` = (opcode, type, ftz) for the target `info`, compiled once;
    or a non-aligned barrier's routine (kind ("barrier", ...), ptx2sass/barrier_routine.py)."""
    key = (info.name, kind)
    if key not in _compiled:
        from ptx2sass import barrier_routine
        from ptx2sass.codegen import _body_slots, _compile_function, lower_checked
        from ptx2sass.frontend import check, parse
        barrier = kind[0] == "barrier"
        if barrier:
            text, nargs = barrier_routine.routine_text(kind, info.name)
        else:
            text = _text(kind, info.name)
        tree = parse(text, "<slow path>")
        check(tree, info.name, whole_program=True)
        fn = lower_checked(tree, keep_functions=True).functions[0]
        fn.name = barrier_routine.name_of(kind) if barrier else NAMES[kind]
        for a in (abi.LINKABLE, abi.LOCAL_FUNCTION, abi.DECLARED_AT):   # (kept by keep_functions)
            fn.attributes.pop(a, None)
        fn.attributes[SLOW_PATH] = kind
        c = _compile_function(fn, info, None, None, None)
        body, _ = _body_slots(c, "")
        written = sorted({(f, i) for s in body for f, i in s.writes
                          if f in ("R", "UR", "P", "UP") and not (f == "R" and i in (abi.STACK_POINTER, 255))
                          and not (f in ("P", "UP") and i == 7)}
                         | {("R", abi.RETURN_ADDRESS), ("R", abi.RETURN_ADDRESS + 1)})
        width = 2 if kind[1] in ("f64", *INTEGER) else 1
        n = 2 if kind[0] in ("div", "rem") else 1
        order = _order(kind, n)
        if barrier:
            width, n = 1, nargs
            order = list(range(n))
        args = [(abi.FIRST_ARGUMENT + width * order.index(k), width) for k in range(n)]
        _compiled[key] = Subroutine(fn.name, args, (abi.FIRST_ARGUMENT, width),
                                    tuple(written), c)
    return _compiled[key]


def compiled(arch: str) -> dict:
    """The subroutines compiled so far for `arch`, by name (codegen gives each kernel that
    calls one a copy)."""
    return {s.name: s.compiled for (a, _), s in _compiled.items() if a == arch}
