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
