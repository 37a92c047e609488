"""Code generation for `tcgen05.mma.cta_group::1` on sm_100a (isel/tcgen05.py's tmem_mma).

Expected values: NumPy's A @ B + C (tests/test_emu_utcmma.py's kernels and references) and
ptxas 13.5's cubin of the same PTX, both run in the emulator (emu/ops_utcmma.py, a model from
the PTX ISA, not silicon-checked); ours must also be hazard-free. The UTC*MMA instruction
itself is compared with ptxas's text (opcode, operand kinds, the idesc pair, enable and
scale), and forms not done are refused in ptxas's style with file and line."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.errors import CompileError
from tests.test_emu_utcmma import kernel, launch, ptxas

LANES = np.array([0x0000F00F, 0x80000001, 0, 0xFFFF0000], np.uint32)
_OURS: dict[str, bytes] = {}


def ours(ptx: str) -> bytes:
    if ptx not in _OURS:
        _OURS[ptx] = compile_ptx(ptx, "sm_100a")
    return _OURS[ptx]


def both(kind: str, n: int = 32, **kw):
    """ptxas's and our cubins of one kernel = NumPy; ours without hazards."""
    for who, compiler in (("ptxas", None), ("ours", ours)):
        got, want, result = launch(kind, n, compiler=compiler, hazards=who == "ours", **kw)
        assert np.array_equal(got, want), (who, np.argwhere(got != want)[:5])
        if who == "ours":
            assert not result.hazards, result.hazards[:3]
            assert not result.convergence_hazards, result.convergence_hazards[:3]


@pytest.mark.parametrize("kind", ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"])
def test_each_kind_descriptors(kind):
    """A and B from shared-memory descriptors, each kind (f16/tf32 -> UTCHMMA, f8f6f4 ->
    UTCQMMA, i8 -> UTCIMMA)."""
    both(kind, seed=21)


@pytest.mark.parametrize("kind", ["f16", "tf32", "e4m3", "s8"])
def test_a_from_tensor_memory(kind):
    both(kind, a_tmem=True, seed=22)


def test_a_tensor_memory_address_with_offset():
    """`[taddr+64]`: the offset is added to A's uniform register before the MMA."""
    both("f16", a_tmem=True, seed=23, edit=lambda p: p.replace(", [%r34],", ", [%r2+64],"))


@pytest.mark.parametrize("kw", [dict(enable=0), dict(en_imm=0), dict(en_imm=1), dict(scale=2),
                                dict(kind="tf32", scale=3)],
                         ids=["en_param_false", "en_imm0", "en_imm1", "scale2", "tf32_scale3"])
def test_enable_and_scale(kw):
    kw = dict(kw)
    both(kw.pop("kind", "f16"), seed=24, **kw)


@pytest.mark.parametrize("enable", [0, 1])
def test_enable_per_lane_predicate(enable):
    """enable-input-d from a per-thread compare (not kernel parameters alone): the elected
    lane's predicate, through SEL/R2UR/UISETP inside the ELECT loop."""
    def edit(p):
        return p.replace("setp.ne.u32 %p3, %r25, 0;",
                         "add.u32 %r27, %r25, %r3;\n  setp.ne.u32 %p3, %r27, 0;")
    both("f16", enable=enable, seed=25, edit=edit)


@pytest.mark.parametrize("kind", ["f16", "s8"])
def test_disable_output_lane(kind):
    both(kind, lanes=LANES, seed=26)


def test_two_chained_mmas():
    both("f16", sw_a=128, sw_b=128, chained=True, seed=27)


def test_mn_major_and_negate():
    both("bf16", sw_a=64, sw_b=64, mn_a=True, mn_b=True, neg_a=1, seed=28)


def test_guarded_mma_and_commit():
    """`@!%p2 tcgen05.mma` / `@!%p2 tcgen05.commit` in straight-line code (no branch around
    them): only thread 0's lane issues; the other warps run the loop's one turn without it."""
    def edit(p):
        p = p.replace("  @%p2 bra ISSUED;\n", "")
        p = re.sub(r"\n  (tcgen05\.(mma|commit))", r"\n  @!%p2 \1", p)
        return p
    both("f16", seed=29, edit=edit)
    both("e4m3", a_tmem=True, seed=30, edit=edit)


def _mma_line(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, ("-c",))
    return [" ".join(line.split("*/", 1)[1].split(";")[0].split()) for line in text.splitlines()
            if "MMA" in line]


def _shape(line: str) -> str:
    """Opcode and operand kinds, register numbers dropped except the idesc pair's relation,
    and without a leading uniform guard (ptxas if-converts the `@%p2 bra` region around the
    MMA of the disable-output-lane kernel into `@!UP2` under a VOTEU.ALL; ours keeps the
    branch)."""
    line = re.sub(r"^@!?UP\d ", "", line)
    m = re.search(r"tmem\[UR(\d+)\], idesc\[UR(\d+)\]", line)
    assert m and int(m.group(2)) == int(m.group(1)) + 1, line
    return re.sub(r"UR\d+", "UR", line)


@pytest.mark.parametrize("kind,kw", [("f16", {}), ("tf32", {}), ("e4m3", {}), ("s8", {}),
                                     ("f16", dict(a_tmem=True)), ("s8", dict(a_tmem=True)),
                                     ("f16", dict(en="0")), ("f16", dict(en="1")),
                                     ("f16", dict(scale=2)), ("f16", dict(lanes=True)),
                                     ("e4m3", dict(lanes=True, a_tmem=True))])
def test_mma_instruction_is_ptxas(kind, kw):
    """The UTC*MMA line = ptxas's, up to uniform register numbers (the idesc is the upper
    half of the pair whose lower half is shown as `tmem[URx]`)."""
    ptx = kernel(kind, 32, **kw)
    theirs, mine = _mma_line(ptxas(ptx)), _mma_line(ours(ptx))
    assert [_shape(x) for x in mine] == [_shape(x) for x in theirs], (mine, theirs)


SMALL = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 da, .param .u64 db, .param .u32 id, .param .u32 taddr)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [da];
  ld.param.u64 %rd2, [db];
  ld.param.u32 %r4, [id];
  ld.param.u32 %r2, [taddr];
  setp.ne.u32 %p1, %r4, 0;
  tcgen05.mma.{mma};
  ret;
}
"""
MMA_LINE = 14
# the last form tcgen28 left "not supported yet" (branch tcgen29 compiles `.block_scale`:
# tests/test_tcgen05_mma_block_scale.py); kept here as a compiled form = ptxas's line
ONCE_NOT_DONE = ["cta_group::1.kind::mxf8f6f4.block_scale [%r2], %rd1, %rd2, %r4, [%r2], [%r2], %p1"]
REFUSED = ["cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, %r4, %p1, 2",
           "cta_group::1.kind::f8f6f4 [%r2], %rd1, %rd2, %r4, %p1, 22",
           "cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, {%r1, %r1, %r1, %r1}, %p1, 16",
           "cta_group::1.kind::tf32 [%r2], %rd1, %rd2, %r4, %p1, -1",
           "cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p1, %r3"]


def _errors(ptx: str) -> list[str]:
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, "sm_100a")
    return [(d.line, d.message) for d in err.value.diagnostics if d.severity == "error"]


@pytest.mark.parametrize("mma", ONCE_NOT_DONE)
def test_forms_once_not_done_are_ptxas(mma):
    """Valid PTX tcgen05.mma once refused "not supported yet": now ptxas's UTC*MMA line."""
    ptx = SMALL.replace("{mma}", mma)
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert theirs.ok
    assert [re.sub(r"UR\d+", "UR", t) for t in _mma_line(compile_ptx(ptx, "sm_100a"))] == \
        [re.sub(r"UR\d+", "UR", t) for t in _mma_line(theirs.output)]


@pytest.mark.parametrize("mma", REFUSED)
def test_scale_input_d_refusals_are_ptxas_messages(mma):
    """scale-input-d with kind::f8f6f4 or outside [0..15]: ptxas's messages, in its order."""
    ptx = SMALL.replace("{mma}", mma)
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert not theirs.ok
    want = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"line (\d+); error\s*: (.*)", theirs.stderr)]
    assert _errors(ptx) == want


def test_i8_scale_input_d_is_dropped_as_ptxas_does():
    """kind::i8 with scale-input-d: ptxas compiles it and writes no scale on UTCIMMA."""
    ptx = SMALL.replace("{mma}", "cta_group::1.kind::i8 [%r2], %rd1, %rd2, %r4, %p1, 3")
    theirs, mine = _mma_line(ptxas(ptx)), _mma_line(ours(ptx))
    assert [_shape(x) for x in mine] == [_shape(x) for x in theirs], (mine, theirs)
    assert not mine[0].endswith("0x3")


def _k_loop(ptx: str) -> str:
    """The chained kernel's two MMAs as one MMA in a two-turn loop: the descriptors advance
    32 bytes (2 in the >> 4 start field) along K inside the 128B swizzle atoms, enable-input-d
    is the parameter's predicate on the first turn and true after."""
    lines = ptx.splitlines()
    first = next(i for i, t in enumerate(lines) if "tcgen05.mma" in t)
    assert "tcgen05.mma" in lines[first + 1]          # the chained second MMA
    loop = """  mov.u32 %r30, 0;
  mov.pred %p5, %p3;
KLOOP:
  tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p5;
  add.u64 %rd1, %rd1, 2;
  add.u64 %rd2, %rd2, 2;
  setp.eq.u32 %p5, %r30, %r30;
  add.u32 %r30, %r30, 1;
  setp.lt.u32 %p6, %r30, 2;
  @%p6 bra KLOOP;"""
    lines[first:first + 2] = [loop]
    return "\n".join(lines).replace(".reg .pred %p<5>;", ".reg .pred %p<8>;")


@pytest.mark.parametrize("enable", [1, 0])
def test_mma_in_a_k_loop(enable):
    """One MMA issued in each turn of a K loop (the ELECT loop inside it) = the two chained
    MMAs' A @ B + A2 @ B2 (+ C when enable-input-d holds on the first turn)."""
    both("f16", sw_a=128, sw_b=128, chained=True, enable=enable, seed=31, edit=_k_loop)


@pytest.mark.parametrize("target,kind", [("sm_100f", "i8"), ("sm_103a", "i8"), ("sm_110f", "i8"),
                                         ("sm_120a", "f16"), ("sm_120a", "f8f6f4"), ("sm_100", "f8f6f4"),
                                         ("sm_90a", "tf32"), ("sm_121f", "i8")])
def test_kind_on_targets_without_it_is_ptxas_messages(target, kind):
    """kind::i8 only on sm_100a/sm_110a (ptxas refuses it on the family targets and sm_103a,
    where the blackwell table's UTCIMMA word is not even an instruction nvdisasm reads); on a
    target without tcgen05 ptxas names the kind after the CTA group (not kind::f8f6f4 on
    sm_12x a/f, where mma.sync has it)."""
    ptx = SMALL.replace("{mma}", f"cta_group::1.kind::{kind} [%r2], %rd1, %rd2, %r4, %p1") \
        .replace(".target sm_100a", f".target {target}").replace(".version 8.7", ".version 9.0")
    theirs = oracle.ptxas(ptx.encode(), target, name="k")
    assert not theirs.ok
    want = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"line (\d+); error\s*: (.*)", theirs.stderr)]
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, target)
    assert [(d.line, d.message) for d in err.value.diagnostics if d.severity == "error"] == want


@pytest.mark.parametrize("target", ["sm_100f", "sm_103a", "sm_110a"])
def test_other_targets_write_ptxas_instruction(target):
    """The family/other tcgen05 targets: the same UTC*MMA line as ptxas (kind::f16, A from
    a descriptor; kind::f8f6f4, A from tensor memory, disable-output-lane); values are
    checked on sm_100a only."""
    for kind, kw in (("f16", {}), ("e4m3", dict(a_tmem=True, lanes=True))):
        ptx = kernel(kind, 32, **kw).replace(".target sm_100a", f".target {target}") \
            .replace(".version 8.7", ".version 9.0")
        theirs = oracle.ptxas(ptx.encode(), target, name="k")
        assert theirs.ok, theirs.stderr
        assert [_shape(x) for x in _mma_line(compile_ptx(ptx, target))] == \
            [_shape(x) for x in _mma_line(theirs.output)]


PAIR_FORMS = ["kind::f16 [%r2], %rd1, %rd2, %r4, %p1",
              "kind::tf32 [%r2], [%r4], %rd2, %r4, %p1, 3",
              "kind::f8f6f4 [%r2], %rd1, %rd2, %r4, {%r4, %r2, %r4, %r2, %r4, %r2, %r4, %r2}, 0",
              "kind::i8 [%r2], [%r4+32], %rd2, %r4, {%r4, %r2, %r4, %r2, %r4, %r2, %r4, %r2}, %p1"]


@pytest.mark.parametrize("form", PAIR_FORMS)
def test_cta_pair_form_is_ptxas(form):
    """`.cta_group::2`: the `.2CTA` form, an 8-register disable-output-lane group; the same
    line as ptxas's (the emulator launches no CTA pair, so no values) and TCGEN05_2CTA_USED."""
    ptx = SMALL.replace("{mma}", f"cta_group::2.{form}")
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert theirs.ok, theirs.stderr
    mine = compile_ptx(ptx, "sm_100a")
    assert [_shape(x) for x in _mma_line(mine)] == [_shape(x) for x in _mma_line(theirs.output)]
    assert ".2CTA" in _mma_line(mine)[0]
    assert "TCGEN05_2CTA_USED" in oracle.cuobjdump_elf(mine)


def test_both_cta_groups_in_one_function_is_ptxas_error():
    ptx = SMALL.replace("{mma}", "cta_group::2.kind::f16 [%r2], %rd1, %rd2, %r4, %p1;\n"
                        "  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r2]")
    theirs = oracle.ptxas(ptx.encode(), "sm_100a", name="k")
    assert not theirs.ok
    with pytest.raises(CompileError) as err:
        compile_ptx(ptx, "sm_100a")
    assert err.value.line is None
    assert f"error   : {err.value.message}" in theirs.stderr


@pytest.mark.parametrize("kw", [{}, dict(lanes=True), dict(a_tmem=True)], ids=["desc", "lanes", "tmem"])
def test_mma_and_commit_hold_a_read_scoreboard_as_ptxas(kw):
    """UTC*MMA and UTCBAR read their uniform registers after issue (ptxas gives each a read
    scoreboard and overwrites their URs only under a wait on it: `uniform_late_readers` in
    sched/latency/blackwell_sm100.json); ours set one as well."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.cubin import read_cubin
    ptx = kernel("f16", 32, **kw)
    for cubin in (ptxas(ptx), ours(ptx)):
        text = read_cubin(cubin).kernels[0].text
        words = [codec.decode(int.from_bytes(text[i:i + 16], "little"), "sm_100") for i in range(0, len(text), 16)]
        units = [w for w in words if w.opcode in ("UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCBAR")]
        assert len(units) == 2 and all(w.control.rd_sb != 7 for w in units), [w.control for w in units]


def _two_lanes(ptx: str) -> str:
    """Threads 0 and 1 each issue one MMA (one PTX instruction, per-thread operands): thread
    0 the first K slice with the parameter's enable-input-d, thread 1 the second slice with
    enable 1; thread 0 commits. The ELECT loop issues lane 0's MMA first, so D = the chained
    kernel's A @ B (+ C) + A2 @ B2."""
    lines = ptx.splitlines()
    first = next(i for i, t in enumerate(lines) if "tcgen05.mma" in t)
    lines[first:first + 2] = ["""  setp.eq.u32 %p6, %r3, 1;
  selp.b64 %rd1, %rd7, %rd1, %p6;
  selp.b64 %rd2, %rd8, %rd2, %p6;
  or.pred %p5, %p3, %p6;
  tcgen05.mma.cta_group::1.kind::f16 [%r2], %rd1, %rd2, %r4, %p5;"""]
    ptx = "\n".join(lines).replace(".reg .pred %p<5>;", ".reg .pred %p<8>;")
    ptx = ptx.replace("  @%p2 bra ISSUED;\n", "  setp.gt.u32 %p7, %r3, 1;\n  @%p7 bra ISSUED;\n")
    return ptx.replace("  tcgen05.commit.", "  @!%p2 tcgen05.commit.")


def test_two_lanes_issue_in_lane_order():
    both("f16", sw_a=128, sw_b=128, chained=True, enable=1, seed=32, edit=_two_lanes)


def test_two_lanes_with_different_enable_input_d():
    """Lane 0's enable-input-d false, lane 1's true. Ours reads each issuing lane's own
    predicate (tcgen05.mma is a single-thread instruction): D = A @ B + A2 @ B2. ptxas 13.5
    folds the predicate over the warp first (`VOTEU.ANY UP0` before its ELECT loop), so its
    lane 0 MMA accumulates too: A @ B + C + A2 @ B2 (a departure kept on purpose)."""
    got, want, result = launch("f16", 32, sw_a=128, sw_b=128, chained=True, enable=0, seed=32,
                               edit=_two_lanes, compiler=ours, hazards=True)
    assert np.array_equal(got, want) and not result.hazards
    theirs, _, _ = launch("f16", 32, sw_a=128, sw_b=128, chained=True, enable=0, seed=32, edit=_two_lanes)
    with_c, *_ = launch("f16", 32, sw_a=128, sw_b=128, chained=True, enable=1, seed=32, edit=_two_lanes)
    assert np.array_equal(theirs, with_c) and not np.array_equal(theirs, want)
