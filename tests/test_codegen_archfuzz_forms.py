"""Forms our code generator writes on sm_100 / sm_120 that the blackwell table lacked until
the per-arch fuzz campaigns (branch archfuzz): fma.relu of halves (HFMA2.RELU, .BF16_V2.RELU), mbarrier.inval of a per-lane
address (SYNCS.CCTL.IV [R+URZ]), float global atomics, isspacep (QSPC) (sm_100/sm_120).
Each seed file (tools/isa_seeds/) compiled by us: it encodes ("cannot encode" before), and
its outputs in the emulator equal ptxas's cubin's, hazard-free."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run

SEEDS = Path(__file__).resolve().parent.parent / "tools" / "isa_seeds"


def _both(ptx, arch, kernel, words_per_thread, threads=32):
    rng = np.random.default_rng(7)
    init = rng.integers(0, 1 << 32, size=(threads, words_per_thread), dtype=np.uint64).astype(np.uint32)
    # halves and floats of moderate size (no NaN payload questions): exponents kept small
    init &= np.uint32(0x3F7F3F7F)
    outs = []
    for cubin in (oracle.ptxas(ptx, arch).output, compile_ptx(ptx, arch)):
        buf = init.copy()
        res = run(cubin, kernel, (1, 1, 1), (threads, 1, 1), [buf])
        assert not res.hazards, res.hazards[:3]
        outs.append(buf)
    return outs


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_blackwell_forms(arch):
    ptx = (SEEDS / "archfuzz_blackwell.ptx").read_text()
    theirs, ours = _both(ptx, arch, "archfuzz_blackwell", 32)
    assert (ours == theirs).all(), np.argwhere(ours != theirs)[:5]



def test_turing_cache_hint_loads():
    """sm_75's LDG with each cache operator (LDG.E.EF.SYS, LDG.E.LU.64.SYS ...: "cannot encode"
    in the sm_75 campaigns while an older LDG form, blind to bits 84-86, won the decode; the
    turing table's LDG forms were probed again with this seed file): ours runs as ptxas's."""
    ptx = (SEEDS / "cache_hint_loads_sm75.ptx").read_text()
    theirs, ours = _both(ptx, "sm_75", "hints", 64)
    assert (ours == theirs).all(), np.argwhere(ours != theirs)[:5]
