"""Does the hazard checker still give the same verdicts? ptxas's corpus kernels obey their
latency model, so the checker finds next to nothing in them and `emu_equivalence.py`'s hazard
lists are nearly all empty. Here both checkers judge the same launches against a stressed
copy of the latency model (every fixed latency longer, some fixed-latency opcodes taken as
variable-latency ones without a scoreboard), which makes them flag thousands of hazards of
every kind the register tracking gives (reads too early, reads without a wait, overwrites of
pending results and read sources); the lists must be equal, text and order.

    .venv/bin/python bench/emu_hazard_stress.py --baseline ROOT [--corpus zluda|tinygrad] [--kernels 40] [--arch sm_90]

`ROOT`: another checkout (e.g. `git archive main | tar -x -C ROOT`), its emulator loaded by
bench/emu_baseline.py.
"""
from __future__ import annotations

import argparse
import copy
import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

EXTRA_FIXED = 3                                  # cycles added to every fixed latency
AS_VARIABLE = {"IADD3": 20, "MOV": 20, "LOP3": 20}  # taken as variable latency, no scoreboard


def stressed(lat):
    """A copy of the latency model `lat` whose verdicts on ptxas's code are mostly hazards."""
    s = copy.copy(lat)
    s.FIXED = {k: v + EXTRA_FIXED for k, v in lat.FIXED.items()}
    s.DEFAULT_FIXED = lat.DEFAULT_FIXED + EXTRA_FIXED
    s.VARIABLE = {**lat.VARIABLE, **AS_VARIABLE}
    # the copy's own remembered reader latencies (the original's cache is bound to it)
    s.read_latency = functools.lru_cache(maxsize=None)(s._read_latency)
    return s


def checker(timing_model):
    """A `timing=` factory: `timing_model` judging with the stressed model, no hazard cap."""
    class Stressed(timing_model):
        def __init__(self, launch):
            super().__init__(launch, max_hazards=1 << 30)
            self.lat = stressed(self.lat)
    return Stressed


def _programs(emu, corpus: str, kernels: int, arch: str):
    """(entry, loaded program) of the corpus's kernels, ptxas's cubins for `arch`."""
    testing, load = emu.testing, emu.loader.load_program
    if corpus == "zluda":
        for entry in testing.zluda_manifest():
            cubin = testing.zluda_cubin(entry, arch)
            if cubin is not None:
                yield entry, load(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))
    else:
        for entry in sorted(testing.tinygrad_manifest(), key=lambda k: k["sha256"])[:kernels]:
            cubin = testing.tinygrad_cubin(entry, arch)
            if cubin is not None:
                yield entry, load(cubin, entry["entry"], testing.cubin_listing_decoder(cubin))


def verdicts(emu, corpus: str, kernels: int, arch: str) -> list:
    testing = emu.testing
    model = checker(emu.hazards.TimingModel if hasattr(emu, "hazards") else _new_model())
    out = []
    for entry, program in _programs(emu, corpus, kernels, arch):
        if corpus == "zluda":
            o = testing.run_zluda(entry, hazard_check=True, program=program, timing=model, arch=arch)
        else:
            o = testing.run_tinygrad(entry, hazard_check=True, program=program, timing=model, arch=arch)
        res = o.result
        out.append(None if res is None else ([str(h) for h in res.hazards], res.cycles, res.instructions))
    return out


def _new_model():
    from ptx2sass.emu.hazards import TimingModel
    return TimingModel


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True)
    ap.add_argument("--corpus", action="append", choices=("zluda", "tinygrad"))
    ap.add_argument("--kernels", type=int, default=40, help="tinygrad kernels (first by sha256)")
    ap.add_argument("--arch", default="sm_89", help="ptxas's cubins for this arch, judged by its latency model")
    args = ap.parse_args(argv)
    import emu_speed
    emus = emu_speed._emulators(args.baseline)
    differ = 0
    for corpus in args.corpus or ("zluda", "tinygrad"):
        old = verdicts(emus["baseline"], corpus, args.kernels, args.arch)
        new = verdicts(emus["new"], corpus, args.kernels, args.arch)
        flagged = sum(len(v[0]) for v in new if v)
        bad = [k for k, (a, b) in enumerate(zip(old, new)) if a != b]
        differ += len(bad) + abs(len(old) - len(new))
        print(f"{corpus} ({args.arch}): {len(new)} launches, {flagged} hazards flagged (stressed model), "
              f"{len(bad)} differ")
        for k in bad[:5]:
            print(f"  launch {k}: baseline {old[k][0][:3] if old[k] else old[k]} / new {new[k][0][:3] if new[k] else new[k]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
