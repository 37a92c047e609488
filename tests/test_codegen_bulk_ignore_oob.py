"""cp.async.bulk's `.ignore_oob` (PTX ISA 9.2; "not supported yet" before branch isa34):

    cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes{.L2::cache_hint}.ignore_oob
        [dstMem], [srcMem], size, ignoreBytesLeft, ignoreBytesRight, [mbar] {, policy}

ptxas 13.5.37 takes it on every sm_90+ target and writes the plain copy (`UBLKCP.S.G`, the
two counts read nowhere), so ours does; the emulator's UBLKCP.S.G reads a global source
whose last chunk runs up to 15 bytes past its allocation (emu/ops_bulk.py). Expected data
come from the PTX ISA's words: the copy's bytes inside the allocation land at dstMem and the
mbarrier completes; "the value of the corresponding bytes in destination shared memory" of
the ignored ones "is indeterminate" (only ours = ptxas's is checked there). The refusals are
ptxas's own messages, asked of ptxas at test time (frontend/bulk_copy_checks.py)."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from codegen_harness import assert_refused_in_ptxas_words

SHARED = 256                     # the shared buffer: 32 threads x 8 bytes
SENTINEL = 0xA5                  # every shared byte before the copy

KERNEL = """.version 9.2
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 size, .param .u32 right)
{{
.reg .b64 %rdo, %rdi, %st, %ra, %pol;
.reg .b32 %tx, %w, %i, %sa, %bar, %v, %size, %right, %zero;
.reg .pred %p, %leader;
.shared .align 128 .b8 sbuf[{shared}];
.shared .align 8 .b64 mbar;
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
ld.param.u32 %size, [size];
ld.param.u32 %right, [right];
mov.u32 %zero, 0;
mov.u32 %tx, %tid.x;
mov.u32 %sa, sbuf;
mov.u32 %bar, mbar;
shl.b32 %i, %tx, 3;
add.s32 %w, %sa, %i;
mov.u32 %v, {fill};
st.shared.u32 [%w], %v;
st.shared.u32 [%w+4], %v;
setp.eq.u32 %leader, %tx, 0;
@%leader mbarrier.init.shared.b64 [%bar], 1;
fence.proxy.async.shared::cta;
bar.sync 0;
@!%leader bra L_wait;
mbarrier.arrive.expect_tx.shared.b64 %st, [%bar], {size};
{copy}
L_wait:
mbarrier.try_wait.parity.shared.b64 %p, [%bar], 0;
@!%p bra L_wait;
ld.shared.u32 %v, [%w];
cvt.u64.u32 %ra, %i;
add.s64 %ra, %rdo, %ra;
st.global.u32 [%ra], %v;
ld.shared.u32 %v, [%w+4];
st.global.u32 [%ra+4], %v;
ret;
}}
"""
FORM = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"
COPIES = {
    "registers": FORM + ".ignore_oob [%sa], [%rdi], %size, %zero, %right, [%bar];",
    "constant": FORM + ".ignore_oob [sbuf], [%rdi], {size}, 0, {right}, [mbar];",
    "hint": "createpolicy.fractional.L2::evict_last.b64 %pol, 1.0;\n"
            + FORM + ".L2::cache_hint.ignore_oob [%sa], [%rdi], %size, 0, %right, [%bar], %pol;",
    # PTX 9.3's `.weak` (the default semantics) with the qualifier
    "weak": FORM.replace("bulk.", "bulk.weak.", 1) + ".ignore_oob [%sa], [%rdi], %size, %zero, %right, [%bar];",
}
UNIT = re.compile(r"\bUBLKCP\S*")
ARCHS = ["sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103", "sm_110", "sm_120", "sm_120a", "sm_121"]


def _ptx(arch: str, copy: str, size: int, right: int) -> str:
    text = KERNEL.format(arch=arch, shared=SHARED, size=size, fill=SENTINEL * 0x01010101,
                         copy=COPIES[copy].format(size=size, right=right))
    return text.replace(".version 9.2", ".version 9.3") if copy == "weak" else text


def _cubins(ptx: str, arch: str) -> dict[str, bytes]:
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    # the copy as ptxas writes it: UBLKCP.S.G, nothing of the qualifier in it
    got, want = UNIT.findall(oracle.nvdisasm(ours)), UNIT.findall(oracle.nvdisasm(theirs.output))
    assert got == want == ["UBLKCP.S.G"], (got, want)
    return {"ptxas": theirs.output, "ours": ours}


def _run(cubin: bytes, src: np.ndarray, size: int, right: int, hazards: bool) -> np.ndarray:
    out = np.zeros(SHARED, np.uint8)
    run(cubin, "k", 1, 32, [out, src.copy(), np.uint32(size), np.uint32(right)], hazard_check=hazards)
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_the_copy_is_ptxas_s_and_lands_inside_the_allocation(arch):
    """A 100-byte allocation copied as 112 bytes with ignoreBytesRight = 12: the 100 bytes
    land (the PTX ISA), the 12 are ptxas's cubin's, the bytes past the copy keep theirs."""
    valid, size, right = 100, 112, 12
    src = np.random.default_rng(valid).integers(1, 255, valid, dtype=np.uint16).astype(np.uint8)
    outs = {}
    for name, cubin in _cubins(_ptx(arch, "registers", size, right), arch).items():
        outs[name] = out = _run(cubin, src, size, right, name == "ours")
        np.testing.assert_array_equal(out[:valid], src, err_msg=name)
        assert (out[size:] == SENTINEL).all(), name
    np.testing.assert_array_equal(outs["ours"], outs["ptxas"])


@pytest.mark.parametrize("copy", sorted(COPIES))
@pytest.mark.parametrize("valid,size,right", [(256, 256, 0), (241, 256, 15), (33, 48, 15)])
def test_spellings_and_edges(copy, valid, size, right):
    arch = "sm_100a"
    src = np.random.default_rng(size + right).integers(1, 255, valid, dtype=np.uint16).astype(np.uint8)
    outs = {}
    for name, cubin in _cubins(_ptx(arch, copy, size, right), arch).items():
        outs[name] = out = _run(cubin, src, size, right, name == "ours")
        np.testing.assert_array_equal(out[:valid], src, err_msg=name)
        assert (out[size:] == SENTINEL).all(), name
    np.testing.assert_array_equal(outs["ours"], outs["ptxas"])


def test_more_than_15_bytes_past_the_allocation_faults():
    """Past what `.ignore_oob` allows (0..15 bytes), the copy reads outside any allocation:
    the emulator stops by name (ptxas's cubin: 96 valid bytes, 128 copied)."""
    ptx = _ptx("sm_90", "registers", 128, 15)
    theirs = oracle.ptxas(ptx, "sm_90")
    with pytest.raises(EmuFault, match="out-of-bounds"):
        _run(theirs.output, np.zeros(96, np.uint8), 128, 15, False)


REFUSAL_KERNEL = """.version {v}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 src)
{{
.reg .b32 %r<4>; .reg .b64 %rd<3>; .reg .b16 %h1; .reg .f32 %f1;
.shared .align 16 .b8 buf[256];
.shared .align 8 .b64 bar;
ld.param.u64 %rd1, [src];
mov.u32 %r1, 3; mov.u32 %r3, buf;
{line}
ret;
}}
"""
REFUSALS = [
    ("9.1", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, %r1, %r1, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, 16, 99, [bar];"),
    ("9.1", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, -1, 0x10, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, [bar];"),
    ("9.1", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, %rd1, %r1, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, %h1, %r1, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, %f1, 0, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, %r1, buf, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, 1, 2, 3, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob.ignore_oob [buf], [%rd1], 64, 1, 2, [bar];"),
    ("9.2", "sm_90", FORM + ".L2::cache_hint.ignore_oob [buf], [%rd1], 64, 1, 2, [bar];"),
    ("9.2", "sm_90", FORM + ".ignore_oob [buf], [%rd1], 64, 1, 2, [bar], %rd2;"),
    ("9.2", "sm_90", FORM + " [buf], [%rd1], 64, 1, 2, [bar];"),
    ("9.2", "sm_90", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.ignore_oob "
                     "[buf], [%rd1], 64, 1, 2, [bar];"),
    ("9.1", "sm_90", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.ignore_oob "
                     "[buf], [%rd1], 64, [bar];"),
    ("9.2", "sm_90", "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.ignore_oob "
                     "[buf], [%r3], 64, [bar];"),
    ("9.2", "sm_90a", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                      ".ignore_oob [buf], [%rd1], 64, 1, 2, [bar], %h1;"),
    ("9.2", "sm_89", FORM + ".ignore_oob [buf], [%rd1], 64, 1, 2, [bar];"),
    ("9.1", "sm_89", FORM + ".ignore_oob [buf], [%rd1], 64, 1, 2, [bar];"),
    # the family's operand counts (ours: "not supported yet" before)
    ("8.6", "sm_100", "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd1], [buf], 64;"),
    ("8.6", "sm_100", "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [buf], 64, %h1;"),
    ("8.6", "sm_90", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd1], 64, "
                     "[bar], %h1;"),
]


@pytest.mark.parametrize("v,arch,line", REFUSALS)
def test_refusals_in_ptxas_words(v, arch, line):
    ptx = REFUSAL_KERNEL.format(v=v, arch=arch, line=line)
    assert_refused_in_ptxas_words(ptx, arch)


# the whole family's target and version messages (frontend/bulk_copy_checks.feature_problems;
# all 57 cases differed on main: ptxas's order is the target then the version,
# it names `.bulk_group`, `.tile`/`.im2col`, `.commit_group`/`.wait_group`/`.prefetch` and no
# `::cluster`, and `cp.reduce.async.bulk` at PTX 7.8 on sm_90 was compiled)
FAMILY = [
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 64, [%r2];",
    FORM + " [%r3], [%rd1], 64, [%r2];",
    "cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r3], 64;",
    "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r3], [%r2], 64, [%r2];",
    "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%r3], [%r2], 64, [%r2];",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r3], 64;",
    "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r1}], [%r2];",
    "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd1, {%r1}], [%r3];",
    "cp.async.bulk.prefetch.L2.global [%rd1], 64;",
    "cp.async.bulk.commit_group;",
    "cp.async.bulk.wait_group 0;",
    "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.bulk_group [%rd1, {%r1}], [%r3];",
    "cp.async.bulk.prefetch.tensor.1d.L2.global [%rd1, {%r1}];",
    "cp.async.bulk.tensor.1d.shared::cta.global.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r1}], [%r2];",
    "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r1, %r1, %r1}], [%r2], {%h1};",
    "cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [%rd1, {%r1, %r1, %r1}], {%h1};",
    "cp.async.bulk.wait_group.read 0;",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.u32 [%rd1], [%r3], 64, %rd2;",
    # (multicast's pair comes right after the name's, found held out)
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
    "[%r3], [%rd1, {%r1, %r1}], [%r2], %h1;",
]


@pytest.mark.parametrize("v,arch", [("8.6", "sm_89"), ("7.8", "sm_89"), ("7.8", "sm_90")])
@pytest.mark.parametrize("line", FAMILY)
def test_family_feature_messages_in_ptxas_words(v, arch, line):
    ptx = REFUSAL_KERNEL.format(v=v, arch=arch, line=line.replace("%r2", "%r1"))
    assert_refused_in_ptxas_words(ptx, arch)
