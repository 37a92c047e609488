"""`ptx2sass-fuzz`: differential fuzzing of ptx2sass against the pinned ptxas.

    ptx2sass-fuzz --seeds 0:1000 [-j 2] [--out DIR]            a campaign on a process pool
    ptx2sass-fuzz --seeds 0:100000 --ray ADDRESS|local          ... as Ray tasks
    ptx2sass-fuzz report DIR/results.jsonl ... [--out DIR]      merge results into one report
    ptx2sass-fuzz reduce SEED --sig SIGNATURE [--write]          shrink a failure to a test
    ptx2sass-fuzz regress DIR/results.jsonl [--classes ...]     ... one test per new signature
    ptx2sass-fuzz show SEED                                      print a seed's program
    ptx2sass-fuzz coverage --seeds 0:2000                        what the generator emits

A campaign writes DIR/results.jsonl (one line per program, as they finish; `--resume`
skips seeds already there), DIR/report.json, DIR/report.txt and DIR/coverage.svg.
`--reduce N` then reduces one program of each of the N most frequent failure signatures
into tests/fuzz_regressions/ (marked xfail with their signature until fixed).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ptx2sass.fuzz.campaign import Options, parse_seeds, read_results, run_local, run_ray
from ptx2sass.fuzz.generator import FEATURES


def _options(args) -> Options:
    feats = [f for f in args.features.split(",") if f] if args.features else None
    excl = [f for f in args.exclude.split(",") if f] if args.exclude else []
    from ptx2sass.fuzz.newarch import GROUPS
    for f in (feats or []) + excl:
        if f not in FEATURES and f not in GROUPS:      # the sm_90+ groups name features too
            raise SystemExit(f"ptx2sass-fuzz: unknown feature {f!r}; known: {', '.join(sorted(FEATURES) + sorted(GROUPS))}")
    return Options(features=feats, exclude=excl, size=args.size, peel=args.peel,
                   hazard_check=not args.no_hazard_check, arch=getattr(args, "arch", "sm_89"))


def _write_report(results, out: Path, meta: dict) -> dict:
    from ptx2sass.fuzz.coverage import coverage_svg
    from ptx2sass.fuzz.report import build_report, text_report
    rep = build_report(results, meta)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(rep, indent=1, sort_keys=False) + "\n")
    text = text_report(rep)
    (out / "report.txt").write_text(text)
    (out / "coverage.svg").write_text(coverage_svg(rep["coverage"]))
    return rep


def cmd_run(args) -> int:
    options = _options(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.jsonl"
    done: dict[int, dict] = {}
    if args.resume and results_path.exists():
        done = {r["seed"]: r for r in read_results(results_path)}
    elif results_path.exists():
        results_path.unlink()
    seeds = [s for s in parse_seeds(args.seeds) if s not in done]
    t0 = time.time()
    count = [0]
    sink = open(results_path, "a")

    def on_result(r):
        sink.write(json.dumps(r, sort_keys=True) + "\n")
        sink.flush()
        count[0] += 1
        if not args.quiet and (count[0] % args.progress == 0 or r["class"] not in ("pass", "refuse")):
            print(f"[{count[0]}/{len(seeds)}] seed {r['seed']}: {r['first_class']} -> {r['class']} "
                  f"{r.get('sig', '')[:100]}", flush=True)
    try:
        if args.ray:
            run_ray(seeds, options, args.ray, jobs=args.jobs if args.jobs > 1 else 0, batch=args.batch,
                    on_result=on_result)
        else:
            run_local(seeds, options, jobs=args.jobs, nice=args.nice, on_result=on_result)
    finally:
        sink.close()
    wall = time.time() - t0
    results = read_results(results_path)
    meta = {"seeds": args.seeds, "jobs": args.jobs, "ray": args.ray, "options": options.to_json(),
            "wall_seconds": round(wall, 1) if not done else None, "arch": "sm_89",
            "ptxas": "13.5.37"}
    rep = _write_report(results, out, meta)
    sys.stdout.write((out / "report.txt").read_text())
    if args.reduce:
        _reduce_top(results, rep, args.reduce, options, Path(args.regressions))
    return 0


def _reduce_top(results, rep, limit: int, options: Options, directory: Path) -> None:
    from ptx2sass.fuzz.reducer import reduce_seed, write_regression
    existing = {}
    for p in directory.glob("*.ptx"):
        from ptx2sass.fuzz.inputs import case_meta
        sig = case_meta(p.read_text()).get("expect_signature")
        if sig:
            existing[sig] = p
    todo = []
    for cls, fs in rep["findings"].items():
        for f in fs:
            if f["signature"] not in existing:
                todo.append(f)
    todo.sort(key=lambda f: -f["programs"])
    for f in todo[:limit]:
        seed = f["seeds"][0]
        print(f"reducing seed {seed}: {f['signature']}", flush=True)
        red = reduce_seed(seed, f["signature"], options)
        if red is None:
            print("  not reproduced", flush=True)
            continue
        path = write_regression(red, directory, xfail=f["signature"])
        print(f"  {red.lines_before} -> {red.lines_after} lines, {red.trials} runs: {path}", flush=True)


def cmd_regress(args) -> int:
    """One reduced regression test per failure signature of the results not yet covered."""
    from ptx2sass.fuzz.reducer import reduce_seed, write_regression
    from ptx2sass.fuzz.report import build_report
    from ptx2sass.fuzz.inputs import case_meta
    options = _options(args)
    results = [r for p in args.results for r in read_results(p)]
    rep = build_report(results)
    directory = Path(args.regressions)
    covered = {case_meta(p.read_text()).get("expect_signature") for p in directory.glob("*.ptx")}
    classes = args.classes.split(",")
    todo = [f for c in classes for f in rep["findings"].get(c, []) if f["signature"] not in covered]
    todo.sort(key=lambda f: (classes.index(f["class"]), -f["programs"]))
    for f in todo[:args.limit]:
        for seed in f["seeds"][:2]:
            print(f"reducing seed {seed}: {f['signature']}", flush=True)
            red = reduce_seed(seed, f["signature"], options, max_trials=args.max_trials)
            if red is None:
                print("  not reproduced", flush=True)
                continue
            path = write_regression(red, directory, xfail=f"{f['signature']} ({f['programs']} of "
                                                            f"{len(results)} programs)")
            print(f"  {red.lines_before} -> {red.lines_after} lines, {red.trials} runs, {red.seconds:.0f} s: {path}",
                  flush=True)
            break
    return 0


def _results_file(arg: str) -> Path:
    """A campaign's results.jsonl, given it or the campaign's directory."""
    path = Path(arg)
    return path / "results.jsonl" if path.is_dir() else path


def cmd_report(args) -> int:
    results = []
    seen = set()
    for p in map(_results_file, args.results):
        try:
            found = read_results(p)
        except OSError as e:
            print(f"ptx2sass-fuzz: error: cannot read {p}: {e.strerror}", file=sys.stderr)
            return 2
        except ValueError as e:
            print(f"ptx2sass-fuzz: error: {p} is not a results file ({e})", file=sys.stderr)
            return 2
        for r in found:
            if r["seed"] not in seen:
                seen.add(r["seed"])
                results.append(r)
    _write_report(results, Path(args.out), {"merged_from": [str(p) for p in args.results]})
    sys.stdout.write((Path(args.out) / "report.txt").read_text())
    return 0


def cmd_reduce(args) -> int:
    from ptx2sass.fuzz.reducer import reduce_seed, regression_text, write_regression
    options = _options(args)
    red = reduce_seed(args.seed, args.sig, options, log=(print if args.verbose else None),
                      max_trials=args.max_trials)
    if red is None:
        print(f"seed {args.seed} does not show {args.sig!r}", file=sys.stderr)
        return 1
    print(f"reduced {red.lines_before} -> {red.lines_after} lines in {red.trials} runs, {red.seconds:.0f} s",
          file=sys.stderr)
    if args.write:
        path = write_regression(red, Path(args.regressions), xfail=args.xfail or None, bug=args.bug or "",
                                name=args.name)
        print(path)
    else:
        sys.stdout.write(regression_text(red, args.xfail or None, args.bug or ""))
    return 0


def cmd_coverage(args) -> int:
    """What the generator emits over seeds (programs generated, not run)."""
    from ptx2sass.fuzz.campaign import coverage_record, make_program
    from ptx2sass.fuzz.coverage import coverage_summary, coverage_svg
    from ptx2sass.fuzz.inputs import case_from_program
    options = _options(args)
    results = []
    for seed in parse_seeds(args.seeds):
        case = case_from_program(make_program(seed, options))
        results.append({"seed": seed, "coverage": coverage_record(case, case)})
    cov = coverage_summary(results, valid_only=args.valid_only)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "coverage.json").write_text(json.dumps(cov, indent=1) + "\n")
    (out / "coverage.svg").write_text(coverage_svg(cov))
    inv = cov["inventory"]
    print(f"{len(results)} programs: {len(cov['keys'])} distinct instruction keys, inventory forms "
          f"{inv['covered']}/{inv['total']} ({inv['percent']}%, {inv['source']}); spaces {len(cov['spaces'])}, "
          f"control-flow shapes {len(cov['shapes'])}, launch shapes {len(cov['launches'])}, "
          f"pressure levels {len(cov['pressure'])}")
    return 0


def cmd_show(args) -> int:
    from ptx2sass.fuzz.campaign import make_program
    from ptx2sass.fuzz.inputs import case_from_program, case_header
    case = case_from_program(make_program(args.seed, _options(args)))
    case.arch = args.arch           # the GPU the program was made for, as a campaign's case
    sys.stdout.write(case_header(case) + case.text)
    return 0


def _common(p) -> None:
    p.add_argument("--features", help="comma-separated feature groups every program uses (default: a random "
                                      "subset per program)")
    p.add_argument("--exclude", help="comma-separated feature groups no program uses")
    p.add_argument("--size", type=int, help="statements per program (default: random)")
    p.add_argument("--peel", type=int, default=12, help="refused statements peeled off before giving up")
    p.add_argument("--no-hazard-check", action="store_true")
    p.add_argument("--arch", default="sm_89",
                   help="the GPU both compilers target (sm_75 .. sm_120; the programs are sm_89 PTX)")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ptx2sass-fuzz", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run a campaign (the default command)")
    run.add_argument("--seeds", required=True, help="A:B (B excluded), one seed, or a comma-separated list of them")
    run.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (Ray: CPUs of a local instance)")
    run.add_argument("--ray", metavar="ADDRESS", help="run as Ray tasks: a cluster address, or 'local'")
    run.add_argument("--batch", type=int, default=8, help="seeds per Ray task")
    run.add_argument("--out", default="fuzz-out", help="output folder")
    run.add_argument("--resume", action="store_true", help="keep results already in OUT/results.jsonl")
    run.add_argument("--nice", type=int, default=0, help="niceness of the worker processes")
    run.add_argument("--reduce", type=int, default=0, metavar="N",
                     help="then reduce the N most frequent new failure signatures into regression tests")
    run.add_argument("--regressions", default="tests/fuzz_regressions")
    run.add_argument("--quiet", action="store_true")
    run.add_argument("--progress", type=int, default=50, help="print every Nth result")
    _common(run)
    rep = sub.add_parser("report", help="merge results.jsonl files (or campaign directories) into one report")
    rep.add_argument("results", nargs="+")
    rep.add_argument("--out", default="fuzz-report")
    red = sub.add_parser("reduce", help="reduce a failing seed to a small regression test")
    red.add_argument("seed", type=int)
    red.add_argument("--sig", required=True, help="the failure signature to keep (from the report)")
    red.add_argument("--write", action="store_true", help="write it under --regressions")
    red.add_argument("--regressions", default="tests/fuzz_regressions")
    red.add_argument("--name", help="file name (without .ptx)")
    red.add_argument("--xfail", help="mark the test xfail(strict) with this reason (the bug, until fixed)")
    red.add_argument("--bug", help="a line describing the bug")
    red.add_argument("--max-trials", type=int, default=600)
    red.add_argument("-v", "--verbose", action="store_true")
    _common(red)
    reg = sub.add_parser("regress", help="reduce one program per new failure signature into tests/fuzz_regressions")
    reg.add_argument("results", nargs="+", help="results.jsonl files of campaigns run with the same options")
    reg.add_argument("--classes", default="mismatch,crash,emu_fail,hazard,timeout,refuse")
    reg.add_argument("--limit", type=int, default=20)
    reg.add_argument("--regressions", default="tests/fuzz_regressions")
    reg.add_argument("--max-trials", type=int, default=400)
    _common(reg)
    cov = sub.add_parser("coverage", help="generator coverage over seeds (generated, not run)")
    cov.add_argument("--seeds", required=True)
    cov.add_argument("--out", default="fuzz-coverage")
    cov.add_argument("--valid-only", action="store_true",
                     help="count only inventory forms ptxas accepts for sm_89 (asks ptxas per form once)")
    _common(cov)
    show = sub.add_parser("show", help="print the program of a seed")
    show.add_argument("seed", type=int)
    _common(show)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv.insert(0, "run")
    args = parser().parse_args(argv)
    import warnings
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    os.environ.setdefault("PYTHONWARNINGS", "ignore::RuntimeWarning")
    handler = {"run": cmd_run, "report": cmd_report, "reduce": cmd_reduce, "show": cmd_show,
               "regress": cmd_regress, "coverage": cmd_coverage}[args.command]
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
