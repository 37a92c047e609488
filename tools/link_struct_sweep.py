"""Random signatures with structs through the link-time calling convention (ptx2sass/abi.py
`Struct`, `link_layout`, results through memory), against the pinned ptxas: for each seed
1..20 parameters drawn from b32/b64 and `.param .align A .b8 s[N]` structs (A in 4/8/16,
N a multiple of 4 up to 64) and a result (b32, b64, an 8-byte struct, or a 52-byte one
that comes back through memory), a caller kernel compiled by ptxas -c and by us: where
each argument word is at the CALL and the frame compared (tests/test_link_stack_arguments.py's
tracer). With --run, also our caller linked (nvlink) with ptxas's callee and ptxas's caller
with ours, run in the emulator against the Python reference.

    python -m tools.link_struct_sweep --seeds 200-259 --arch sm_89 [--run]
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path


def signature(seed: int) -> tuple[list, object]:
    rng = random.Random(seed)
    types = []
    for _ in range(rng.randint(1, 20)):
        kind = rng.choices(["b32", "b64", "s"], [3, 2, 2])[0]
        if kind == "s":
            align = rng.choice([4, 8, 16])
            types.append(("s", 4 * rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 16]), align))
        else:
            types.append(kind)
    ret = rng.choice(["b32", "b64", ("s", 8, 8), ("s", 52, 4)])
    return types, ret


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="200-259")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--run", action="store_true")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import test_link_stack_arguments as t
    import test_link_struct_arguments as s
    from ptx2sass.emu.launch import run

    lo, hi = map(int, a.seeds.split("-"))
    same = ran = ran_ok = 0
    for seed in range(lo, hi + 1):
        types, ret = signature(seed)
        ptx = t._header(a.arch) + s.declaration(types, ret) + s.caller_ptx(types, ret)
        theirs = t.call_layout(t._ptxas_c(ptx, a.arch))
        try:
            ours = t.call_layout(t._ours_c(ptx, a.arch))
        except Exception as e:      # (a refusal counts as different)
            ours = (str(e), 0)
        ok = ours == theirs and set(theirs[0]) == s._expected_words(types)
        same += ok
        line = f"seed {seed}: {len(types)} params, result {ret}, layout {'same' if ok else 'DIFFERENT'}"
        if a.run:
            callee = t._header(a.arch) + s.callee_ptx(types, ret)
            build = {"ours": t._ours_c, "ptxas": t._ptxas_c}
            for cb, fb in (("ours", "ptxas"), ("ptxas", "ours")):
                with tempfile.TemporaryDirectory() as tmp:
                    linked = t._nvlink(build[cb](ptx, a.arch), build[fb](callee, a.arch),
                                       tmp_path=Path(tmp), arch=a.arch)
                data = s._data(len(s._slots(types)), seed)
                want = s.reference(types, data, ret)
                try:
                    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
                except Exception as e:        # (an emulator fault: wrong)
                    line += f" [{cb} caller: {e}]"
                    res = None
                got = int(data[0]) if ret == "b64" or isinstance(ret, tuple) else int(data[0]) & 0xFFFFFFFF
                right = res is not None and got == want and not res.hazards
                if isinstance(ret, tuple) and ret[1] > 8:
                    right &= int(data[1]) & 0xFFFFFFFF == sum((want & 0xFFFFFFFF) + k for k in range(2, 13)) & 0xFFFFFFFF
                ran += 1
                ran_ok += right
                line += f", {cb} caller + {fb} callee {'right' if right else 'WRONG'}"
        print(line, flush=True)
    print(f"layout same as ptxas's: {same}/{hi - lo + 1}" + (f"; linked runs right: {ran_ok}/{ran}" if a.run else ""))
    return 0 if same == hi - lo + 1 and ran_ok == ran else 1


if __name__ == "__main__":
    sys.exit(main())
