"""emu/scalar.py's forms for BREV, VOTE, LDC and the uniform integer instructions (UIADD3,
UMOV, USEL, UISETP, UPRMT, ULOP3, UPOPC): the one-thread launches that ran them on a one-lane
machine (`scalar._bridge`, ~85 us a launch in a corpus pass) now run without one, and give
what the PTX manual says. (tests/test_emu_scalar.py checks each form against its handler
over edge and random states.)"""
import struct

import pytest

from tools import emu_testing as testing
from ptx2sass import oracle
from ptx2sass.emu import scalar
from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.loader import load_program

KERNELS = ("brev", "activemask", "const", "const_ident", "vshr_clamp", "param_is_addressable")


def _zluda(names):
    if not testing.ZLUDA_DIR.joinpath("manifest.json").is_file():
        return []
    out = []
    for entry in testing.zluda_manifest():
        if entry["name"] in names:
            cubin = testing.zluda_cubin(entry)
            out.append((entry, load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))))
    return out


def _machines(monkeypatch) -> list:
    made = []
    one_lane = scalar._one_lane

    def counted(t):
        made.append(t.launch.program.name)
        return one_lane(t)
    monkeypatch.setattr(scalar, "_one_lane", counted)
    return made


@pytest.mark.skipif(not _zluda(KERNELS), reason="no ZLUDA corpus")
def test_zluda_kernels_run_without_a_machine(monkeypatch):
    made = _machines(monkeypatch)
    programs = _zluda(KERNELS)
    assert {e["name"] for e, _ in programs} == set(KERNELS)
    for entry, program in programs:
        for _ in range(3):
            outcome = testing.run_zluda(entry, program=program)
            assert outcome.passed, (entry["name"], outcome.reason)
    assert made == []


# emufast34b's forms (emu/scalar_forms.py): DFMA with a float immediate, DMUL, MUFU.RCP64H and
# .RSQ64H, IDP, FRND, F2F.F64.F32, FCHK, I2FP, FMUL.RZ, F2I, IMAD.HI/.WIDE with carries, I2F, LEA,
# PLOP3 on a register's .SIGN, FADD/FFMA in RZ/RM/RP (atom_add, whose VOTEU.ANY has a form now, still hands its ATOM to a
# machine)
FP_KERNELS = ("rcp_f64", "rsqrt", "cvt_rni", "cvt_rzi", "dp4a", "dp2a", "cvt_f64_f32", "div_ftz", "uint_to_fp_bf16",
              "cvt_s32_f32", "cvt_rni_u16_f32", "rem", "sin", "cos", "mul_hi", "add_s32_sat", "call_rnd", "div_noftz")


@pytest.mark.skipif(not _zluda(FP_KERNELS), reason="no ZLUDA corpus")
def test_fp64_idp_frnd_kernels_run_without_a_machine(monkeypatch):
    made = _machines(monkeypatch)
    programs = _zluda(FP_KERNELS)
    assert {e["name"] for e, _ in programs} == set(FP_KERNELS)
    for entry, program in programs:
        for _ in range(3):
            outcome = testing.run_zluda(entry, program=program)
            assert outcome.passed, (entry["name"], outcome.reason)
    assert made == []


# Under the hazard checker (scalar.run_traced) the forms whose reads and writes are recorded
# as their handlers record them (tests/test_emu_scalar_traced.py compares the checker's calls)
TRACED_KERNELS = ("brev", "activemask", "cvt_rni", "cvt_rzi", "cvt_s32_f32", "cvt_rni_u16_f32", "div_ftz",
                  "div_noftz", "sin", "cos", "call_rnd", "dp4a", "dp2a", "uint_to_fp_bf16",
                  # (sources read again as their handlers do: DFMA, DMUL, F2F, IMAD.HI; PRMT's selector
                  # before b; IMAD's carry in first; the uniform forms)
                  "rcp_f64", "rsqrt", "cvt_f64_f32", "mul_hi", "rem", "prmt_signext", "prmt_slow", "cvt_s16_s8",
                  "const_ident", "vshr_clamp", "param_is_addressable")


@pytest.mark.skipif(not _zluda(TRACED_KERNELS), reason="no ZLUDA corpus")
def test_kernels_run_under_the_checker_without_a_machine(monkeypatch):
    made = _machines(monkeypatch)
    programs = _zluda(TRACED_KERNELS)
    assert {e["name"] for e, _ in programs} == set(TRACED_KERNELS)
    for entry, program in programs:
        for _ in range(3):
            outcome = testing.run_zluda(entry, hazard_check=True, program=program)
            assert outcome.passed, (entry["name"], outcome.reason)
            assert outcome.result.hazards == [], entry["name"]
    assert made == []


# A constant table whose loads need the width and the extension right: ptxas reads it with
# LDC.U16 / LDC.S8 / LDC.U8 (and the 32/64-bit words as constant operands).
TABLE = bytes([0x01, 0x80, 0xFF, 0x7F, 0x34, 0x92, 0xFE, 0xFF, 0x78, 0x56, 0x34, 0x92, 0xEF, 0xCD, 0xAB, 0x89])
PTX = """.version 7.0
.target sm_80
.address_size 64
.const .align 8 .b8 table[16] = { %s };
.visible .entry k(.param .u64 out)
{
    .reg .u64 %%o, %%d0;
    .reg .u32 %%r<8>;
    .reg .u16 %%h<4>;
    ld.param.u64 %%o, [out];
    cvta.to.global.u64 %%o, %%o;
    ld.const.u16 %%h0, [table+2];
    ld.const.s16 %%h1, [table+4];
    ld.const.u8 %%h2, [table+1];
    ld.const.s8 %%h3, [table+2];
    cvt.u32.u16 %%r0, %%h0;
    cvt.s32.s16 %%r1, %%h1;
    cvt.u32.u16 %%r2, %%h2;
    cvt.s32.s16 %%r3, %%h3;
    ld.const.u32 %%r4, [table+12];
    ld.const.u64 %%d0, [table+8];
    st.global.u32 [%%o], %%r0;
    st.global.u32 [%%o+4], %%r1;
    st.global.u32 [%%o+8], %%r2;
    st.global.u32 [%%o+12], %%r3;
    st.global.u32 [%%o+16], %%r4;
    st.global.u64 [%%o+24], %%d0;
    ret;
}
""" % ", ".join(f"0x{b:02x}" for b in TABLE)


def _expected() -> bytes:
    """What the manual's ld.const and cvt give: zero-extended u16/u8, sign-extended s16/s8."""
    u16 = int.from_bytes(TABLE[2:4], "little")
    s16 = int.from_bytes(TABLE[4:6], "little", signed=True)
    u8, s8 = TABLE[1], int.from_bytes(TABLE[2:3], "little", signed=True)
    u32 = int.from_bytes(TABLE[12:16], "little")
    u64 = int.from_bytes(TABLE[8:16], "little")
    return struct.pack("<IiIiIIQ", u16, s16, u8, s8, u32, 0, u64)


def test_ldc_widths(monkeypatch):
    build = oracle.ptxas(PTX, "sm_80")
    assert build.ok, build.stderr
    program = load_program(build.output, "k")
    ops = {ins.opcode + "." + ".".join(ins.modifiers) for _, ins in program.instructions}
    assert {"LDC.U16", "LDC.S8", "LDC.U8"} <= ops, ops
    made = _machines(monkeypatch)
    for _ in range(3):
        launch = Launch(program, (1,), (1,), hazard_check=False)
        out = launch.gmem.allocate("out", 32)
        launch.set_params([Param(buffer="out")], {"out": out})
        launch.run()
        assert out.data.tobytes() == _expected()
    assert made == []
