"""Random signatures with structs through the link-time calling convention (ptx2sass/abi.py
`Struct`, `link_layout`, results through memory), against the pinned ptxas: for each seed
1..20 parameters drawn from b32/b64 and `.param .align A .b8 s[N]` structs (A in 4/8/16,
N a multiple of 4 up to 64) and a result (b32, b64, an 8-byte struct, or a 52-byte one
that comes back through memory), a caller kernel compiled by ptxas -c and by us: where
each argument word is at the CALL and the frame compared (tests/test_link_stack_arguments.py's
tracer). With --run, also our caller linked (nvlink) with ptxas's callee and ptxas's caller
with ours, run in the emulator against the Python reference.

    python -m tools.link_struct_sweep --seeds 200-259 --arch sm_89 [--run] [--aligned]

--aligned (branch cli29): results aligned to 8/16 through memory among the choices, and the
STL/LDL widths and offsets of the caller's stack accesses compared with ptxas's too.
"""
from __future__ import annotations

import random
import sys


RESULTS = ["b32", "b64", ("s", 8, 8), ("s", 52, 4)]
# --aligned (branch cli29): also results through memory aligned to 8 and 16
ALIGNED_RESULTS = RESULTS + [("s", 56, 8), ("s", 64, 16), ("s", 52, 16)]


def signature(seed: int, results=RESULTS) -> tuple[list, object]:
    rng = random.Random(seed)
    types = []
    for _ in range(rng.randint(1, 20)):
        kind = rng.choices(["b32", "b64", "s"], [3, 2, 2])[0]
        if kind == "s":
            align = rng.choice([4, 8, 16])
            types.append(("s", 4 * rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 16]), align))
        else:
            types.append(kind)
    ret = rng.choice(results)
    return types, ret


def _right(types, ret, data, want) -> bool:
    """The result word(s) the run left: a struct's first word (its second over 8 bytes: the
    callee's sum of words 2..12, as test_link_struct_arguments' callee writes them)."""
    got = int(data[0]) if ret == "b64" or isinstance(ret, tuple) else int(data[0]) & 0xFFFFFFFF
    right = got == want
    if isinstance(ret, tuple) and ret[1] > 8:
        right &= int(data[1]) & 0xFFFFFFFF == sum((want & 0xFFFFFFFF) + k for k in range(2, ret[1] // 4)) & 0xFFFFFFFF
    return right


def main(argv=None) -> int:
    from tools.link_layout_sweep import _tests, sweep
    _tests()
    import test_link_struct_arguments as s
    argv = list(sys.argv[1:] if argv is None else argv)
    aligned = "--aligned" in argv       # (and the stack accesses' widths compared)
    if aligned:
        argv.remove("--aligned")
    sig = (lambda seed: signature(seed, ALIGNED_RESULTS)) if aligned else signature
    compare = (lambda ours, theirs: ours is not None and s._local_accesses(ours) == s._local_accesses(theirs)) \
        if aligned else None
    return sweep(argv, "200-259", sig, s, lambda types, ret: f"{len(types)} params, result {ret}",
                 lambda types, seed: s._data(len(s._slots(types)), seed), _right, compare)


if __name__ == "__main__":
    sys.exit(main())
