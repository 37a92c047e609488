"""tcgen05.mma `.block_scale` on sm_100a and its family: kind::mxf8f6f4 / mxf4 / mxf4nvf4 with
`.scale_vec::1X/2X/4X` or `.block16/.block32` (PTX 8.8), `[d], a, b, idesc, [scale-A],
[scale-B], enable-input-d` (`.sp`: `[metadata]` before idesc), code generation
(isel/tcgen05.py's tmem_mma) and refusals (frontend/tcgen05.py).

What ptxas 13.5.37 writes (nvdisasm of its cubins): UTCQMMA for kind::mxf8f6f4, UTCOMMA for
kind::mxf4 and mxf4nvf4, `.4X` for the 16-element scale blocks (mxf4nvf4's scale_vec::4X and
block16; sm_103's nvdisasm prints the same bits `.BLOCK16`), the dense form's operands with the
scale factors' tensor-memory addresses as one uniform pair after the idesc
(`idesc[UR5], tmem[UR8], UP0`: scale-A in UR8, scale-B in UR9, an address offset added to each).
Expected values: ptxas's line (uniform register numbers aside) and ptxas's error lines, compared
line for line. The emulator does not model block scaling (a fault naming it): the scale-factor
layouts in tensor memory are figures of the PTX ISA not read here, so no value test."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.errors import CompileError

SMALL = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 da, .param .u64 db, .param .u32 id, .param .u32 taddr)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [da];
  ld.param.u64 %rd2, [db];
  ld.param.u32 %r4, [id];
  ld.param.u32 %r2, [taddr];
  add.u32 %r5, %r2, 16;
  add.u32 %r6, %r2, 32;
  setp.ne.u32 %p1, %r4, 0;
  tcgen05.mma.{mma};
  ret;
}
"""
MMA_LINE = 16


def _module(form: str, target: str = "sm_100a", version: str = "8.7") -> str:
    return SMALL.replace("{mma}", form).replace(".target sm_100a", f".target {target}") \
        .replace(".version 8.7", f".version {version}")


def _mma_lines(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, ("-c",))
    return [re.sub(r"UR\d+", "UR", " ".join(line.split("*/", 1)[1].split(";")[0].split()))
            for line in text.splitlines() if "MMA" in line]


def _errors(stderr: str) -> list[tuple[int, str]]:
    return [(int(m.group(1)), m.group(2)) for m in re.finditer(r"line (\d+); error\s*: (.*)", stderr)]


def _same_as_ptxas(ptx: str, target: str):
    """ours = ptxas's UTC*MMA line(s), or ptxas's error lines (line and text, in order)."""
    theirs = oracle.ptxas(ptx.encode(), target, name="k")
    if theirs.ok:
        assert _mma_lines(compile_ptx(ptx, target)) == _mma_lines(theirs.output)
        return True
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, target)
    assert [(d.line, d.message) for d in err.value.diagnostics if d.severity == "error"] == _errors(theirs.stderr)
    return False


# (form, PTX version): `.blockN` needs 8.8
FORMS = [
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%r2], [%r4], %rd2, %r4, [%r5], [%r6], 0", "8.7"),
    ("cta_group::1.kind::mxf8f6f4.block_scale.block32 [%r2], %rd1, %rd2, %r4, [%r5+4], [%r6+8], 1", "9.0"),
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], [%r4+16], %rd2, %r4, [%r5+4], [%r6+8], %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale.scale_vec::2X [%r2], [%r4], %rd2, %r4, [%r5], [%r6], 1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale.block32 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], 0", "9.0"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::2X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.block16 [%r2], [%r4], %rd2, %r4, [%r5], [%r6], 0", "9.0"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.block32 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::2.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::2.kind::mxf4.block_scale [%r2], [%r4], %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], 1", "8.7"),
    ("cta_group::1.kind::mxf8f6f4.block_scale.collector::a::fill [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf8f6f4.block_scale.collector::a::use [%r2], [%r4], %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale.collector::a::lastuse [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("sp.cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, [%r5], %r4, [%r5], [%r6], %p1", "8.7"),
    ("sp.cta_group::1.kind::mxf4.block_scale [%r2], [%r4], %rd2, [%r2+64], %r4, [%r5], [%r6], 1", "8.7"),
    ("sp.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%r2], %rd1, %rd2, [%r5], %r4, [%r5], [%r6], %p1", "8.7"),
]


@pytest.mark.parametrize("form,version", FORMS)
def test_instruction_is_ptxas(form, version):
    """UTCQMMA / UTCOMMA[.4X][.2CTA] with the scale pair `tmem[UR]` after the idesc, the
    collector suffixes and `.sp`'s metadata address = ptxas's line."""
    assert _same_as_ptxas(_module(form, version=version), "sm_100a")


REFUSED = [
    # kind / vector size combinations
    ("cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::2X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale.scale_vec::1X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::1X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4nvf4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf8f6f4.block_scale.block16 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4.block_scale.block16 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.block16.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4.block_scale.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4.block_scale.scale_vec::3X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf8f6f4.block_scale.block32 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.block16 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    # block_scale on the other kinds, an mx kind or a vector size without it
    ("cta_group::1.kind::f16.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::f8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::i8.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::f16.scale_vec::1X [%r2], %rd1, %rd2, %r4, %p1", "9.0"),
    ("cta_group::1.kind::mxf8f6f4 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4nvf4 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4nvf4.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4nvf4.block16 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4 [%r2], %rd1, %rd2, %r4, %p1", "8.7"),
    ("cta_group::1.kind::mxf8f6f4 [%r2], %rd1, %rd2, %r4, %p1", "9.0"),
    # operands
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, %p1", "8.7"),
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, %p1", "9.0"),
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, %r5, %r6, %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], %r6, %p1", "9.0"),
    ("cta_group::1.kind::mxf4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6]", "9.0"),
    ("cta_group::1.kind::mxf4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1, %p1", "9.0"),
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], {%r1, %r1, %r1, %r1}, %p1", "8.7"),
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1, 2", "8.7"),
    ("sp.cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r5, %r4, [%r5], [%r6], %p1", "9.0"),
    ("sp.cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    # .ashift, .ws
    ("cta_group::1.kind::mxf8f6f4.block_scale.ashift [%r2], [%r4], %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale.ashift [%r2], [%r4], %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("ws.cta_group::1.kind::mxf4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("ws.cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, %p1", "9.0"),
    ("ws.cta_group::1.kind::mxf8f6f4 [%r2], %rd1, %rd2, %r4, %p1", "9.0"),
    # `.collector::bN` without .ws: from PTX 9.4 ptxas drops its version line
    ("cta_group::1.kind::mxf8f6f4.block_scale.collector::b1::use [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.4"),
    ("cta_group::1.kind::f16.collector::b0::fill [%r2], %rd1, %rd2, %r4, %p1", "9.4"),
    ("cta_group::1.kind::f16.collector::b0::fill [%r2], %rd1, %rd2, %r4, %p1", "9.0"),
]


@pytest.mark.parametrize("form,version", REFUSED)
def test_refusals_are_ptxas_messages(form, version):
    ptx = _module(form, version=version)
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert not theirs.ok and _errors(theirs.stderr)[0][0] == MMA_LINE
    assert not _same_as_ptxas(ptx, "sm_100a")


TARGET_FORMS = [
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "8.7"),
    ("cta_group::1.kind::mxf4.block_scale.scale_vec::2X [%r2], [%r4], %rd2, %r4, [%r5], [%r6], 1", "9.0"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4nvf4.block_scale.block16 [%r2], [%r4], %rd2, %r4, [%r5], [%r6], 0", "9.0"),
    ("cta_group::2.kind::mxf4nvf4.block_scale.block16 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
    ("cta_group::1.kind::mxf4.block_scale.block32 [%r2], %rd1, %rd2, %r4, [%r5], [%r6], %p1", "9.0"),
]


@pytest.mark.parametrize("target", ["sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a",
                                    "sm_120f", "sm_90a", "sm_100"])
def test_other_targets_are_ptxas(target):
    """The tcgen05 targets: ptxas's line (sm_103's `.BLOCK16` for UTCOMMA.4X's bits:
    `Target.renamed_modifiers`); `.scale_vec::NX` (written, or implied before PTX 8.8) refused
    on the family targets; targets without tcgen05: ptxas's feature lines (`.block_scale` and
    the vector size, written or implied, but not mma.sync's own features on sm_12x a/f). The
    8.7 module is refused on the targets PTX 8.7 lacks (ptxas's line-2 error is compared too)."""
    for form, version in TARGET_FORMS:
        _same_as_ptxas(_module(form, target, version), target)


def test_forms_on_sm_103a_print_block16():
    ptx = _module(TARGET_FORMS[3][0], "sm_103a", "9.0")
    assert _mma_lines(compile_ptx(ptx, "sm_103a"))[0].startswith("UTCOMMA.BLOCK16 ")


# ------------------------------------------------------------------ emulator, scheduling
def _block_scaled_kernel(mma: str) -> str:
    """tests/test_emu_utcmma.py's kernel with its MMA made block-scaled (scale-A's and
    scale-B's addresses in tensor memory at columns 64 and 72)."""
    from tests.test_emu_utcmma import kernel
    ptx = kernel("e4m3", 32)
    old = "tcgen05.mma.cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, %r4, %p3;"
    assert old in ptx
    return ptx.replace(old, mma)


SCALED = {
    "mxf8f6f4": "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r34], [%r34+8], %p3;",
    "mxf4nvf4": "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%r2], %rd1, %rd2, %r4, [%r34], [%r34+8], %p3;",
}


@pytest.mark.parametrize("kind", list(SCALED))
def test_emulator_faults_naming_block_scaling(kind):
    """ptxas's cubin and ours reach the block-scaled MMA and fault naming it (not a wrong D)."""
    from ptx2sass.emu.errors import EmuFault
    from ptx2sass.emu.launch import run
    from tests.test_emu_utcmma import THREADS, ptxas
    ptx = _block_scaled_kernel(SCALED[kind])
    args = [np.zeros(24576, np.uint8), np.zeros((128, 32), np.uint32), np.zeros((128, 8), np.uint32),
            np.uint64(0), np.uint64(0), np.uint32(0), np.uint32(1), np.uint64(0), np.uint64(0),
            np.zeros(4, np.uint32)]
    for cubin in (ptxas(ptx), compile_ptx(ptx, "sm_100a")):
        with pytest.raises(EmuFault, match="block scaling"):
            run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), args)


@pytest.mark.parametrize("kind", list(SCALED))
def test_block_scaled_mma_holds_a_read_scoreboard_as_ptxas(kind):
    """UTCQMMA/UTCOMMA read their uniform registers (the scale pair too) after issue: ptxas
    gives the block-scaled MMA a read scoreboard as it does the dense ones; so do we
    (`uniform_late_readers`), and our scale pair's two registers are both written before it."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.cubin import read_cubin
    from ptx2sass.encoder.model import Mem
    from tests.test_emu_utcmma import ptxas
    ptx = _block_scaled_kernel(SCALED[kind])
    for cubin in (ptxas(ptx), compile_ptx(ptx, "sm_100a")):
        text = read_cubin(cubin).kernels[0].text
        words = [codec.decode(int.from_bytes(text[i:i + 16], "little"), "sm_100") for i in range(0, len(text), 16)]
        at = next(i for i, w in enumerate(words) if w.opcode in ("UTCQMMA", "UTCOMMA"))
        mma = words[at]
        assert mma.control.rd_sb != 7, mma.control
        pair = mma.operands[5]
        assert isinstance(pair, Mem) and pair.space == "tmem"
        written = {op.index for w in words[:at] for op in w.operands[:1]
                   if getattr(op, "file", None) == "UR"}
        assert {pair.ubase.index, pair.ubase.index + 1} <= written, (pair, sorted(written))


@pytest.mark.parametrize("kind", list(SCALED))
def test_guarded_block_scaled_mma(kind):
    """`@!%p2 tcgen05.mma...block_scale` and commit in straight-line code (a uniform-predicate
    guard on the MMA, as tcgen28's guarded `.ws` test): our word is one nvdisasm reads as our
    decoder does, and the emulator reaches it (the block-scaling fault)."""
    from ptx2sass.emu.errors import EmuFault
    from ptx2sass.emu.launch import run
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.cubin import read_cubin
    from tests.test_emu_utcmma import THREADS
    ptx = _block_scaled_kernel(SCALED[kind]).replace("  @%p2 bra ISSUED;\n", "")
    ptx = re.sub(r"\n  (tcgen05\.(mma|commit))", r"\n  @!%p2 \1", ptx)
    cubin = compile_ptx(ptx, "sm_100a")
    listing = oracle.nvdisasm(cubin, ("-c",)).splitlines()
    text = read_cubin(cubin).kernels[0].text
    seen = 0
    for i in range(0, len(text), 16):
        line = next((t.split("*/", 1)[1] for t in listing if f"/*{i:04x}*/" in t), "")
        if "MMA" in line:
            seen += 1
            assert line.strip().startswith("@UP") or line.strip().startswith("@!UP"), line
            ours = codec.decode_text(int.from_bytes(text[i:i + 16], "little"), "sm_100")
            assert " ".join(ours.split()).rstrip(";") == " ".join(line.split()).rstrip(";").strip()
    assert seen == 1
    args = [np.zeros(24576, np.uint8), np.zeros((128, 32), np.uint32), np.zeros((128, 8), np.uint32),
            np.uint64(0), np.uint64(0), np.uint32(0), np.uint32(1), np.uint64(0), np.uint64(0),
            np.zeros(4, np.uint32)]
    with pytest.raises(EmuFault, match="block scaling"):
        run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), args)


def test_modifier_sweep_sample_is_ptxas():
    """Every 6th combination of tools/tcgen05_block_scale_sweep (kind x vector size x
    `.block_scale` x operand shape x PTX version x sm_100a/sm_100f): ours = ptxas's line or
    error lines (the whole sweep: `py -m tools.tcgen05_block_scale_sweep`)."""
    from tools.tcgen05_block_scale_sweep import cases, outcome
    sample = list(cases())[::6]
    bad = [(target, ptx.splitlines()[0], next(t for t in ptx.splitlines() if "tcgen05.mma" in t).strip())
           for ptx, target in sample if outcome(ptx, target, "ptxas") != outcome(ptx, target, "ours")]
    assert not bad, bad[:3]


# found by the held-out `--wide` sweep: ptxas refuses scale-input-d on sm_110a/f and `.sp` with
# kind::mxf4/mxf4nvf4 on the family targets (ours compiled both)
TARGET_REFUSALS = [
    ("sm_110a", "cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, 2"),
    ("sm_110f", "cta_group::1.kind::tf32 [%r2], %rd1, %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1, 3"),
    ("sm_100f", "sp.cta_group::1.kind::mxf4.block_scale [%r2], %rd1, %rd2, [%r5], %r4, [%r5], [%r6], %p1"),
    ("sm_103f", "sp.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%r2], %rd1, %rd2, [%r5], %r4, [%r5], [%r6], %p1"),
    ("sm_110f", "sp.cta_group::1.kind::mxf4 [%r2], %rd1, %rd2, [%r5], %r4, [%r5], [%r6], %p1"),
    # and what they still take
    ("sm_103a", "cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, 2"),
    ("sm_110a", "sp.cta_group::1.kind::mxf4.block_scale [%r2], %rd1, %rd2, [%r5], %r4, [%r5], [%r6], %p1"),
    ("sm_110f", "sp.cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, [%r5], %r4, [%r5], [%r6], %p1"),
]


@pytest.mark.parametrize("target,form", TARGET_REFUSALS)
def test_target_rules_found_by_the_sweep(target, form):
    _same_as_ptxas(_module(form, target, "9.0"), target)


def test_wide_sweep_sample_is_ptxas():
    """Every 13th `--wide` combination (sm_103a, sm_110f, and sm_120a / sm_90a without tcgen05,
    where ptxas puts each modifier's `Illegal modifier` line after its feature line; with `.sp`
    and `.cta_group::2`): ours = ptxas's line or error lines."""
    from tools.tcgen05_block_scale_sweep import cases, outcome
    sample = list(cases(True))[::13]
    bad = [(target, next(t for t in ptx.splitlines() if "tcgen05.mma" in t).strip())
           for ptx, target in sample if outcome(ptx, target, "ptxas") != outcome(ptx, target, "ours")]
    assert not bad, bad[:3]
