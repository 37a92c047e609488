"""Opcode → semantics. Each ops_* module registers its handlers here with `@semantics`.

A handler is `fn(w, step, active, mask)`: `w` the lanes that execute the instruction (a
`lanes.Lanes`: reads `w.r/ri/rf/r64/rd/pred`, writes `w.w/w64/wn/wp`, memory `w.shared`,
`w.local`, `w.launch.gmem`), `active` a boolean array over them (all true: every lane of
`w` is at this instruction), `mask` those whose guard predicate holds. An optional
`prepare(step)` runs once per instruction when a kernel is decoded, to precompute what the
handler needs in `step.aux` (a kernel is decoded once, not per launch).

Two kinds of handler:

* `vector=True`: width-agnostic, run once for every warp (of every CTA) at the same PC.
  `w.width` lanes; values read are (width,) arrays or (1,) where one value serves all lanes
  (immediates, constants, a single warp's uniform registers), so write NumPy that
  broadcasts; never assume 32 lanes, never touch `w.R`/`w.P`/`w.UR`/`w.pc` directly. A
  uniform register written takes, per warp, the value of its first writing lane. Special
  registers: `w.tid`, `w.ctaid`, `w.lane_ids`, `w.warp_index`, `w.executed`. A form such a
  handler cannot do for many warps at once raises `lanes.PerWarp` before any side effect.
* the default: the handler runs once per warp with that warp's `machine.Warp` (32 lanes,
  `active`/`mask` of shape (32,), per-warp state `w.R`, `w.P`, `w.UR`, `w.UP`, `w.B`,
  `w.pc`, `w.state`, `w.cta`, …): the interface every handler had before, for lane
  shuffles, votes, warp-wide reductions and anything not yet audited for `vector`.
"""
from __future__ import annotations

from typing import Callable

HANDLERS: dict[str, Callable] = {}
PREPARE: dict[str, Callable] = {}
VECTOR: set[Callable] = set()


def semantics(*opcodes: str, prepare: Callable | None = None, vector: bool = False):
    def register(fn):
        for name in opcodes:
            HANDLERS[name] = fn
            if prepare is not None:
                PREPARE[name] = prepare
        if vector:
            VECTOR.add(fn)
        return fn
    return register


_LOADED = False


def load_all() -> tuple[dict[str, Callable], dict[str, Callable]]:
    """Import every semantics module (they register on import)."""
    global _LOADED
    if not _LOADED:
        from . import ops_control, ops_float, ops_half, ops_int, ops_memory, ops_mma, ops_syncs, ops_texture, ops_warp  # noqa: F401
        from . import ops_bulk, ops_cluster, ops_gmma, ops_tmem, ops_utcmma  # noqa: F401
        from . import ops_blackwell  # noqa: F401  (after ops_int: its MOV/IMNMX take the 64-bit forms too)
        _LOADED = True
    return HANDLERS, PREPARE
