"""When ptxas 13.5 keeps a dynamically indexed `.local` array in registers (issue 20, Triton
unary_math's 28-byte Payne-Hanek table: a predicated move per `ISETP.EQ` of the index for
each store, a chain of them per load). Probes (sm_89, `tests/local_tables`): a 7-word array
written in a `nounroll` loop through a pointer and read at a masked index.
Rule found: promoted when the array is at most 28 bytes (32 is not, even with only 7
words touched) and at least one access has a constant address (`[%SPL+24]`, a store or a
load); with every access through a computed address it stays in memory at any size.
The same on sm_75, sm_80, sm_89, sm_90, sm_100 and sm_120. `ptx2sass.opt.local_tables` applies
it: ours keeps in memory exactly what ptxas keeps there."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.tinygrad import sass_listing
from test_codegen_quality import _instructions

DIR = Path(__file__).parent / "local_tables"
PROMOTED = {"promoted_7_words": True, "promoted_constant_load": True,
            "memory_no_constant_access": False, "memory_32_bytes": False,
            # NVVM's `mul.wide` + `add` of the index into a 64-bit local address (text_scan's
            # tokenize_counts: `int c[5]; c[k]++`), unsigned and signed with an offset
            "promoted_wide_index": True, "promoted_wide_index_s32": True,
            # the frame whole or not at all: two small arrays both go to registers; next
            # to a 64-byte array kept in memory, the small one stays in memory too
            "promoted_frame_two_arrays": True, "memory_frame_other_in_memory": False}


def _local_accesses(listing: list[str]) -> int:
    return sum(o.split()[0].startswith(("LDL", "STL")) for o in listing)


@pytest.mark.parametrize("name", list(PROMOTED))
def test_ptxas_s_promotion_rule(name):
    ref = _instructions(sass_listing(oracle.ptxas((DIR / f"{name}.ptx").read_text()).output))
    assert (_local_accesses(ref) == 0) == PROMOTED[name], ref


def _ours(ptx: str, arch: str = "sm_89") -> bytes:
    ptx = ptx.replace("sm_89", arch)
    return codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")[0]


@pytest.mark.parametrize("name", list(PROMOTED))
def test_ours_keeps_in_memory_what_ptxas_keeps(name):
    ours = _instructions(sass_listing(_ours((DIR / f"{name}.ptx").read_text())))
    assert (_local_accesses(ours) == 0) == PROMOTED[name], ours


# promoted_frame_two_arrays reads words of `a` and `b` that no store of its thread wrote (each
# thread has its own local memory): undefined in PTX, so its values are compared with every
# word stored first (zeros), which keeps its frame promoted in both compilers
ZEROED = {"promoted_frame_two_arrays": "".join(f"  st.local.u32 [{v}+{4 * k}], 0;\n" for v in "ab" for k in range(4))}


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90"])
@pytest.mark.parametrize("name", ["promoted_7_words", "promoted_constant_load", "promoted_wide_index",
                                  "promoted_wide_index_s32", "promoted_frame_two_arrays"])
def test_table_in_registers_computes_ptxas_s_values(name, arch):
    ptx = (DIR / f"{name}.ptx").read_text().replace("sm_89", arch)
    if name in ZEROED:
        ptx = ptx.replace("  ld.param.u64 %rd1, [out];\n", "  ld.param.u64 %rd1, [out];\n" + ZEROED[name], 1)
        assert ZEROED[name] in ptx
    theirs = oracle.ptxas(ptx, arch=arch).output
    ours = _ours(ptx, arch)
    data = np.random.default_rng(3).integers(0, 1 << 30, 32 * 16, dtype=np.uint32)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(32 * 5, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), np.uint32(5)], hazard_check=True)
        assert not res.hazards
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    assert _local_accesses(_instructions(sass_listing(ours))) == 0


# byte offsets for the computed store, one per lane: each word, before and after the array,
# unaligned, far away, negative
STORE_AT = [0, 4, 8, 12, 16, 20, 24, 28, 32, -4, -8, 2, 6, 27, 25, 1 << 20, -(1 << 20), 0x7FFFFFFC,
            -0x80000000, 3, 100, -28, -24, 24, 8, 12, 0, 4, 29, 0x10000, 0x1000C, 7]


def test_out_of_range_store_writes_nothing_as_in_ptxas_s_code():
    """PTX leaves an access outside the array undefined; ptxas's registers compare the offset
    with each word's, so a store elsewhere (out of range, unaligned) writes no word. The
    in-range loads after it read what ptxas's code reads."""
    ptx = (DIR / "out_of_range.ptx").read_text()
    theirs = oracle.ptxas(ptx).output
    ours = _ours(ptx)
    data = np.random.default_rng(5).integers(0, 1 << 30, 32, dtype=np.uint32)
    at = np.array(STORE_AT, dtype=np.int32).view(np.uint32)
    outs = []
    for cubin in (ours, theirs):
        assert _local_accesses(_instructions(sass_listing(cubin))) == 0
        out = np.zeros(32 * 8, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data.copy(), at.copy()], hazard_check=True)
        assert not res.hazards
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    # and the model: the store lands only on a word's exact offset
    want = np.add.outer(data, np.arange(7, dtype=np.uint32)).astype(np.uint32)
    for lane, offset in enumerate(STORE_AT):
        if 0 <= offset < 28 and offset % 4 == 0:
            want[lane, offset // 4] = 0xDEAD
    got = outs[0].reshape(32, 8)
    assert got[:, :7].tobytes() == want.tobytes()
    assert list(got[:, 7]) == [want[lane, 2 + lane % 4] for lane in range(32)]


def test_unary_math_table_in_registers():
    """Triton's Payne-Hanek table (28 bytes, `st.local [%SPL+24]` after the loop). Its word
    selects keep 7 predicates live next to the kernel's long-lived range checks: the
    allocator recomputes the compares of the predicates it could not colour, not every
    compare (that doubled the ISETPs: 138, ptxas 87)."""
    ptx = (Path(__file__).parent / "corpus" / "triton" / "unary_math.ptx").read_text()
    ours = _instructions(sass_listing(_ours(ptx)))
    theirs = _instructions(sass_listing(oracle.ptxas(ptx).output))
    assert _local_accesses(ours) == 0
    compares = [sum(o.split()[0].startswith("ISETP") for o in x) for x in (ours, theirs)]
    assert compares[0] <= 1.1 * compares[1], compares


def test_small_array_stays_next_to_one_in_memory():
    """ptxas promotes the frame whole or not at all: `b[4]` (a computed store, a load at
    `[b+4]`) next to a 64-byte `a` in memory is stored and loaded too (4 LDL/STL, not 2)."""
    ptx = (DIR / "memory_frame_other_in_memory.ptx").read_text()
    ref = _instructions(sass_listing(oracle.ptxas(ptx).output))
    ours = _instructions(sass_listing(_ours(ptx)))
    assert _local_accesses(ref) == 4
    assert _local_accesses(ours) == _local_accesses(ref), ours
