"""Peak memory of deeply nested loops (issue 21: nestloops:300 took 2.2x ptxas's memory).
N nested loops make ~N^2/2 phis before SSA cleanup and a graph where N counters interfere
with everything: the peak was two interference graphs side by side, one int object per edge,
the live-out and written-predicate sets of every block, and a dict per value in the phi
cleanup. Traced (tracemalloc) bytes above the start, deterministic for a given Python;
the bound sits between the code before (28.1 MB at 150 loops) and after (18.2 MB)."""
from __future__ import annotations

import tracemalloc

from bench.memory_scaling import nested_loops
from ptx2sass import codegen


def test_nested_loops_peak_memory():
    ptx = nested_loops(150)
    codegen.compile_ptx(nested_loops(2))          # imports and tables outside the measure
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        codegen.compile_ptx(ptx)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert peak < BOUND, f"peak {peak / 1e6:.1f} MB"


BOUND = 23_000_000
