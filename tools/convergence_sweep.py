"""How many fuzz programs' cubins the emulator's explicit reconvergence flags: collectives
run without their member lanes (emu.convergence), ptxas's cubin and ours, per seed.

ptxas's code is right on hardware, so what it flags is the checker's false alarm; ours is
what the fuzzer's runner reports as a hazard (fuzz.runner.collectives_apart).

    python -m tools.convergence_sweep --seeds 20900000:20900100 --arch sm_89 \\
        --features warp,branch,divergent,loop
"""
from __future__ import annotations

import argparse


def flagged(cubin: bytes, case) -> list[str] | str:
    """The convergence hazards of one explicit-mode run, or the fault that stopped it."""
    from ptx2sass.fuzz.runner import execute, load
    try:
        return [h.message for h in execute(load(cubin, case.kernel), case, False, reconverge="explicit").convergence_hazards]
    except Exception as e:  # noqa: BLE001 - a fault is reported per seed, not fatal
        return f"fault {type(e).__name__}: {str(e)[:80]}"


def main(argv=None) -> int:
    from ptx2sass.fuzz.campaign import Options, make_program, parse_seeds, peel_until
    from ptx2sass.fuzz.runner import compile_ours, compile_ptxas
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--features", default="")
    args = ap.parse_args(argv)
    opts = Options(arch=args.arch, features=args.features.split(",") if args.features else None,
                   hazard_check=False)
    counts = {"programs": 0, "ptxas flagged": 0, "ours flagged": 0}
    for seed in parse_seeds(args.seeds):
        out, case, _ = peel_until(make_program(seed, opts), opts)
        if out.cls in ("refuse", "invalid", "crash", "timeout"):
            continue
        theirs, _ = compile_ptxas(case)
        results = {"ptxas": flagged(theirs, case), "ours": flagged(compile_ours(case), case)}
        counts["programs"] += 1
        for who, found in results.items():
            if isinstance(found, list) and found:
                counts[f"{who} flagged"] += 1
        print(seed, out.cls, {k: v[:2] if isinstance(v, list) else v for k, v in results.items()}, flush=True)
    print(counts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
