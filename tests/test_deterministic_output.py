"""The same input gives the same cubin in every process (issue 21: a realworld
cub_device.sm_86 compile gave three different cubins in fresh processes at an earlier
commit). Output that follows the iteration order of a set or dict keyed by `id()` (object
addresses) or by strings (hash-seeded) changes from process to process; two fresh
processes with different `PYTHONHASHSEED`s, the second with objects of every small size
allocated first (so that addresses modulo a set's table size, and with them id-keyed
orders, differ), compile a handful of kernels with branches, loops, calls, collectives and spills,
plain, -lineinfo and -g, and must write the same bytes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from bench.memory_scaling import nested_ifs, nested_loops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
FILES = ["cuda/control.ptx", "cuda/calls.ptx", "cuda/warp.ptx", "cuda/patterns.ptx",
         "realworld/cuda/histogram_shared.sm_89.ptx", "realworld/cuda/warp_intrinsics.sm_89.ptx"]

# one process: shift the heap (SHIFT objects of each small size, so that later objects of
# every size start at other offsets in the allocator's pools), then compile every (file, options) job and
# print each cubin's sha256 (or the exit status where none was written)
_CHILD = r"""
import contextlib, hashlib, io, json, os, sys
keep = [bytes(n) for _ in range(int(os.environ["SHIFT"])) for n in range(1, 520, 8)]
from ptx2sass import cli
out = {}
for path, extra, dest in json.loads(sys.argv[1]):
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = cli.main([path, "-o", dest] + extra)
        except SystemExit as e:
            rc = e.code
    out[f"{os.path.basename(path)} {' '.join(extra)}"] = (
        hashlib.sha256(open(dest, "rb").read()).hexdigest() if os.path.exists(dest) else rc)
print(json.dumps(out))
"""


def _start(jobs, seed: str, shift: int, tmp):
    env = {**os.environ, "PYTHONHASHSEED": seed, "SHIFT": str(shift)}
    # (each process its own folder, the same file names: -g records the output's name)
    (tmp / seed).mkdir()
    mine = [(p, extra, str(tmp / seed / f"{k}.cubin")) for k, (p, extra) in enumerate(jobs)]
    return subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(mine)], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


def test_same_cubin_in_fresh_processes(tmp_path):
    generated = []
    for name, text in (("nestloops24.ptx", nested_loops(24)), ("nestifs24.ptx", nested_ifs(24))):
        generated.append(str(tmp_path / name))
        (tmp_path / name).write_text(text)
    jobs = []
    for path in [os.path.join(CORPUS, f) for f in FILES] + generated:
        for extra in ([], ["-lineinfo"], ["-g"]):
            jobs.append((path, ["-arch=sm_89"] + extra))
    jobs += [(os.path.join(CORPUS, "cuda/control.ptx"), ["-arch=sm_90"]),
             (os.path.join(CORPUS, "cuda/calls.ptx"), ["-arch=sm_100"])]
    runs = [_start(jobs, "0", 0, tmp_path), _start(jobs, "1", 7, tmp_path)]   # side by side
    first, second = (_result(p) for p in runs)
    assert len(first) == len(jobs)
    failed = {k: h for k, h in first.items() if not isinstance(h, str)}
    assert not failed, failed       # every job wrote a cubin
    differ = sorted(k for k in first if first[k] != second.get(k))
    assert not differ, differ



def test_tied_post_dominators_taken_in_block_order():
    """`loop_yield._nearest`: blocks from which no path returns keep every block as their
    post-dominators, so several tie; the pick was the set's first by address (cub_device.sm_86
    -g gave b0f59566 or f64f983e from the same input in fresh processes, with a YIELD in
    another loop). Now the first in block order, whatever order the set holds them in."""
    from ptx2sass.loop_yield import _nearest
    every = {10, 20, 30, 40}
    position = {40: 0, 10: 1, 30: 2, 20: 3}
    for members in ([10, 20, 30, 40], [40, 30, 20, 10], [30, 10, 40, 20]):
        pdom = {b: set(every) for b in members}           # all tied: no way out
        pdom[40] = set(members)
        assert _nearest(pdom, 40, position) == 10          # 40 itself excluded; 10 is first after it
    chain = {1: {1, 2, 3}, 2: {2, 3}, 3: {3}}
    assert _nearest(chain, 1, {1: 0, 2: 1, 3: 2}) == 2     # the ordinary case: the nearest
