"""EIATTR_GRID_ATTRIBUTES (`.nv.info.<k>` record 0x68, a half word): what a kernel tells the
driver about its use of multicast (multimem) memory.

ptxas 13.5 writes it, on sm_90, sm_100 and sm_120 alike, as 0x4 when the function's PTX has
any `multimem` instruction, plus 0x8 when one of them writes memory (`multimem.st`, `.red`,
`.cp.async.bulk`, `.cp.reduce.async.bulk`; `multimem.ld_reduce` only reads). It goes by the
instructions as written (an unreachable or never-taken one counts) and a kernel has the bits
of every function it calls, directly or not; under separate compilation (-c) a function that
stays a function of its own keeps its bits to its own record. No other instruction, launch
directive or special register sets a bit (probed: clusters, griddepcontrol, elect, setmaxnreg,
mbarrier.try_wait, bulk/tensor copies, tensormap, tcgen05, stmatrix...).
"""
from __future__ import annotations

from ptx2sass.frontend import ast

KEY = "grid_attributes"      # ir.Function.attributes: the function's bits
MULTIMEM = 0x4               # a multimem instruction
MULTIMEM_WRITE = 0x8         # a multimem instruction that writes memory
_READS_ONLY = frozenset((".ld_reduce",))


def instruction_bits(st: ast.Instruction) -> int:
    """The bits one PTX instruction sets."""
    if st.opcode != "multimem":
        return 0
    return MULTIMEM if st.modifiers[:1] and st.modifiers[0] in _READS_ONLY else MULTIMEM | MULTIMEM_WRITE


def _own_bits(block: ast.Block) -> int:
    bits = 0
    Instruction, Block = ast.Instruction, ast.Block
    for st in block.statements:
        t = type(st)
        if t is Instruction:
            if st.opcode == "multimem":        # (`instruction_bits` is 0 for the rest)
                bits |= instruction_bits(st)
        elif t is Block:
            bits |= _own_bits(st)
    return bits


def function_bits(module: ast.Module, kept_apart: set[str] = frozenset()) -> dict[str, int]:
    """Every function with a body → its record's bits: its own instructions' and those of
    the functions it reaches through calls, not through those in `kept_apart` (-c's link
    targets, which carry their own)."""
    from ptx2sass.frontend.depth import deep_walks
    from ptx2sass.inline import call_graph
    with deep_walks():
        own = {f.name: _own_bits(f.body) for f in module.functions() if f.body is not None}
    graph = call_graph(module)
    out = {}
    for name in own:
        bits, seen, work = 0, {name}, [name]
        while work:
            n = work.pop()
            bits |= own.get(n, 0)
            work.extend(c for c in graph.get(n, ()) if c not in seen and c not in kept_apart
                        and not seen.add(c))
        out[name] = bits
    return out
