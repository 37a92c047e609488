"""sm_90's own code-generation choices (`isel/target_forms.py`, `encoder/arch.py`'s Target):
each kernel compiled for sm_90 by ptxas and by us runs in the emulator on the same inputs,
bit for bit, zero hazards in ours; and our words use only forms the hopper table holds
(nvdisasm reads them back as meant: tests/test_codegen_zluda.py)."""
import numpy as np
import pytest

from codegen_harness import run_both
from ptx2sass import codegen, oracle
from ptx2sass.encoder.sass_text import parse_listing
from tools.emu_testing import _parseable


def _ours(ptx: str, arch: str = "sm_90"):
    return codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")


@pytest.mark.parametrize("factor", [2, 0x4000, 0x40000, 0x200000, 0x10000000, 0x40000000])
def test_multiply_add_by_a_power_of_two(factor):
    """The hopper table has IMAD's immediate only for the multipliers ptxas wrote; the others
    become LEA (was: internal error `cannot encode IMAD R0, R2, 0x4000, R0`)."""
    ours, theirs, _ = run_both(f"mad.lo.s32 %o, %a0, {factor}, %a1;", 32, 2, 32, arch="sm_90")
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("body", [
    "min.s32 %o, %a0, %a1;", "max.u32 %o, %a0, %a1;",                     # VIMNMX
    "mov.u32 %x0, %ntid.x; add.s32 %o, %a0, %a1; mad.lo.s32 %o, %o, %x0, %a1;",
    "mul.wide.u32 %rd3, %a0, %a1; cvt.u32.u64 %o, %rd3;",
    "max.f16x2 %o, %a0, %a1;", "min.NaN.f16x2 %o, %a0, %a1;",
])
def test_operations_as_ptxas_on_sm90(body):
    ours, theirs, _ = run_both(body, 32, 2, 32, arch="sm_90")
    assert np.array_equal(ours, theirs)


PARAMS = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n, .param .u64 scale)
{
  .reg .b64 %rd<6>; .reg .b32 %r<6>; .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  ld.param.u64 %rd2, [scale];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  mad.lo.s32 %r3, %r2, %r1, %r1;
  cvt.u64.u32 %rd3, %r3;
  add.s64 %rd4, %rd3, %rd2;
  mul.wide.u32 %rd5, %r2, 8;
  add.s64 %rd5, %rd1, %rd5;
  st.global.u64 [%rd5], %rd4;
DONE:
  ret;
}
"""


def test_constant_operands_come_through_ldc():
    """No ALU word reads `c[bank][offset]` on sm_90: parameters and %ntid-style constants are
    loaded with LDC (the stack pointer too), 64-bit ones with LDC.64."""
    cubin, codes = _ours(PARAMS)
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    words = [e.instruction for f in listing.functions for e in f.entries]
    const_readers = {i.opcode for i in words if any(type(op).__name__ == "ConstRef" for op in i.operands)}
    assert const_readers <= {"LDC", "ULDC"}, const_readers
    assert words[0].opcode == "LDC"
    from ptx2sass.emu.launch import run
    out = np.zeros(64, np.uint64)
    for c in (cubin, oracle.ptxas(PARAMS, "sm_90").output):
        got = np.zeros(64, np.uint64)
        res = run(c, "k", (1, 1, 1), (64, 1, 1), [got, np.uint32(40), np.uint64(1 << 40)], hazard_check=True)
        assert not res.hazards
        out = got if c is cubin else out
        if c is not cubin:
            assert np.array_equal(out, got)


SHARED = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
  .shared .align 8 .b32 buf[32];
  .reg .b64 %rd<8>; .reg .b32 %r<8>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, buf;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  xor.b32 %r5, %r2, 4;
  add.u32 %r5, %r3, %r5;
  ld.shared.u32 %r6, [%r5];
  mov.u64 %rd3, buf;
  cvta.shared.u64 %rd4, %rd3;
  cvt.u64.u32 %rd5, %r2;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r6;
  st.global.u32 [%rd6+128], %r3;
  cvta.to.shared.u64 %rd7, %rd4;
  cvt.u32.u64 %r7, %rd7;
  st.global.u32 [%rd6+256], %r7;
  ret;
}
"""


def test_shared_variables_follow_the_reserved_window_and_carry_the_cluster_rank():
    """sm_90: `.shared` variables start after the driver's 1 KiB (section 0x400 + 128 bytes,
    as ptxas's), addresses are (SR_CgaCtaId << 24) + offset, generic ones SR_SWINHI:offset;
    the outputs (addresses included) equal ptxas's."""
    from ptx2sass.emu.launch import run
    from ptx2sass.encoder.cubin import read_cubin
    cubin, _ = _ours(SHARED)
    theirs = oracle.ptxas(SHARED, "sm_90").output
    assert read_cubin(cubin).kernel("k").shared_bytes == read_cubin(theirs).kernel("k").shared_bytes == 0x480
    outs = []
    for c in (cubin, theirs):
        out = np.zeros(96, np.uint32)
        res = run(c, "k", (1, 1, 1), (32, 1, 1), [out], hazard_check=True)
        assert not res.hazards
        outs.append(out)
    assert np.array_equal(outs[0], outs[1])
    assert outs[0][32] == 0x400


def test_sm90a_is_accepted_and_marked_in_the_compat_table():
    """`-arch=sm_90a`: the same code; `.nv.compat`'s ACCELERATOR_TARGET is 1, as ptxas writes."""
    from ptx2sass.encoder.cubin import read_cubin
    ours = read_cubin(_ours(PARAMS, "sm_90a")[0])
    theirs = read_cubin(oracle.ptxas(PARAMS, "sm_90a").output)
    compat = [[s.data for s in c.sections if s.name == ".nv.compat"][0] for c in (ours, theirs)]
    assert compat[0] == compat[1] and compat[0][2] == 1
    assert ours.e_flags == theirs.e_flags


@pytest.mark.parametrize("body", [
    "fma.rn.relu.f16x2 %o, %a0, %a1, %a2;",
    "fma.rn.ftz.relu.f16x2 %o, %a0, %a1, %a2;",
    "fma.rn.relu.bf16x2 %o, %a0, %a1, %a2;",
    "{ .reg .b16 %h<4>; mov.b32 {%h0, %h1}, %a0; mov.b32 {%h2, %h3}, %a1;"
    " fma.rn.relu.f16 %h0, %h0, %h1, %h2; fma.rn.relu.bf16 %h3, %h3, %h1, %h2; mov.b32 %o, {%h0, %h3}; }",
])
def test_relu_fma_on_sm90(body):
    """`fma.rn.relu` of f16/bf16 on sm_90 (HFMA2(.MMA)(.BF16_V2).RELU): an internal "cannot
    encode" error until the hopper table learnt the .RELU forms from the fuzzer's words
    (tools/isa_seeds/fuzz_hopper.words); same bits as ptxas's cubin, negative results 0."""
    ours, theirs, _ = run_both(body, 32, 3, 32, arch="sm_90")
    assert (ours == theirs).all()


POINTER_AND_CONST_PAIRS = """.version 8.8
.target {arch}
.address_size 64
.const .align 8 .u64 cv[4] = {{1, 2, 0x300000000, 4}};
.visible .entry k(.param .u64 out, .param .u32 i)
{{
  .reg .u64 %rd<8>; .reg .u32 %r<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [i];
  mul.wide.u32 %rd2, %r1, 8;
  mov.u64 %rd3, cv;
  add.u64 %rd4, %rd3, %rd2;
  ld.const.u64 %rd5, [%rd4];
  ld.const.u64 %rd6, [cv+16];
  add.u64 %rd5, %rd5, %rd6;
  cvta.to.global.u64 %rd1, %rd1;
  st.global.u64 [%rd1], %rd5;
  ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_64_bit_constants_load_as_one_ldc64(arch):
    """A pointer parameter used as an address and an 8-aligned `.const` u64 come in with one
    `LDC.64` each, as ptxas loads them (the selector's two 32-bit moves were two LDCs), and
    the kernel computes what ptxas's does."""
    ptx = POINTER_AND_CONST_PAIRS.format(arch=arch)
    cubin, _ = _ours(ptx, arch)
    listing = parse_listing(_parseable(oracle.nvdisasm(cubin)))
    words = [e.instruction for f in listing.functions for e in f.entries]
    halves = [i for i in words if i.opcode == "LDC" and "64" not in i.modifiers
              and any(type(op).__name__ == "ConstRef" and op.offset in (0x210, 0x214, 0x380, 0x384, 0x10, 0x14)
                      for op in i.operands)]
    assert not halves, halves
    from ptx2sass.emu.launch import run
    outs = []
    for c in (cubin, oracle.ptxas(ptx, arch).output):
        got = np.zeros(1, np.uint64)
        res = run(c, "k", (1, 1, 1), (1, 1, 1), [got, np.uint32(1)], hazard_check=c is cubin)
        assert not res.hazards
        outs.append(int(got[0]))
    assert outs[0] == outs[1] == 2 + 0x300000000


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_wide_multiply_add_of_a_parameter_takes_its_multiplier_as_an_immediate(arch):
    """sm_8x's `MOV R3, 0x4; IMAD.WIDE R2, R0, R3, c[0x0][0x170]` (b a register because c is
    a constant) is `IMAD.WIDE R2, R0, 0x4, R2` where the addend comes in with LDC.64, as
    ptxas writes it: no register for the 4, and the same results in the emulator."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    ptx = (root / "examples/vecadd.ptx").read_text()
    cubin, _ = _ours(ptx, arch)
    words = [e.instruction for f in parse_listing(_parseable(oracle.nvdisasm(cubin))).functions for e in f.entries]
    wide = [i for i in words if i.opcode == "IMAD" and "WIDE" in i.modifiers]
    assert wide and all(type(i.operands[2]).__name__ == "Imm" for i in wide), wide
    assert not [i for i in words if i.opcode in ("MOV", "IMAD") and "WIDE" not in i.modifiers
                and any(type(op).__name__ == "Imm" and op.value == 4 for op in i.operands)]
    from ptx2sass.emu.launch import run
    n = 100
    a, b = np.arange(n, dtype=np.float32), np.arange(n, dtype=np.float32) * 3
    outs = []
    for c in (cubin, oracle.ptxas(ptx, arch).output):
        out = np.zeros(n, np.float32)
        res = run(c, "vecadd", (1, 1, 1), (128, 1, 1), [a, b, out, np.int32(n)], hazard_check=c is cubin)
        assert not res.hazards
        outs.append(out)
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], a + b)
