"""tcgen05's tensor-memory instructions on sm_100a (issues 15/18, first part).

* ptxas's cubin of a kernel that allocates 64 columns, stores a pattern with
  tcgen05.st.32x32b.x4, loads part of it back with .x2 at a column offset and with
  .x1.pack::16b, and deallocates, runs in the emulator (emu/ops_tmem.py) and gives the
  manual's layout (32x32b: thread i of warp w reaches tensor lane 32*(w%4)+i, register j the
  address's column + j; pack::16b: the low halves of two adjacent columns).
* The SASS forms of every tcgen05 form ptxas writes decode and encode back (their words are
  tools/isa_seeds/tcgen05_sm100.words; a sample goes through nvdisasm again in
  tests/test_arch_fuzz_words.py), and the round-trip kernel's own words.
* Refusals: every message ptxas gives for a bad tcgen05 instruction, in its order.
* Our code (ptx2sass/isel/tcgen05.py, branch tcgen05b): each kernel above compiled by us runs
  in the emulator to the same values as ptxas's (hazard-free), its tensor-memory instructions
  are ptxas's (opcode and modifiers), and the cubin carries ptxas's tcgen05 records and
  reserved-shared partition; tcgen05.ld/st.32x32b of every .num (pack/unpack) against NumPy;
  the 16-lane shapes (not modelled by the emulator) as ptxas spells them.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from ptx2sass.encoder import codec
from ptx2sass.errors import CompileError

HEAD = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 out)
{
"""
def _allocated(ncols: int) -> str:
    """Warp 0 allocates `ncols` columns (address in `taddr`) and gives up the permit; every
    thread then holds its warp's lane quarter of the allocation in r2 (warp in r20, tid r3)."""
    return HEAD + """  .reg .b32 r<40>;
  .reg .b64 rd<4>;
  .reg .pred p<4>;
  .shared .align 16 .b32 taddr;
  mov.u32 r3, %tid.x;
  shr.u32 r20, r3, 5;
  setp.ne.u32 p1, r20, 0;
  @p1 bra ALLOCATED;
  mov.u32 r1, taddr;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r1], {ncols};
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 r2, [taddr];
  shl.b32 r21, r20, 21;
  add.u32 r2, r2, r21;
""".format(ncols=ncols)


ROUND_TRIP = _allocated(64) + """  mul.lo.u32 r10, r3, 0x10001;
  add.u32 r11, r10, 0x30007;
  add.u32 r12, r10, 0x50011;
  add.u32 r13, r10, 0x7001d;
  tcgen05.st.sync.aligned.32x32b.x4.b32 [r2], {r10, r11, r12, r13};
  tcgen05.wait::st.sync.aligned;
  tcgen05.ld.sync.aligned.32x32b.x2.b32 {r4, r5}, [r2+2];
  tcgen05.ld.sync.aligned.32x32b.x1.pack::16b.b32 {r6}, [r2];
  tcgen05.wait::ld.sync.aligned;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @p1 bra FREED;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 r7, [taddr];
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 r7, 64;
FREED:
  ld.param.u64 rd1, [out];
  cvt.u64.u32 rd2, r3;
  shl.b64 rd2, rd2, 4;
  add.u64 rd1, rd1, rd2;
  st.global.v4.u32 [rd1], {r4, r5, r6, r2};
  ret;
}
"""
THREADS = 128


def _ptxas(ptx: str) -> bytes:
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert theirs.ok, theirs.stderr
    return theirs.output


def _expected() -> np.ndarray:
    """The manual's layout: columns c..c+3 of lane t hold t*0x10001 + (0, 0x30007, 0x50011,
    0x7001d); the x2 load at column +2 reads the last two, the packed x1 load at column 0
    the low halves of the first two; the address the first (only) allocation's (lane
    32*warp, column 0)."""
    t = np.arange(THREADS, dtype=np.uint64)
    base = t * 0x10001
    cols = [(base + k) & 0xFFFFFFFF for k in (0, 0x30007, 0x50011, 0x7001d)]
    packed = (cols[0] & 0xFFFF) | (cols[1] & 0xFFFF) << 16
    address = (t // 32) << 21
    return np.stack([cols[2], cols[3], packed, address], axis=1).astype(np.uint32)


def test_ptxas_round_trip_kernel_gives_the_manuals_layout():
    out = np.zeros((THREADS, 4), np.uint32)
    run(_ptxas(ROUND_TRIP), "k", (1, 1, 1), (THREADS, 1, 1), [out])
    assert (out == _expected()).all(), np.argwhere(out != _expected())[:5]


def _with_second_allocation(ptx: str) -> str:
    """`ptx` whose allocating warp allocates 32 more columns before giving up the permit."""
    return ptx.replace("  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n",
                       "  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r1], 32;\n"
                       "  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n")


def test_second_allocation_takes_the_next_aligned_granules():
    """Warp 0 allocates 64 then 32 columns and uses the second: it starts at column 64 (the
    lowest free place aligned to its size, the manual's power-of-two allocation); freeing 64
    columns there frees columns never allocated, and ptxas's own check of its shared-memory
    allocation bitmaps (filled from the allocator's answers) traps."""
    ptx = _with_second_allocation(ROUND_TRIP)
    with pytest.raises(EmuFault, match="BPT.TRAP"):
        run(_ptxas(ptx), "k", (1, 1, 1), (THREADS, 1, 1), [np.zeros((THREADS, 4), np.uint32)])
    want = _expected()
    want[:, 3] += 64
    out = np.zeros((THREADS, 4), np.uint32)
    run(_ptxas(ptx.replace("b32 r7, 64;", "b32 r7, 32;")), "k", (1, 1, 1), (THREADS, 1, 1), [out])
    assert (out == want).all(), np.argwhere(out != want)[:5]


def test_warp_outside_its_lanes_faults():
    """The manual's access restriction: warp w reaches lanes 32*(w%4).. only; every warp
    using warp 0's lanes is a fault here."""
    ptx = ROUND_TRIP.replace("  add.u32 r2, r2, r21;\n", "")
    with pytest.raises(EmuFault, match="reaches tensor-memory lanes 32..63 only"):
        run(_ptxas(ptx), "k", (1, 1, 1), (THREADS, 1, 1), [np.zeros((THREADS, 4), np.uint32)])


COMMIT = HEAD + """  .reg .b32 r<10>;
  .reg .b64 rd<4>;
  .reg .pred p<4>;
  .shared .align 8 .b64 bar;
  mov.u32 r1, %tid.x;
  setp.ne.u32 p1, r1, 0;
  @p1 bra INITED;
  mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
  bar.sync 0;
  @p1 bra WAIT;
  mov.u32 r2, bar;
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [r2];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 p3, [bar], 0;
  @!p3 bra WAIT;
  mbarrier.try_wait.parity.shared::cta.b64 p3, [bar], 1;
  selp.u32 r3, 1, 2, p3;
  ld.param.u64 rd1, [out];
  cvt.u64.u32 rd2, r1;
  shl.b64 rd2, rd2, 2;
  add.u64 rd1, rd1, rd2;
  st.global.u32 [rd1], r3;
  ret;
}
"""


def test_commit_is_one_arrival_on_the_mbarrier():
    """tcgen05.commit by one thread (ptxas: an ELECT loop around `@!UP0 UTCBAR`) with no
    asynchronous tcgen05 work pending completes the phase of a count-1 mbarrier: every thread
    sees phase 0 complete and phase 1 not; without the commit the wait never ends."""
    out = np.zeros(64, np.uint32)
    run(_ptxas(COMMIT), "k", (1, 1, 1), (64, 1, 1), [out])
    assert (out == 2).all()
    without = COMMIT.replace("  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [r2];\n", "")
    with pytest.raises(EmuFault, match="budget"):
        run(_ptxas(without), "k", (1, 1, 1), (64, 1, 1), [np.zeros(64, np.uint32)], budget=2000)


UNIT = ("LDTM", "STTM", "UTCATOMSWS", "UTCBAR", "UVIRTCOUNT", "FENCE.VIEW.ASYNC.T")


def test_kernel_words_decode_and_encode_back():
    listing = oracle.nvdisasm(_ptxas(ROUND_TRIP), ("-c", "-hex"))
    seen = set()
    lines = listing.splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;\s*/\* (0x[0-9a-f]{16}) \*/", line)
        if not m or not any(u in m.group(1) for u in UNIT):
            continue
        hi = re.search(r"/\* (0x[0-9a-f]{16}) \*/", lines[i + 1]).group(1)
        word = int(hi, 16) << 64 | int(m.group(2), 16)
        assert " ".join(codec.decode_text(word, "sm_100").split()) == " ".join(m.group(1).split())
        assert codec.encode(codec.decode(word, "sm_100"), "sm_100") == word
        seen.add(m.group(1).split()[0])
    assert {"LDTM.x2", "LDTM.PACK16BIT", "STTM.x4", "UTCATOMSWS.FIND_AND_SET.ALIGN",
            "UTCATOMSWS.AND", "UVIRTCOUNT.DEALLOC.SMPOOL", "FENCE.VIEW.ASYNC.T"} <= seen


SEEDS = Path(__file__).resolve().parent.parent / "tools" / "isa_seeds" / "tcgen05_sm100.words"


def test_every_seed_word_decodes_to_nvdisasms_text_and_encodes_back():
    """Every form ptxas wrote for the tcgen05 kernels of the seed file (each shape, num,
    pack, CTA group, tensor-memory offset; the texts are nvdisasm's, recorded with the
    words; tests/test_arch_fuzz_words.py asks nvdisasm again for a sample of them)."""
    count = 0
    for line in SEEDS.read_text().splitlines():
        if not line.startswith("0x"):
            continue
        word, _, text = line.partition("#")
        word = int(word, 16)
        assert " ".join(codec.decode_text(word, "sm_100").split()) == " ".join(text.split())
        assert codec.encode(codec.decode(word, "sm_100"), "sm_100") == word
        count += 1
    assert count >= 400


BODY = """.version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u32 ta)
{{
 .reg .b32 r<200>;
 .reg .b64 rd<2>;
 ld.param.u32 r0, [ta];
 {ins}
 ret;
}}
"""
REFUSED = [
    ("sm_100", "tcgen05.ld.sync.aligned.32x32b.x2.b32 {r1, r2}, [r0];"),
    ("sm_90a", "tcgen05.ld.sync.aligned.32x32b.x2.b32 {r1, r2}, [r0];"),
    ("sm_100", "tcgen05.st.sync.aligned.16x64b.x1.b32 [r0], {r1};"),
    ("sm_100", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 32;"),
    ("sm_100", "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"),
    ("sm_100", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [r0];"),
    ("sm_100", "tcgen05.wait::ld.sync.aligned;"),
    ("sm_100", "tcgen05.fence::after_thread_sync;"),
    ("sm_100a", "tcgen05.ld.sync.aligned.32x32b.x3.b32 {r1, r2, r3}, [r0];"),
    ("sm_100a", "tcgen05.ld.sync.aligned.32x32b.x256.b32 {r1}, [r0];"),
    ("sm_100a", "tcgen05.ld.sync.aligned.32x32b.b32 {r1}, [r0];"),
    ("sm_100a", "tcgen05.ld.sync.aligned.16x256b.x64.b32 {r1}, [r0];"),
    ("sm_100a", "tcgen05.ld.sync.aligned.32x32b.x2.b32 {r1}, [r0];"),
    ("sm_100a", "tcgen05.st.sync.aligned.32x32b.x2.b32 [r0], {r1};"),
    ("sm_100a", "tcgen05.st.sync.aligned.16x128b.x2.b32 [r0], {r1, r2, r3};"),
    ("sm_100a", "tcgen05.ld.sync.aligned.32x32b.x2.b32 {r1, r2}, [r0], 2;"),
    ("sm_100a", "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {r1, r2}, [r0];"),
    ("sm_100a", "tcgen05.ld.sync.aligned.32x32b.x2.b16 {r1, r2}, [r0];"),
    ("sm_100a", "tcgen05.alloc.cta_group::3.sync.aligned.shared::cta.b32 [r0], 32;"),
    ("sm_100a", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 48;"),
    ("sm_100a", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 16;"),
    ("sm_100a", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 96;"),
    ("sm_100a", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 1000;"),
    ("sm_100a", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 1024;"),
    ("sm_100a", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 0;"),
    ("sm_100a", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 r0, 48;"),
    # (branch tcgen05b) sm_12x has no tcgen05 even in its a/f targets; shift needs an a target;
    # cp on a target without it: shape, instruction, warp multicast, CTA group
    ("sm_120a", "tcgen05.ld.sync.aligned.32x32b.x2.b32 {r1, r2}, [r0];"),
    ("sm_121f", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r0], 32;"),
    ("sm_120a", "tcgen05.wait::st.sync.aligned;"),
    ("sm_100f", "tcgen05.shift.cta_group::1.down [r0];"),
    ("sm_110f", "tcgen05.shift.cta_group::1.down [r0];"),
    ("sm_120a", "tcgen05.shift.cta_group::1.down [r0];"),
    ("sm_100", "tcgen05.cp.cta_group::1.128x256b [r0], rd0;"),
    ("sm_120a", "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [r0], rd0;"),
    ("sm_90a", "tcgen05.cp.cta_group::2.32x128b.warpx4.b8x16.b6x16_p32 [r0], rd0;"),
]


def _messages(stderr: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"line \d+; error\s*: (.*)", stderr)]


@pytest.mark.parametrize("target,ins", REFUSED, ids=[f"{t}:{i.split()[0]}" for t, i in REFUSED])
def test_refusals_are_ptxas_messages(target, ins):
    version = "8.7" if target in ("sm_90a", "sm_100", "sm_100a") else "9.0"
    ptx = BODY.format(target=target, ins=ins, version=version)
    theirs = oracle.ptxas(ptx.encode(), target)
    assert not theirs.ok
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, target)
    ours = [d.message for d in err.value.diagnostics if d.severity == "error"]
    assert ours == _messages(theirs.stderr)


# ---------------------------------------------------------------- our code (branch tcgen05b)
def _ours(ptx: str, target: str = "sm_100a") -> bytes:
    return compile_ptx(ptx, target)


def _run_clean(cubin: bytes, threads: int, out: np.ndarray, **kw):
    result = run(cubin, "k", (1, 1, 1), (threads, 1, 1), [out], **kw)
    assert not result.hazards, result.hazards[:3]
    assert not result.convergence_hazards, result.convergence_hazards[:3]
    return result


@pytest.mark.parametrize("target", ["sm_100a", "sm_100f", "sm_103a", "sm_110a"])
def test_our_round_trip_kernel_gives_the_manuals_layout(target):
    out = np.zeros((THREADS, 4), np.uint32)
    ptx = ROUND_TRIP.replace("sm_100a", target).replace(".version 8.7", ".version 9.0")
    _run_clean(_ours(ptx, target), THREADS, out)
    assert (out == _expected()).all(), np.argwhere(out != _expected())[:5]


def test_our_second_allocation_and_dealloc_check():
    """As test_second_allocation_takes_the_next_aligned_granules, on our code: the second
    allocation starts at column 64; freeing 64 columns there traps in our bitmap check."""
    ptx = _with_second_allocation(ROUND_TRIP)
    with pytest.raises(EmuFault, match="BPT.TRAP"):
        run(_ours(ptx), "k", (1, 1, 1), (THREADS, 1, 1), [np.zeros((THREADS, 4), np.uint32)])
    want = _expected()
    want[:, 3] += 64
    out = np.zeros((THREADS, 4), np.uint32)
    _run_clean(_ours(ptx.replace("b32 r7, 64;", "b32 r7, 32;")), THREADS, out)
    assert (out == want).all(), np.argwhere(out != want)[:5]


def test_our_dealloc_of_freed_columns_traps():
    """Freeing the same columns twice: the second finds them gone from the bitmaps (the
    allocator's AND cleared them, and ours the bitmaps) and traps."""
    ptx = ROUND_TRIP.replace("  tcgen05.dealloc.cta_group::1.sync.aligned.b32 r7, 64;\n",
                             "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 r7, 64;\n"
                             "  tcgen05.dealloc.cta_group::1.sync.aligned.b32 r7, 64;\n")
    with pytest.raises(EmuFault, match="BPT.TRAP"):
        run(_ours(ptx), "k", (1, 1, 1), (THREADS, 1, 1), [np.zeros((THREADS, 4), np.uint32)])


def test_our_warp_outside_its_lanes_faults():
    ptx = ROUND_TRIP.replace("  add.u32 r2, r2, r21;\n", "")
    with pytest.raises(EmuFault, match="reaches tensor-memory lanes 32..63 only"):
        run(_ours(ptx), "k", (1, 1, 1), (THREADS, 1, 1), [np.zeros((THREADS, 4), np.uint32)])


def test_our_commit_is_one_arrival_on_the_mbarrier():
    out = np.zeros(64, np.uint32)
    _run_clean(_ours(COMMIT), 64, out)
    assert (out == 2).all()
    without = COMMIT.replace("  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [r2];\n", "")
    with pytest.raises(EmuFault, match="budget"):
        run(_ours(without), "k", (1, 1, 1), (64, 1, 1), [np.zeros(64, np.uint32)], budget=2000)


UNIT_OPCODES = ("LDTM", "STTM", "UTCATOMSWS", "UTCBAR", "UVIRTCOUNT", "FENCE", "UTCCP", "UTCSHIFT")


def _unit_instructions(cubin: bytes) -> list[str]:
    """The tensor-memory unit's instructions (opcode with modifiers, no guard or operands)
    in code order, as nvdisasm prints them."""
    out = []
    for line in oracle.nvdisasm(cubin, ("-c",)).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z][\w.]*)", line)
        if m and m.group(2).split(".")[0] in UNIT_OPCODES:
            out.append(m.group(2))
    return out


@pytest.mark.parametrize("name", ["round_trip", "commit"])
def test_our_tensor_memory_instructions_are_ptxas(name):
    """Opcodes and modifiers of the tensor-memory instructions, in order, as ptxas's (the
    ELECT/retry scaffolding around them aside)."""
    ptx = {"round_trip": ROUND_TRIP, "commit": COMMIT}[name]
    assert _unit_instructions(_ours(ptx)) == _unit_instructions(_ptxas(ptx))


def _records(cubin: bytes) -> dict:
    from ptx2sass.encoder.cubin import read_cubin
    k = read_cubin(cubin).kernels[0]
    return {r.name: r.value for r in k.extra_attributes}


@pytest.mark.parametrize("name", ["round_trip", "commit"])
def test_our_tcgen05_records_are_ptxas(name):
    """AT_ENTRY_FRAGMENTS (TMEM_CTA1_V2), RESERVED_SMEM_USED (kernels that allocate),
    TCGEN05_1CTA_USED and VRC_CTA_INIT_COUNT 0x80 as ptxas writes them, and the reserved
    shared section with the 32-byte partition after the reserved words."""
    ptx = {"round_trip": ROUND_TRIP, "commit": COMMIT}[name]
    theirs, ours = _ptxas(ptx), _ours(ptx)
    keys = ("AT_ENTRY_FRAGMENTS", "RESERVED_SMEM_USED", "TCGEN05_1CTA_USED", "VRC_CTA_INIT_COUNT")
    want = {k: v for k, v in _records(theirs).items() if k in keys}
    assert {k: v for k, v in _records(ours).items() if k in keys} == want
    assert ("AT_ENTRY_FRAGMENTS" in want) == (name == "round_trip")
    sizes = [_elf(c)[0] for c in (theirs, ours)]
    assert sizes[1][".nv.shared.reserved.0"] == sizes[0][".nv.shared.reserved.0"]
    assert sizes[1][".nv.shared.k"] == sizes[0][".nv.shared.k"]     # user data from 0x400
    syms = [_elf(c)[1] for c in (theirs, ours)]
    partition = "__nv_reservedSMEM_tcgen05_partition"
    assert syms[1].get(partition) == syms[0].get(partition)


def _elf(cubin: bytes) -> tuple[dict, dict]:
    """({section name: size}, {symbol name: (value, size)}) of a cubin, read from its ELF."""
    import struct
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]

    def name_at(table, at):
        start = sections[table][4] + at
        return cubin[start:cubin.index(b"\0", start)].decode()
    sizes = {name_at(shstrndx, sh[0]): sh[5] for sh in sections}
    out = {}
    for sh in sections:
        if sh[1] != 2:                      # SHT_SYMTAB
            continue
        for off in range(sh[4], sh[4] + sh[5], 24):
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", cubin, off)
            out[name_at(sh[6], name)] = (value, size)
    return sizes, out


LDST = """  .reg .b32 r<300>;
  .reg .b64 rd<4>;
  .reg .pred p<4>;
  .shared .align 16 .b32 taddr;
  mov.u32 r250, %tid.x;
  shr.u32 r251, r250, 5;
  setp.ne.u32 p1, r251, 0;
  @p1 bra ALLOCATED;
  mov.u32 r252, taddr;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [r252], 512;
ALLOCATED:
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 r253, [taddr];
  shl.b32 r254, r251, 21;
  add.u32 r253, r253, r254;
  mul.lo.u32 r255, r250, 0x10001;
{fill}
  tcgen05.st.sync.aligned.32x32b.x{n}{unpack}.b32 [r253+{col}], {{{regs}}};
  tcgen05.wait::st.sync.aligned;
  tcgen05.ld.sync.aligned.32x32b.x{n}{pack}.b32 {{{regs}}}, [r253+{col}];
  tcgen05.wait::ld.sync.aligned;
  ld.param.u64 rd1, [out];
  cvt.u64.u32 rd2, r250;
  mul.lo.u64 rd2, rd2, {stride};
  add.u64 rd1, rd1, rd2;
{stores}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @p1 bra FREED;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 r253, [taddr];
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 r253, 512;
FREED:
  ret;
}}
"""


def _ldst_kernel(n: int, packed: bool) -> str:
    regs = ", ".join(f"r{j}" for j in range(n))
    fill = "\n".join(f"  add.u32 r{j}, r255, {(j * 0x01030507) & 0xFFFFFFFF};" for j in range(n))
    stores = "\n".join(f"  st.global.u32 [rd1+{4 * j}], r{j};" for j in range(n))
    return HEAD + LDST.format(fill=fill, n=n, regs=regs, stores=stores, stride=4 * n, col=n % 64,
                       unpack=".unpack::16b" if packed else "", pack=".pack::16b" if packed else "")


@pytest.mark.parametrize("packed", [False, True], ids=["b32", "16b"])
@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32, 64, 128])
def test_our_32x32b_store_load_of_every_num(n, packed):
    """st then ld of .xN at a column offset: each thread gets its registers back (NumPy's
    values); st.unpack::16b / ld.pack::16b keep the low halves of each register's two
    16-bit parts, the high bits of each 32-bit cell being dropped by the pack."""
    if packed and n == 128:
        pytest.skip("unpack::16b .x128 writes 256 columns from offset 0: covered by .x64")
    t = np.arange(THREADS, dtype=np.uint64)[:, None]
    j = np.arange(n, dtype=np.uint64)[None, :]
    want = ((t * 0x10001 + (j * 0x01030507)) & 0xFFFFFFFF).astype(np.uint32)
    out = np.zeros((THREADS, n), np.uint32)
    _run_clean(_ours(_ldst_kernel(n, packed)), THREADS, out)
    assert (out == want).all(), np.argwhere(out != want)[:5]


@pytest.mark.parametrize("n", [1, 8, 128])
def test_our_32x32b_kernel_is_ptxas_at_the_unit(n):
    ptx = _ldst_kernel(n, False)
    assert _unit_instructions(_ours(ptx)) == _unit_instructions(_ptxas(ptx))


SHAPED = """  .reg .b32 r<140>;
  .reg .b64 rd<4>;
  ld.param.u64 rd1, [out];
  ld.global.u32 r130, [rd1];
  ld.global.u32 r0, [rd1+4];
{body}
  st.global.u32 [rd1], r{last};
  ret;
}}
"""


@pytest.mark.parametrize("shape,per,num", [("16x64b", 1, 4), ("16x128b", 2, 2), ("16x256b", 4, 1),
                                           ("16x256b", 4, 8), ("16x64b", 1, 1)])
def test_our_16_lane_shapes_are_ptxas_spelling(shape, per, num):
    """The 16-lane shapes (not modelled by the emulator): our LDTM/STTM forms are ptxas's."""
    count = per * num
    regs = ", ".join(f"r{j}" for j in range(count))
    body = (f"  tcgen05.st.sync.aligned.{shape}.x{num}.b32 [r130], {{{regs}}};\n"
            f"  tcgen05.ld.sync.aligned.{shape}.x{num}.pack::16b.b32 {{{regs}}}, [r130+4];\n"
            "  tcgen05.wait::ld.sync.aligned;")
    ptx = HEAD + SHAPED.format(body=body, last=count - 1)
    assert _unit_instructions(_ours(ptx)) == _unit_instructions(_ptxas(ptx))
    # ld/st alone: VRC_CTA_INIT_COUNT 0x80 but no TCGEN05_<N>CTA_USED, as ptxas
    assert _records(_ours(ptx)) == _records(_ptxas(ptx)) == {"VRC_CTA_INIT_COUNT": 0x80}


COPIES = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 ta, .param .u64 desc)
{{
  .reg .b32 r<40>;
  .reg .b64 rd<4>;
  ld.param.u32 r1, [ta];
  ld.param.u64 rd1, [desc];
{per_lane}
  tcgen05.cp.cta_group::1.128x256b [r1], rd1;
  tcgen05.cp.cta_group::1.4x256b [r1+4], rd1;
  tcgen05.cp.cta_group::1.128x128b [r1], rd1;
  tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [r1], rd1;
  tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [r1], rd1;
  tcgen05.cp.cta_group::1.32x128b.warpx4 [r1], rd1;
  tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [r1], rd1;
  tcgen05.cp.cta_group::1.128x256b.b8x16.b4x16_p64 [r1], rd1;
  tcgen05.cp.cta_group::1.4x256b.b8x16.b6x16_p32 [r1], rd1;
  tcgen05.cp.cta_group::1.32x128b.warpx4.b8x16.b4x16_p64 [r1], rd1;
  tcgen05.shift.cta_group::1.down [r1];
  ret;
}}
"""
PER_LANE = """  mov.u32 r5, %tid.x;
  and.b32 r5, r5, 3;
  add.u32 r1, r1, r5;
  cvt.u64.u32 rd2, r5;
  add.u64 rd1, rd1, rd2;"""


@pytest.mark.parametrize("group", [1, 2])
@pytest.mark.parametrize("per_lane", [False, True], ids=["params", "per_lane"])
def test_our_copies_and_shift_are_ptxas_forms(per_lane, group):
    """tcgen05.cp of every shape, warp multicast and decompression, and tcgen05.shift
    (not modelled by the emulator): our UTCCP/UTCSHIFT opcodes and modifiers are ptxas's,
    one per lane in an ELECT loop as ptxas's (operands: ptxas adds an address offset in the
    instruction, `tmem[UR4+0x4]`, we in the register before it); `.cta_group::2` is the
    `.2CTA` form and TCGEN05_2CTA_USED, as ptxas's."""
    ptx = COPIES.format(per_lane=PER_LANE if per_lane else "").replace("cta_group::1", f"cta_group::{group}")
    ours, theirs = _ours(ptx), _ptxas(ptx)
    shapes = [_unit_instructions(c) for c in (ours, theirs)]
    assert shapes[0] == shapes[1] and len(shapes[0]) == 11
    elects = [sum(" ELECT " in line for line in oracle.nvdisasm(c, ("-c",)).splitlines()) for c in (ours, theirs)]
    assert elects[0] == elects[1] == 11
    assert _records(ours) == _records(theirs)


@pytest.mark.parametrize("num", [1, 2, 64])
def test_our_half_split_shape_is_ptxas_two_instructions(num):
    """`.16x32bx2` with its immediate half-split offset: ptxas writes two LDTM/STTM on the
    same registers (`_t0_t15` at the address, `_t16_t31` at the address plus the offset);
    so do we. (Before: the frontend refused a valid st, naming argument 1 for the vector.)"""
    regs = ", ".join(f"r{j}" for j in range(num))
    body = (f"  tcgen05.st.sync.aligned.16x32bx2.x{num}.b32 [r130], 3, {{{regs}}};\n"
            f"  tcgen05.ld.sync.aligned.16x32bx2.x{num}.pack::16b.b32 {{{regs}}}, [r130+4], 7;\n"
            "  tcgen05.wait::ld.sync.aligned;")
    ptx = HEAD + SHAPED.format(body=body, last=num - 1)
    assert _unit_instructions(_ours(ptx)) == _unit_instructions(_ptxas(ptx))
    assert len(_unit_instructions(_ours(ptx))) == 4


def test_half_split_store_vector_size_is_ptxas_message():
    body = "  tcgen05.st.sync.aligned.16x32bx2.x2.b32 [r130], 3, {r0};"
    ptx = HEAD + SHAPED.format(body=body, last=0)
    theirs = oracle.ptxas(ptx.encode(), "sm_100a")
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, "sm_100a")
    assert [d.message for d in err.value.diagnostics if d.severity == "error"] == _messages(theirs.stderr)


GUARDED_COMMIT = COMMIT.replace(
    "mbarrier.init.shared::cta.b64 [bar], 1;", "mbarrier.init.shared::cta.b64 [bar], {count};").replace(
    "  @p1 bra WAIT;\n  mov.u32 r2, bar;\n  tcgen05.commit",
    "  setp.lt.u32 p2, r1, 5;\n  mov.u32 r2, bar;\n  @p2 tcgen05.commit")


def test_our_guarded_commit_arrives_once_per_lane_that_holds_it():
    """`@p tcgen05.commit` with p true in threads 0..4 only (warp 1: in none): five arrivals
    complete a count-5 phase, and a count-6 phase never completes (warp 1's turn of the ELECT
    loop issues no UTCBAR: it is guarded by VOTEU.ANY of p). Was refused ("guarded")."""
    out = np.zeros(64, np.uint32)
    _run_clean(_ours(GUARDED_COMMIT.replace("{count}", "5")), 64, out)
    assert (out == 2).all()
    with pytest.raises(EmuFault, match="budget"):
        run(_ours(GUARDED_COMMIT.replace("{count}", "6")), "k", (1, 1, 1), (64, 1, 1),
            [np.zeros(64, np.uint32)], budget=2000)
    ptx = GUARDED_COMMIT.replace("{count}", "5")
    assert _unit_instructions(_ours(ptx)) == _unit_instructions(_ptxas(ptx))


def _multicast(mask: str, in_register: bool) -> str:
    """COMMIT with `.multicast::cluster` and a 16-bit CTA mask (an immediate, or a register
    computed per lane)."""
    ptx = COMMIT.replace("  .reg .pred p<4>;\n", "  .reg .pred p<4>;\n  .reg .b16 h<2>;\n")
    if in_register:
        setup = (f"  shr.u32 r5, r1, 10;\n  add.u32 r5, r5, {mask};\n  cvt.u16.u32 h1, r5;\n")
        operand = "h1"
    else:
        setup, operand = "", mask
    return ptx.replace(
        "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [r2];\n",
        setup + "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster"
        f".multicast::cluster.b64 [r2], {operand};\n")


@pytest.mark.parametrize("multicast", [False, True])
def test_our_pair_commit_is_ptxas_form(multicast):
    """`.cta_group::2` commit (the emulator launches no CTA pair): UTCBAR.2CTA[.MULTICAST]
    and TCGEN05_2CTA_USED, as ptxas's."""
    ptx = (_multicast("3", False) if multicast else COMMIT).replace("cta_group::1", "cta_group::2")
    ours, theirs = _ours(ptx), _ptxas(ptx)
    assert _unit_instructions(ours) == _unit_instructions(theirs)
    assert _unit_instructions(ours)[0].startswith("UTCBAR.2CTA")
    keys = ("TCGEN05_1CTA_USED", "TCGEN05_2CTA_USED", "VRC_CTA_INIT_COUNT")   # (not the mbarrier's)
    assert {k: v for k, v in _records(ours).items() if k in keys} == \
        {k: v for k, v in _records(theirs).items() if k in keys}


@pytest.mark.parametrize("in_register", [False, True], ids=["immediate", "register"])
def test_our_multicast_commit_arrives_where_the_mask_names_the_cta(in_register):
    """UTCBAR.MULTICAST with the CTA mask: mask 1 names this CTA (rank 0, the only one the
    emulator launches), so the count-1 phase completes; mask 2 does not, so it never does.
    Opcode and modifiers as ptxas's. (Was refused.)"""
    out = np.zeros(64, np.uint32)
    _run_clean(_ours(_multicast("1", in_register)), 64, out)
    assert (out == 2).all()
    with pytest.raises(EmuFault, match="budget"):
        run(_ours(_multicast("2", in_register)), "k", (1, 1, 1), (64, 1, 1),
            [np.zeros(64, np.uint32)], budget=2000)
    ptx = _multicast("1", in_register)
    assert _unit_instructions(_ours(ptx)) == _unit_instructions(_ptxas(ptx)) == ["UTCBAR.MULTICAST"]


def _register_columns(ptx: str) -> str:
    """The kernel with its column counts in a register (64 + (tid >> 12), i.e. 64, not a
    constant to the compiler)."""
    return ptx.replace("  mov.u32 r3, %tid.x;\n", "  mov.u32 r3, %tid.x;\n  shr.u32 r30, r3, 12;\n"
                       "  add.u32 r30, r30, 64;\n").replace("[r1], 64;", "[r1], r30;").replace(
        "b32 r7, 64;", "b32 r7, r30;")


def test_our_column_count_in_a_register():
    """ptxas takes alloc/dealloc's column count in a register (granules = ncols >> 5, mask
    ~(-1 << granules)); so do we: the round trip gives the manual's layout, and a dealloc
    of 64 columns at an allocation of 32 traps. (Was refused.)"""
    out = np.zeros((THREADS, 4), np.uint32)
    ptx = _register_columns(ROUND_TRIP)
    assert "r30;" in ptx
    _run_clean(_ours(ptx), THREADS, out)
    assert (out == _expected()).all(), np.argwhere(out != _expected())[:5]
    second = _with_second_allocation(ptx)
    with pytest.raises(EmuFault, match="BPT.TRAP"):
        run(_ours(second), "k", (1, 1, 1), (THREADS, 1, 1), [np.zeros((THREADS, 4), np.uint32)])
    assert _unit_instructions(_ours(ptx)) == _unit_instructions(_ptxas(ptx))


LOOP = _allocated(128) + """  mov.u32 r22, 0;
  mov.u32 r23, r2;
FILL:
  mad.lo.u32 r10, r3, 7, r22;
  add.u32 r11, r10, 1;
  add.u32 r12, r10, 2;
  add.u32 r13, r10, 3;
  tcgen05.st.sync.aligned.32x32b.x4.b32 [r23], {r10, r11, r12, r13};
  add.u32 r23, r23, 4;
  add.u32 r22, r22, 4;
  setp.lt.u32 p2, r22, 128;
  @p2 bra FILL;
  tcgen05.wait::st.sync.aligned;
  mov.u32 r24, 0;
  mov.u32 r22, 0;
  mov.u32 r23, r2;
SUM:
  tcgen05.ld.sync.aligned.32x32b.x4.b32 {r10, r11, r12, r13}, [r23];
  tcgen05.wait::ld.sync.aligned;
  add.u32 r24, r24, r10;
  xor.b32 r24, r24, r11;
  add.u32 r24, r24, r12;
  mul.lo.u32 r24, r24, 3;
  add.u32 r24, r24, r13;
  add.u32 r23, r23, 4;
  add.u32 r22, r22, 4;
  setp.lt.u32 p2, r22, 128;
  @p2 bra SUM;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @p1 bra FREED;
  tcgen05.fence::after_thread_sync;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 r2, 128;
FREED:
  ld.param.u64 rd1, [out];
  cvt.u64.u32 rd2, r3;
  shl.b64 rd2, rd2, 2;
  add.u64 rd1, rd1, rd2;
  st.global.u32 [rd1], r24;
  ret;
}
"""


def test_loops_of_stores_and_loads_ptxas_and_ours():
    """32 st.x4 in one loop, 32 ld.x4 folded into a checksum in another: ptxas's cubin and
    ours both give NumPy's checksum, hazard-free (ptxas reads a VIADD result in STTM 4 cycles
    after issue: STTM is a no-pipe reader in the sm_100/sm_110 latency tables)."""
    want = []
    for t in range(THREADS):
        s = 0
        for base in range(0, 128, 4):
            v = [(t * 7 + base + k) & 0xFFFFFFFF for k in range(4)]
            s = (((((s + v[0]) & 0xFFFFFFFF) ^ v[1]) + v[2]) * 3 + v[3]) & 0xFFFFFFFF
        want.append(s)
    want = np.array(want, np.uint32)
    for cubin in (_ptxas(LOOP), _ours(LOOP)):
        out = np.zeros(THREADS, np.uint32)
        _run_clean(cubin, THREADS, out)
        assert (out == want).all(), np.argwhere(out != want)[:5]


def test_two_kernels_one_allocating():
    """A module of a plain kernel with shared data and the allocating round trip: one
    0x60-byte reserved section with the partition, each kernel's shared data from 0x400, and
    the tcgen05 records (VRC_CTA_INIT_COUNT 0x80 included) in the allocating kernel only, as
    ptxas writes them."""
    head, body = ROUND_TRIP.split(".visible .entry k", 1)
    plain = (".visible .entry plain(.param .u64 out)\n{\n  .reg .b64 rd<2>;\n  .shared .align 4 .b32 s;\n"
             "  ld.param.u64 rd1, [out];\n  st.global.u64 [rd1], rd1;\n  ret;\n}\n")
    ptx = head + plain + ".visible .entry k" + body
    from ptx2sass.encoder.cubin import read_cubin
    keys = ("AT_ENTRY_FRAGMENTS", "RESERVED_SMEM_USED", "TCGEN05_1CTA_USED", "VRC_CTA_INIT_COUNT")
    seen = []
    for cubin in (_ptxas(ptx), _ours(ptx)):
        sizes, symbols = _elf(cubin)
        records = {k.name: {r.name: r.value for r in k.extra_attributes if r.name in keys}
                   for k in read_cubin(cubin).kernels}
        seen.append(({n: v for n, v in sizes.items() if n.startswith(".nv.shared.") and "merc" not in n},
                     {n: v for n, v in symbols.items() if "reserved" in n.lower()}, records))
    assert seen[0] == seen[1]
    assert seen[1][1]["__nv_reservedSMEM_tcgen05_partition"] == (0x40, 0x20)


# the CTA pair's relinquish_alloc_permit / dealloc (were "not supported yet"); its alloc, a
# handshake between the pair's two CTAs, is tests/test_tcgen05_pair_alloc.py's. (`word`: user shared data, so that the emulator's launch has
# the reserved shared words below it; a kernel with none gets no shared memory there)
PAIR_FREE = HEAD + """  .reg .b32 r<3>;
  .reg .b64 rd<2>;
  .shared .align 4 .b32 word;
  ld.param.u64 rd1, [out];
  ld.global.u32 r1, [rd1];
  st.shared.u32 [word], r1;
  tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
  tcgen05.dealloc.cta_group::2.sync.aligned.b32 r1, 64;
  ret;
}
"""


def _code_text(cubin: bytes) -> list[str]:
    return [re.sub(r"/\*[0-9a-f]+\*/", "", line.split(";")[0]).strip()
            for line in oracle.cuobjdump_sass(cubin).splitlines() if "/*" in line and ";" in line]


def test_pair_relinquish_and_dealloc_are_ptxas():
    """ptxas 13.5 writes `.cta_group::1`'s code for them (the same SASS text; also on
    sm_100f/103a/110a, probed); ours: ptxas's tensor-memory instructions and records
    (AT_ENTRY_FRAGMENTS 7, not ::1's 6; TCGEN05_2CTA_USED), and freeing columns never
    allocated traps in both cubins, as with ::1."""
    theirs, ours = _ptxas(PAIR_FREE), _ours(PAIR_FREE)
    assert _code_text(theirs) == _code_text(_ptxas(PAIR_FREE.replace("cta_group::2", "cta_group::1")))
    assert _unit_instructions(ours) == _unit_instructions(theirs)
    keys = ("AT_ENTRY_FRAGMENTS", "RESERVED_SMEM_USED", "TCGEN05_1CTA_USED", "TCGEN05_2CTA_USED",
            "VRC_CTA_INIT_COUNT")
    want = {k: v for k, v in _records(theirs).items() if k in keys}
    assert want["AT_ENTRY_FRAGMENTS"] == (7).to_bytes(4, "little") and "TCGEN05_2CTA_USED" in want
    assert {k: v for k, v in _records(ours).items() if k in keys} == want
    for cubin in (theirs, ours):
        with pytest.raises(EmuFault, match="BPT.TRAP"):
            run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [np.zeros(4, np.uint32)])

