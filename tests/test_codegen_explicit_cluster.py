"""`%is_explicit_cluster` (PTX 7.8, sm_90+; `mov.pred`): the driver's word that is 1 in a
launch with an explicit cluster shape, compared with 1, as ptxas 13.5 reads it (sm_90:
c[0x0][0x140], sm_100/sm_120: c[0x0][0x36c]); was refused ('Arguments mismatch for
instruction mov'). Below sm_90 ptxas refuses it, and the other cluster registers, in its
words (we compiled those). Expected: ptxas's cubin in the emulator (a launch without
clusters: false, as the PTX ISA says) and the word ptxas reads."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError


def _ptx(arch, sreg="%is_explicit_cluster", pred=True):
    read = (f"mov.pred %p1, {sreg}; selp.u32 %r1, 7, 3, %p1;" if pred
            else f"mov.u32 %r1, {sreg};")
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<3>;
ld.param.u64 %rd1, [out];
{read}
st.global.u32 [%rd1], %r1;
ret;
}}"""


def _words_read(cubin):
    return sorted(set(re.findall(r"c\[0x0\]\[(0x[0-9a-f]+)\]", oracle.cuobjdump_sass(cubin))))


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_is_explicit_cluster_as_ptxas(arch):
    theirs = oracle.ptxas(_ptx(arch), arch).output
    ours = codegen.compile_ptx(_ptx(arch), arch)
    word = {"sm_90": "0x140", "sm_100": "0x36c", "sm_120": "0x36c"}[arch]
    assert word in _words_read(theirs) and word in _words_read(ours)
    got = {}
    for who, cubin in (("ptxas", theirs), ("ours", ours)):
        out = np.zeros(1, np.uint32)
        res = run(cubin, "k", 1, 1, [out], hazard_check=True)
        assert not res.hazards
        got[who] = int(out[0])
    assert got == {"ptxas": 3, "ours": 3}


@pytest.mark.parametrize("sreg,pred", [("%is_explicit_cluster", True), ("%cluster_ctarank", False),
                                       ("%clusterid.x", False), ("%aggr_smem_size", False)])
def test_cluster_registers_refused_below_sm90(sreg, pred):
    ptx = _ptx("sm_89", sreg, pred)
    name = sreg.split(".")[0]
    message = f"Feature '{name}' requires .target sm_90 or higher"
    theirs = oracle.ptxas(ptx, "sm_89")
    assert not theirs.ok and f"line 8; error   : {message}" in theirs.stderr
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, "sm_89")
    assert any(d.line == 8 and d.message == message for d in e.value.diagnostics), str(e.value)
