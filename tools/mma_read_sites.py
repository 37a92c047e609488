"""How soon ptxas lets a fixed-latency instruction overwrite a tensor-core instruction's
A, B or C source, per opcode, shape and operand, on the executed path of fuzz programs.

    .venv/bin/python -m tools.mma_read_sites --seeds 900000:900200 [--arch sm_89]

The `late_fixed_reads` rule of the latency tables says an HMMA/IMMA may read its sources
for N cycles after issue; ptxas is the oracle of the timing rules (its code runs right on
hardware), so the least distance it leaves per operand bounds N from above. Programs are
the fuzzer's (`--features mma`, every wmma/mma.sync form it draws), compiled by the pinned
ptxas and run in the emulator. A *site* is the first fixed-latency writer of a register an
MMA read (a variable-latency writer or another MMA writes after the read), or the first
reader of a register an MMA wrote (`result->memory`, `result->other`, `result->HMMA`…: how
soon ptxas reads the result); its distance is the sum of ptxas's stall counts from the MMA
to it (each instruction `max(stall, 1)`), a lower bound of the issue distance.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass.emu.hazards import TimingModel  # noqa: E402


def _role(ins, reg: tuple) -> str:
    """'A0', 'B1', 'C3'…: the source operand whose register block holds `reg` (the nearest
    base register at or below it; fragments do not overlap) and the register's place in it."""
    best = None
    for name, op in zip("ABC", ins.operands[1:4]):
        base = getattr(op, "index", None)
        if getattr(op, "file", None) == "R" and base is not None and base <= reg[1] and base != 255:
            if best is None or base > best[1]:
                best = (name, base)
    return f"{best[0]}{reg[1] - best[1]}" if best else "?"


def sites_model(mma_ops: set, dist: dict, hazards: Counter):
    class SitesModel(TimingModel):
        def new_clock(self):
            clock = super().new_clock()
            clock.mma_sites = [0, {}, {}]       # stall sum, reg -> (s, key, role), result reg -> (s, key)
            return clock

        def end(self, clock, step, lanes, reads, writes) -> None:
            if not self.serialised:
                w = clock.mma_sites
                ins, s = step.ins, w[0]
                op = ins.opcode
                variable = self.lat.is_variable(op)
                for reg in dict.fromkeys(reads):
                    r = w[2].pop(reg, None)
                    if r is not None:
                        kind = "memory" if op in self.lat.MEMORY_READERS else op if op in mma_ops or variable else "other"
                        dist[r[1], f"result->{kind}"][s - r[0]] += 1
                for reg in dict.fromkeys(writes):
                    w[2].pop(reg, None)
                    m = w[1].pop(reg, None)
                    if m is not None and not variable and op not in mma_ops:
                        dist[m[1], m[2]][s - m[0]] += 1
                if op in mma_ops:
                    key = ".".join((op, *ins.modifiers))
                    for reg in reads:
                        if reg[0] == "R":
                            w[1][reg] = (s, key, _role(ins, reg))
                    for reg in writes:
                        if reg[0] == "R":
                            w[2][reg] = (s, key)
                w[0] += max(ins.control.stall, 1)
            super().end(clock, step, lanes, reads, writes)
    return SitesModel


def measure(seeds: range, arch: str = "sm_89", features: tuple = ("mma",)):
    from ptx2sass.emu.launch import Launch, _attach_timing, _result
    from ptx2sass.fuzz.campaign import Options, _only_newer_target, make_program, peel
    from ptx2sass.fuzz.inputs import launch_data
    from ptx2sass.fuzz.runner import BUDGET, compile_ptxas, load
    from ptx2sass.sched.latency import model_for
    mma_ops = set(model_for(arch).LATE_FIXED_READS) | {"HMMA", "IMMA", "BMMA", "QMMA"}
    dist: dict = defaultdict(Counter)
    hazards: Counter = Counter()
    ran = 0
    for seed in seeds:
        def refusal(case):
            """ptxas's words when it refuses only statements the arch lacks (peeled off)."""
            cubin, detail = compile_ptxas(case)
            return detail if cubin is None and _only_newer_target(detail) else None
        case = peel(make_program(seed, Options(arch=arch, features=list(features))), arch, refusal, 12)
        cubin, _ = compile_ptxas(case)
        if cubin is None:
            continue
        try:
            program = load(cubin, case.kernel)
        except Exception:
            continue
        if not any(i.opcode in mma_ops for _, i in program.instructions):
            continue
        data = launch_data(case)
        launch = Launch(program, case.grid, case.block, 0, BUDGET, True, "optimistic")
        _attach_timing(launch, True, False, sites_model(mma_ops, dist, hazards))
        placed = {n: launch.gmem.allocate(n, size, init) for n, (size, init) in data.buffers.items()}
        launch.set_params(data.params, placed)
        try:
            launch.run()
        except Exception as e:
            print(f"seed {seed}: {type(e).__name__}: {e}"[:200], file=sys.stderr)
            continue
        ran += 1
        for h in _result(launch, placed).hazards:
            if "late_fixed_reads" in str(h) or "IMMA" in str(h) or "HMMA" in str(h):
                hazards[str(h).split(": ", 2)[-1][:60]] += 1
    return ran, dist, hazards


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", required=True, help="A:B")
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--features", default="mma",
                    help="the programs' feature groups (mma.sync/mma.sp come with `forms`: int32,mma,forms,warp)")
    args = ap.parse_args(argv)
    a, b = (int(x) for x in args.seeds.split(":"))
    ran, dist, hazards = measure(range(a, b), args.arch, tuple(args.features.split(",")))
    print(f"{ran} launches of ptxas's {args.arch} cubins with tensor-core instructions")
    print("opcode.shape operand: sites, least distance, distance histogram (stall cycles)")
    for (key, role), c in sorted(dist.items()):
        hist = " ".join(f"{d}:{n}" for d, n in sorted(c.items())[:12])
        print(f"  {key:28} {role}: {sum(c.values()):5} sites, min {min(c)}   {hist}")
    print(f"hazards the emulator finds in these cubins with the {args.arch} table (tensor-core ones): "
          f"{sum(hazards.values())}")
    for h, n in hazards.most_common(10):
        print(f"  {n:4} {h}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
