"""lop3 (all 256 truth tables; with a predicate result combined by .or/.and; immediates in
every slot) and cnot: our cubin against ptxas's in the emulator, and both against a NumPy
reference of the PTX semantics."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.isel.logic_ops import swap_slots

THREADS = 64
EDGES = [0, 0xFFFFFFFF, 0x80000000, 1, 0x55555555, 0xAAAAAAAA, 0x0F0F0F0F, 0x12345678]


def lut3(a, b, c, lut):
    out = np.zeros_like(a)
    for i in range(8):
        if lut >> i & 1:
            out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return out


def _kernel(lines: list[str], nout: int) -> str:
    body = "\n".join(lines)
    stores = "\n".join(f"st.global.b32 [%rd5+{4 * k}], %o{k};" for k in range(nout))
    return f""".version 8.2
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<6>;
.reg .b32 %t, %a<4>, %o<{nout}>;
.reg .pred %q, %p<{nout}>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %t, %tid.x;
mul.wide.u32 %rd3, %t, 16;
add.s64 %rd4, %rd2, %rd3;
ld.global.b32 %a0, [%rd4];
ld.global.b32 %a1, [%rd4+4];
ld.global.b32 %a2, [%rd4+8];
ld.global.b32 %a3, [%rd4+12];
setp.ne.b32 %q, %a3, 0;
mul.wide.u32 %rd3, %t, {4 * nout};
add.s64 %rd5, %rd1, %rd3;
{body}
{stores}
ret;
}}
"""


def _inputs(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 1 << 32, size=(THREADS, 4), dtype=np.uint64).astype(np.uint32)
    for t, e in enumerate(EDGES):
        data[t, :3] = [e, EDGES[(t + 3) % 8], EDGES[(t + 5) % 8]]
    data[:, 3] = rng.integers(0, 2, size=THREADS)
    return data


def _both(ptx, nout, data):
    theirs = oracle.ptxas(ptx).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    outs = []
    for cubin, check in ((ours, True), (theirs, False)):
        out = np.zeros((THREADS, nout), dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy()], hazard_check=check)
        assert not (check and res.hazards), [str(h) for h in res.hazards[:3]]
        outs.append(out)
    return outs


@pytest.mark.parametrize("chunk", range(16))
def test_lop3_every_truth_table(chunk):
    luts = range(16 * chunk, 16 * chunk + 16)
    lines = [f"lop3.b32 %o{k}, %a0, %a1, %a2, {lut};" for k, lut in enumerate(luts)]
    data = _inputs(chunk)
    ours, theirs = _both(_kernel(lines, 16), 16, data)
    a, b, c = (data[:, j] for j in range(3))
    want = np.stack([lut3(a, b, c, lut) for lut in luts], axis=1)
    assert (theirs == want).all()
    assert (ours == want).all()


@pytest.mark.parametrize("chunk", range(16))
def test_lop3_predicate_result_every_truth_table(chunk):
    """`lop3.or/.and d|p, a, b, c, lut, q`: p = (d != 0) or/and q (q alternately negated)."""
    luts = list(range(16 * chunk, 16 * chunk + 16))
    lines = []
    for k, lut in enumerate(luts):
        op = ("or", "and")[k % 2]
        q = "!%q" if k % 4 >= 2 else "%q"
        lines += [f"lop3.{op}.b32 %o{k}|%p{k}, %a0, %a1, %a2, {lut}, {q};",
                  f"selp.b32 %o{k}, 1, %o{k}, %p{k};"] if k % 3 else \
                 [f"lop3.{op}.b32 %o{k}|%p{k}, %a0, %a1, %a2, {lut}, {q};",
                  f"selp.b32 %o{k}, 0xdead, 0xbeef, %p{k};"]
    data = _inputs(100 + chunk)
    ours, theirs = _both(_kernel(lines, 16), 16, data)
    a, b, c, qv = (data[:, j] for j in range(4))
    for k, lut in enumerate(luts):
        d = lut3(a, b, c, lut)
        q = (qv != 0) ^ (k % 4 >= 2)
        p = (d != 0) | q if k % 2 == 0 else (d != 0) & q
        want = np.where(p, 1, d) if k % 3 else np.where(p, 0xDEAD, 0xBEEF)
        assert (theirs[:, k] == want).all(), k
        assert (ours[:, k] == want).all(), (k, lut)


def test_lop3_immediates_in_every_slot():
    forms = ["%a0, 5, %a2, 0x96", "5, %a1, %a2, 0xf8", "%a0, %a1, 7, 0xe4", "3, %a1, 7, 0xe8",
             "3, 0x0f0f, %a2, 0xd2", "%a0, 0xff00ff, 0x3c3c, 0x78", "0x80000000, %a1, 1, 0x1b"]
    lines = [f"lop3.b32 %o{k}, {f};" for k, f in enumerate(forms)]
    data = _inputs(7)
    ours, theirs = _both(_kernel(lines, len(forms)), len(forms), data)
    assert (ours == theirs).all()


def test_slot_swaps_keep_the_function():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 1 << 32, size=(3, 100), dtype=np.uint64).astype(np.uint32)
    for lut in range(256):
        want = lut3(x[0], x[1], x[2], lut)
        assert (lut3(x[1], x[0], x[2], swap_slots(lut, 0, 1)) == want).all()
        assert (lut3(x[0], x[2], x[1], swap_slots(lut, 1, 2)) == want).all()


@pytest.mark.parametrize("bits", [16, 32, 64])
def test_cnot(bits):
    from codegen_harness import run_both
    values = [0, 1, 2, (1 << bits) - 1, 1 << (bits - 1), 1 << 16, 1 << 32 if bits == 64 else 0]
    ours, theirs, data = run_both(f"cnot.b{bits} %o, %a0;", bits, 1, bits, values=values)
    mask = (1 << bits) - 1
    want = np.array([int(int(v) & mask == 0) for v in data], dtype=ours.dtype)
    assert (theirs == want).all() and (ours == want).all()


def _fns_reference(mask, base, off):
    """The PTX ISA's fns semantics, with exact arithmetic for |offset|."""
    off = off - (1 << 32) if off >> 31 else off
    if off == 0:
        return base if mask >> base & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(off) - 1, 1 if off > 0 else -1
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


@pytest.mark.parametrize("offset", [None, 0, 1, 3, -1, -4, 40])
def test_fns(offset):
    """Ours equals the PTX semantics everywhere; ptxas's code too, except for offset
    INT_MIN, where it returns 0 (|INT_MIN| overflows in its sequence)."""
    from codegen_harness import run_both
    rng = np.random.default_rng(3)
    n = 256
    data = np.zeros(n * 3, dtype=np.uint32)
    offs = [0, 1, 2, 3, -1, -2, -3, 31, 32, 33, -31, -32, -33, 0x7FFFFFFF, 0x80000000, 0x80000001]
    masks = [0xAAAAAAAA, 0, 0xFFFFFFFF, 1, 0x80000000]
    for t in range(n):
        data[3 * t] = masks[t % 5] if t < 100 else rng.integers(0, 1 << 32)
        data[3 * t + 1] = t % 32
        data[3 * t + 2] = offs[t % len(offs)] & 0xFFFFFFFF if t < 200 else rng.integers(-40, 41) & 0xFFFFFFFF
    off_text = "%a2" if offset is None else str(offset)
    ours, theirs, d = run_both(f"fns.b32 %o, %a0, %a1, {off_text};", 32, 3, 32, data=data)
    offsets = d[2::3] if offset is None else np.full(n, offset & 0xFFFFFFFF, dtype=np.uint32)
    want = np.array([_fns_reference(int(a), int(b), int(c))
                     for a, b, c in zip(d[0::3], d[1::3], offsets)], dtype=np.uint32)
    assert (ours == want).all(), np.nonzero(ours != want)[0][:5]
    sure = offsets != 0x80000000
    assert (theirs[sure] == want[sure]).all()
    if offset is None:
        assert (theirs[~sure] == 0).all()       # the ptxas deviation, as documented above
