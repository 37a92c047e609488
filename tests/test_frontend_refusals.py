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


# Branch reject26: message classes of tools/reject_sweep.py where both compilers refused in
# different words (or ours accepted, or crashed), each checked against pinned ptxas's output.
KERNEL_MIXED = """.version {v}
.target {arch}
.address_size 64
.visible .entry k()
{{
\t.reg .u32 %u<4>;
\t.reg .u64 %l<4>;
\t.reg .u16 %s<4>;
\t.reg .b16 %h<4>;
\t.reg .f32 %f<4>;
\t.reg .f64 %d<4>;
\t.reg .pred %p<4>;
\t{ins};
\tret;
}}
"""

MIXED_CASES = [
    # the sub-opcode in the instruction's name ('madc.lo', 'shf.r', 'barrier.red', 'div.full')
    ("8.7", "sm_90", "madc.lo.cc.u32 %u0, %u1, %u2"),
    ("8.7", "sm_90", "shf.r.clamp.b32 %u0, %u1, %u2"),
    ("8.7", "sm_90", "barrier.red.popc.u32 %u0, %u1"),
    ("8.7", "sm_90", "div.full.f64 %d0, %d1, %d2"),
    ("8.7", "sm_90", "mul.hi.rn.u32 %u0, %u1, %u2"),
    ("8.7", "sm_90", "shf.l.ftz.b32 %u0, %u1, %u2, %u3"),
    # mul/mad without .lo/.hi/.wide are the float instructions: an integer type is unexpected
    ("8.7", "sm_90", "mul.rn.u32 %u0, %u1, %u2"),
    ("8.7", "sm_90", "mad.rp.u16 %s0, %s1, %s2, %s3"),
    # every illegal modifier, in ptxas's order
    ("8.7", "sm_90", "div.rn.sat.u32 %u0, %u1, %u2"),
    ("8.7", "sm_90", "sub.rz.ftz.sat.f64 %d0, %d1, %d2"),
    ("8.7", "sm_90", "min.NaN.ftz.f64 %d0, %d1, %d2"),
    # a comparison the type does not take
    ("8.7", "sm_90", "setp.equ.ftz.b32 %p0, %u1, %u2"),
    ("8.7", "sm_90", "setp.lo.f16 %p0, %h1, %h2"),
    # an extra operand that is no predicate, without a boolean operation
    ("8.7", "sm_90", "setp.gtu.ftz.f16 %p0, %h1, %h2, %h3"),
    # .cc and signed-only types
    ("8.7", "sm_90", "add.cc.f32 %f0, %f1, %f2"),
    ("8.7", "sm_90", "add.cc.u16 %s0, %s1, %s2"),
    ("8.7", "sm_90", "mad.hi.cc.u16 %s0, %s1, %s2, %s3"),
    ("8.7", "sm_90", "abs.u32 %u0, %u1"),
    ("8.7", "sm_90", "abs.ftz.u32 %u0, %u1"),
    # f16/bf16 arithmetic rounds .rn only (ours accepted these)
    ("8.7", "sm_90", "fma.rz.ftz.f16 %h0, %h1, %h2, %h3"),
    ("8.7", "sm_90", "add.rz.bf16 %h0, %h1, %h2"),
    # vote/shfl: the mask goes with .sync (ours crashed); the non-.sync deprecation only of an
    # otherwise valid instruction
    ("8.7", "sm_90", "vote.sync.ballot.b32 %u0, %p1"),
    ("8.7", "sm_90", "vote.any.pred %p0, %u1"),
    ("8.7", "sm_90", "shfl.up.b32 %u0, %u1, %u2"),
    # leniently checked instructions' types and operand counts (ours crashed or accepted)
    ("8.7", "sm_90", "getctarank.u32 %u0"),
    ("8.7", "sm_90", "mapa.f16 %h0, %h1, %h2"),
    ("8.7", "sm_90", "mbarrier.pending_count.b64 %u0"),
    # operands that fit no form of the types: "Arguments mismatch" before modifier messages;
    # after a type error the operands' names are still looked up
    ("8.7", "sm_90", "add.ftz.u32 %u0, %q1, %u2"),
    ("8.7", "sm_90", "add.ftz.sat.u32 %f0, %f1, %f2"),
    ("8.7", "sm_90", "cos.approx.u32 %u0, %q1"),
    # version and target features ptxas names
    ("4.1", "sm_75", "add.f16 %h0, %h1, %h2"),
    ("4.1", "sm_75", "neg.f16 %h0, %h1"),
    ("4.2", "sm_75", "add.cc.u64 %l0, %l1, %l2"),
    ("7.3", "sm_75", "createpolicy.fractional.L2::evict_normal.L2::evict_first.b64 %l0, %f1"),
    ("7.3", "sm_80", "createpolicy.range.L2::evict_last.L2::evict_last.b64 %l0, [%l1], 1, 2"),
    ("8.7", "sm_90", "max.xorsign.abs.f32 %f0, %f1, %f2, %f3"),
    ("7.5", "sm_75", "fma.rn.oob.relu.f16 %h0, %h1, %h2, %h3"),
]


@pytest.mark.parametrize("v,arch,ins", MIXED_CASES)
def test_refused_in_ptxas_words(v, arch, ins):
    assert_refused_as_ptxas(KERNEL_MIXED.format(v=v, arch=arch, ins=ins), arch)
