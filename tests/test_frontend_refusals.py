"""Near-miss invalid forms that ptxas refuses (found by tools/reject_sweep.py, branch reject25).

Each kernel is one mutation of an inventory form; ptxas 13.5.37 refuses it, and ours must
refuse it with ptxas's messages in ptxas's order (ours accepted the first three before).
"""
import pytest

from tests.ptxas_refusals import assert_refused_as_ptxas

KERNEL = """.version {v}
.target {arch}
.address_size 64
.visible .entry k()
{{
\t.reg {t} %r<4>;
\t.reg .pred %p<4>;
\t{ins};
\tret;
}}
"""

CASES = [
    # .abs on min/max f16 needs PTX 7.2 ("Feature '.abs' requires PTX ISA .version 7.2 or later")
    ("7.1", "sm_86", ".b16", "min.xorsign.abs.f16 %r0, %r1, %r2"),
    # ... and sm_86 ("Feature '.abs' requires .target sm_86 or higher")
    ("7.2", "sm_80", ".b16", "min.ftz.NaN.xorsign.abs.f16 %r0, %r1, %r2"),
    # setp with a combining op needs its predicate operand ("Arguments mismatch for instruction 'setp'")
    ("8.7", "sm_90", ".b16", "setp.eq.and.ftz.f16 %p0, %r1, %r2"),
    # ... and the predicate operand without a combining op ("Boolean operation is required")
    ("8.5", "sm_89", ".b32", "setp.eq.f16x2 %p0|%p1, %r1, %r2, %p2"),
    ("8.5", "sm_89", ".b32", "set.eq.and.u32.f32 %r0, %r1, %r2"),
    ("8.5", "sm_89", ".b32", "set.eq.u32.f32 %r0, %r1, %r2, %p1"),
    # every min/max modifier's requirement at once, in ptxas's order (.abs, .NaN, .xorsign, type)
    ("7.0", "sm_75", ".b16", "min.NaN.xorsign.abs.f16 %r0, %r1, %r2"),
    ("6.5", "sm_75", ".b32", "max.NaN.xorsign.abs.f32 %r0, %r1, %r2"),
    ("7.1", "sm_80", ".b32", "min.xorsign.abs.bf16x2 %r0, %r1, %r2"),
]


@pytest.mark.parametrize("v,arch,t,ins", CASES)
def test_refused_as_ptxas(v, arch, t, ins):
    assert_refused_as_ptxas(KERNEL.format(v=v, arch=arch, t=t, ins=ins), arch)
