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


def sweep(argv, default_seeds: str, signature, module, describe, data_of, right_of, compare=None) -> int:
    """The sweep of this tool and tools/link_struct_sweep.py: for each seed,
    `signature(seed)` -> (types, ret); the caller from `module`'s `declaration` and
    `caller_ptx` (the callee from its `callee_ptx`); its layout traced and compared with
    ptxas's and `module._expected_words(types)`. With --run, each linked pair runs on
    `data_of(types, seed)`, the reference `module.reference(types, data, ret)` taken before
    the run, and `right_of(types, ret, data, want)` judges the words the run left. A
    refusal of ours counts as a different layout, an emulator fault as a wrong run.
    `compare(ours, theirs)`, if given, must also hold of the two callers' cubins."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default=default_seeds)
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--run", action="store_true")
    a = ap.parse_args(argv)
    t = _tests()
    from ptx2sass.emu.launch import run

    lo, hi = map(int, a.seeds.split("-"))
    same = ran = ran_ok = 0
    for seed in range(lo, hi + 1):
        types, ret = signature(seed)
        ptx = t._header(a.arch) + module.declaration(types, ret) + module.caller_ptx(types, ret)
        their_cubin = t._ptxas_c(ptx, a.arch)
        theirs = t.call_layout(their_cubin)
        try:
            our_cubin = t._ours_c(ptx, a.arch)
            ours = t.call_layout(our_cubin)
        except Exception as e:      # (a refusal counts as different)
            ours, our_cubin = (str(e), 0), None
        ok = ours == theirs and set(theirs[0]) == module._expected_words(types)
        ok = ok and (compare is None or compare(our_cubin, their_cubin))
        same += ok
        line = f"seed {seed}: {describe(types, ret)}, layout {'same' if ok else 'DIFFERENT'}"
        if a.run:
            callee = t._header(a.arch) + module.callee_ptx(types, ret)
            build = {"ours": t._ours_c, "ptxas": t._ptxas_c}
            for cb, fb in (("ours", "ptxas"), ("ptxas", "ours")):
                with tempfile.TemporaryDirectory() as tmp:
                    linked = t._nvlink(build[cb](ptx, a.arch), build[fb](callee, a.arch),
                                       tmp_path=Path(tmp), arch=a.arch)
                data = data_of(types, seed)
                want = module.reference(types, data, ret)
                try:
                    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
                except Exception as e:        # (an emulator fault: wrong)
                    line += f" [{cb} caller: {e}]"
                    res = None
                right = res is not None and not res.hazards and right_of(types, ret, data, want)
                ran += 1
                ran_ok += right
                line += f", {cb} caller + {fb} callee {'right' if right else 'WRONG'}"
        print(line, flush=True)
    print(f"layout same as ptxas's: {same}/{hi - lo + 1}" + (f"; linked runs right: {ran_ok}/{ran}" if a.run else ""))
    return 0 if same == hi - lo + 1 and ran_ok == ran else 1


def _tests():
    """tests/test_link_stack_arguments.py (its tracer, builders and reference)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import test_link_stack_arguments
    return test_link_stack_arguments


def main(argv=None) -> int:
    t = _tests()
    return sweep(argv, "100-139", signature, t, lambda types, ret: f"{len(types)} params", t._data,
                 lambda types, ret, data, want: (int(data[0]) if ret == "b64" else int(data[0]) & 0xFFFFFFFF) == want)


if __name__ == "__main__":
    sys.exit(main())
