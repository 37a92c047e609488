"""tcgen05.mma on sm_100a (UTCHMMA / UTCQMMA / UTCIMMA) in the emulator, on ptxas's own cubins.

Each kernel: warp 0 allocates 128 tensor-memory columns; every thread copies its share of a
shared-memory image built here (A and B placed as the PTX ISA's canonical layouts, the same
placement tests/test_emu_gmma.py writes from the wgmma text, which tcgen05's "Shared memory
descriptor" section reuses); thread t stores row t of C into D's lane t with tcgen05.st
(32x32b: warp w reaches lanes 32w..32w+31) and, where A comes from tensor memory, row t of A
packed low-first into 8 columns at column 64; thread 0 builds the two descriptors (templates
+ the image's shared address >> 4) and issues tcgen05.mma (or two chained), commits to an
mbarrier; every thread waits on it, reads D's row back with tcgen05.ld and stores it.

The reference is NumPy's A @ B + C, exact: every input is a small integer or a short
fraction, so every product and sum is exact in F32 / S32. The expected layouts are written
here from the PTX ISA text ("Instruction descriptor", "Shared memory descriptor", the
M = 128 data-path layout: row i of D in lane i, column j in column j), independently of
emu/ops_utcmma.py; a shared misreading of the manual would not show (silicon would)."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from tests.test_emu_gmma import encode, write_matrix

THREADS, M = 128, 128
# kind -> element types (A/B) and their instruction-descriptor codes, K of one MMA
KINDS = {"f16": ("f16", 16), "bf16": ("f16", 16), "tf32": ("tf32", 8), "e4m3": ("f8f6f4", 32),
         "e5m2": ("f8f6f4", 32), "s8": ("i8", 32), "u8": ("i8", 32)}
TYPE_CODE = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1, "u8": 0, "s8": 1}
ESIZE = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}
SWIZZLE_CODE = {0: 0, 128: 2, 64: 4, 32: 6}      # descriptor bits 61-63
A_BASE, B_BASE, IMG = 0, 16384, 24576


def idesc(kind: str, n: int, *, neg_a=0, neg_b=0, mn_a=0, mn_b=0, sat=0) -> int:
    """PTX ISA table "Instruction descriptor format for .kind::tf32, .kind::f16,
    .kind::f8f6f4 and .kind::i8"."""
    dtype = 2 if kind in ("s8", "u8") else 1
    code = TYPE_CODE[kind]
    return (sat << 3 | dtype << 4 | code << 7 | code << 10 | neg_a << 13 | neg_b << 14
            | mn_a << 15 | mn_b << 16 | (n >> 3) << 17 | (M >> 4) << 24)


def sdesc(offset: int, lbo: int, sbo: int, sw: int) -> int:
    """PTX ISA "Shared memory descriptor" (start = the image offset; the kernel adds the
    image's shared address >> 4): bits 46-48 the fixed 0b001, 61-63 the swizzle mode."""
    return ((offset >> 4) & 0x3FFF) | ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 \
        | 1 << 46 | SWIZZLE_CODE[sw] << 61


def kernel(kind: str, n: int, *, a_tmem=False, en="%p3", scale=None, chained=False,
           lanes=False) -> str:
    ptx_kind = KINDS[kind][0]
    a_op = "[%r34]" if a_tmem else "%rd1"
    tail = ""
    if lanes:
        tail += ", {%r40, %r41, %r42, %r43}"
    tail += f", {en}" + (f", {scale}" if scale is not None else "")
    mma = f"tcgen05.mma.cta_group::1.kind::{ptx_kind} [%r2], {a_op}, %rd2, %r4{tail};"
    second = (f"tcgen05.mma.cta_group::1.kind::{ptx_kind} [%r2], {a_op.replace('%rd1', '%rd7')}, "
              f"%rd8, %r4, 1;") if chained else ""
    cregs = ", ".join(f"%c{i}" for i in range(n))
    cload = "\n".join(f"  ld.global.b32 %c{i}, [%rd5+{4 * i}];" for i in range(n))
    cstore = "\n".join(f"  st.global.b32 [%rd5+{4 * i}], %c{i};" for i in range(n))
    aregs = ", ".join(f"%a{i}" for i in range(8))
    aload = "\n".join(f"  ld.global.b32 %a{i}, [%rd6+{4 * i}];" for i in range(8))
    return f""".version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 pimg, .param .u64 pc, .param .u64 pa, .param .u64 da,
                  .param .u64 db, .param .u32 id, .param .u32 en, .param .u64 da2,
                  .param .u64 db2, .param .u64 plane)
{{
  .reg .b32 %r<48>, %c<{n}>, %a<8>;
  .reg .b64 %rd<12>;
  .reg .pred %p<5>;
  .shared .align 16 .b32 taddr;
  .shared .align 8 .b64 bar;
  .shared .align 1024 .b8 img[{IMG}];
  mov.u32 %r3, %tid.x;
  shr.u32 %r20, %r3, 5;
  setp.ne.u32 %p1, %r20, 0;
  setp.ne.u32 %p2, %r3, 0;
  @%p1 bra ALLOCATED;
  mov.u32 %r1, taddr;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 128;
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
ALLOCATED:
  @%p2 bra INITED;
  mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
  ld.param.u64 %rd0, [pimg];
  cvta.to.global.u64 %rd0, %rd0;
  mov.u32 %r5, img;
  shl.b32 %r6, %r3, 4;
COPY:
  setp.ge.u32 %p0, %r6, {IMG};
  @%p0 bra COPIED;
  cvt.u64.u32 %rd3, %r6;
  add.u64 %rd4, %rd0, %rd3;
  ld.global.v4.u32 {{%r7, %r8, %r9, %r10}}, [%rd4];
  add.u32 %r11, %r5, %r6;
  st.shared.v4.u32 [%r11], {{%r7, %r8, %r9, %r10}};
  add.u32 %r6, %r6, {16 * THREADS};
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
  mul.wide.u32 %rd9, %r3, {4 * n};
  add.u64 %rd5, %rd5, %rd9;
{cload}
  tcgen05.st.sync.aligned.32x32b.x{n}.b32 [%r22], {{{cregs}}};
  ld.param.u64 %rd6, [pa];
  cvta.to.global.u64 %rd6, %rd6;
  mul.wide.u32 %rd9, %r3, 32;
  add.u64 %rd6, %rd6, %rd9;
{aload}
  add.u32 %r23, %r22, 64;
  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r23], {{{aregs}}};
  tcgen05.wait::st.sync.aligned;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  @%p2 bra ISSUED;
  shr.u32 %r24, %r5, 4;
  cvt.u64.u32 %rd10, %r24;
  ld.param.u64 %rd1, [da];
  add.u64 %rd1, %rd1, %rd10;
  ld.param.u64 %rd2, [db];
  add.u64 %rd2, %rd2, %rd10;
  ld.param.u64 %rd7, [da2];
  add.u64 %rd7, %rd7, %rd10;
  ld.param.u64 %rd8, [db2];
  add.u64 %rd8, %rd8, %rd10;
  ld.param.u32 %r4, [id];
  ld.param.u32 %r25, [en];
  setp.ne.u32 %p3, %r25, 0;
  add.u32 %r34, %r2, 64;
  ld.param.u64 %rd11, [plane];
  cvta.to.global.u64 %rd11, %rd11;
  ld.global.v4.u32 {{%r40, %r41, %r42, %r43}}, [%rd11];
  {mma}
  {second}
  mov.u32 %r26, bar;
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r26];
ISSUED:
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
  @!%p4 bra WAIT;
  tcgen05.fence::after_thread_sync;
  tcgen05.ld.sync.aligned.32x32b.x{n}.b32 {{{cregs}}}, [%r22];
  tcgen05.wait::ld.sync.aligned;
{cstore}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @%p1 bra FREED;
  tcgen05.fence::after_thread_sync;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 128;
FREED:
  ret;
}}
"""


_CUBINS: dict[str, bytes] = {}


def ptxas(ptx: str) -> bytes:
    if ptx not in _CUBINS:
        theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
        assert theirs.ok, theirs.stderr
        _CUBINS[ptx] = theirs.output
    return _CUBINS[ptx]


def values(rng, shape, kind):
    """Exactly representable, small: products and sums stay exact."""
    if kind == "u8":
        return rng.integers(0, 6, shape).astype(np.float64)
    if kind == "s8":
        return rng.integers(-5, 6, shape).astype(np.float64)
    if kind in ("e4m3", "e5m2"):
        return rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0], shape)
    return rng.integers(-4, 5, shape) * 0.5


def layout(sw: int, mn_major: bool, esize: int, rows: int):
    """(LBO, SBO) of the canonical layout a matrix of `rows` MN rows is placed in. K-major
    without swizzle: core matrices of 8 rows x 16 bytes, the two along K (32 bytes of K)
    LBO = 128 apart, 8-row groups SBO = 256 apart; K-major swizzled: rows `sw` bytes apart,
    8-row groups SBO = 8*sw apart. MN-major (16-bit): no swizzle: 8 K rows of a 16-byte MN
    run 16 bytes apart, MN runs SBO = 128 apart, the two 8-row K groups LBO = rows*16 apart;
    swizzled: 8 K rows of `sw` bytes along MN, MN row groups LBO = 16*sw apart, the two K
    groups SBO = 8*sw apart (interleaved atoms)."""
    if not mn_major:
        return (128, 256) if sw == 0 else (0, 8 * sw)
    if sw == 0:
        return (rows * 16, 128)
    return (16 * sw, 8 * sw)


def launch(kind: str, n: int, *, a_tmem=False, sw_a=0, sw_b=0, mn_a=False, mn_b=False,
           enable=1, en_imm=None, scale=None, neg_a=0, neg_b=0, chained=False, lanes=None,
           seed=0, sat=0, c_values=None, hazards=False, compiler=None, edit=None):
    rng = np.random.default_rng(seed)
    k = KINDS[kind][1]
    esize = ESIZE[kind]
    A = values(rng, (M, k), kind)
    B = values(rng, (k, n), kind)
    integer = kind in ("s8", "u8")
    C = (rng.integers(-20, 20, (M, n)).astype(np.float64) if c_values is None else c_values)
    img = np.zeros(IMG, np.uint8)
    la, sa = layout(sw_a, mn_a, esize, M)
    lb, sb = layout(sw_b, mn_b, esize, n)
    write_matrix(img, A_BASE, A, kind, sw_a, mn_a, la, sa)
    write_matrix(img, B_BASE, B.T, kind, sw_b, mn_b, lb, sb)
    A2 = B2 = None
    if chained:                  # the second MMA: the next K slice, inside the same atoms
        A2 = values(rng, (M, k), kind)
        B2 = values(rng, (k, n), kind)
        assert sw_a == sw_b == 128 and not (mn_a or mn_b or a_tmem)
        full_a = np.concatenate([A, A2], axis=1)
        full_b = np.concatenate([B, B2], axis=0)
        write_matrix(img, A_BASE, full_a, kind, 128, False, la, sa)
        write_matrix(img, B_BASE, full_b.T, kind, 128, False, lb, sb)
    # A in tensor memory: row i's K elements packed low-first into 8 32-bit columns
    bits = encode(A, kind).astype(np.uint64)
    per = 4 // esize
    a_words = np.zeros((M, 8), np.uint64)
    for e in range(per):
        a_words |= bits[:, e::per] << np.uint64(8 * esize * e)
    a_words = a_words.astype(np.uint32)
    c_bits = C.astype(np.int64).astype(np.uint32) if integer else C.astype(np.float32).view(np.uint32)
    out = c_bits.copy()
    mask = np.zeros(4, np.uint32) if lanes is None else lanes
    ptx = kernel(kind, n, a_tmem=a_tmem, en="%p3" if en_imm is None else str(en_imm), scale=scale,
                 chained=chained, lanes=lanes is not None)
    if edit is not None:            # a variant of the kernel (tests/test_codegen_tcgen05_mma.py)
        ptx = edit(ptx)
    args = [img, out, a_words, np.uint64(sdesc(A_BASE, la, sa, sw_a)), np.uint64(sdesc(B_BASE, lb, sb, sw_b)),
            np.uint32(idesc(kind, n, neg_a=neg_a, neg_b=neg_b, mn_a=int(mn_a), mn_b=int(mn_b), sat=sat)),
            np.uint32(enable), np.uint64(sdesc(A_BASE + k * esize, la, sa, sw_a)),
            np.uint64(sdesc(B_BASE + k * esize, lb, sb, sw_b)), mask]
    result = run((compiler or ptxas)(ptx), "k", (1, 1, 1), (THREADS, 1, 1), args, hazard_check=hazards)
    on = enable if en_imm is None else en_imm
    sA = -A if neg_a else A
    sB = -B if neg_b else B
    want = sA @ sB + (C * 2.0 ** -(scale or 0) if on else 0)
    if chained:
        want = want + A2 @ B2
    if lanes is not None:
        off = np.array([bool(int(lanes[i // 32]) >> (i % 32) & 1) for i in range(M)])
        want[off] = C[off]
    got = out.view(np.int32).astype(np.float64) if integer else out.view(np.float32).astype(np.float64)
    return got, want, result


def _check(got, want, result):
    assert np.array_equal(got, want), (np.argwhere(got != want)[:5], got[got != want][:5], want[got != want][:5])
    return result


@pytest.mark.parametrize("kind", ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"])
def test_each_kind_k_major_smem(kind):
    """A and B from shared memory, K-major, no swizzle, N = 32, D = A·B + C."""
    _check(*launch(kind, 32, seed=1))


@pytest.mark.parametrize("kind", ["f16", "tf32", "e4m3", "s8"])
def test_a_from_tensor_memory(kind):
    """A in tensor memory (row i in lane i, K packed low-first into 8 columns)."""
    _check(*launch(kind, 32, a_tmem=True, seed=2))


@pytest.mark.parametrize("sw", [32, 64, 128])
@pytest.mark.parametrize("kind", ["f16", "e4m3"])
def test_k_major_swizzles(kind, sw):
    _check(*launch(kind, 32, sw_a=sw, sw_b=sw, seed=3))


@pytest.mark.parametrize("sw", [0, 32, 64, 128])
def test_mn_major(sw):
    """Transpose A and B (instruction descriptor bits 15/16): MN-major f16 operands."""
    _check(*launch("bf16", 32, sw_a=sw, sw_b=sw, mn_a=True, mn_b=True, seed=4))


@pytest.mark.parametrize("mn_a,mn_b,sw", [(1, 0, 0), (0, 1, 128), (1, 0, 64)])
def test_mn_major_one_operand(mn_a, mn_b, sw):
    """Only one operand transposed: bit 15 is A's, bit 16 B's."""
    _check(*launch("f16", 32, sw_a=sw, sw_b=sw, mn_a=bool(mn_a), mn_b=bool(mn_b), seed=16))


def test_enable_input_d_off_and_immediates():
    """enable-input-d false (a register predicate, then the immediate 0) ignores D."""
    _check(*launch("f16", 32, enable=0, seed=5))
    _check(*launch("s8", 32, en_imm=0, seed=6))
    _check(*launch("f16", 32, en_imm=1, seed=7))


def test_scale_input_d():
    """scale-input-d 2: D = A·B + D·2^-2."""
    _check(*launch("f16", 32, scale=2, seed=8))
    _check(*launch("tf32", 32, scale=3, seed=9))


def test_negate_and_n():
    """Negate A and B (bits 13/14); N = 16 and N = 64 (bits 17-22)."""
    _check(*launch("f16", 16, neg_a=1, seed=10))
    _check(*launch("e5m2", 64, neg_b=1, seed=11))


def test_two_chained_mmas_before_one_commit():
    """Two MMAs into one D (the second's descriptors advanced 32 bytes along K inside the
    128B swizzle atoms, enable-input-d 1) complete in issue order at the commit."""
    _check(*launch("f16", 32, sw_a=128, sw_b=128, chained=True, seed=12))


def test_disable_output_lane():
    """disable-output-lane: the lanes whose mask bit is set keep their D."""
    lanes = np.array([0x0000F00F, 0x80000001, 0, 0xFFFF0000], np.uint32)
    _check(*launch("f16", 32, lanes=lanes, seed=13))


def test_i8_saturate():
    """Saturate (instruction descriptor bit 3, kind::i8): D clamps to S32."""
    C = np.full((M, 32), float((1 << 31) - 5))
    C[64:] = -float(1 << 31) + 5
    got, want, _ = launch("s8", 32, sat=1, seed=14, c_values=C)
    assert np.array_equal(got, np.clip(want, -(1 << 31), (1 << 31) - 1))


def _named(ins) -> set:
    """The registers a UTC*MMA's text names: descriptor pairs, tensor-memory addresses, the
    instruction descriptor, the disable-output-lane quad, enable-input-d."""
    from ptx2sass.encoder.model import Mem, Reg
    out = set()
    for op in ins.operands:
        if isinstance(op, Mem):
            out.add(("UR", op.ubase.index))
        elif isinstance(op, Reg) and op.gdesc:
            out |= {("UR", op.index), ("UR", op.index + 1)}
        elif isinstance(op, Reg) and op.file == "UR":
            out |= {("UR", op.index + i) for i in range(4)}
        elif isinstance(op, Reg) and op.file == "UP" and op.index != 7:
            out.add(("UP", op.index))
    return out


@pytest.mark.parametrize("kw", [{}, {"a_tmem": True}, {"lanes": np.array([1, 0, 0, 2], np.uint32)}],
                         ids=["smem", "tmem", "lanes"])
def test_hazard_checker_sees_every_register_the_mma_reads(kw, monkeypatch):
    """The checker is handed every uniform register and predicate the MMA's operands name
    (so a too-early read of any of them would be flagged), and finds nothing at ptxas's MMA
    or commit. (It flags three reads near ptxas's UTCATOMSWS allocation loop and an mbarrier
    init: latency-table questions outside this module, left alone.)"""
    from ptx2sass.emu import launch as launch_mod
    from ptx2sass.emu.hazards import TimingModel
    seen = {}

    class Recording(TimingModel):
        def end(self, clock, step, lanes, reads, writes):
            if step.ins.opcode in ("UTCHMMA", "UTCQMMA", "UTCIMMA"):
                seen.setdefault(step.offset, (step.ins, set()))[1].update(reads)
            return super().end(clock, step, lanes, reads, writes)

    real = launch_mod._attach_timing
    monkeypatch.setattr(launch_mod, "_attach_timing",
                        lambda launch_, check, trace, timing=None: real(launch_, check, trace, Recording))
    result = _check(*launch("f16", 32, seed=15, hazards=True, **kw))
    assert seen
    for off, (ins, reads) in seen.items():
        assert _named(ins) <= reads, (off, _named(ins) - reads)
    assert not {h.offset for h in result.hazards} & set(seen)
    assert not any(x in h.message for h in result.hazards for x in ("MMA", "UTCBAR")), result.hazards


def test_unmodelled_m64_faults():
    """M = 64 (instruction descriptor bits 24-28) is not modelled: a fault names it."""
    d = idesc("f16", 32) & ~(0x1F << 24) | (64 >> 4) << 24
    with pytest.raises(EmuFault, match="M = 64"):
        run(ptxas(kernel("f16", 32)), "k", (1, 1, 1), (THREADS, 1, 1),
            [np.zeros(IMG, np.uint8), np.zeros((M, 32), np.uint32), np.zeros((M, 8), np.uint32),
             np.uint64(sdesc(0, 128, 256, 0)), np.uint64(sdesc(B_BASE, 128, 256, 0)), np.uint32(d),
             np.uint32(1), np.uint64(0), np.uint64(0), np.zeros(4, np.uint32)])


@pytest.mark.parametrize("pair", [20, 62, 254, 255])
def test_descriptor_pair_is_one_field(pair):
    """`tmem[URx], idesc[URx+1]` is one 8-bit field (bits 40-47) printed as two operands;
    ptxas's words only hold a few pairs (UR4, UR10, UR12, UR14), and any other reads as
    nvdisasm prints it (255: both URZ)."""
    seed = 0x0011d8000800000600ff040e0c00a5ea    # @!UP2 UTCHMMA ..., tmem[UR4], idesc[UR5], UP0
    word = codec.put_bits(seed, list(range(40, 48)), pair)
    listing = oracle.nvdisasm_raw(word.to_bytes(16, "little"), "sm_100").stdout
    theirs = next(line for line in listing.splitlines() if "UTCHMMA" in line)
    theirs = " ".join(theirs.split("*/", 1)[1].split(";")[0].split())
    assert codec.decode_text(word, "sm_100") == theirs
    if pair < 255:
        assert codec.encode(codec.decode(word, "sm_100"), "sm_100") == word
