"""The SM model keeps its resident CTAs and warps in lists and removes a finished one with
`list.remove`, which compares by `==`: with field-wise equality two CTAs whose warps' traces
hold NumPy arrays raised 'truth value of an array is ambiguous' (tinygrad's
arange_float32_step under `bench/quality.py`). CTAs and warps compare as themselves."""
import numpy as np

from ptx2sass.emu.timing.model import _Cta, _Warp


def test_finished_cta_and_warp_are_removed_by_identity():
    ctas = [_Cta(warps=[]), _Cta(warps=[])]
    for cta in ctas:
        cta.warps.append(_Warp(ops=[np.arange(4)], cta=cta, sp=0, age=0))
    resident = list(ctas)
    resident.remove(ctas[1])
    assert resident == [ctas[0]] and resident[0] is ctas[0]
    warps = [c.warps[0] for c in ctas]
    warps.remove(ctas[0].warps[0])
    assert warps[0] is ctas[1].warps[0]
