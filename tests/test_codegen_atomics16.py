"""16-bit atomics (atom/red.add.noftz.f16, atom.cas.b16) on global, generic and shared
memory: neighbouring lanes update the two halves of one 32-bit word at once, so the
compare-and-swap loop must keep the other lane's half. Ours and ptxas's code in the
emulator against NumPy (f16 sums are exactly rounded by float32 arithmetic: 24 >= 2*11+2)."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

THREADS = 64
SPACES = {"global": ("cvta.to.global.u64 %rd2, %rd2;", ".global", "[%rd3]"),
          "generic": ("", "", "[%rd3]"),
          "shared": ("", ".shared", "[%sa]")}


def kernel(space: str, body: str, arch: str = "sm_89") -> str:
    to_global, _, _ = SPACES[space]
    return f""".version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 cells, .param .u64 vals)
{{
.reg .b64 %rd<8>;
.reg .b32 %r<4>, %sa;
.reg .b16 %h<6>;
.shared .align 4 .b16 sh[{THREADS}];
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [cells];
ld.param.u64 %rd5, [vals];
cvta.to.global.u64 %rd1, %rd1;
cvta.to.global.u64 %rd5, %rd5;
{to_global}
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 2;
add.s64 %rd3, %rd2, %rd4;
mul.wide.u32 %rd6, %r1, 4;
add.s64 %rd6, %rd5, %rd6;
ld.global.u16 %h1, [%rd6];
ld.global.u16 %h2, [%rd6+2];
mov.u32 %sa, sh;
shl.b32 %r2, %r1, 1;
add.u32 %sa, %sa, %r2;
ld.global.u16 %h4, [%rd3];
st.shared.u16 [%sa], %h4;
bar.sync 0;
{body}
bar.sync 0;
ld.shared.u16 %h4, [%sa];
add.s64 %rd7, %rd1, %rd4;
st.global.u16 [%rd7], %h3;
st.global.u16 [%rd7+{2 * THREADS}], %h4;
ret;
}}
"""


def _run(text, cells, vals, arch="sm_89", listings=None):
    theirs = oracle.ptxas(text, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(text, arch, "k.ptx"), arch, filename="k.ptx")
    if listings is not None:
        listings += [oracle.nvdisasm(ours), oracle.nvdisasm(theirs.output)]
    results = []
    for cubin, hazards in ((ours, True), (theirs.output, False)):
        out, c = np.zeros(2 * THREADS, np.uint16), cells.copy()
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, c, vals.copy()], hazard_check=hazards)
        assert not (hazards and res.hazards), res.hazards[:2]
        results.append((out[:THREADS], c, out[THREADS:]))
    return results


def _halves(rng, n):
    """Finite f16 bit patterns (normal and subnormal, both signs)."""
    x = rng.standard_normal(n).astype(np.float16)
    x[::7] = np.float16(6.1e-5) * rng.random(len(x[::7]))       # subnormal-ish
    return x.view(np.uint16)


@pytest.mark.parametrize("space", sorted(SPACES))
@pytest.mark.parametrize("opcode", ["atom", "red"])
def test_f16_add(space, opcode):
    _, sp, addr = SPACES[space]
    dest = "%h3, " if opcode == "atom" else ""
    body = f"{opcode}{sp}.add.noftz.f16 {dest}{addr}, %h1;" + ("" if opcode == "atom" else "\nmov.b16 %h3, 0;")
    rng = np.random.default_rng(11)
    cells, v = _halves(rng, THREADS), _halves(rng, THREADS)
    vals = np.stack([v, np.zeros(THREADS, np.uint16)], axis=1).ravel()
    total = (cells.view(np.float16).astype(np.float32) + v.view(np.float16).astype(np.float32)).astype(np.float16)
    for old, mem, shared in _run(kernel(space, body), cells, vals):
        after = shared if space == "shared" else mem
        assert (after == total.view(np.uint16)).all()
        if opcode == "atom":
            assert (old == cells).all()


@pytest.mark.parametrize("space", sorted(SPACES))
def test_b16_compare_and_swap(space):
    _, sp, addr = SPACES[space]
    body = f"atom{sp}.cas.b16 %h3, {addr}, %h1, %h2;"
    rng = np.random.default_rng(12)
    cells = rng.integers(0, 4, THREADS).astype(np.uint16)
    cmp = rng.integers(0, 4, THREADS).astype(np.uint16)
    new = rng.integers(0, 1 << 16, THREADS).astype(np.uint16)
    vals = np.stack([cmp, new], axis=1).ravel()
    expected = np.where(cells == cmp, new, cells)
    for old, mem, shared in _run(kernel(space, body), cells, vals):
        after = shared if space == "shared" else mem
        assert (after == expected).all() and (old == cells).all()


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("sem", ["acquire", "release", "acq_rel"])
@pytest.mark.parametrize("space", ["global", "generic"])
def test_b16_compare_and_swap_with_a_memory_order(space, sem, arch):
    """atom.<sem>.cas.b16 (was refused 'with .acq_rel not supported yet'): ptxas fences each
    compare-and-swap of its loop (MEMBAR.ALL.GPU + ERRBAR before a release, CCTL.IVALL after
    an acquire); the values as NumPy's, the fences where ptxas has them."""
    _, sp, addr = SPACES[space]
    body = f"atom.{sem}.gpu{sp}.cas.b16 %h3, {addr}, %h1, %h2;"
    rng = np.random.default_rng(13)
    cells = rng.integers(0, 4, THREADS).astype(np.uint16)
    cmp = rng.integers(0, 4, THREADS).astype(np.uint16)
    new = rng.integers(0, 1 << 16, THREADS).astype(np.uint16)
    vals = np.stack([cmp, new], axis=1).ravel()
    expected = np.where(cells == cmp, new, cells)
    listings = []
    for old, mem, _ in _run(kernel(space, body, arch), cells, vals, arch, listings):
        assert (mem == expected).all() and (old == cells).all()
    for text in listings:
        assert ("MEMBAR.ALL.GPU" in text) == (sem != "acquire")
        assert ("CCTL.IVALL" in text) == (sem != "release")
