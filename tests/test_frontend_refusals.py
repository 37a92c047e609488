"""Near-miss invalid forms that ptxas refuses (found by tools/reject_sweep.py, branch reject25).

Each kernel is one mutation of an inventory form; ptxas 13.5.37 refuses it, ours still
accepts it (strict xfail: the test turns to a failure once the frontend check lands, so
remove the mark then).
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
]


@pytest.mark.xfail(strict=True, reason="accepted by ours, refused by ptxas (reject25 sweep)")
@pytest.mark.parametrize("v,arch,t,ins", CASES)
def test_refused_as_ptxas(v, arch, t, ins):
    assert_refused_as_ptxas(KERNEL.format(v=v, arch=arch, t=t, ins=ins), arch)
