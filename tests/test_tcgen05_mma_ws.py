"""tcgen05.mma.ws (weight-stationary) and the collector-usage / `.ashift` hints on sm_100a:
`UTC{H,Q,I}MMA.WS` in the emulator (emu/ops_utcmma.py) and from our code generation
(isel/tcgen05.py's tmem_mma).

Expected values: NumPy's A @ B + C, placed in tensor memory as the PTX ISA's data-path
layouts say (M = 128: layout D, row i in lane i; M = 64: layout E; M = 32: layout G, N split
into 128/M column groups, group g's rows in lanes g*M..), ptxas 13.5's cubin and ours both
run in the emulator. The layouts E/G are read from the manual's figures as open-source
Blackwell kernels read them (e.g. tilelang's .ws TMEM layout); **not silicon-checked** (no
Blackwell device). The zero-column masks are written here from the manual's worked examples.
Instruction text and refusals: ptxas 13.5's, compared line for line."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run
from ptx2sass.errors import CompileError
from tests.test_emu_gmma import encode, write_matrix
from tests.test_emu_utcmma import (A_BASE, B_BASE, ESIZE, KINDS, THREADS, idesc, kernel, layout,
                                   ptxas, sdesc, values)

_OURS: dict[str, bytes] = {}


def ours(ptx: str) -> bytes:
    if ptx not in _OURS:
        _OURS[ptx] = compile_ptx(ptx, "sm_100a")
    return _OURS[ptx]


def ws_idesc(kind: str, m: int, n: int) -> int:
    """The instruction descriptor with M in bits 24-28 (M >> 4)."""
    return idesc(kind, n) & ~(0x1F << 24) | (m >> 4) << 24


def tmem_place(m: int, n: int):
    """(lane, column) of D's element (i, j): the PTX ISA's layouts D / E / G."""
    groups = 128 // m
    size = n // groups
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return i + m * (j // size), j % size


def launch_ws(kind: str, m: int, n: int, *, a_tmem=False, enable=1, usage="", mask=None,
              zero_cols=(), shift=0, seed=0, compiler=None, hazards=False, edit=None):
    """One tcgen05.mma.ws (M x N, A from a descriptor or tensor memory, B K-major without
    swizzle, read from row `shift` on) on test_emu_utcmma.py's kernel; D read back as
    tensor-memory lanes 0..127 x the N*M/128 columns D occupies. `mask`: the zero-column mask
    descriptor (a 64-bit register from the kernel's lane-mask parameter); `zero_cols`: the
    columns it zeroes (written by the test from the manual)."""
    rng = np.random.default_rng(seed)
    k = KINDS[kind][1]
    esize = ESIZE[kind]
    cols = n * m // 128
    A = values(rng, (m, k), kind)
    rows_b = n + (8 if shift else 0)
    Bfull = values(rng, (k, rows_b), kind)
    integer = kind in ("s8", "u8")
    C = rng.integers(-20, 20, (128, cols)).astype(np.float64)
    img = np.zeros(24576, np.uint8)
    la, sa = layout(0, False, esize, m)
    lb, sb = layout(0, False, esize, rows_b)
    write_matrix(img, A_BASE, A, kind, 0, False, la, sa)
    write_matrix(img, B_BASE, Bfull.T, kind, 0, False, lb, sb)
    bits = encode(np.resize(A, (128, k)), kind).astype(np.uint64)
    per = 4 // esize
    a_words = np.zeros((128, 8), np.uint64)
    for e in range(per):
        a_words |= bits[:, e::per] << np.uint64(8 * esize * e)
    a_words = a_words.astype(np.uint32)
    c_bits = C.astype(np.int64).astype(np.uint32) if integer else C.astype(np.float32).view(np.uint32)
    out = c_bits.copy()
    lanes = np.zeros(4, np.uint32)
    ptx = kernel(kind, cols, a_tmem=a_tmem)
    a_op = "[%r34]" if a_tmem else "%rd1"
    old = f"tcgen05.mma.cta_group::1.kind::{KINDS[kind][0]} [%r2], {a_op}, %rd2, %r4, %p3;"
    assert old in ptx
    new = f"tcgen05.mma.ws.cta_group::1.kind::{KINDS[kind][0]}{usage} [%r2], {a_op}, %rd2, %r4, %p3"
    if mask is not None:
        lanes[:2] = [mask & 0xFFFFFFFF, mask >> 32]
        new = "mov.b64 %rd11, {%r40, %r41};\n  " + new + ", %rd11"
    ptx = ptx.replace(old, new + ";")
    if edit is not None:
        ptx = edit(ptx)
    args = [img, out, a_words, np.uint64(sdesc(A_BASE, la, sa, 0)), np.uint64(sdesc(B_BASE, lb, sb, 0)),
            np.uint32(ws_idesc(kind, m, n)), np.uint32(enable), np.uint64(0), np.uint64(0), lanes]
    result = run((compiler or ptxas)(ptx), "k", (1, 1, 1), (THREADS, 1, 1), args, hazard_check=hazards)
    B = Bfull[:, shift:shift + n].copy()
    B[:, list(zero_cols)] = 0
    lane, col = tmem_place(m, n)
    want = C.copy()
    want[lane, col] = A @ B + (C[lane, col] if enable else 0)
    got = out.view(np.int32).astype(np.float64) if integer else out.view(np.float32).astype(np.float64)
    return got, want, result


def both(kind, m, n, **kw):
    """ptxas's cubin and ours = NumPy; ours without hazards."""
    for who, compiler in (("ptxas", None), ("ours", ours)):
        got, want, result = launch_ws(kind, m, n, compiler=compiler, hazards=who == "ours", **kw)
        assert np.array_equal(got, want), (who, np.argwhere(got != want)[:5])
        if who == "ours":
            assert not result.hazards, result.hazards[:3]


@pytest.mark.parametrize("m", [128, 64, 32])
@pytest.mark.parametrize("kind", ["f16", "tf32", "e4m3", "s8"])
def test_ws_shapes_each_kind(kind, m):
    """M = 128 (layout D), 64 (layout E), 32 (layout G); N = 64."""
    both(kind, m, 64, seed=40 + m)


@pytest.mark.parametrize("m,n", [(64, 128), (32, 256), (128, 128)])
def test_ws_wider_n(m, n):
    both("bf16", m, n, seed=41, enable=0)


def test_ws_a_from_tensor_memory():
    both("f16", 128, 64, a_tmem=True, seed=42)


@pytest.mark.parametrize("usage", [".collector::b0::fill", ".collector::b3::discard"])
def test_ws_collector_fill_or_discard_reads_memory(usage):
    both("f16", 64, 64, usage=usage, seed=43)


def _refill(second: str, fill: str = "fill"):
    """Thread 0: the MMA with `.collector::b1::<fill>`, commit, wait; B's shared memory
    zeroed; a second MMA (enable 1) with `second` usage; every thread waits for the second
    phase of the mbarrier."""
    def edit(p):
        first = next(t for t in p.splitlines() if "tcgen05.mma.ws" in t).strip()
        mma = first.replace(".kind::f16 ", f".kind::f16.collector::b1::{fill} ")
        again = first.replace(".kind::f16 ", f".kind::f16{second} ").replace("%p3;", "1;")
        p = p.replace(first, f"""{mma}
  mov.u32 %r26, bar;
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r26];
FIRST:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
  @!%p4 bra FIRST;
  tcgen05.fence::after_thread_sync;
  mov.u32 %r29, 0;
  mov.u32 %r27, 0;
ZERO:
  add.u32 %r28, %r5, %r27;
  st.shared.v4.u32 [%r28+{B_BASE}], {{%r29, %r29, %r29, %r29}};
  add.u32 %r27, %r27, 16;
  setp.lt.u32 %p0, %r27, 8192;
  @%p0 bra ZERO;
  fence.proxy.async.shared::cta;
  {again}""")
        return p.replace("mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;\n  @!%p4 bra WAIT;",
                         "mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 1;\n  @!%p4 bra WAIT;")
    return edit


@pytest.mark.parametrize("second,times", [(".collector::b1::use", 2), (".collector::b1::lastuse", 2),
                                          (".collector::b1::discard", 1), ("", 1),
                                          (".collector::b2::fill", 1)])
def test_ws_collector_buffer_outlives_shared_memory(second, times):
    """B filled into buffer 1, its shared memory then zeroed: a second MMA that uses or
    last-uses buffer 1 still multiplies by B (D = 2 A @ B), one that reads memory (discard,
    no hint = b0::discard, a fill of another buffer) by zeros (D = A @ B)."""
    for compiler in (None, ours):
        got, once, result = launch_ws("f16", 64, 64, enable=0, seed=47, compiler=compiler,
                                      hazards=compiler is not None, edit=_refill(second))
        assert np.array_equal(got, times * once), (second, compiler)
        if compiler is not None:
            assert not result.hazards, result.hazards[:3]


def test_ws_collector_use_without_fill_faults():
    """`::lastuse` / `::use` of a buffer no fill made valid: undefined in PTX, a fault here."""
    from ptx2sass.emu.errors import EmuFault
    with pytest.raises(EmuFault, match="without a valid previous"):
        launch_ws("f16", 64, 64, enable=0, seed=47, edit=_refill(".collector::b1::use", fill="lastuse"))
    with pytest.raises(EmuFault, match="without a valid previous"):
        launch_ws("f16", 64, 64, usage=".collector::b0::use", seed=47)


def test_ws_guarded_mma_and_commit():
    """`@!%p2 tcgen05.mma.ws` / `@!%p2 tcgen05.commit` in straight-line code: only thread 0
    issues (the mask register pair R2UR'd by the issuing lane)."""
    def edit(p):
        p = p.replace("  @%p2 bra ISSUED;\n", "")
        return re.sub(r"\n  (tcgen05\.(mma|commit))", r"\n  @!%p2 \1", p)
    m, n, desc, cols, shift = MASKS["m64"]
    both("f16", m, n, mask=desc, zero_cols=cols, shift=shift, seed=46, edit=edit)


# zero-column masks (PTX ISA "Zero-Column Mask Descriptor"): non-zero-mask bit 39; ones
# (zeroed columns) span = bits 40-47 + 1, zeros (used) span = bits 48-55 + 1 (as the manual's
# examples 2-4 read); first span bit 32+i, start count byte i, column shift bits 56-61
def zdesc(sc=(0, 0, 0, 0), fs=(0, 0, 0, 0), ones=3, zeros=4, shift=0, nonzero=1):
    d = sum(s << (8 * i) for i, s in enumerate(sc)) | sum(f << (32 + i) for i, f in enumerate(fs))
    return d | nonzero << 39 | (ones - 1) << 40 | (zeros - 1) << 48 | shift << 56


MASKS = {
    # M = 128, example 2's pattern: 4 used, 3 zeroed, repeating
    "m128": (128, 64, zdesc(), [j for j in range(64) if j % 7 >= 4], 0),
    # M = 64, example 3: mask0 starts with its ones, mask1 with its zeros (32 columns each)
    "m64": (64, 64, zdesc(fs=(1, 0, 0, 0)),
            [j for j in range(32) if j % 7 < 3] + [32 + j for j in range(32) if j % 7 >= 4], 0),
    # M = 32, example 4's start counts and first spans, its shift of 2 (16 columns each)
    "m32_shift": (32, 64, zdesc(sc=(0, 1, 2, 1), fs=(1, 1, 0, 0), shift=2),
                  [j for j in range(16) if j % 7 < 3] + [16 + j for j in range(16) if (j + 1) % 7 < 3]
                  + [32 + j for j in range(16) if (j + 2) % 7 >= 4]
                  + [48 + j for j in range(16) if (j + 1) % 7 >= 4], 2),
    "nonzero_off": (128, 64, zdesc(nonzero=0, shift=3), [], 3),
}


@pytest.mark.parametrize("name", list(MASKS))
def test_ws_zero_column_mask(name):
    m, n, desc, cols, shift = MASKS[name]
    both("f16", m, n, mask=desc, zero_cols=cols, shift=shift, seed=44)


def test_zero_column_mask_manual_examples():
    """The manual's printed masks (examples 1-4), LSB first."""
    from ptx2sass.emu.ops_utcmma import zero_column_mask

    def bits(text, size):
        return [c == "1" for c in reversed(text.replace(" ", ""))][:size]
    assert not zero_column_mask(zdesc(ones=3, zeros=4, nonzero=0), 128, 128).any()
    assert list(zero_column_mask(zdesc(), 128, 128)[:14]) == bits("111 0000 111 0000", 14)
    got = zero_column_mask(zdesc(fs=(1, 0, 0, 0)), 64, 128)
    assert list(got[:17]) == bits("111 0000 111 0000 111", 17)
    assert list(got[64:82]) == bits("0000 111 0000 111 0000", 18)
    got = zero_column_mask(zdesc(sc=(0, 1, 2, 1), fs=(1, 1, 0, 0), shift=2), 32, 128)
    assert list(got[0:14]) == bits("0000 111 0000 111", 14)
    assert list(got[32:45]) == bits("0000 111 0000 11", 13)
    assert list(got[64:76]) == bits("111 0000 111 00", 12)
    assert list(got[96:109]) == bits("111 0000 111 000", 13)


# ------------------------------------------------------------------ instruction text
SMALL = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 da, .param .u64 db, .param .u32 id, .param .u32 taddr, .param .u64 zm)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [da];
  ld.param.u64 %rd2, [db];
  ld.param.u32 %r4, [id];
  ld.param.u32 %r2, [taddr];
  ld.param.u64 %rd5, [zm];
  setp.ne.u32 %p1, %r4, 0;
  tcgen05.mma.{mma};
  ret;
}
"""
MMA_LINE = 15
FORMS = [
    "ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1",
    "ws.cta_group::1.kind::tf32 [%r2], [%r4+32], %rd2, %r4, 1",
    "ws.cta_group::1.kind::f8f6f4.collector::b1::fill [%r2], %rd1, %rd2, %r4, 0, %rd5",
    "ws.cta_group::1.kind::i8.collector::b2::lastuse [%r2], [%r4], %rd2, %r4, 0, %rd5",
    "ws.cta_group::1.kind::f16.collector::b0::use [%r2], %rd1, %rd2, %r4, %p1, 2",
    "ws.cta_group::1.kind::f16.collector::b3::discard [%r2], %rd1, %rd2, %r4, %p1, 0",
    "cta_group::1.kind::f16.collector::a::fill [%r2], %rd1, %rd2, %r4, %p1",
    "cta_group::1.kind::f16.collector::a::use [%r2], [%r4], %rd2, %r4, %p1",
    "cta_group::1.kind::i8.collector::a::lastuse [%r2], %rd1, %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1",
    "cta_group::1.kind::f16.collector::a::discard [%r2], [%r4], %rd2, %r4, %p1, 3",
    "cta_group::1.kind::f16.ashift [%r2], [%r4], %rd2, %r4, %p1",
    "cta_group::1.kind::f8f6f4.ashift.collector::a::lastuse [%r2], [%r4], %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1",
    "cta_group::2.kind::f16.ashift [%r2], [%r4], %rd2, %r4, %p1",
    "cta_group::2.kind::f16.collector::a::use [%r2], %rd1, %rd2, %r4, %p1",
    # .sp: the same opcode, the metadata's tensor-memory address in the idesc pair's low half
    "sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1",
    "sp.cta_group::1.kind::f16 [%r2], [%r4], %rd2, [%r2+64], %r4, %p1",
    "sp.cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, [%r2], %r4, {%r1, %r1, %r1, %r1}, %p1",
    "sp.cta_group::1.kind::f16.collector::a::fill [%r2], %rd1, %rd2, [%r2], %r4, %p1, 2",
    "ws.sp.cta_group::1.kind::tf32.collector::b1::use [%r2], %rd1, %rd2, [%r2], %r4, %p1, %rd5",
    "sp.cta_group::2.kind::i8 [%r2], %rd1, %rd2, [%r2], %r4, %p1",
]


def _mma_line(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, ("-c",))
    return [re.sub(r"UR\d+", "UR", " ".join(line.split("*/", 1)[1].split(";")[0].split()))
            for line in text.splitlines() if "MMA" in line]


@pytest.mark.parametrize("form", FORMS)
def test_instruction_is_ptxas(form):
    """UTC*MMA[.WS][.2CTA][.ASHIFT], the collector suffixes (`.A_KEEP`, `.B_REUSE.B_KEEP
    .BUFFER2` ...) and the zero-column mask pair (dropped when the immediate is 0, as ptxas
    does) = ptxas's line, uniform register numbers aside."""
    ptx = SMALL.replace("{mma}", form)
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert theirs.ok, theirs.stderr
    assert _mma_line(compile_ptx(ptx, "sm_100a")) == _mma_line(theirs.output)


REFUSED = [
    "ws.cta_group::2.kind::f16 [%r2], %rd1, %rd2, %r4, %p1",
    "ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1",
    "ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, %r4",
    "ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, %rd5, 3",
    "ws.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4",
    "ws.cta_group::1.kind::f16.collector::a::fill [%r2], %rd1, %rd2, %r4, %p1",
    "ws.cta_group::1.kind::f16.collector::b4::fill [%r2], %rd1, %rd2, %r4, %p1",
    "ws.cta_group::1.kind::f16.collector::b0::bogus [%r2], %rd1, %rd2, %r4, %p1",
    "ws.cta_group::1.kind::f16.collector::b0::fill.collector::b1::use [%r2], %rd1, %rd2, %r4, %p1",
    "ws.cta_group::1.kind::f16.ashift [%r2], [%r4], %rd2, %r4, %p1",
    "cta_group::1.kind::f16.collector::a::fill.collector::a::use [%r2], %rd1, %rd2, %r4, %p1",
    "cta_group::1.kind::f16.ashift.ashift [%r2], [%r4], %rd2, %r4, %p1",
    "cta_group::1.kind::f16.ashift [%r2], %rd1, %rd2, %r4, %p1",
    "cta_group::1.kind::f16.ashift.collector::a::use [%r2], [%r4], %rd2, %r4, %p1",
    "cta_group::1.kind::f16.collector::a::fill.ashift [%r2], %rd1, %rd2, %r4, %p1",
    "cta_group::1.kind::f16.collector::b0::fill [%r2], %rd1, %rd2, %r4, %p1",
    "sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r2, %r4, %p1",
    "sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1",
    "sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1, 16",
    "sp.cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, [%r2], %r4, %p1, 1",
    "sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1, %r3",
    "ws.sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1, %r3",
    "sp.sp.cta_group::1.kind::f16 [%r2], %rd1, %rd2, [%r2], %r4, %p1",
]


@pytest.mark.parametrize("form", REFUSED)
def test_refusals_are_ptxas_messages(form):
    ptx = SMALL.replace("{mma}", form)
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert not theirs.ok
    want = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"line (\d+); error\s*: (.*)", theirs.stderr)]
    assert want and want[0][0] == MMA_LINE
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, "sm_100a")
    assert [(d.line, d.message) for d in err.value.diagnostics if d.severity == "error"] == want


def test_ashift_is_not_modelled_in_the_emulator():
    """`.ashift` (UTC*MMA.ASHIFT) compiles as ptxas's; the emulator faults naming it."""
    from ptx2sass.emu.errors import EmuFault
    ptx = kernel("f16", 32, a_tmem=True).replace("tcgen05.mma.cta_group::1.kind::f16 ",
                                                  "tcgen05.mma.cta_group::1.kind::f16.ashift ")
    with pytest.raises(EmuFault, match="ASHIFT"):
        launch_args = [np.zeros(24576, np.uint8), np.zeros((128, 32), np.uint32), np.zeros((128, 8), np.uint32),
                       np.uint64(0), np.uint64(0), np.uint32(ws_idesc("f16", 128, 32)), np.uint32(1),
                       np.uint64(0), np.uint64(0), np.zeros(4, np.uint32)]
        run(ours(ptx), "k", (1, 1, 1), (THREADS, 1, 1), launch_args)


TARGET_FORMS = [
    "ws.cta_group::1.kind::f16.collector::b1::use [%r2], %rd1, %rd2, %r4, %p1, %rd5",
    "ws.cta_group::1.kind::f8f6f4 [%r2], [%r4], %rd2, %r4, %p1",
    "ws.cta_group::1.kind::i8 [%r2], %rd1, %rd2, %r4, %p1",
    "sp.cta_group::1.kind::f16.collector::a::use [%r2], [%r4], %rd2, [%r2+64], %r4, %p1",
    "cta_group::1.kind::f16.ashift.collector::a::lastuse [%r2], [%r4], %rd2, %r4, %p1",
]


@pytest.mark.parametrize("target", ["sm_100f", "sm_103a", "sm_110a", "sm_120a", "sm_90a"])
def test_other_targets_are_ptxas(target):
    """The tcgen05 family targets: ptxas's line (kind::i8 refused off sm_100a/sm_110a);
    targets without tcgen05: ptxas's errors (`tcgen05.mma.ws` named, `.ashift` and the
    collector usage as features after the kind)."""
    for form in TARGET_FORMS:
        ptx = SMALL.replace("{mma}", form).replace(".target sm_100a", f".target {target}") \
            .replace(".version 8.7", ".version 9.0")
        theirs = oracle.ptxas(ptx.encode(), target, name="k")
        if theirs.ok:
            assert _mma_line(compile_ptx(ptx, target)) == _mma_line(theirs.output), form
            continue
        want = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"line (\d+); error\s*: (.*)", theirs.stderr)]
        with pytest.raises(CompileError) as err:
            compile_ptx(ptx, target)
        assert [(d.line, d.message) for d in err.value.diagnostics if d.severity == "error"] == want, form


@pytest.mark.parametrize("compiler", ["ptxas", "ours"])
def test_hazard_checker_sees_the_zero_column_mask_pair(compiler, monkeypatch):
    """The checker is handed both registers of UTC*MMA.WS's zero-column mask pair (and the
    descriptor pairs, the tensor-memory addresses, the idesc, the enable), so a too-early
    read of any of them would be flagged; nothing is flagged at the MMA."""
    from ptx2sass.emu import launch as launch_mod
    from ptx2sass.emu.hazards import TimingModel
    from ptx2sass.encoder.model import Mem, Reg
    seen = {}

    class Recording(TimingModel):
        def end(self, clock, step, lanes, reads, writes):
            if step.ins.opcode in ("UTCHMMA", "UTCQMMA", "UTCIMMA"):
                seen.setdefault(step.offset, (step.ins, set()))[1].update(reads)
            return super().end(clock, step, lanes, reads, writes)

    real = launch_mod._attach_timing
    monkeypatch.setattr(launch_mod, "_attach_timing",
                        lambda launch_, check, trace, timing=None: real(launch_, check, trace, Recording))
    m, n, desc, cols, shift = MASKS["m64"]
    got, want, result = launch_ws("f16", m, n, mask=desc, zero_cols=cols, shift=shift, seed=45,
                                  hazards=True, compiler=None if compiler == "ptxas" else ours)
    assert np.array_equal(got, want)
    assert seen
    for off, (ins, reads) in seen.items():
        assert "WS" in ins.modifiers
        named = set()
        for op in ins.operands:
            if isinstance(op, Mem):
                named.add(("UR", op.ubase.index))
            elif isinstance(op, Reg) and op.file == "UR":      # descriptor and mask pairs
                named |= {("UR", op.index), ("UR", op.index + 1)}
            elif isinstance(op, Reg) and op.file == "UP" and op.index != 7:
                named.add(("UP", op.index))
        assert len([op for op in ins.operands if isinstance(op, Reg) and op.file == "UR" and not op.gdesc]) == 1
        assert named <= reads, (off, named - reads)
    assert not {h.offset for h in result.hazards} & set(seen)


def _refill_a(second: str):
    """The dense MMA with `.collector::a::fill`, commit, wait; A's shared memory zeroed; a
    second MMA (enable 1) with `second`; every thread waits for the second phase."""
    def edit(p):
        first = next(t for t in p.splitlines() if "tcgen05.mma." in t).strip()
        mma = first.replace(".kind::f16 ", ".kind::f16.collector::a::fill ")
        again = first.replace(".kind::f16 ", f".kind::f16{second} ").replace("%p3;", "1;")
        p = p.replace(first, f"""{mma}
  mov.u32 %r26, bar;
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r26];
FIRST:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
  @!%p4 bra FIRST;
  tcgen05.fence::after_thread_sync;
  mov.u32 %r29, 0;
  mov.u32 %r27, 0;
ZERO:
  add.u32 %r28, %r5, %r27;
  st.shared.v4.u32 [%r28], {{%r29, %r29, %r29, %r29}};
  add.u32 %r27, %r27, 16;
  setp.lt.u32 %p0, %r27, {B_BASE};
  @%p0 bra ZERO;
  fence.proxy.async.shared::cta;
  {again}""")
        return p.replace("mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;\n  @!%p4 bra WAIT;",
                         "mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 1;\n  @!%p4 bra WAIT;")
    return edit


@pytest.mark.parametrize("second,times", [(".collector::a::use", 2), (".collector::a::lastuse", 2),
                                          (".collector::a::discard", 1), ("", 1)])
def test_dense_collector_a_outlives_shared_memory(second, times):
    """tcgen05.mma (not .ws) with A filled into its collector buffer, A's shared memory then
    zeroed: `::use` / `::lastuse` still multiply by A (D = 2 A @ B), discard / no hint read
    the zeros (D = A @ B); ptxas's cubin and ours."""
    from tests.test_emu_utcmma import launch
    for compiler in (None, ours):
        got, once, result = launch("f16", 32, enable=0, seed=48, compiler=compiler,
                                   hazards=compiler is not None, edit=_refill_a(second))
        assert np.array_equal(got, times * once), (second, compiler)
        if compiler is not None:
            assert not result.hazards, result.hazards[:3]
