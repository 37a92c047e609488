"""Shrink a failing program while it keeps failing with the same signature, and write it
as a regression test.

Delta debugging (Zeller's ddmin) over the program's statements (nested ones included:
removing an `if` removes its branches), then one at a time; then structural
simplifications: an `if` replaced by one of its branches, a loop by one pass of its body,
guards dropped, the launch made one CTA of one warp, the outputs cut to those that still
show the failure. Any subset of statements is again a valid program (program.py), so every
candidate is runnable; each is kept only if `run_case` still reports the target signature.
"""
from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ptx2sass.fuzz.campaign import Options, make_program, peel_until
from ptx2sass.fuzz.inputs import case_from_program, case_header
from ptx2sass.fuzz.program import If, Loop, Op, Program, Switch, contains, is_collective, referenced_regs, walk
from ptx2sass.fuzz.runner import run_case

REGRESSION_DIR = Path(__file__).resolve().parents[2] / "tests" / "fuzz_regressions"


@dataclass
class Reduction:
    program: Program
    signature: str
    trials: int
    seconds: float
    lines_before: int
    lines_after: int
    arch: str = "sm_89"       # the GPU both compilers targeted (the test's header keeps it)


class Reducer:
    def __init__(self, prog: Program, signature: str, options: Options, log=None, max_trials: int = 600):
        self.prog = prog
        self.signature = signature
        self.options = options
        self.trials = 0
        self.log = log or (lambda msg: None)
        self.max_trials = max_trials

    def fails(self) -> bool:
        """Does the current program still fail with the target signature?"""
        self.trials += 1
        try:
            case = case_from_program(self.prog)
        except Exception:  # noqa: BLE001 - a candidate the renderer cannot express
            return False
        case.arch = self.options.arch
        out = run_case(case, hazard_check=self.options.hazard_check)
        sigs = [s for _, s in out.findings] or [out.sig]
        return self.signature in sigs

    # statements --------------------------------------------------------------------------
    def _bodies(self) -> list[list]:
        return [self.prog.body] + [f.body for f in self.prog.funcs]

    def _statements(self) -> list[tuple]:
        """(statement, the list holding it), outermost first."""
        out = []
        for body in self._bodies():
            out.extend(walk(body))
        return out

    def _try_remove(self, group: list[tuple]) -> bool:
        """Remove `group`'s statements; keep the removal if the failure stays."""
        removed = []
        for stmt, holder in group:
            for i, s in enumerate(holder):
                if s is stmt:
                    removed.append((holder, i, stmt))
                    del holder[i]
                    break
        if not removed:
            return False
        if self.fails():
            return True
        for holder, i, stmt in reversed(removed):
            holder.insert(i, stmt)
        return False

    def ddmin(self) -> bool:
        progress = False
        n = 2
        while self.trials < self.max_trials:
            stmts = self._statements()
            if not stmts:
                break
            chunk = max(1, len(stmts) // n)
            removed_any = False
            for start in range(0, len(stmts), chunk):
                group = stmts[start:start + chunk]
                # a statement already gone with an enclosing one is skipped by _try_remove
                if self._try_remove(group):
                    removed_any = progress = True
                    self.log(f"  removed {len(group)} statement(s), {len(self._statements())} left")
                    break
            if removed_any:
                n = max(n - 1, 2)
                continue
            if chunk == 1:
                break
            n = min(n * 2, len(stmts))
        return progress

    def unwrap(self) -> bool:
        """Replace compound statements by their branches or bodies."""
        progress = False
        for stmt, holder in self._statements():
            if self.trials >= self.max_trials:
                break
            if not any(s is stmt for s in holder):
                continue
            options = []
            if isinstance(stmt, If):
                options = [stmt.then, stmt.els]
            elif isinstance(stmt, Loop):
                options = [stmt.body]
            elif isinstance(stmt, Switch):
                options = list(stmt.cases)
            for inner in options:
                i = next(k for k, s in enumerate(holder) if s is stmt)
                holder[i:i + 1] = list(inner)
                if self.fails():
                    progress = True
                    self.log(f"  unwrapped a {type(stmt).__name__}")
                    break
                del holder[i:i + len(inner)]
                holder.insert(i, stmt)
        return progress

    def simplify_ops(self) -> bool:
        progress = False
        for stmt, _ in self._statements():
            if self.trials >= self.max_trials:
                break
            if isinstance(stmt, Op) and stmt.guard is not None:
                guard, stmt.guard = stmt.guard, None
                if self.fails():
                    progress = True
                else:
                    stmt.guard = guard
            if isinstance(stmt, Loop) and (stmt.trip is not None or stmt.base > 1):
                saved = (stmt.trip, stmt.base, stmt.mask)
                stmt.trip, stmt.base, stmt.mask = None, 1, 0
                if self.fails():
                    progress = True
                else:
                    stmt.trip, stmt.base, stmt.mask = saved
        return progress

    def shrink_launch(self) -> bool:
        p = self.prog
        needs_warp = contains(p.body, is_collective)
        candidates = [((1, 1, 1), (32, 1, 1))]
        if not needs_warp:
            candidates.append(((1, 1, 1), (1, 1, 1)))
        progress = False
        for grid, block in candidates:
            if (tuple(p.grid), tuple(p.block)) == (grid, block):
                continue
            if grid[0] * block[0] > p.grid[0] * p.grid[1] * p.block[0] * p.block[1] * p.block[2]:
                continue
            saved = (p.grid, p.block)
            p.grid, p.block = grid, block
            if self.fails():
                progress = True
                self.log(f"  launch {grid} x {block}")
            else:
                p.grid, p.block = saved
        return progress

    def shrink_outputs(self) -> bool:
        """Store only the registers whose outputs still show the failure (ddmin on them)."""
        p = self.prog
        used = referenced_regs(p.body)
        observed = [r.index for r in p.regs if id(r) in used and r.role in ("value", "approx")
                    and (p.observe is None or r.index in p.observe)]
        if not observed:
            return False
        saved = p.observe
        p.observe = set()
        if self.fails():
            return saved != set()
        current = list(observed)
        n = 2
        progress = False
        while len(current) >= 1 and self.trials < self.max_trials:
            chunk = max(1, len(current) // n)
            reduced = False
            for start in range(0, len(current), chunk):
                keep = current[:start] + current[start + chunk:]
                p.observe = set(keep)
                if self.fails():
                    current = keep
                    reduced = progress = True
                    n = max(n - 1, 2)
                    break
            if not reduced:
                if chunk == 1:
                    break
                n = min(n * 2, len(current))
        p.observe = set(current)
        if not progress:
            p.observe = saved if not progress else p.observe
        return progress

    def run(self) -> None:
        rounds = 0
        while self.trials < self.max_trials and rounds < 6:
            rounds += 1
            changed = self.ddmin()
            changed |= self.unwrap()
            changed |= self.simplify_ops()
            changed |= self.shrink_launch()
            if not changed:
                break
        self.shrink_outputs()
        self.ddmin()


def reduce_seed(seed: int, signature: str, options: Options | None = None, log=None,
                max_trials: int = 600) -> Reduction | None:
    """Regenerate `seed`, peel refusals until the target signature shows, then reduce."""
    options = options or Options()
    t0 = time.perf_counter()
    prog = make_program(seed, options)
    before = case_from_program(prog).text.count("\n")

    def found(out):
        return signature in ([s for _, s in out.findings] or [out.sig])
    out, _, _ = peel_until(prog, options, stop=found)
    if not found(out):
        return None
    reducer = Reducer(prog, signature, options, log, max_trials)
    reducer.run()
    after = case_from_program(prog).text.count("\n")
    return Reduction(prog, signature, reducer.trials, time.perf_counter() - t0, before, after,
                     options.arch)


def _slug(signature: str) -> str:
    words = re.sub(r"[^a-zA-Z0-9.]+", "_", signature).strip("_").lower()
    return words[:60].strip("_.")


def regression_text(red: Reduction, xfail: str | None = None, bug: str = "") -> str:
    case = case_from_program(red.program)
    case.arch = red.arch
    cls = red.signature.split(":", 1)[0]
    head = [f"// Fuzz regression ({cls}): {red.signature}",
            f"// Found by ptx2sass-fuzz, seed {red.program.seed}; reduced from {red.lines_before} to "
            f"{red.lines_after} lines in {red.trials} runs.",
            "// Runs in tests/test_fuzz_regressions.py: ptxas's cubin and ours on the inputs the header"
            " describes, outputs equal, no hazards."]
    if bug:
        head.append(f"// Bug: {bug}")
    if xfail:
        head.append(f"// xfail: {xfail}")
    case.features, case.keys, case.shapes, case.spaces = [], [], [], []
    return "\n".join(head) + "\n" + case_header(case, {"expect_signature": red.signature}) + case.text


def write_regression(red: Reduction, directory: Path = REGRESSION_DIR, xfail: str | None = None,
                     bug: str = "", name: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    name = name or f"{_slug(red.signature)}_s{red.program.seed}"
    path = directory / f"{name}.ptx"
    path.write_text(regression_text(red, xfail, bug))
    return path


def clone(prog: Program) -> Program:
    return copy.deepcopy(prog)
