"""A uniform register written with one value by every lane of a group (`Lanes._put_uniform`'s
shortcut: each warp of the group takes the value) against the per-lane rule (each warp takes
its first writing lane's value), on groups of one warp, contiguous and scattered warps."""
import numpy as np
import pytest

from ptx2sass.emu.lanes import Lanes, reg
from ptx2sass.emu.machine import Group


class _Machine:
    launch = None
    tracing = False

    def __init__(self, warps):
        self.UR = np.arange(warps * 64, dtype=np.uint32).reshape(warps, 64) * 7 + 3
        self.UP = (np.arange(warps * 8).reshape(warps, 8) % 3 == 0)


@pytest.mark.parametrize("warps,lanes", [
    ([0], [0, 1, 2]), ([2], list(range(64, 96))), ([1, 2, 3], list(range(32, 128))),
    ([0, 3, 5], [0, 5, 31, 96, 97, 170]), ([4, 9], [130, 131, 300, 301, 302])])
@pytest.mark.parametrize("kind", ["UR", "UP"])
def test_one_value_for_every_lane_is_the_per_lane_rule(warps, lanes, kind):
    fast, slow = _Machine(10), _Machine(10)
    idx = np.array(lanes, dtype=np.int64)
    gf = Group(fast, idx, np.array(warps), 0)
    gs = Group(slow, idx, np.array(warps), 0)
    value = np.array([0xDEADBEEF], np.uint32) if kind == "UR" else np.array([True])
    dst = reg(kind, 5)
    gf.w(dst, value, gf.active)                 # the shortcut (mask is the group's own)
    gs.w(dst, value, gs.active.copy())          # the per-lane rule (an equal mask, not it)
    assert np.array_equal(getattr(fast, kind), getattr(slow, kind))
    touched = getattr(fast, kind)[warps, 5]
    assert (touched == value[0]).all()
    others = [w for w in range(10) if w not in warps]
    assert np.array_equal(getattr(fast, kind)[others], getattr(_Machine(10), kind)[others])


def test_plain_lanes_without_warps_take_the_per_lane_rule():
    m = _Machine(4)
    lanes = Lanes(m, np.array([3, 40, 41], dtype=np.int64))
    lanes.w(reg("UR", 2), np.array([9], np.uint32), lanes.active)
    assert m.UR[0, 2] == 9 and m.UR[1, 2] == 9 and m.UR[2, 2] == 2 * 64 * 7 + 2 * 7 + 3
