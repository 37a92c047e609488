"""Random signatures through the link-time calling convention (ptx2sass/abi.py
`link_layout`), against the pinned ptxas: for each seed a signature of 1..36 parameters
drawn from b32/b64/f32/f64/b16/b8, a caller kernel compiled by ptxas -c and by us, and
where each argument word is at the CALL (registers, outgoing-area offsets) and the frame
compared (tests/test_link_stack_arguments.py's tracer). With --run, also our caller linked
(nvlink) with ptxas's callee and ptxas's caller with ours, run in the emulator against the
Python reference.

    python -m tools.link_layout_sweep --seeds 100-139 --arch sm_89 [--run]
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

TYPES = ["b32", "b64", "f32", "f64", "b16", "b8"]
WEIGHTS = [4, 3, 2, 2, 1, 1]


def signature(seed: int) -> tuple[list[str], str]:
    rng = random.Random(seed)
    n = rng.randint(1, 36)
    return rng.choices(TYPES, WEIGHTS, k=n), rng.choice(["b32", "b64"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="100-139")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--run", action="store_true")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import numpy as np
    import test_link_stack_arguments as t
    from ptx2sass.emu.launch import run

    lo, hi = map(int, a.seeds.split("-"))
    same = ran = ran_ok = 0
    for seed in range(lo, hi + 1):
        types, ret = signature(seed)
        ptx = t._header(a.arch) + t.declaration(types, ret) + t.caller_ptx(types, ret)
        theirs = t.call_layout(t._ptxas_c(ptx, a.arch))
        ours = t.call_layout(t._ours_c(ptx, a.arch))
        ok = ours == theirs and set(theirs[0]) == t._expected_words(types)
        same += ok
        line = f"seed {seed}: {len(types)} params, layout {'same' if ok else 'DIFFERENT'}"
        if a.run:
            callee = t._header(a.arch) + t.callee_ptx(types, ret)
            build = {"ours": t._ours_c, "ptxas": t._ptxas_c}
            for cb, fb in (("ours", "ptxas"), ("ptxas", "ours")):
                with tempfile.TemporaryDirectory() as tmp:
                    linked = t._nvlink(build[cb](ptx, a.arch), build[fb](callee, a.arch),
                                       tmp_path=Path(tmp), arch=a.arch)
                data = t._data(types, seed)
                want = t.reference(types, data, ret)
                res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
                got = int(data[0]) if ret == "b64" else int(data[0]) & 0xFFFFFFFF
                ran += 1
                ran_ok += got == want and not res.hazards
                line += f", {cb} caller + {fb} callee {'right' if got == want and not res.hazards else 'WRONG'}"
        print(line, flush=True)
    print(f"layout same as ptxas's: {same}/{hi - lo + 1}" + (f"; linked runs right: {ran_ok}/{ran}" if a.run else ""))
    return 0 if same == hi - lo + 1 and ran_ok == ran else 1


if __name__ == "__main__":
    sys.exit(main())
