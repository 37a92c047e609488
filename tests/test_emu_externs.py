"""Driver-linked device functions in the emulator (emu/externs.py): printf, malloc/free and
assert, called the way ptxas's cubins call them (LEPC, CALL.ABS.NOINC through constant bank
4) and the way ours do; expected output from the kernels' own arithmetic, formatted by
Python's printf-style operator (C's conversions)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run

SOURCE = r"""
#include <cstdio>
#include <cassert>
extern "C" __global__ void k(const int* x, int* out) {
  int i = threadIdx.x;
  if (x[i] > 3) printf("lane %d has %d and %f|%5.2f|%x|%c|%s|%lld|%%\n", i, x[i], (double)x[i] * 0.5,
                       x[i] * 0.25f, x[i] * 255, 'a' + x[i], "str", (long long)x[i] << 40);
  int* p = (int*)malloc(16);
  p[0] = x[i]; p[1] = i;
  out[i] = p[0] + p[1];
  free(p);
}
extern "C" __global__ void checked(const int* x, int* out) {
  int i = threadIdx.x;
  assert(x[i] < 5);
  out[i] = x[i];
}
"""


@pytest.fixture(scope="module")
def cubins():
    ptx = oracle.nvcc_ptx(SOURCE, "sm_89").output.decode()
    theirs = oracle.ptxas(ptx, "sm_89").output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    return {"ptxas": theirs, "ours": ours}


def _expected(x: np.ndarray) -> list[str]:
    # (Python's operator has no length modifiers: %lld is its %d)
    return ["lane %d has %d and %f|%5.2f|%x|%c|%s|%d|%%\n"
            % (i, v, v * 0.5, v * 0.25, v * 255, chr(ord("a") + v), "str", v << 40)
            for i, v in enumerate(x.tolist()) if v > 3]


@pytest.mark.parametrize("which", ["ptxas", "ours"])
def test_printf_and_malloc(cubins, which):
    x = np.array([i % 7 for i in range(64)], np.int32)
    out = np.zeros(64, np.int32)
    res = run(cubins[which], "k", 1, 64, [x, out], hazard_check=which == "ours")
    np.testing.assert_array_equal(out, x + np.arange(64))
    assert sorted(res.printf) == sorted(_expected(x))
    if which == "ours":
        assert res.hazards == []


@pytest.mark.parametrize("which", ["ptxas", "ours"])
def test_assert_faults_with_the_message(cubins, which):
    out = np.zeros(32, np.int32)
    run(cubins[which], "checked", 1, 32, [np.zeros(32, np.int32), out], hazard_check=False)
    bad = np.zeros(32, np.int32)
    bad[7] = 9
    with pytest.raises(EmuFault, match=r"device assertion failed: .*:\d+: x\[i\] < 5"):
        run(cubins[which], "checked", 1, 32, [bad, out], hazard_check=False)
