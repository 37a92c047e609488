"""cp.async.bulk's `.multicast::cluster` (UBLKCP.S.G.MULTICAST, sm_90a/sm_100a) and `.cp_mask`
(UBLKCP.G.S.DST_G_BYTE_MASK, sm_100+) in the emulator (emu/ops_bulk.py), ptxas's cubin and
ours (isel/bulk_copy.py; both refused by name before branch tensor33). The expected data
come from the PTX ISA's description, not from either cubin:

* multicast: the bytes land at dstMem's CTA-relative offset in the shared memory of every
  CTA of the cluster whose bit (its rank) ctaMask sets, and each of those CTAs' mbarrier at
  mbar's offset sees the transaction's bytes; the other CTAs' shared memory is untouched;
* cp_mask: byte i of each 16-byte chunk of the source is copied where bit i of the 16-bit
  byteMask is set; the destination's other bytes keep their value."""
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run

CLUSTER = 4
NBYTES = 256
SENTINEL = 0x5EA5E000        # + the CTA's rank and the word's index

MULTICAST = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 mask)
.reqnctapercluster 4, 1, 1
{{
.reg .b64 %rdo, %rdi, %st, %ra;
.reg .b32 %tx, %rank, %m, %bit, %w, %i, %sa, %bar, %v, %size;
.reg .b16 %hm;
.reg .pred %p, %in, %leader;
.shared .align 128 .b8 sbuf[{nbytes}];
.shared .align 8 .b64 mbar;
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
ld.param.u32 %m, [mask];
cvt.u16.u32 %hm, %m;
mov.u32 %tx, %tid.x;
mov.u32 %rank, %cluster_ctarank;
mov.u32 %sa, sbuf;
mov.u32 %bar, mbar;
mov.u32 %size, {size};
shr.u32 %bit, %m, %rank;
and.b32 %bit, %bit, 1;
setp.ne.u32 %in, %bit, 0;
setp.eq.u32 %leader, %tx, 0;
// every word of this CTA's buffer: SENTINEL + rank << 8 + index
shl.b32 %i, %tx, 1;
add.s32 %v, %i, {sentinel};
shl.b32 %w, %rank, 8;
add.s32 %v, %v, %w;
shl.b32 %w, %i, 2;
add.s32 %w, %sa, %w;
st.shared.u32 [%w], %v;
add.s32 %v, %v, 1;
st.shared.u32 [%w+4], %v;
@%leader mbarrier.init.shared.b64 [%bar], 1;
@%leader fence.mbarrier_init.release.cluster;
fence.proxy.async.shared::cta;
barrier.cluster.arrive;
barrier.cluster.wait;
@!%leader bra L_issue;
@%in mbarrier.arrive.expect_tx.shared.b64 %st, [%bar], {nbytes};
setp.eq.u32 %p, %rank, 0;
@!%p bra L_issue;
{copy}
L_issue:
@!%in bra L_out;
L_spin:
mbarrier.try_wait.parity.shared.b64 %p, [%bar], 0;
@!%p bra L_spin;
L_out:
bar.sync 0;
ld.shared.u32 %v, [%w];
mul.wide.u32 %ra, %rank, {nbytes};
add.s64 %ra, %rdo, %ra;
shl.b32 %i, %tx, 3;
cvt.u64.u32 %st, %i;
add.s64 %ra, %ra, %st;
st.global.u32 [%ra], %v;
ld.shared.u32 %v, [%w+4];
st.global.u32 [%ra+4], %v;
barrier.cluster.arrive;
barrier.cluster.wait;
ret;
}}
"""
COPIES = {
    "constant": "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                "[sbuf], [%rdi], {nbytes}, [mbar], %hm;",
    "registers": "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%sa], [%rdi], %size, [%bar], %hm;",
    "hint": "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            ".L2::cache_hint [%sa], [%rdi], %size, [%bar], %hm, %st;",
}
UNIT = re.compile(r"\bUBLKCP\S*")


def _multicast_ptx(arch: str, copy: str) -> str:
    line = COPIES[copy].format(nbytes=NBYTES)
    if copy == "hint":
        line = "createpolicy.fractional.L2::evict_last.b64 %st, 1.0;\n" + line
    return MULTICAST.format(arch=arch, nbytes=NBYTES, size=NBYTES, sentinel=SENTINEL, copy=line)


def _multicast_expected(mask: int, src: np.ndarray) -> np.ndarray:
    """From the PTX ISA's words: the ranks in ctaMask receive the source, the others keep
    their own (sentinel) words."""
    words = NBYTES // 4
    out = np.zeros((CLUSTER, words), np.uint32)
    for rank in range(CLUSTER):
        if mask >> rank & 1:
            out[rank] = src
        else:
            out[rank] = SENTINEL + (rank << 8) + np.arange(words)
    return out.reshape(-1)


def _cubins(ptx: str, arch: str) -> dict[str, bytes]:
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    # the unit's instruction as ptxas writes it (mnemonic and modifiers)
    assert UNIT.findall(oracle.nvdisasm(ours)) == UNIT.findall(oracle.nvdisasm(theirs.output))
    return {"ptxas": theirs.output, "ours": ours}


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("copy", sorted(COPIES))
@pytest.mark.parametrize("mask", [0b1011, 0b0100])
def test_multicast_reaches_the_masked_ctas(arch, copy, mask):
    ptx = _multicast_ptx(arch, copy)
    src = np.random.default_rng(mask).integers(0, 2**32, NBYTES // 4, dtype=np.uint64).astype(np.uint32)
    want = _multicast_expected(mask, src)
    for name, cubin in _cubins(ptx, arch).items():
        out = np.zeros(CLUSTER * NBYTES // 4, np.uint32)
        run(cubin, "k", (CLUSTER, 1, 1), (32, 1, 1), [out, src.copy(), np.uint32(mask)],
            hazard_check=name == "ours", cluster=(CLUSTER, 1, 1))
        np.testing.assert_array_equal(out, want, err_msg=name)


def test_multicast_mask_outside_the_cluster_faults():
    """A ctaMask bit past the cluster's CTAs names no CTA: the emulator stops by name."""
    cubin = codegen.compile_ptx(_multicast_ptx("sm_90a", "registers"), "sm_90a")
    out = np.zeros(CLUSTER * NBYTES // 4, np.uint32)
    with pytest.raises(EmuFault, match="outside the cluster"):
        run(cubin, "k", (CLUSTER, 1, 1), (32, 1, 1), [out, np.zeros(NBYTES // 4, np.uint32),
                                                      np.uint32(0x11)], cluster=(CLUSTER, 1, 1))


BYTE_MASK = """.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 mask, .param .u32 size)
{{
.reg .b64 %rdo, %rdi, %ra, %pol;
.reg .b32 %tx, %m, %w, %i, %sa, %v, %size;
.reg .b16 %hm;
.reg .pred %p;
.shared .align 128 .b8 sbuf[{nbytes}];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
ld.param.u32 %m, [mask];
ld.param.u32 %size, [size];
cvt.u16.u32 %hm, %m;
mov.u32 %tx, %tid.x;
mov.u32 %sa, sbuf;
shl.b32 %i, %tx, 3;
cvt.u64.u32 %ra, %i;
add.s64 %ra, %rdi, %ra;
add.s32 %w, %sa, %i;
ld.global.u32 %v, [%ra];
st.shared.u32 [%w], %v;
ld.global.u32 %v, [%ra+4];
st.shared.u32 [%w+4], %v;
fence.proxy.async.shared::cta;
bar.sync 0;
setp.ne.u32 %p, %tx, 0;
@%p bra L_end;
createpolicy.fractional.L2::evict_first.b64 %pol, 1.0;
{copy}
cp.async.bulk.commit_group;
cp.async.bulk.wait_group 0;
L_end:
ret;
}}
"""
MASKED_COPIES = {
    "constant": "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rdo], [sbuf], {nbytes}, 0xa5c3;",
    "registers": "cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rdo], [%sa], %size, %hm;",
    "hint": "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.cp_mask [%rdo], [%sa], %size, %pol, %hm;",
    # PTX 9.1: ptxas writes the same UBLKCP (frontend/multimem.py)
    "multimem": "multimem.cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rdo], [%sa], %size, %hm;",
}


@pytest.mark.parametrize("arch", ["sm_100a", "sm_120a", "sm_100"])
@pytest.mark.parametrize("copy", sorted(MASKED_COPIES))
@pytest.mark.parametrize("mask", [0xa5c3, 0x0001, 0x8000])
def test_cp_mask_copies_the_masked_bytes(arch, copy, mask):
    if copy == "constant" and mask != 0xa5c3:
        pytest.skip("the constant form's mask is its own")
    ptx = BYTE_MASK.format(arch=arch, nbytes=NBYTES, copy=MASKED_COPIES[copy].format(nbytes=NBYTES))
    if copy == "multimem":
        ptx = ptx.replace(".version 8.7", ".version 9.1")
    rng = np.random.default_rng(mask)
    src = rng.integers(0, 256, NBYTES, dtype=np.uint16).astype(np.uint8)
    old = rng.integers(0, 256, NBYTES, dtype=np.uint16).astype(np.uint8)
    keep = np.array([mask >> (k % 16) & 1 for k in range(NBYTES)], bool)
    want = np.where(keep, src, old)
    for name, cubin in _cubins(ptx, arch).items():
        out = old.copy()
        run(cubin, "k", 1, 32, [out, src.copy(), np.uint32(mask), np.uint32(NBYTES)],
            hazard_check=name == "ours")
        np.testing.assert_array_equal(out, want, err_msg=name)
