"""Code generation for memory: variables in every state space, the stack frame, vector
loads/stores, atomics. Kernels are checked end to end in the emulator against ptxas's cubin
(or NumPy); layout facts against ptxas's own output."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from ptx2sass.frame import Frame


def test_frame_slots_are_aligned_and_stable():
    f = Frame()
    assert f.size == 0
    assert f.allocate(5, 1, "a") == 0
    assert f.allocate(4, 4) == 8
    assert f.allocate(8, 8, "c") == 16
    assert f.offset_of("a") == 0 and f.offset_of("c") == 16
    assert f.size == 24
    f.allocate(1, 1)
    assert f.size == 32
    with pytest.raises(ValueError):
        f.allocate(4, 3)
    with pytest.raises(ValueError):
        f.allocate(4, 4, "a")


def test_frame_places_variables_largest_alignment_first():
    v = lambda name, size, align: SimpleNamespace(name=name, size=size, align=align)
    f = Frame()
    assert f.place_variables([v("a", 5, 1), v("b", 12, 4), v("c", 3, 4)]) == {"b": 0, "c": 12, "a": 15}
    assert f.size == 24
