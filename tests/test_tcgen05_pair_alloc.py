"""`tcgen05.alloc.cta_group::2`: the CTA pair's allocation (isel/tcgen05.py `tmem_alloc_pair`;
emulator: emu/ops_tmem.py's UTCATOMSWS.2CTA and the TMEM_CTA2 at-entry fragment).

The PTX ISA: one warp of each CTA of the pair runs it, and both get the same columns of
their tensor memory. ptxas 13.5's code (the reference here) is a handshake: the even CTA
allocates in both and sends the granule to the odd CTA's `dst` with STAS on its partition
mbarrier; the odd one waits for it and answers with an arrive. Both cubins run in the
emulator on cluster launches (branch cluster30), ptxas's the expectation; ours must give the
same values with no hazard. The manual's rules checked besides: both CTAs of a pair hold the
same column, live allocations do not overlap, and each CTA's tensor memory holds what it
stored there."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

# (target, PTX version): the tensor-memory targets ptxas takes the pair's alloc on
TARGETS = [("sm_100a", "8.7"), ("sm_100f", "8.8"), ("sm_103a", "8.8"), ("sm_110a", "9.0")]

# three allocations of 32 columns, the middle one freed, then one of 64; each CTA stores
# ctaid * 1000 + lane into the last one's column and reads it back; per thread out[] gets
# the four columns and the value read
PAIR = """.version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 cols)
{{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 slot;
  mov.u32 %r1, slot;
  {ncols}
  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], %r15;
  ld.shared.u32 %r2, [slot];
  bar.sync 0;
  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], %r15;
  ld.shared.u32 %r3, [slot];
  bar.sync 0;
  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], %r15;
  ld.shared.u32 %r4, [slot];
  bar.sync 0;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r3, %r15;
  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], 64;
  ld.shared.u32 %r5, [slot];
  tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
  mov.u32 %r6, %tid.x;
  mov.u32 %r7, %ctaid.x;
  mad.lo.u32 %r9, %r7, 1000, %r6;
  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r5], {{%r9}};
  tcgen05.wait::st.sync.aligned;
  tcgen05.ld.sync.aligned.32x32b.x1.b32 {{%r10}}, [%r5];
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mad.lo.u32 %r8, %r7, 32, %r6;
  mul.lo.u32 %r8, %r8, 8;
  mul.wide.u32 %rd2, %r8, 4;
  add.u64 %rd2, %rd1, %rd2;
  st.global.v4.u32 [%rd2], {{%r2, %r3, %r4, %r5}};
  st.global.u32 [%rd2+16], %r10;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, %r15;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r4, %r15;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r5, 64;
  ret;
}}
"""
IMMEDIATE = "mov.u32 %r15, 32;"
PARAMETER = "ld.param.u32 %r15, [cols];"


def _kernel(target: str, version: str, ncols: str = IMMEDIATE) -> str:
    return PAIR.format(target=target, version=version, ncols=ncols)


def _cubins(ptx: str, target: str) -> dict[str, bytes]:
    theirs = oracle.ptxas(ptx.encode(), target, name="k")
    assert theirs.ok, theirs.stderr
    return {"ptxas": theirs.output, "ours": compile_ptx(ptx, target)}


def _launch(cubin: bytes, ctas: int, cluster: int, check: bool) -> np.ndarray:
    out = np.zeros(ctas * 32 * 8, np.uint32)
    result = run(cubin, "k", (ctas, 1, 1), (32, 1, 1), [out, np.uint32(32)], hazard_check=check,
                 cluster=(cluster, 1, 1))
    assert not (check and result.hazards), [str(h) for h in result.hazards[:3]]
    return out.reshape(ctas, 32, 8)[:, :, :5]


@pytest.mark.parametrize("target,version", TARGETS)
@pytest.mark.parametrize("ctas,cluster", [(2, 2), (4, 2), (4, 4)])
def test_pair_allocations_are_ptxas_s(target, version, ctas, cluster):
    """Ours = ptxas's cubin in the emulator (both CTAs of each pair, every pair of the
    launch), hazard-free; the manual's rules hold for both."""
    got = {name: _launch(cubin, ctas, cluster, name == "ours")
           for name, cubin in _cubins(_kernel(target, version), target).items()}
    np.testing.assert_array_equal(got["ours"], got["ptxas"])
    cols = got["ours"][:, :, :4]
    assert (cols == cols[:, :1, :]).all()                 # the warp's threads agree
    assert (cols[0::2] == cols[1::2]).all()               # the pair holds the same columns
    for first, second, third, wide in cols[:, 0]:
        live = [range(first, first + 32), range(third, third + 32), range(wide, wide + 64)]
        assert len({c for r in live for c in r}) == 128   # live allocations do not overlap
        assert wide % 64 == 0 and second not in (first, third)
    lanes = np.arange(32)
    for cta in range(ctas):                               # each CTA's own tensor memory
        np.testing.assert_array_equal(got["ours"][cta, :, 4], cta * 1000 + lanes)


@pytest.mark.parametrize("target,version", TARGETS[:1] + TARGETS[3:])
def test_pair_allocation_with_a_register_count(target, version):
    """ncols from a parameter (ptxas: ncols >> 5 and its granule mask per lane)."""
    got = {name: _launch(cubin, 2, 2, name == "ours")
           for name, cubin in _cubins(_kernel(target, version, PARAMETER), target).items()}
    np.testing.assert_array_equal(got["ours"], got["ptxas"])


def _pair_protocol(cubin: bytes) -> set[str]:
    """The pair protocol's instructions (opcode with modifiers) in nvdisasm's text."""
    kinds = set()
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z][\w.]*)", line)
        if m and (m.group(2).startswith(("UTCATOMSWS", "STAS", "SYNCS.ARRIVE"))
                  or m.group(2) == "SYNCS.PHASECHK.TRANS64.TRYWAIT"):
            kinds.add(m.group(2))
    return kinds


def _records(cubin: bytes) -> dict:
    k = read_cubin(cubin).kernels[0]
    return {r.name: r.value for r in k.extra_attributes}


@pytest.mark.parametrize("target,version", TARGETS)
def test_pair_protocol_instructions_and_records(target, version):
    """The handshake's instructions are ptxas's (UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN, the
    expect-tx arrive and STAS to the peer, the odd CTA's plain arrive, the try-waits; the
    dealloc's UTCATOMSWS.AND is ::1's), and so are the records (AT_ENTRY_FRAGMENTS 7,
    TCGEN05_2CTA_USED)."""
    cubins = _cubins(_kernel(target, version), target)
    theirs, ours = (_pair_protocol(cubins[n]) for n in ("ptxas", "ours"))
    assert "UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN" in theirs and "STAS" in theirs
    assert ours == theirs
    keys = ("AT_ENTRY_FRAGMENTS", "TCGEN05_1CTA_USED", "TCGEN05_2CTA_USED", "RESERVED_SMEM_USED")
    want = {k: v for k, v in _records(cubins["ptxas"]).items() if k in keys}
    assert want["AT_ENTRY_FRAGMENTS"] == (7).to_bytes(4, "little")
    assert {k: v for k, v in _records(cubins["ours"]).items() if k in keys} == want


def test_a_pair_needs_a_cluster_launch():
    """Without a cluster of CTA pairs the even CTA has no peer: both cubins fault (the
    emulator's choice; the manual leaves it undefined)."""
    for name, cubin in _cubins(_kernel(*TARGETS[0]), "sm_100a").items():
        with pytest.raises(EmuFault, match="no peer"):
            _launch(cubin, 2, 1, False)


def _partition(cubin: bytes) -> tuple[int, int]:
    s = next(s for s in read_cubin(cubin).symbols if s.name == "__nv_reservedSMEM_tcgen05_partition")
    return s.value, s.size


@pytest.mark.parametrize("group", ["1", "2"])
@pytest.mark.parametrize("target,version", [TARGETS[0], TARGETS[3]])
def test_partition_is_where_ptxas_puts_it(target, version, group):
    """sm_110's partition comes after its 0x80 workaround words (ptxas: 0xc0; ours was 0x40,
    inside `__nv_reservedSMEM_gb10b_war_var`); sm_100's at 0x40. The symbol and the
    address the code uses."""
    ptx = _kernel(target, version).replace("cta_group::2", f"cta_group::{group}")
    cubins = _cubins(ptx, target)
    assert _partition(cubins["ours"]) == _partition(cubins["ptxas"])
    at = _partition(cubins["ptxas"])[0]
    for cubin in cubins.values():
        assert re.search(rf"MOV\s+U?R\d+, 0x{at:x}\b", oracle.nvdisasm(cubin, ("-c",)))


DESCRIPTOR_LOAD = re.compile(r"(ULDC|LDCU)\.64 UR(\d+), c\[0x0\]\[0x358\]")


def _descriptor_writers(cubin: bytes) -> list[tuple[str, str | None]]:
    """For each `desc[URn]` access (code order), the last instruction before it that wrote
    URn or URn+1 (a uniform destination, or a descriptor load's pair)."""
    last: dict[int, str] = {}
    seen = []
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+((@!?U?P\w+\s+)?[A-Z][^;]*)", line)
        if not m:
            continue
        text = m.group(1).strip()
        d = re.search(r"desc\[UR(\d+)\]", text)
        if d:
            n = int(d.group(1))
            seen.append((text, last.get(n) if last.get(n) == last.get(n + 1) else None))
        dest = re.match(r"(@!?U?P\w+\s+)?[A-Z][\w.]*\s+(UP\d+, )?UR(\d+)\b", text)
        if dest and not text.split()[0].startswith(("UTCBAR", "UTCATOMSWS.AND")):
            n = int(dest.group(3))
            last[n] = text
            if DESCRIPTOR_LOAD.search(text) or ".64" in text.split()[0]:
                last[n + 1] = text
    return seen


@pytest.mark.parametrize("group", ["1", "2"])
def test_descriptor_reloaded_after_the_allocator(group):
    """The allocator's code writes UR4/UR5 (S2UR of the rank, the partition's address);
    a global store after it reads the memory descriptor from its pair (`desc[URn]`), which
    must then hold the descriptor load's value (ptxas loads it after the allocator; ours
    loaded UR4:UR5 once at the top and the store read the CTA rank and the partition
    address as its descriptor)."""
    ptx = _kernel(*TARGETS[0]).replace("cta_group::2", f"cta_group::{group}")
    for name, cubin in _cubins(ptx, "sm_100a").items():
        pairs = _descriptor_writers(cubin)
        assert pairs and all(w and DESCRIPTOR_LOAD.search(w) for _, w in pairs), (name, pairs)


# tcgen05.commit across a CTA pair: rank 0's thread 0 commits (no tcgen05 work pending, so
# the arrive-on happens at once) onto the mbarrier `bar` that every CTA initialised with a
# count of 1; after a cluster barrier each thread tests its CTA's phase 0
COMMIT_PAIR = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .b32 r<10>;
  .reg .b64 rd<4>;
  .reg .pred p<4>;
  .shared .align 8 .b64 bar;
  mov.u32 r1, %tid.x;
  mov.u32 r4, %cluster_ctarank;
  setp.ne.u32 p1, r1, 0;
  @p1 bra INITED;
  mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  setp.ne.or.u32 p2, r4, 0, p1;
  @p2 bra WAIT;
  mov.u32 r2, bar;
{commit}
WAIT:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  mbarrier.test_wait.parity.shared::cta.b64 p3, [bar], 0;
  selp.u32 r3, 1, 0, p3;
  mov.u32 r6, %ctaid.x;
  mad.lo.u32 r6, r6, 64, r1;
  ld.param.u64 rd1, [out];
  mul.wide.u32 rd2, r6, 4;
  add.u64 rd1, rd1, rd2;
  st.global.u32 [rd1], r3;
  ret;
}}
"""
MULTICAST = "  tcgen05.commit.cta_group::{g}.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [r2], {mask};"
TO_PEER = ("  mapa.shared::cluster.u32 r5, r2, 1;\n"
           "  tcgen05.commit.cta_group::{g}.mbarrier::arrive::one.shared::cluster.b64 [r5];")


@pytest.mark.parametrize("group", ["1", "2"])
@pytest.mark.parametrize("commit,mask,ranks", [(MULTICAST, 3, {0, 1}), (MULTICAST, 2, {1}), (MULTICAST, 1, {0}),
                                               (TO_PEER, 0, {1})],
                         ids=["multicast3", "multicast2", "multicast1", "peer"])
def test_commit_reaches_the_ctas_it_names(group, commit, mask, ranks):
    """On a 2x1x1 cluster the commit's arrive-on reaches the mbarrier in each CTA whose rank
    the multicast mask names (PTX ISA: bit i, the CTA of rank i), or the one its
    shared::cluster address names (`mapa` to rank 1): those CTAs' phase 0 completes, the
    others' does not. ptxas's cubin and ours (0 hazards) alike; `.cta_group::2` too (UTCBAR
    .2CTA). Before: .2CTA faulted, and the multicast reached this CTA's mbarrier only."""
    ptx = COMMIT_PAIR.format(commit=commit.format(g=group, mask=mask))
    want = np.repeat(np.array([int(r in ranks) for r in range(2)], np.uint32), 64)
    for name, cubin in _cubins(ptx, "sm_100a").items():
        out = np.zeros(128, np.uint32)
        result = run(cubin, "k", (2, 1, 1), (64, 1, 1), [out], hazard_check=name == "ours",
                     cluster=(2, 1, 1))
        assert not (name == "ours" and result.hazards), [str(h) for h in result.hazards[:3]]
        np.testing.assert_array_equal(out, want, err_msg=name)


# tcgen05.mma.cta_group::2 (M = 256, data-path layout A): each CTA of the pair copies its
# image (its A rows and B columns, tests/test_emu_utcmma.py's canonical placement) into shared
# memory and its C rows into its tensor memory; after a cluster barrier rank 0's thread 0
# issues the MMA and a ::2 commit multicast to both CTAs' mbarriers; each CTA reads its D
# rows back
PAIR_IMG = 24576
PAIR_MMA = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 pimg, .param .u64 pc, .param .u64 da, .param .u64 db,
                  .param .u32 id, .param .u32 en)
{{
  .reg .b32 %r<40>, %c<{n}>;
  .reg .b64 %rd<12>;
  .reg .pred %p<5>;
  .shared .align 16 .b32 taddr;
  .shared .align 8 .b64 bar;
  .shared .align 1024 .b8 img[{img}];
  mov.u32 %r3, %tid.x;
  mov.u32 %r30, %cluster_ctarank;
  shr.u32 %r20, %r3, 5;
  setp.ne.u32 %p1, %r20, 0;
  setp.ne.u32 %p2, %r3, 0;
  @%p1 bra ALLOCATED;
  mov.u32 %r1, taddr;
  tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], {cols};
  tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
ALLOCATED:
  @%p2 bra INITED;
  mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
  ld.param.u64 %rd0, [pimg];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd3, %r30, {img};
  add.u64 %rd0, %rd0, %rd3;
  mov.u32 %r5, img;
  shl.b32 %r6, %r3, 4;
COPY:
  setp.ge.u32 %p0, %r6, {img};
  @%p0 bra COPIED;
  cvt.u64.u32 %rd3, %r6;
  add.u64 %rd4, %rd0, %rd3;
  ld.global.v4.u32 {{%r7, %r8, %r9, %r10}}, [%rd4];
  add.u32 %r11, %r5, %r6;
  st.shared.v4.u32 [%r11], {{%r7, %r8, %r9, %r10}};
  add.u32 %r6, %r6, 2048;
  bra COPY;
COPIED:
  fence.proxy.async.shared::cta;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r2, [taddr];
  shl.b32 %r21, %r20, 21;
  add.u32 %r22, %r2, %r21;
  ld.param.u64 %rd5, [pc];
  cvta.to.global.u64 %rd5, %rd5;
  mad.lo.u32 %r31, %r30, 128, %r3;
  mul.wide.u32 %rd9, %r31, {cbytes};
  add.u64 %rd5, %rd5, %rd9;
{cload}
  tcgen05.st.sync.aligned.32x32b.x{n}.b32 [%r22], {{{cregs}}};
  tcgen05.wait::st.sync.aligned;
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  tcgen05.fence::after_thread_sync;
  setp.ne.or.u32 %p2, %r30, 0, %p2;
  @%p2 bra ISSUED;
  shr.u32 %r24, %r5, 4;
  cvt.u64.u32 %rd10, %r24;
  ld.param.u64 %rd1, [da];
  add.u64 %rd1, %rd1, %rd10;
  ld.param.u64 %rd2, [db];
  add.u64 %rd2, %rd2, %rd10;
  ld.param.u32 %r4, [id];
  ld.param.u32 %r25, [en];
  setp.ne.u32 %p3, %r25, 0;
  tcgen05.mma.cta_group::2.kind::{kind} [%r2], %rd1, %rd2, %r4, %p3;
  mov.u32 %r26, bar;
  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r26], 3;
ISSUED:
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
  @!%p4 bra WAIT;
  tcgen05.fence::after_thread_sync;
  tcgen05.ld.sync.aligned.32x32b.x{n}.b32 {{{cregs}}}, [%r22];
  tcgen05.wait::ld.sync.aligned;
{cstore}
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  @%p1 bra FREED;
  tcgen05.fence::after_thread_sync;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, {cols};
FREED:
  ret;
}}
"""


def _pair_mma_kernel(ptx_kind: str, n: int) -> str:
    cregs = ", ".join(f"%c{i}" for i in range(n))
    return PAIR_MMA.format(
        n=n, img=PAIR_IMG, cols=max(32, 1 << (n - 1).bit_length()), kind=ptx_kind, cbytes=4 * n, cregs=cregs,
        cload="\n".join(f"  ld.global.b32 %c{i}, [%rd5+{4 * i}];" for i in range(n)),
        cstore="\n".join(f"  st.global.b32 [%rd5+{4 * i}], %c{i};" for i in range(n)))


@pytest.mark.parametrize("kind,n,enable,sw,m", [("f16", 64, 1, 0, 256), ("bf16", 32, 0, 128, 256),
                                                ("s8", 64, 1, 128, 256), ("e4m3", 32, 1, 0, 256),
                                                ("tf32", 64, 1, 64, 256), ("f16", 64, 1, 128, 128),
                                                ("s8", 32, 0, 0, 128), ("tf32", 128, 1, 0, 128)])
def test_pair_mma_is_a_times_b_over_both_ctas(kind, n, enable, sw, m):
    """D = [A0; A1] @ [B0 B1] + C with A0/B0 in the even CTA's shared memory and A1/B1 in the
    odd one's, each CTA holding its M/2 rows of D (PTX ISA: cta_group::2; M = 256 data-path
    layout A, row i in lane i; M = 128 layout B, 64 rows with the column halves in lanes
    0..63 and 64..127, the other columns keeping C): NumPy's, for ptxas's cubin and ours
    (0 hazards) on a 2x1x1 cluster, the allocation being the pair's too. Before: .2CTA MMAs
    faulted in the emulator."""
    from tests.test_emu_utcmma import KINDS, ESIZE, idesc, layout, sdesc, values, write_matrix
    rng = np.random.default_rng(n + len(kind) + m)
    k, esize = KINDS[kind][1], ESIZE[kind]
    rows = m // 2
    A = values(rng, (m, k), kind)
    B = values(rng, (k, n), kind)
    integer = kind in ("s8", "u8")
    C = rng.integers(-20, 20, (256, n)).astype(np.float64)
    imgs = np.zeros((2, PAIR_IMG), np.uint8)
    a_base, b_base = 0, 16384
    la, sa = layout(sw, False, esize, rows)
    lb, sb = layout(sw, False, esize, n // 2)
    for cta in range(2):
        write_matrix(imgs[cta], a_base, A[rows * cta:rows * (cta + 1)], kind, sw, False, la, sa)
        write_matrix(imgs[cta], b_base, B[:, n // 2 * cta:n // 2 * (cta + 1)].T, kind, sw, False, lb, sb)
    word = idesc(kind, n) & ~(0x1F << 24) | (m >> 4) << 24
    c_bits = C.astype(np.int64).astype(np.uint32) if integer else C.astype(np.float32).view(np.uint32)
    want = C.copy()                                   # CTA c's lanes are rows 128c.. of `want`
    for cta in range(2):
        D = A[rows * cta:rows * (cta + 1)] @ B
        i, j = np.meshgrid(np.arange(rows), np.arange(n), indexing="ij")
        lane = i if m == 256 else i + 64 * (j // (n // 2))
        col = j if m == 256 else j % (n // 2)
        want[128 * cta + lane, col] = D + (C[128 * cta + lane, col] if enable else 0)
    for name, cubin in _cubins(_pair_mma_kernel(KINDS[kind][0], n), "sm_100a").items():
        out = c_bits.copy()
        result = run(cubin, "k", (2, 1, 1), (128, 1, 1),
                     [imgs.reshape(-1).copy(), out, np.uint64(sdesc(a_base, la, sa, sw)),
                      np.uint64(sdesc(b_base, lb, sb, sw)), np.uint32(word), np.uint32(enable)],
                     hazard_check=name == "ours", cluster=(2, 1, 1))
        assert not (name == "ours" and result.hazards), [str(h) for h in result.hazards[:3]]
        got = out.view(np.int32).astype(np.float64) if integer else out.view(np.float32).astype(np.float64)
        assert np.array_equal(got, want), (name, np.argwhere(got != want)[:5])


# tcgen05.cp: each CTA stores a sentinel into its 8 columns, copies its image into shared
# memory; rank 0's thread 0 copies the descriptor's matrix (K-major, no swizzle: 8-row core
# matrices of 16-byte rows, LBO 128 along K, SBO 256 between row groups) into tensor memory
# and commits (::2: multicast to both CTAs); each thread reads its lane's 8 columns back
COPY = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 pimg, .param .u64 out, .param .u64 desc)
{{
  .reg .b32 %r<40>, %c<8>;
  .reg .b64 %rd<12>;
  .reg .pred %p<5>;
  .shared .align 16 .b32 taddr;
  .shared .align 8 .b64 bar;
  .shared .align 1024 .b8 img[4096];
  mov.u32 %r3, %tid.x;
  mov.u32 %r30, %cluster_ctarank;
  shr.u32 %r20, %r3, 5;
  setp.ne.u32 %p1, %r20, 0;
  setp.ne.u32 %p2, %r3, 0;
  @%p1 bra ALLOCATED;
  mov.u32 %r1, taddr;
  tcgen05.alloc.cta_group::{g}.sync.aligned.shared::cta.b32 [%r1], 32;
ALLOCATED:
  @%p2 bra INITED;
  mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
  ld.param.u64 %rd0, [pimg];
  cvta.to.global.u64 %rd0, %rd0;
  mul.wide.u32 %rd3, %r30, 4096;
  add.u64 %rd0, %rd0, %rd3;
  mov.u32 %r5, img;
  shl.b32 %r6, %r3, 4;
  mov.u32 %r12, 0;
COPY:
  setp.ge.u32 %p0, %r6, 4096;
  @%p0 bra COPIED;
  cvt.u64.u32 %rd3, %r6;
  add.u64 %rd4, %rd0, %rd3;
  ld.global.v4.u32 {{%r7, %r8, %r9, %r10}}, [%rd4];
  add.u32 %r11, %r5, %r6;
  st.shared.v4.u32 [%r11], {{%r7, %r8, %r9, %r10}};
  add.u32 %r6, %r6, 2048;
  bra COPY;
COPIED:
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %r2, [taddr];
  shl.b32 %r21, %r20, 21;
  add.u32 %r22, %r2, %r21;
  or.b32 %r13, %r3, 0xA0000000;
  mov.u32 %c0, %r13;
  mov.u32 %c1, %r13;
  mov.u32 %c2, %r13;
  mov.u32 %c3, %r13;
  mov.u32 %c4, %r13;
  mov.u32 %c5, %r13;
  mov.u32 %c6, %r13;
  mov.u32 %c7, %r13;
  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r22], {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}};
  tcgen05.wait::st.sync.aligned;
  fence.proxy.async.shared::cta;
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  tcgen05.fence::after_thread_sync;
  setp.ne.or.u32 %p2, %r30, 0, %p2;
  @%p2 bra ISSUED;
  shr.u32 %r24, %r5, 4;
  cvt.u64.u32 %rd10, %r24;
  ld.param.u64 %rd1, [desc];
  add.u64 %rd1, %rd1, %rd10;
  tcgen05.cp.cta_group::{g}.{shape} [%r2], %rd1;
  mov.u32 %r26, bar;
  {commit}
ISSUED:
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
  @!%p4 bra WAIT;
  tcgen05.fence::after_thread_sync;
  tcgen05.ld.sync.aligned.32x32b.x8.b32 {{%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}}, [%r22];
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 %rd5, [out];
  cvta.to.global.u64 %rd5, %rd5;
  mad.lo.u32 %r31, %r30, 128, %r3;
  mul.wide.u32 %rd9, %r31, 32;
  add.u64 %rd5, %rd5, %rd9;
  st.global.v4.b32 [%rd5], {{%c0, %c1, %c2, %c3}};
  st.global.v4.b32 [%rd5+16], {{%c4, %c5, %c6, %c7}};
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  @%p1 bra FREED;
  tcgen05.fence::after_thread_sync;
  tcgen05.dealloc.cta_group::{g}.sync.aligned.b32 %r2, 32;
FREED:
  ret;
}}
"""
COMMITS = {"1": "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r26];",
           "2": "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r26], 3;"}
# PTX shape -> (rows, 32-bit words, the lanes row r lands in: the PTX ISA's tcgen05.cp shapes
# and warp multicasts)
_R = np.arange(128)
COPY_SHAPES = {"128x256b": (128, 8, [_R]), "4x256b": (4, 8, [np.arange(4) * 32]),
               "128x128b": (128, 4, [_R]),
               "64x128b.warpx2::02_13": (64, 4, [np.arange(64), np.arange(64) + 64]),
               "64x128b.warpx2::01_23": (64, 4, [np.arange(64) % 32 + 64 * (np.arange(64) // 32) + h
                                                 for h in (0, 32)]),
               "32x128b.warpx4": (32, 4, [np.arange(32) + 32 * q for q in range(4)])}


@pytest.mark.parametrize("group", ["1", "2"])
@pytest.mark.parametrize("shape", list(COPY_SHAPES))
def test_copy_lands_where_the_shape_says(shape, group):
    """tcgen05.cp of each shape: the descriptor's rows (canonical K-major layout) land in the
    lanes the shape and its warp multicast name, words in consecutive columns; the other
    lanes and columns keep the sentinel. ::2 (a 2x1x1 cluster, the pair's alloc, rank 0
    issuing): each CTA copies its own shared memory into its own tensor memory (PTX ISA).
    ptxas's cubin and ours (0 hazards). Before: UTCCP was not modelled (a fault)."""
    rows, words, lanes = COPY_SHAPES[shape]
    ctas = 2 if group == "2" else 1
    rng = np.random.default_rng(rows + words)
    imgs = rng.integers(0, 1 << 32, (ctas, 1024), dtype=np.uint64).astype(np.uint32)
    want = np.zeros((ctas, 128, 8), np.uint32)
    for cta in range(ctas):
        want[cta] = (0xA0000000 | np.arange(128))[:, None]
        r, j = np.meshgrid(np.arange(rows), np.arange(words), indexing="ij")
        byte = (r // 8) * 256 + (r % 8) * 16 + (4 * j // 16) * 128 + (4 * j) % 16
        matrix = imgs[cta][byte // 4]
        for where in lanes:
            want[cta, where, :words] = matrix
    desc = 0 | (128 >> 4) << 16 | (256 >> 4) << 32 | 1 << 46
    ptx = COPY.format(g=group, shape=shape, commit=COMMITS[group])
    for name, cubin in _cubins(ptx, "sm_100a").items():
        out = np.zeros(ctas * 128 * 8, np.uint32)
        result = run(cubin, "k", (ctas, 1, 1), (128, 1, 1), [imgs.reshape(-1).copy(), out, np.uint64(desc)],
                     hazard_check=name == "ours", cluster=(2, 1, 1) if ctas == 2 else None)
        assert not (name == "ours" and result.hazards), [str(h) for h in result.hazards[:3]]
        np.testing.assert_array_equal(out.reshape(ctas, 128, 8), want, err_msg=name)
