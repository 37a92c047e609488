"""The hazard checker's in-flight wgmma accumulators are a field of a warp's timing state
(`WarpTiming.gmma_groups`), started empty and copied with the rest when warps part
(`clone`), so that one group of warps retiring its wgmma groups leaves the other's alone.
tests/test_emu_gmma.py checks what the checker finds with them."""
from ptx2sass.emu.hazards import GmmaGroup, WarpTiming


def test_a_new_warp_has_none_in_flight():
    assert WarpTiming().gmma_groups == []


def test_clone_copies_the_groups():
    clock = WarpTiming()
    clock.gmma_groups.append(GmmaGroup(0x40, {("R", 24), ("R", 25)}))
    copy = clock.clone()
    assert copy.gmma_groups == clock.gmma_groups
    copy.gmma_groups[0].registers.add(("R", 26))
    copy.gmma_groups[0].closed = True
    copy.gmma_groups.append(GmmaGroup(0x80))
    assert clock.gmma_groups == [GmmaGroup(0x40, {("R", 24), ("R", 25)})]
