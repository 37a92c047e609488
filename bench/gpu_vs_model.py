"""Does our timing model rank launches as the GPU does? (issue 20)

    .venv/bin/python bench/gpu_vs_model.py docs/gpu/2026-11-27-h200-sm90-run5.json.gz
        [--min-diff-us 2] [--sm-model] [--corpus tinygrad ...] [--worst 25]

Reads a `tools.gpu_check run` report (per launch: GPU median time of ours and of ptxas's cubin,
and the single-warp emulator cycles recorded at prepare time) and prints the rank correlation
(Spearman) of the model's ours/ptxas ratio with the GPU's over launches:
- over every launch both cubins ran (noise included: most launches take a few µs, about the
  launch overhead, so their ratios are mostly noise);
- over the launches whose GPU times differ by at least --min-diff-us (the signal).
With --sm-model it also compiles both cubins again (this checkout; the report's cubins came
from the bundle's commit) and runs the SM-level model (`bench/quality.py`'s measure, the
report's arch) for the selected launches of the corpora quality.py knows (zluda, cuda,
tinygrad, triton; ≤ 4096 threads), and correlates that ratio too. The worst launches by GPU
ratio are listed with every estimate beside them.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from tools.gpu_check.report import geomean, spearman  # noqa: E402


def load(path: Path) -> dict:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def launch_rows(report: dict) -> list[dict]:
    """Launches both cubins ran on the GPU, with their times and the emulator's cycles."""
    rows = []
    for launch in report["launches"]:
        try:
            ours, theirs = (launch[k]["gpu"]["time_us"]["median"] for k in ("ours", "ptxas"))
        except (KeyError, TypeError):
            continue
        if not ours or not theirs:
            continue
        emu = [(launch[k].get("emu") or {}).get("cycles") for k in ("ours", "ptxas")]
        rows.append({"id": launch["id"], "corpus": launch["corpus"], "held_back": launch["held_back"],
                     "ours_us": ours, "ptxas_us": theirs, "gpu": ours / theirs,
                     "emu": emu[0] / emu[1] if emu[0] and emu[1] else None})
    return rows


def sm_model_ratios(rows: list[dict], arch: str) -> None:
    """Adds "sm" (SM-model cycles ours/ptxas) to the rows bench/quality.py can launch."""
    import quality
    corpora = {}
    for row in rows:
        name = row["id"].split("/", 1)[1]
        if row["corpus"] not in quality.CORPORA:
            continue
        if row["corpus"] not in corpora:
            c = quality.CORPORA[row["corpus"]]()
            corpora[row["corpus"]] = (c, {c.describe(e)[0]: e for e in c.entries()})
        corpus, entries = corpora[row["corpus"]]
        if name not in entries:
            continue
        m = quality.measure(corpus, entries[name], arch)
        if isinstance(m, dict) and m["sm_cycles"][1]:
            row["sm"] = m["sm_cycles"][0] / m["sm_cycles"][1]
            row["sm_cycles"] = m["sm_cycles"]
        else:
            row["sm_skip"] = m if isinstance(m, str) else "no SM-model figure"


def correlate(rows: list[dict], key: str) -> tuple[float | None, int]:
    pairs = [(r[key], r["gpu"]) for r in rows if r.get(key)]
    return spearman([p[0] for p in pairs], [p[1] for p in pairs]), len(pairs)


def _rho(rows: list[dict], key: str) -> str:
    rho, n = correlate(rows, key)
    return f"{'n/a' if rho is None else f'{rho:.3f}'} ({n})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--min-diff-us", type=float, default=2.0,
                    help="launches whose GPU times differ by at least this much are the signal")
    ap.add_argument("--sm-model", action="store_true", help="also run the SM-level model (slow)")
    ap.add_argument("--corpus", action="append", help="only these corpora")
    ap.add_argument("--worst", type=int, default=25)
    ap.add_argument("--against", type=Path, help="an earlier report of the same launches: how well "
                    "the GPU's own ratios repeat (the ceiling for any model's correlation)")
    args = ap.parse_args(argv)
    report = load(args.report)
    arch = (report.get("bundle") or {}).get("arch", "sm_90")
    rows = launch_rows(report)
    if args.corpus:
        rows = [r for r in rows if r["corpus"] in args.corpus]
    signal = [r for r in rows if abs(r["ours_us"] - r["ptxas_us"]) >= args.min_diff_us]
    if args.sm_model:
        sm_model_ratios(signal, arch)
    print(f"report {args.report.name}: {len(rows)} launches both ran; {len(signal)} differ by "
          f">= {args.min_diff_us} µs ({sum(r['ours_us'] > r['ptxas_us'] for r in signal)} slower)")
    print(f"GPU time geomean ours/ptxas: all {geomean([r['gpu'] for r in rows]):.3f}, "
          f"differing {geomean([r['gpu'] for r in signal]):.3f}")
    for label, subset in (("all launches", rows), (f"|diff| >= {args.min_diff_us} µs", signal)):
        for key, what in (("emu", "single-warp emulator"), ("sm", "SM model")):
            rho, n = correlate(subset, key)
            if n:
                print(f"rank correlation, {what} ratio vs GPU ratio, {label}: "
                      f"{'n/a' if rho is None else f'{rho:.3f}'} ({n} launches)")
        both = [r for r in subset if r.get("sm")]
        if both:
            print(f"  same launches as the SM model: single-warp emulator {_rho(both, 'emu')}, "
                  f"SM model {_rho(both, 'sm')}; held back only: single-warp "
                  f"{_rho([r for r in both if r['held_back']], 'emu')}, SM model "
                  f"{_rho([r for r in both if r['held_back']], 'sm')}")
        held = [r for r in subset if r["held_back"]]
        rho, n = correlate(held, "emu")
        if n:
            print(f"  held back only, single-warp emulator: {'n/a' if rho is None else f'{rho:.3f}'} ({n})")
    if args.against:
        earlier = {r["id"]: r["gpu"] for r in launch_rows(load(args.against))}
        for label, subset in (("all launches", rows), (f"|diff| >= {args.min_diff_us} µs", signal)):
            common = [r for r in subset if r["id"] in earlier]
            rho = spearman([earlier[r["id"]] for r in common], [r["gpu"] for r in common])
            print(f"GPU ratio vs the same launches' ratio in {args.against.name}, {label}: "
                  f"{'n/a' if rho is None else f'{rho:.3f}'} ({len(common)} launches)")
    print(f"\nslowest relative to ptxas (|diff| >= {args.min_diff_us} µs):")
    print(f"{'launch':<58} {'GPU µs ours/ptxas':>20} {'GPU':>6} {'emu':>6} {'SM':>6} held")
    for r in sorted(signal, key=lambda r: -r["gpu"])[:args.worst]:
        emu = f"{r['emu']:.2f}" if r.get("emu") else "-"
        sm = f"{r['sm']:.2f}" if r.get("sm") else ("-" if "sm_skip" not in r else "skip")
        print(f"{r['id'][:58]:<58} {r['ours_us']:>9.2f}/{r['ptxas_us']:<9.2f} {r['gpu']:>6.2f} "
              f"{emu:>6} {sm:>6} {'yes' if r['held_back'] else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
