"""Explicit reconvergence over the corpora: every launch runs in the emulator's default
(optimistic) mode and with `reconverge="explicit"`; reports how many give the same outputs
(ZLUDA: the hardware bytes; CUDA: the NumPy reference; tinygrad: the optimistic run's
buffers) and how many convergence hazards the explicit mode finds.

    py bench/convergence.py                       # ptxas's cubins, all three corpora
    py bench/convergence.py --ours                # our cubins (kernels we compile)
    py bench/convergence.py --corpus zluda --list # name every kernel with a hazard
    py bench/convergence.py --ours --no-barriers  # our cubins as before ptx2sass/reconverge.py
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass import CompileError, codegen  # noqa: E402
from tools import emu_testing as testing  # noqa: E402

ZLUDA_REJECTS = {"vector8", "vector8_extract", "vote_ballot_nosync"}


def _ours(ptx: str, name: str) -> bytes | None:
    try:
        return codegen.compile_ptx(ptx, "sm_89", name)
    except CompileError:
        return None


def zluda(ours: bool):
    for e in testing.zluda_manifest():
        if e["name"] in ZLUDA_REJECTS:
            continue
        cubin = _ours(testing.zluda_ptx(e), e["ptx"]) if ours else testing.zluda_cubin(e)
        if cubin is None:
            continue
        opt = testing.run_zluda(e, cubin=cubin)
        exp = testing.run_zluda(e, cubin=cubin, reconverge="explicit")
        hz = exp.result.convergence_hazards if exp.result else []
        yield e["name"], opt.passed, exp.passed, hz, exp.reason


def cuda(ours: bool):
    ref = testing.cuda_reference_module()
    compiler = (lambda text, name: codegen.compile_ptx(text, "sm_89", name)) if ours else None
    for e in ref.load_manifest():
        try:
            opt = testing.run_cuda_launch(e, ref, hazard_check=False, compiler=compiler)
            exp = testing.run_cuda_launch(e, ref, hazard_check=False, compiler=compiler, reconverge="explicit")
        except CompileError:
            continue
        hz = exp.result.convergence_hazards if exp.result else []
        yield e["name"], opt.passed, exp.passed, hz, exp.reason


def tinygrad(ours: bool):
    for e in testing.tinygrad_manifest():
        if ours:
            cubin = _ours((testing.TINYGRAD_DIR / e["file"]).read_text(), e["file"])
        else:
            cubin = testing.tinygrad_cubin(e)
        if cubin is None:
            continue
        opt = testing.run_tinygrad(e, hazard_check=False, cubin=cubin)
        exp = testing.run_tinygrad(e, hazard_check=False, cubin=cubin, reconverge="explicit")
        same = opt.ok and exp.ok and opt.result.buffers == exp.result.buffers
        hz = exp.result.convergence_hazards if exp.result else []
        yield e["file"], opt.ok, same, hz, exp.reason


CORPORA = {"zluda": zluda, "cuda": cuda, "tinygrad": tinygrad}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", choices=sorted(CORPORA))
    ap.add_argument("--ours", action="store_true", help="our cubins instead of ptxas's")
    ap.add_argument("--list", action="store_true", help="name the launches with hazards or differences")
    ap.add_argument("--no-barriers", action="store_true",
                    help="with --ours: leave out the convergence barriers (the pass made a no-op)")
    args = ap.parse_args()
    if args.no_barriers:
        codegen.insert_reconvergence = lambda mf, function=False: None
    for corpus in args.corpus or ["zluda", "cuda", "tinygrad"]:
        t0 = time.time()
        n = same = flagged = hazards = 0
        for name, opt_ok, exp_ok, hz, reason in CORPORA[corpus](args.ours):
            n += 1
            same += bool(exp_ok)
            flagged += bool(hz)
            hazards += len(hz)
            if args.list and (hz or (opt_ok and not exp_ok)):
                print(f"  {name}: {'ok' if exp_ok else 'DIFFERS ' + reason[:120]}; "
                      + "; ".join(h.message for h in hz[:2]))
        who = (" (ours" + (", no barriers)" if args.no_barriers else ")")) if args.ours else ""
        print(f"{corpus}{who}: {n} launches, {same} correct in explicit mode, "
              f"{flagged} with convergence hazards ({hazards} in all); {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
