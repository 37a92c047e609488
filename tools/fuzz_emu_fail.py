"""The emulator on ptxas's cubins of fresh fuzz programs, without our compiler: how many it
cannot decode, cannot run, or flags with its hazard checker (the campaign's `emu_fail`).

Why: a campaign's `emu_fail` figure needs both compilers per seed (and peels the statements
ptx2sass refuses); the emulator's trustworthiness on ptxas's code needs only ptxas. Each seed's
program (`ptx2sass.fuzz.campaign.make_program`, with the statements ptxas refuses for the arch's
`.target` peeled off, as a campaign does) is compiled by the pinned ptxas for
`--arch`, decoded by our codec (words it cannot decode are listed with nvdisasm's text, as seed
words for tools/isa_probe; the run then goes on from nvdisasm's listing), and run with the
hazard checker on the campaign's inputs. Every hazard is kept, not only the first.

Usage: python -m tools.fuzz_emu_fail --seeds A:B [--arch sm_90] [-j 2] [--json FILE]
           [--words FILE] [--features mma,...]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

_NUM = re.compile(r"(?<![A-Za-z_])(0x[0-9a-f]+|\d+)")
_REG = re.compile(r"\b(U?R|U?P)\d+\b")


def _sig(text: str) -> str:
    return _NUM.sub("#", _REG.sub(r"\1#", text))


def one(args) -> dict:
    """One seed: {seed, status (ok|invalid|emu_fail|timeout), signatures, words}."""
    seed, arch, *features = args
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    from ptx2sass.emu.errors import EmuFault
    from ptx2sass.fuzz.campaign import Options, _only_newer_target, make_program, peel
    from ptx2sass.fuzz.runner import _UNDECODABLE, compile_ptxas, execute, load, load_from_listing
    from tools.emu_sweep import _undecodable

    def refusal(case):
        """ptxas's words when it refuses only statements the arch's `.target` lacks (peeled
        off, as the campaign does: sm_75's programs are sm_89 PTX)."""
        cubin, detail = compile_ptxas(case)
        return detail if cubin is None and _only_newer_target(detail) else None
    options = Options(arch=arch, features=features[0]) if features and features[0] else Options(arch=arch)
    case = peel(make_program(seed, options), arch, refusal, Options().peel)
    cubin, why = compile_ptxas(case)
    if cubin is None:
        return {"seed": seed, "status": "invalid", "signatures": [why[:120]], "words": {}}
    sigs, words = [], {}
    try:
        try:
            prog = load(cubin, case.kernel)
        except EmuFault as e:
            if not _UNDECODABLE.search(e.reason):
                raise
            words = _undecodable(cubin, arch)
            sigs += sorted({f"cannot decode {_sig(t)}" for t in words.values()})
            prog = load_from_listing(cubin, case.kernel)
        res = execute(prog, case, True)
    except EmuFault as e:
        kind = "timeout" if "budget" in e.reason else "emu_fail"
        return {"seed": seed, "status": kind, "signatures": sigs + [f"fault: {_sig(e.reason[:160])}"], "words": words}
    except Exception as e:  # noqa: BLE001 - an emulator crash is a finding
        return {"seed": seed, "status": "emu_fail", "signatures": sigs + [f"crash: {type(e).__name__}: {_sig(str(e)[:120])}"],
                "words": words}
    sigs += sorted({f"hazard: {_sig(h.message)}" for h in res.hazards})
    return {"seed": seed, "status": "emu_fail" if sigs else "ok", "signatures": sigs, "words": words,
            "hazards": [h.message for h in res.hazards]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", required=True, help="A:B (B excluded), one seed, or a comma-separated list of them")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write every seed's record here")
    ap.add_argument("--words", type=Path, help="write the undecodable words here (isa_probe --seed-words)")
    ap.add_argument("--features", help="comma-separated feature groups every program uses (default: a random "
                                       "subset per program, as a campaign)")
    args = ap.parse_args(argv)
    from ptx2sass.fuzz.campaign import parse_seeds
    seeds = parse_seeds(args.seeds)
    features = args.features.split(",") if args.features else None
    todo = [(s, args.arch, features) for s in seeds]
    if args.jobs > 1:
        from multiprocessing import Pool
        with Pool(args.jobs) as pool:
            recs = pool.map(one, todo, chunksize=1)
    else:
        recs = [one(t) for t in todo]
    status = Counter(r["status"] for r in recs)
    sigs = Counter(s for r in recs for s in r["signatures"] if r["status"] != "invalid")
    valid = len(recs) - status["invalid"]
    print(f"{args.arch} seeds {args.seeds}: {valid} programs ptxas accepts; emu_fail {status['emu_fail']}"
          f" ({100 * status['emu_fail'] / max(1, valid):.1f}%), timeout {status['timeout']}, ok {status['ok']}")
    for s, n in sigs.most_common():
        print(f"{n:4}  {s}")
    if args.json:
        args.json.write_text(json.dumps(recs, indent=1))
    if args.words:
        seen = {}
        for r in recs:
            seen.update(r["words"])
        args.words.write_text("".join(f"{w}  # {t}\n" for w, t in sorted(seen.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
