"""Running seeds: one seed end to end (`run_seed`), a local process pool, or Ray tasks.

`run_seed` generates the program, runs it, and when ptx2sass refuses a statement, peels
that statement off and runs the rest again (up to `peel` times): one refused instruction
would otherwise hide every wrong answer in the rest of the program. The refusals stay in
the result's findings; `first_class` is what the whole program got.

Results are plain dicts (one JSON line each in a campaign's `results.jsonl`), so partial
campaigns from several machines merge by concatenation.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass, field

from ptx2sass.fuzz.generator import generate
from ptx2sass.fuzz.inputs import case_from_program
from ptx2sass.fuzz.program import Program, render, walk
from ptx2sass.fuzz.runner import run_case


@dataclass
class Options:
    features: list | None = None      # every program uses exactly these feature groups
    exclude: list = field(default_factory=list)
    size: int | None = None
    peel: int = 12
    hazard_check: bool = True
    arch: str = "sm_89"

    def to_json(self) -> dict:
        return asdict(self)


def make_program(seed: int, options: Options) -> Program:
    feats = set(options.features) if options.features else None
    return generate(seed, feats, options.size, frozenset(options.exclude), options.arch)


_LINE = re.compile(r"line (\d+)")


def refused_statement(rendered, detail: str):
    """The statement a refusal's `line N` falls in, or None."""
    m = _LINE.search(detail or "")
    if not m:
        return None
    n = int(m.group(1))
    if 1 <= n <= len(rendered.owners):
        return rendered.owners[n - 1]
    return None


# ptxas's refusal of a statement the lowered `.target` lacks (the programs are sm_89 PTX;
# `runner.ptx_for` lowers the target for sm_75): "line 12; error   : Feature '.bf16'
# requires .target sm_80 or higher"
_NEEDS_NEWER_TARGET = re.compile(r"line (\d+); error\s*: .* requires \.target sm_\d+ or higher")


def newer_target_statements(rendered, detail: str) -> list:
    """The statements ptxas refuses only because the case's arch is older than the PTX the
    generator writes (each error line of `detail` of that kind); [] when any error is another."""
    errors = [ln for ln in (detail or "").splitlines() if "error" in ln]
    stmts = []
    for ln in errors:
        m = _NEEDS_NEWER_TARGET.search(ln)
        if not m:
            return []
        n = int(m.group(1))
        if not 1 <= n <= len(rendered.owners) or rendered.owners[n - 1] is None:
            return []
        if all(s is not rendered.owners[n - 1] for s in stmts):
            stmts.append(rendered.owners[n - 1])
    return stmts


def _only_newer_target(detail: str) -> bool:
    """ptxas refused the lowered program only for statements its `.target` lacks."""
    errors = [ln for ln in (detail or "").splitlines() if "error" in ln]
    return bool(errors) and all(_NEEDS_NEWER_TARGET.search(ln) for ln in errors)


def remove_statement(prog: Program, stmt) -> bool:
    for body in [prog.body] + [f.body for f in prog.funcs]:
        for s, holder in walk(body):
            if s is stmt:
                holder.remove(s)
                return True
    return False


def peel(prog: Program, arch: str, refusal, limit: int):
    """The Case of `prog` for `arch` after peeling off the statements `refusal(case)` names:
    it returns the refusal message of a try (None: keep this case); at most `limit` peels."""
    for _ in range(limit + 1):
        rendered = render(prog)
        case = case_from_program(prog, rendered)
        case.arch = arch
        message = refusal(case)
        if message is None:
            return case
        # ptxas's refusals of statements the lowered `.target` lacks go all at once
        stmts = newer_target_statements(rendered, message) or [refused_statement(rendered, message)]
        if None in stmts or not all(remove_statement(prog, stmt) for stmt in stmts):
            return case
    return case


def peel_until(prog: Program, options: Options, stop=None):
    """Run `prog`, peeling refused statements, until it no longer refuses (or `stop(outcome)`
    holds). Returns (outcome, case, list of outcomes of every attempt)."""
    attempts = []

    def refusal(case):
        out = run_case(case, hazard_check=options.hazard_check, known_valid=bool(attempts))
        attempts.append(out)
        if (stop is not None and stop(out)) or len(attempts) > options.peel:
            return None
        if out.cls == "refuse" or (out.cls == "invalid" and _only_newer_target(out.detail)):
            return out.detail
        return None
    case = peel(prog, options.arch, refusal, options.peel + 1)
    return attempts[-1], case, attempts


def run_seed(seed: int, options: Options) -> dict:
    t0 = time.perf_counter()
    try:
        prog = make_program(seed, options)
        first_case = case_from_program(prog)
    except Exception as e:  # noqa: BLE001 - a generator bug is reported, not fatal to a campaign
        return {"seed": seed, "class": "generator_error", "first_class": "generator_error",
                "sig": f"generator_error: {type(e).__name__}: {e}", "findings": [], "seconds": {}}
    out, case, attempts = peel_until(prog, options)
    findings = []
    for a in attempts:
        for f in (a.findings or ([[a.cls, a.sig]] if a.cls != "pass" else [])):
            if list(f) not in findings:
                findings.append(list(f))
    seconds = {}
    for a in attempts:
        for k, v in a.seconds.items():
            seconds[k] = round(seconds.get(k, 0) + v, 3)
    seconds["total"] = round(time.perf_counter() - t0, 3)
    return {
        "seed": seed, "class": out.cls, "first_class": attempts[0].cls, "sig": out.sig,
        "first_sig": attempts[0].sig, "detail": out.detail[:300], "findings": findings,
        "peeled": len(attempts) - 1, "ours": out.ours, "theirs": out.theirs, "seconds": seconds,
        "coverage": coverage_record(first_case, case),
    }


def coverage_record(first_case, case) -> dict:
    """What a program emitted (`first_case`) and what of it ran to the end (`case`)."""
    return {"keys": sorted(set(first_case.keys)), "spaces": first_case.spaces,
            "shapes": sorted(set(first_case.shapes)), "features": first_case.features,
            "launch": [list(first_case.grid), list(first_case.block)],
            "pressure": first_case.pressure, "lines": first_case.text.count("\n"),
            "tested_keys": sorted(set(case.keys))}


# ------------------------------------------------------------------------------ local pool

def _worker_init(nice: int) -> None:
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    import warnings
    warnings.filterwarnings("ignore", category=RuntimeWarning)


def _run_one(args):
    seed, options = args
    return run_seed(seed, Options(**options))


def run_local(seeds, options: Options, jobs: int = 1, nice: int = 0, on_result=None) -> list[dict]:
    """Seeds on a process pool of `jobs` workers (1: in this process)."""
    results = []
    if jobs <= 1:
        _worker_init(nice)
        for s in seeds:
            r = run_seed(s, options)
            results.append(r)
            if on_result:
                on_result(r)
        return results
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    with ctx.Pool(jobs, initializer=_worker_init, initargs=(nice,), maxtasksperchild=100) as pool:
        for r in pool.imap_unordered(_run_one, [(s, options.to_json()) for s in seeds], chunksize=1):
            results.append(r)
            if on_result:
                on_result(r)
    return results


# ------------------------------------------------------------------------------ Ray

def _ray_batch(seeds: list[int], options: dict) -> list[dict]:
    _worker_init(0)
    return [run_seed(s, Options(**options)) for s in seeds]


def run_ray(seeds, options: Options, address: str, jobs: int = 0, batch: int = 8,
            on_result=None) -> list[dict]:
    """Seeds as Ray tasks of `batch` seeds each. `address` "local" starts a Ray instance in
    this process (with `jobs` CPUs, 0: all); anything else joins that cluster, whose nodes
    must have this package (and the pinned ptxas wheel) installed."""
    try:
        import ray
    except ImportError:
        raise SystemExit("ptx2sass-fuzz: --ray needs the `ray` package (pip install 'ptx2sass[fuzz]')") from None
    started_here = not ray.is_initialized()
    if started_here:
        kwargs = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
        if address == "local":
            if jobs:
                kwargs["num_cpus"] = jobs
            ray.init(**kwargs)
        else:
            ray.init(address=address, **kwargs)
    try:
        task = ray.remote(_ray_batch)
        seeds = list(seeds)
        chunks = [seeds[i:i + batch] for i in range(0, len(seeds), batch)]
        pending = [task.remote(c, options.to_json()) for c in chunks]
        results = []
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for r in ray.get(done[0]):
                results.append(r)
                if on_result:
                    on_result(r)
        return results
    finally:
        if started_here:
            ray.shutdown()


def parse_seeds(text: str) -> list[int]:
    """`A:B` (B excluded), a single seed, or a comma-separated list of either."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            a, b = part.split(":", 1)
            seeds.extend(range(int(a), int(b)))
        elif part:
            seeds.append(int(part))
    return seeds


def read_results(path) -> list[dict]:
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out
