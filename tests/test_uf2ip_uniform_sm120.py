"""`cvt.{rni,rzi}.u8.f32` of a value computed from a parameter on sm_120: ptxas 13.5 converts it
in the uniform datapath, `UF2IP.U8.F32[.TRUNC].NTZ UR, URZ, UR, URZ`, a form the blackwell table
could not decode and the emulator did not run (branch fuzz30's held-out sm_120 run, seeds
41000448 and 41000485: emu_fail; `tools/isa_seeds/campaign30_sm120.words`). ptxas's cubin and
ours in the emulator = NumPy's rounding clamped to the 8-bit range (the kernel and the model are
test_f2ip_uniform_sm86.py's)."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from test_f2ip_uniform_sm86 import KERNEL, VALUES, model


@pytest.mark.parametrize("rnd", ["rni", "rzi"])
def test_cvt_u8_of_uniform_value_sm120(rnd):
    ptx = KERNEL.format(rnd=rnd, d="u8", arch="sm_86")
    theirs = oracle.ptxas(ptx, "sm_120")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, "sm_120", "k.ptx")
    listing = oracle.nvdisasm(theirs.output)
    assert re.search(r"UF2IP\.U8\.F32\S* UR\d+, URZ, UR\d+, URZ", listing), listing
    x = VALUES
    for p in VALUES[::3]:
        want = np.stack([model(x, rnd, "u8"), np.full(len(x), model(-np.array([p]), rnd, "u8")[0], np.uint16)],
                        axis=1).reshape(-1)
        for name, cubin in (("ours", ours), ("ptxas", theirs.output)):
            out = np.zeros(2 * len(x), np.uint16)
            res = run(cubin, "k", 1, len(x), [out, x.copy(), np.float32(p)], hazard_check=True)
            assert not res.hazards, (name, res.hazards[:1])
            np.testing.assert_array_equal(out, want, err_msg=f"{name} p={p}")
