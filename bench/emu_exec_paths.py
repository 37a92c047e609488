"""Where a ZLUDA pass's execution goes, by path, and what a kernel's caches cost it.

Every ZLUDA launch's CPU time inside `Launch.run` (each launch's best of `--repeat` warm
passes), summed by the path it took: the machine (several threads), the one-thread scalar
interpreter with no step on a one-lane machine ("plain"), the scalar interpreter with some
step bridged to a one-lane machine ("bridged"), and one-thread launches handed to the machine
part-way ("handed off").

    .venv/bin/python bench/emu_exec_paths.py [--hazards] [--repeat 6] [--without runs,forms]
    .venv/bin/python bench/emu_exec_paths.py --cold add [--others 150] [--without runs,forms]
    .venv/bin/python bench/emu_exec_paths.py --ab runs|forms|fp|trails [--pairs 20] [--hazards]

`--without` leaves out the scalar path's fused runs and/or its BREV/VOTE/LDC/uniform forms
(what the scalar path was before emufast34), and/or ("fp") emufast34b's FP64/IDP/FRND/F2F/
FCHK/I2FP/FMUL.RZ/VOTEU/F2I/IMAD.HI/I2F forms (before emufast34b). `--cold NAME` times one-thread kernel NAME's execution run again and again (hot), right after
the other one-thread launches ran (as in a corpus pass: the kernel's decoded steps and
closures have left the caches), and right after touching 4 MB and 64 MB of memory.
`--ab` alternates a pass with and without the scalar path's fused runs
(emu/scalar_runs.py), its BREV/VOTE/LDC/uniform forms or emufast34b's forms ("fp"), or (with
`--hazards`) the checker's kept trails ("trails": `scalar.MEMO_TRAILS`, and machines keeping
their calls, emu/checker_trail.py), in one process: each pass's
execution CPU time (best of 3), median over `--pairs` pairs and how often "on" was faster.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _programs():
    from ptx2sass.emu import loader
    from tools import emu_testing as testing
    out = []
    for entry in testing.zluda_manifest():
        cubin = testing.zluda_cubin(entry)
        if cubin is not None:
            out.append((entry, loader.load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))))
    return out


def _without(what: set) -> None:
    """Leave out the fused runs ("runs") and/or the newer scalar forms ("forms")."""
    from ptx2sass.emu import scalar, scalar_forms, scalar_runs
    if "runs" in what:
        scalar_runs.MAX_RUN = 0
    if "forms" in what:
        scalar.UNIFORM.clear()
        for k in ("BREV", "VOTE", "LDC"):
            scalar_forms.FORMS.pop(k, None)
    if "fp" in what:
        for k in FP_FORMS:
            scalar_forms.FORMS.pop(k, None)
        scalar_forms.MUFU64H.clear()


# emufast34b's scalar forms (`--without fp`): DFMA with a float immediate, DMUL, MUFU.RCP64H/RSQ64H,
# IDP, FRND, F2F.F64.F32, FCHK, I2FP, FMUL.RZ, VOTEU, F2I, IMAD.HI/.WIDE with carries, I2F, LEA,
# FADD/FFMA in a directed mode
# (PLOP3 on a register's .SIGN, inside the older PLOP3 form, stays)
FP_FORMS = ("DFMA", "DMUL", "IDP", "FRND", "F2F", "FCHK", "I2FP", "FMUL", "VOTEU", "F2I", "IMAD", "I2F", "LEA",
            "FADD", "FFMA")


def paths(hz: bool, repeat: int, without: set = frozenset()) -> None:
    from ptx2sass.emu import launch as L, scalar
    from tools import emu_testing as testing
    _without(without)
    progs = _programs()
    best, path, ins = {}, {}, {}
    cur, handed, bridged = [None], set(), set()
    run, machine, one_lane = L.Launch.run, scalar._machine, scalar._one_lane

    def timed(self):
        t = time.process_time_ns()
        run(self)
        t = time.process_time_ns() - t
        best[cur[0]] = min(best.get(cur[0], t), t)
        one = self.threads_per_cta == 1 and self.grid == (1, 1, 1)
        path[cur[0]] = "scalar" if one else "machine"

    def hand(*a):
        handed.add(cur[0])
        return machine(*a)

    def bridge(t):
        bridged.add(cur[0])
        return one_lane(t)
    L.Launch.run, scalar._machine, scalar._one_lane = timed, hand, bridge
    try:
        for _ in range(repeat + 3):
            for entry, program in progs:
                cur[0] = entry["name"]
                outcome = testing.run_zluda(entry, hazard_check=hz, program=program)
                assert outcome.passed, outcome.reason
                ins[cur[0]] = outcome.result.instructions
    finally:
        L.Launch.run, scalar._machine, scalar._one_lane = run, machine, one_lane
    groups: dict = {}
    for name, t in best.items():
        kind = path[name]
        if kind == "scalar":
            kind = "handed off" if name in handed else "bridged" if name in bridged else "plain"
        row = groups.setdefault(kind, [0, 0, 0])
        row[0] += 1
        row[1] += t
        row[2] += ins[name]
    total = sum(best.values())
    print(f"ZLUDA execution (Launch.run), CPU, each launch's best of {repeat} warm passes, hazards "
          f"{'on' if hz else 'off'}{', without ' + '+'.join(sorted(without)) if without else ''}: {total / 1e6:.2f} ms, {len(best)} launches, {sum(ins.values())} warp-instructions")
    print(f"  {'path':12} {'launches':>8} {'ms':>7} {'us/launch':>9} {'warp-ins':>8} {'us/ins':>7}")
    for kind in ("machine", "plain", "bridged", "handed off"):
        if kind in groups:
            n, t, i = groups[kind]
            print(f"  {kind:12} {n:8d} {t / 1e6:7.2f} {t / n / 1e3:9.1f} {i:8d} {t / i / 1e3:7.2f}")


def cold(name: str, others: int) -> None:
    import numpy as np
    from ptx2sass.emu import launch as L
    from tools import emu_testing as testing
    progs = _programs()
    kept, cur = {}, [None]
    run = L.Launch.run

    def keep(self):
        run(self)
        if self.threads_per_cta == 1 and self.grid == (1, 1, 1):
            kept[cur[0]] = self
    L.Launch.run = keep
    try:
        for _ in range(3):
            for entry, program in progs:
                cur[0] = entry["name"]
                testing.run_zluda(entry, program=program)
    finally:
        L.Launch.run = run
    clock = time.process_time_ns

    def once(launch):
        launch.budget.used = 0
        t = clock()
        launch.run()
        return clock() - t
    target = kept[name]
    rest = [lau for n, lau in kept.items() if n != name][:others]

    def measure(before) -> tuple[float, float]:
        got = []
        for _ in range(12):
            before()
            got.append(once(target))
        got.sort()
        return got[0] / 1e3, got[len(got) // 2] / 1e3
    print(f"{name}: execution CPU us (least, median of 12)")
    print(f"  again and again          {min(once(target) for _ in range(300)) / 1e3:7.1f}")
    print(f"  after {len(rest)} other launches  %7.1f %7.1f" % measure(lambda: [once(lau) for lau in rest]))
    for mb in (4, 64):
        buf = np.ones(mb << 18, dtype=np.uint32)

        def touch(buf=buf):
            buf += 1
        print(f"  after touching {mb:2d} MB      %7.1f %7.1f" % measure(touch))


def ab(what: str, pairs: int, hz: bool) -> None:
    from ptx2sass.emu import launch as L, scalar, scalar_forms, scalar_runs
    from tools import emu_testing as testing
    progs = _programs()
    spent = [0]
    run = L.Launch.run

    def timed(self):
        t = time.process_time_ns()
        run(self)
        spent[0] += time.process_time_ns() - t
    uniform, own = dict(scalar.UNIFORM), {k: scalar_forms.FORMS[k] for k in ("BREV", "VOTE", "LDC")}
    fp, fp64h = {k: scalar_forms.FORMS[k] for k in FP_FORMS}, set(scalar_forms.MUFU64H)

    def switch(on: bool) -> None:
        if what == "trails":
            from ptx2sass.emu import checker_trail
            scalar.MEMO_TRAILS = 4 if on else 0
            checker_trail.DEFER = on
        elif what == "runs":
            scalar_runs.MAX_RUN = 64 if on else 0
        elif what == "fp":
            for k in fp:
                scalar_forms.FORMS.pop(k, None)
            scalar_forms.MUFU64H.clear()
            if on:
                scalar_forms.FORMS.update(fp)
                scalar_forms.MUFU64H.update(fp64h)
        else:
            scalar.UNIFORM.clear()
            for k in own:
                scalar_forms.FORMS.pop(k, None)
            if on:
                scalar.UNIFORM.update(uniform)
                scalar_forms.FORMS.update(own)
        for _, program in progs:
            program._decoded.__dict__.pop("scalar_runs", None)
            if what in ("forms", "fp"):
                program._decoded.__dict__.pop("scalar", None)
        for _ in range(2):
            for entry, program in progs:
                testing.run_zluda(entry, hazard_check=hz, program=program)

    def one_pass() -> int:
        spent[0] = 0
        for entry, program in progs:
            assert testing.run_zluda(entry, hazard_check=hz, program=program).passed
        return spent[0]
    L.Launch.run = timed
    res = {True: [], False: []}
    try:
        for _ in range(3):
            one_pass()
        for i in range(pairs):
            for on in ((True, False) if i % 2 else (False, True)):
                switch(on)
                res[on].append(min(one_pass() for _ in range(3)))
    finally:
        L.Launch.run = run
        switch(True)
    on, off = statistics.median(res[True]) / 1e6, statistics.median(res[False]) / 1e6
    wins = sum(a < b for a, b in zip(res[True], res[False]))
    print(f"{what} (hazards {'on' if hz else 'off'}): execution CPU a pass (best of 3), median of {pairs} pairs: "
          f"on {on:.2f} ms, off {off:.2f} ms ({off / on:.3f}x), on faster in {wins}/{pairs}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hazards", action="store_true")
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--cold", metavar="KERNEL")
    ap.add_argument("--others", type=int, default=150)
    ap.add_argument("--ab", choices=("runs", "forms", "fp", "trails"))
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--without", default="", help="runs,forms,fp: leave these out")
    args = ap.parse_args(argv)
    without = set(filter(None, args.without.split(",")))
    if args.cold:
        _without(without)
        cold(args.cold, args.others)
    elif args.ab:
        ab(args.ab, args.pairs, args.hazards)
    else:
        paths(args.hazards, args.repeat, without)
    return 0


if __name__ == "__main__":
    sys.exit(main())
