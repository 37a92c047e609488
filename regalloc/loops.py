"""Loop depth of every block, for spill costs: a value read inside a loop costs more to
spill than one read once.

A back edge is an edge to a block at or before its source in layout order (the selector
keeps PTX's block order, and structured PTX loops jump back to their header); the loop it
closes spans the blocks from the header to the source. Irreducible code only makes the
estimate rougher, never wrong: depth is a heuristic weight.
"""
from __future__ import annotations

from ptx2sass.mir import MFunction

LOOP_WEIGHT = 10      # a loop is assumed to run ten times
MAX_DEPTH = 6         # keep weights finite and comparable


def loop_depths(mf: MFunction) -> list[int]:
    """Nesting depth per block index."""
    index = {id(b): i for i, b in enumerate(mf.blocks)}
    last_tail: dict[int, int] = {}      # loop header -> the furthest block jumping back to it
    for i, b in enumerate(mf.blocks):
        for s in b.succs:
            h = index[id(s)]
            if h <= i:
                last_tail[h] = max(i, last_tail.get(h, i))
    depth = [0] * len(mf.blocks)
    for h, tail in sorted(last_tail.items()):
        for k in range(h, tail + 1):
            depth[k] += 1
    return depth


def block_weights(mf: MFunction) -> list[int]:
    """How often each block is assumed to run: LOOP_WEIGHT ** depth."""
    return [LOOP_WEIGHT ** min(d, MAX_DEPTH) for d in loop_depths(mf)]
