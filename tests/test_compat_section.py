"""`.nv.compat` of our cubins equals ptxas 13.5's on every Blackwell arch and variant.

ptxas adds records to sm_90's on sm_100 and sm_120 (0x07 = 0x0101, a nonzero 8-byte 0x0b
value per variant, sm_100a's 0x05 = 5) and writes ACCELERATOR_TARGET 1 for the "a"
variants only ("f" keeps 0); sm_103 and sm_121 write sm_90's records, sm_107 sm_90's with
record 0x0d = 0x103. Expected bytes are
ptxas's cubin's, for vecadd and a few ZLUDA kernels."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import oracle
from ptx2sass.codegen import compile_ptx
from tools.emu_testing import ZLUDA_DIR, zluda_manifest, zluda_ptx

REPO = Path(__file__).resolve().parent.parent
ARCHS = ["sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_103", "sm_103a", "sm_103f", "sm_107", "sm_107a", "sm_107f",
         "sm_120", "sm_120a", "sm_120f", "sm_121", "sm_121a", "sm_121f"]


def _compat(cubin: bytes) -> bytes | None:
    s = ELFFile(io.BytesIO(cubin)).get_section_by_name(".nv.compat")
    return None if s is None else s.data()


def _sources() -> list[tuple[str, str]]:
    out = [("vecadd", (REPO / "examples" / "vecadd.ptx").read_text())]
    if (ZLUDA_DIR / "manifest.json").is_file():
        zl = [e for e in zluda_manifest() if "ptxas_error" not in e]
        out += [(e["name"], zluda_ptx(e)) for e in zl[5::60]]
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_compat_section_is_ptxas_s(arch):
    compared = 0
    for name, ptx in _sources():
        theirs = oracle.ptxas(ptx, arch)
        if not theirs.ok:
            continue
        assert _compat(compile_ptx(ptx, arch)) == _compat(theirs.output), name
        compared += 1
    assert compared >= 1


_ONE = """.version 9.4
.target {target}
.address_size 64
.visible .entry k(.param .u64 p){{
 .reg .b32 r<8>; .reg .f32 f<8>; .reg .b64 rd<4>; .reg .b16 h<8>; .reg .b8 b<4>;
 ld.param.u64 rd1,[p]; cvta.to.global.u64 rd2, rd1;
 ld.global.f32 f1,[rd2]; ld.global.f32 f2,[rd2+4]; ld.global.f32 f3,[rd2+8]; ld.global.u32 r1,[rd2+16];
 {body}
 ret;}}
"""
# (targets, body): ptxas 13.5.37 writes ISA class 3 for stochastic rounding (F2FP .RS), 2 for
# the fp6/fp4/ue8m0 conversions and the f32 warp reduction (CREDUX .F32), 1 for an integer
# CREDUX; ours wrote 1 (2 for the fp8 quads) before branch isa37c
ISA_CLASS_CASES = [
    (("sm_100a", "sm_107a"), "cvt.rs.f16x2.f32 r2, f1, f2, r1; st.global.u32 [rd2], r2;"),
    (("sm_100a", "sm_107a"), "cvt.rs.satfinite.e4m3x4.f32 r2, {f1, f2, f3, f1}, r1; st.global.u32 [rd2], r2;"),
    (("sm_107a",), "cvt.rs.satfinite.e2m1x4.f32 h2, {f1, f2, f3, f1}, r1; st.global.u16 [rd2], h2;"),
    (("sm_100a", "sm_107a", "sm_107f"), "redux.sync.max.abs.NaN.f32 f5, f1, 0xffffffff; st.global.f32 [rd2], f5;"),
    (("sm_107a",), "redux.sync.min.u32 r5, r1, 0xffffffff; st.global.u32 [rd2], r5;"),
    (("sm_107a", "sm_120a"), "cvt.rn.satfinite.e3m2x2.f32 h2, f1, f2; st.global.u16 [rd2], h2;"),
    (("sm_107a", "sm_120a"), "cvt.rn.satfinite.e2m1x2.f32 b2, f1, f2; cvt.u32.u8 r2, b2; st.global.u32 [rd2], r2;"),
    (("sm_107a", "sm_120a"), "cvt.rz.satfinite.ue8m0x2.f32 h2, f1, f2; st.global.u16 [rd2], h2;"),
    (("sm_100a",), "mov.b16 h3, 0x1234; cvt.rn.f16x2.e2m3x2 r2, h3; st.global.u32 [rd2], r2;"),
]


@pytest.mark.parametrize("target,body", [(t, b) for ts, b in ISA_CLASS_CASES for t in ts])
def test_isa_class_of_narrow_conversions_and_float_reductions(target, body):
    ptx = _ONE.format(target=target, body=body)
    theirs = oracle.ptxas(ptx, target)
    assert theirs.ok, theirs.stderr
    assert _compat(compile_ptx(ptx, target)) == _compat(theirs.output)
