"""Opcode → semantics. Each ops_* module registers its handlers here with `@semantics`.

A handler is `fn(warp, step, active, mask)`: `active` are the lanes at this instruction,
`mask` those whose guard predicate holds. An optional `prepare(step)` runs once per
instruction when a kernel is loaded, to precompute what the handler needs in `step.aux`.
"""
from __future__ import annotations

from typing import Callable

HANDLERS: dict[str, Callable] = {}
PREPARE: dict[str, Callable] = {}


def semantics(*opcodes: str, prepare: Callable | None = None):
    def register(fn):
        for name in opcodes:
            HANDLERS[name] = fn
            if prepare is not None:
                PREPARE[name] = prepare
        return fn
    return register


def load_all() -> tuple[dict[str, Callable], dict[str, Callable]]:
    """Import every semantics module (they register on import)."""
    from . import ops_control, ops_float, ops_half, ops_int, ops_memory, ops_mma, ops_warp  # noqa: F401
    return HANDLERS, PREPARE
