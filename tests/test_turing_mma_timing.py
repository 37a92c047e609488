"""sm_75's tensor-core timing as ptxas 13.5 schedules it (sched/latency/turing.json): HMMA.1688,
IMMA.8816/8832 and BMMA.88128 are variable-latency (ptxas gives each a write scoreboard and
waits on it), HMMA.1688's sources may be overwritten 5 cycles after issue, an IMMA's 2. The
table had sm_8x's fixed 24-cycle units with 7-cycle source reads, under which the hazard
checker flagged ptxas's own sm_75 wmma code (and 2285 sites of 36 fuzz programs,
`python -m tools.mma_read_sites --seeds 7500000:7500060 --arch sm_75`)."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run
from tests.test_codegen_wmma import IN_BYTES, OUT_BYTES, _kernel


@pytest.mark.parametrize("shape,itype,acc", [("m16n16k16", "f16", "f32"), ("m32n8k16", "f16", "f16"),
                                             ("m16n16k16", "s8", "s32"), ("m8n32k16", "u8", "s32")])
def test_ptxas_sm75_wmma_code_is_hazard_free(shape, itype, acc):
    ptx = _kernel("row", "col", "row", "row", acc, "global", True, 40, shape, itype).replace(
        ".target sm_89", ".target sm_75")
    cubin = oracle.ptxas(ptx, arch="sm_75").output
    data = np.random.default_rng(5).integers(0, 2 ** 16, IN_BYTES // 4, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(OUT_BYTES // 4, dtype=np.uint32)
    res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data, np.uint32(40)])
    assert not res.hazards, res.hazards[:3]
