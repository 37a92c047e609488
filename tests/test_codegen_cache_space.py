"""cvta of every window, isspacep, prefetch/prefetchu/applypriority/discard, bar with a
run-time id and count: ours vs ptxas (values in the emulator where the form computes one;
otherwise compiled and read back by nvdisasm as we meant), and addresses of real variables."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.frontend import inventory
from tools.inventory_coverage import check_form
from tools.inventory_kernels import version_for


def _forms(*opcodes):
    return [f for f in inventory.forms() if f.opcode in opcodes
            and f.valid_on(89, version_for(f, 89)) and not f.arch_specific]


@pytest.mark.parametrize("form", _forms("cvta", "prefetch", "prefetchu", "applypriority",
                                        "discard"), ids=lambda f: f.name)
def test_form_against_ptxas(form):
    status, detail = check_form(form)
    assert status in ("match", "compiled"), detail


@pytest.mark.parametrize("space", ["shared", "global", "local", "const"])
def test_isspacep_of_real_addresses(space):
    """Generic addresses of a shared, a global (the output buffer) and a local variable,
    each asked about `space`: ours and ptxas's agree, and with the PTX meaning."""
    ptx = f""".version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<8>;
.reg .b32 %r<8>;
.reg .pred %p<4>;
.shared .align 4 .b32 sv[4];
.local .align 4 .b32 lv[4];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd7, %rd1;
mov.u64 %rd2, sv;
cvta.shared.u64 %rd2, %rd2;
mov.u64 %rd3, lv;
cvta.local.u64 %rd3, %rd3;
isspacep.{space} %p1, %rd2;
isspacep.{space} %p2, %rd7;
isspacep.{space} %p3, %rd3;
selp.u32 %r1, 1, 0, %p1;
selp.u32 %r2, 2, 0, %p2;
selp.u32 %r3, 4, 0, %p3;
add.u32 %r1, %r1, %r2;
add.u32 %r1, %r1, %r3;
st.global.u32 [%rd7], %r1;
ret;
}}
"""
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    got = []
    for cubin, check in ((ours, True), (theirs, False)):
        out = np.zeros(1, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (1, 1, 1), [out], hazard_check=check)
        assert not (check and res.hazards)
        got.append(int(out[0]))
    want = {"shared": 1, "global": 2, "local": 4, "const": 0}[space]
    assert got == [want, want]


def test_bar_with_id_and_count_in_registers():
    """The count goes to bits 16..27 of the id's register (BAR.SYNC R, R): 64 threads,
    barrier 3, both computed at run time; the reduction counts every thread."""
    ptx = """.version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 id, .param .u32 n)
{
.reg .b64 %rd<4>;
.reg .b32 %r<8>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [id];
ld.param.u32 %r2, [n];
mov.u32 %r3, %tid.x;
setp.lt.u32 %p1, %r3, 40;
bar.sync %r1, %r2;
bar.red.popc.u32 %r4, %r1, %r2, %p1;
mul.wide.u32 %rd2, %r3, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r4;
ret;
}
"""
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    for cubin, check in ((ours, True), (theirs, False)):
        out = np.zeros(64, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, np.uint32(3), np.uint32(64)],
                  hazard_check=check)
        assert not (check and res.hazards)
        assert (out == 40).all()


@pytest.mark.parametrize("split", [0, 7, 32])
def test_vote_uni(split):
    """vote.sync.uni.pred (VOTE.EQ): true when every lane votes the same."""
    ptx = f""".version 7.8
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{{
.reg .b64 %rd<4>;
.reg .b32 %r<4>;
.reg .pred %p<3>;
ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x;
setp.lt.u32 %p1, %r1, {split};
vote.sync.uni.pred %p2, %p1, 0xffffffff;
selp.u32 %r2, 1, 0, %p2;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r2;
ret;
}}
"""
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    for cubin, check in ((ours, True), (theirs, False)):
        out = np.zeros(32, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out], hazard_check=check)
        assert not (check and res.hazards)
        assert (out == int(split in (0, 32))).all()


@pytest.mark.parametrize("spelling", ["prefetch.tensormap", "prefetch.const.tensormap"])
def test_tensormap_prefetch_compiles_on_sm120(spelling):
    """sm_120's tensormap prefetch (it raised StopIteration looking for a cache level, then
    was refused for want of a blackwell UTMACCTL.PF form): one UTMACCTL.PF, as ptxas's
    (addresses: tests/test_codegen_prefetch_tensormap.py)."""
    ptx = f""".version 8.8
.target sm_120
.address_size 64
.visible .entry k(.param .u64 a)
{{
.reg .b64 %rd<2>;
ld.param.u64 %rd1, [a];
{spelling} [%rd1];
ret;
}}
"""
    theirs = oracle.ptxas(ptx, "sm_120")
    assert theirs.ok
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_120", "k.ptx"), "sm_120", filename="k.ptx")
    count = [re.findall(r"UTMACCTL\.PF \[UR\d+\]", oracle.nvdisasm(c, ("-c",))) for c in (ours, theirs.output)]
    assert len(count[0]) == len(count[1]) == 1


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90", "sm_100", "sm_120"])
def test_local_prefetch_compiles_on_every_arch(arch):
    """prefetch.local.L1/L2 is CCTLL.PF1/PF2 from sm_75 on (ptxas's listing); the turing and
    blackwell tables had no CCTLL form, so sm_75 (fuzz campaign 15, seed 27000076) and
    sm_100/120 (inventory sample, branch isa12) were internal errors."""
    ptx = f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
.local .align 8 .b8 buf[64];
.reg .b64 %d<2>;
.reg .b32 %r<1>;
mov.u64 %d0, buf;
prefetch.local.L1 [%d0+48];
prefetch.local.L2 [%d0+16];
ld.local.u32 %r0, [%d0+48];
ld.param.u64 %d1, [p];
st.global.u32 [%d1], %r0;
ret;
}}
"""
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    seen = [sorted(re.findall(r"CCTLL\.PF[12]", oracle.nvdisasm(c, ("-c",)))) for c in (ours, theirs.output)]
    assert seen[0] == seen[1] == ["CCTLL.PF1", "CCTLL.PF2"]
