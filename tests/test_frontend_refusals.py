"""Near-miss invalid forms that ptxas refuses (found by tools/reject_sweep.py, branch reject25).

Each kernel is one mutation of an inventory form; ptxas 13.5.37 refuses it, and ours must
refuse it with ptxas's messages in ptxas's order (ours accepted the first three before).
"""
import pytest

from tests.ptxas_refusals import assert_refused_as_ptxas, our_lines, ptxas_lines

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


# Branch reject27: classes found by `tools/reject_sweep.py --wide` (memory operands, modifier
# and state-space mutations), each fixed in the frontend. The expected lines are ptxas
# 13.5.37's own output for the kernel, recorded here as literals (line 13 is the
# instruction's); `test_literals_are_ptxas_output` re-checks them where ptxas is installed.
LITERAL_CASES = [
    # the cache policy operand goes with .L2::cache_hint
    ('8.7', 'sm_90', 'ld.global.u32 %u0, [%l1], %l2',
     ["line 13; error   : .L2::cache_hint modifier required for instruction 'ld' with 3 arguments", "line 13; error   : Arguments mismatch for instruction 'ld'"]),
    ('8.7', 'sm_90', 'ld.global.u32 %u0, [%l1], %u2',
     ["line 13; error   : Arguments mismatch for instruction 'ld'"]),
    ('8.7', 'sm_90', 'ld.global.L2::cache_hint.u32 %u0, [%l1]',
     ["line 13; error   : Arguments mismatch for instruction 'ld'"]),
    ('8.7', 'sm_90', 'st.global.u32 [%l1], %u0, %l2',
     ["line 13; error   : .L2::cache_hint modifier required for instruction 'st' with 3 arguments", "line 13; error   : Arguments mismatch for instruction 'st'"]),
    ('8.7', 'sm_90', 'red.global.add.u32 [%l1], %u0, %l2',
     ["line 13; error   : .L2::cache_hint modifier required for instruction 'red' with 3 arguments", "line 13; error   : Arguments mismatch for instruction 'red'"]),
    ('8.7', 'sm_90', 'atom.global.add.u32 %u3, [%l1], %u0, %u2',
     ["line 13; error   : Arguments mismatch for instruction 'atom'"]),
    ('8.7', 'sm_90', 'atom.global.cas.b32 %u3, [%l1], %u0, %u2, %l2',
     ["line 13; error   : Arguments mismatch for instruction 'atom'"]),
    # memory order and .volatile against the state space, in ptxas's order
    ('8.7', 'sm_90', 'ld.volatile.const.u32 %u0, [%l1], %l2',
     ["line 13; error   : Modifier '.volatile' cannot be applied to '.const' space", "line 13; error   : .L2::cache_hint modifier required for instruction 'ld' with 3 arguments", "line 13; error   : Arguments mismatch for instruction 'ld'"]),
    ('8.7', 'sm_90', 'st.relaxed.const.u32 [%l1], %u0',
     ["line 13; error   : State space incorrect for instruction 'st'", "line 13; error   : Modifier '.relaxed' cannot be applied to '.const' space", "line 13; error   : Modifier '.relaxed' requires scope with 'st' instruction"]),
    ('8.7', 'sm_90', 'ld.relaxed.gpu.local.ca.u32 %u0, [%l1]',
     ["line 13; error   : Modifier '.relaxed' cannot be combined with modifier '.ca'", "line 13; error   : Modifier '.relaxed' cannot be applied to '.local' space"]),
    ('8.7', 'sm_90', 'ld.mmio.relaxed.gpu.local.u32 %u0, [%l1]',
     ["line 13; error   : Modifier '.relaxed' cannot be applied to '.local' space", "line 13; error   : Modifier '.mmio' cannot be applied to '.local' space", "line 13; error   : Modifier '.mmio' cannot be combined with modifier '.gpu'"]),
    ('8.7', 'sm_90', 'ld.mmio.shared.u32 %u0, [%l1]',
     ["line 13; error   : Modifier '.mmio' cannot be applied to '.shared' space", "line 13; error   : Modifier '.mmio' requires modifier '.relaxed or .acquire' for instruction 'ld'", "line 13; error   : Modifier '.mmio' requires scope with 'ld' instruction"]),
    ('8.7', 'sm_90', 'ld.mmio.relaxed.global.u32 %u0, [%l1]',
     ["line 13; error   : Modifier '.mmio' requires scope with 'ld' instruction"]),
    ('8.7', 'sm_90', 'ld.volatile.local.u32 %u0, [%l1]',
     ["line 13; error   : Feature 'ld/st with .local.volatile' requires PTX ISA .version 9.1 or later"]),
    ('8.7', 'sm_90', 'ld.weak.gpu.global.u32 %u0, [%l1]',
     ["line 13; error   : Modifier '.weak' cannot be combined with modifier '.gpu'"]),
    ('8.7', 'sm_90', 'ld.acquire.gpu.local.L2::cache_hint.u32 %u0, [%l1], %l2',
     ["line 13; error   : Modifier '.acquire' cannot be applied to '.local' space", "line 13; error   : Modifier '.L2::cache_hint' cannot be applied to '.local' space for instruction 'ld'"]),
    ('8.7', 'sm_90', 'atom.const.L2::cache_hint.max.u32 %u0, [%l1], %u2, %l3',
     ["line 13; error   : State space incorrect for instruction 'atom'", "line 13; error   : Modifier '.L2::cache_hint' cannot be applied to '.const' space for instruction 'atom'"]),
    ('8.7', 'sm_90', 'ld.local.L1::evict_last.u32 %u0, [%l1]',
     ["line 13; error   : Modifier '.evict_last' cannot be applied to '.local' space for instruction 'ld'"]),
    ('8.7', 'sm_90', 'st.global.L2::evict_last.u32 [%l1], %u0',
     ["line 13; error   : Instruction 'st' requires '.v8.b32/.v4.b64' type with '.L2::evict_last' modifier."]),
    ('8.7', 'sm_90', 'st.volatile.L1::evict_last.v4.b32 [%l1], {%u0, %u1, %u2, %u3}',
     ["line 13; error   : Modifier '.evict_last' cannot be combined with modifier '.volatile'"]),
    ('8.7', 'sm_90', 'ld.L2::128B.const.u16 %s0, [%l1]',
     ["line 13; error   : State space incorrect for feature 'cache prefetching'"]),
    ('8.7', 'sm_90', 'ld.global.pred %p0, [%l1]',
     ["line 13; error   : Unexpected instruction types specified for 'ld'"]),
    ('8.7', 'sm_90', 'st.volatile.v8.u64 [%l1], {%l0, %l0, %l0, %l0, %l0, %l0, %l0, %l0}',
     ['line 13; error   : Vector type too large, exceeds 128 bit limit']),
    # features of the target and version
    ('7.7', 'sm_86', 'ld.shared::cluster.u32 %u0, [%l1]',
     ["line 13; error   : Feature '::cluster' requires PTX ISA .version 7.8 or later", "line 13; error   : Feature '::cluster' requires .target sm_90 or higher"]),
    ('7.7', 'sm_86', 'ld.relaxed.cluster.global.u32 %u0, [%l1]',
     ["line 13; error   : Feature '.cluster scope' requires .target sm_90 or higher", "line 13; error   : Feature '.cluster scope' requires PTX ISA .version 7.8 or later"]),
    ('7.3', 'sm_75', 'st.global.L2::cache_hint.u32 [%l1], %u0, %l2',
     ["line 13; error   : Modifier '.L2::cache_hint' requires .target sm_80 or higher", "line 13; error   : Modifier '.L2::cache_hint' requires PTX ISA .version 7.4 or later"]),
    ('7.3', 'sm_75', 'ld.global.L1::evict_first.u32 %u0, [%l1]',
     ["line 13; error   : Modifier '.evict_first' on 'ld' requires PTX ISA .version 7.4 or later"]),
    ('3.0', 'sm_75', 'shf.r.clamp.b32 %u0, %u1, %u2, %u3',
     ["line 13; error   : Feature 'shf.r' requires PTX ISA .version 3.1 or later", 'line 2; error   : PTX .version 3.0 does not support .target sm_75']),
    ('8.7', 'sm_90', 'atom.global.add.noftz.f32 %f0, [%l1], %f2',
     ["line 13; error   : Feature 'atom with .noftz and .f32' requires PTX ISA .version 9.4 or later"]),
    ('7.0', 'sm_80', 'cvt.f32.bf16 %f0, %h1',
     ["line 13; error   : Feature 'cvt with .f32.bf16' requires PTX ISA .version 7.1 or later"]),
    ('7.0', 'sm_80', 'cvt.rn.bf16.s32 %h0, %u1',
     ["line 13; error   : Feature 'cvt with .bf16.s32' requires .target sm_90 or higher", "line 13; error   : Feature 'cvt with .bf16.s32' requires PTX ISA .version 7.8 or later"]),
    # a modifier class written twice: the later one is checked
    ('8.7', 'sm_90', 'set.num.hs.u32.f32 %u0, %f1, %f2',
     ['line 13; error   : Multiple comparisons set', 'line 13; error   : Mismatch between instruction type and comparison qualifier']),
    ('8.7', 'sm_90', 'cvt.rn.rzi.f32.f64 %f0, %d1',
     ['line 13; error   : Multiple rounding modifiers specified', "line 13; error   : Illegal rounding modifier for instruction 'cvt'"]),
    ('8.7', 'sm_90', 'ld.weak.acquire.global.u32 %u0, [%l1]',
     ['line 13; error   : Duplicate .acquire modifier', "line 13; error   : Modifier '.acquire' requires scope with 'ld' instruction"]),
    ('8.7', 'sm_90', 'ld.global.cg.ca.u32 %u0, [%l1], %l2',
     ['line 13; error   : Multiple cache operation modifiers specified', "line 13; error   : .L2::cache_hint modifier required for instruction 'ld' with 3 arguments", "line 13; error   : Arguments mismatch for instruction 'ld'"]),
    ('8.7', 'sm_90', 'add.ftz.ftz.f32 %f0, %f1, %f2',
     ['line 13; error   : Duplicate .ftz modifier']),
    ('8.7', 'sm_90', 'match.any.all.sync.b32 %u0, %u1, %u2',
     ['line 13; error   : Multiple .any/.all modifiers specified']),
    ('8.7', 'sm_90', 'atom.global.add.exch.u32 %u0, [%l1], %u2',
     ['line 13; error   : Multiple instruction post-operation flags set']),
    ('8.7', 'sm_90', 'ld.acquire.cta.global.cluster.u32 %u0, [%l1]',
     ['line 13; error   : Multiple scope modifiers specified']),
    ('8.7', 'sm_90', 'setp.eq.lt.f64 %p0, %d1, %f2',
     ['line 13; error   : Multiple comparisons set', "line 13; error   : Arguments mismatch for instruction 'setp'"]),
    ('8.7', 'sm_90', 'setp.gtu.le.f64 %p0|%p1, %d1, %d2, %p3',
     ['line 13; error   : Multiple comparisons set', "line 13; error   : Boolean operation is required for instruction 'setp'"]),
    # comparisons on other instructions
    ('8.7', 'sm_90', 'add.lo.f32 %f0, %f1, %f2',
     ["line 13; error   : Comparison qualifier is not allowed for instruction 'add'", 'line 13; error   : Mismatch between instruction type and comparison qualifier']),
    ('8.7', 'sm_90', 'mul.lo.lo.u32 %u0, %u1, %u2',
     ["line 13; error   : Comparison qualifier is not allowed for instruction 'mul.lo'"]),
    # integer saturation (the known add.sat leftover) and .cc
    ('8.7', 'sm_90', 'add.sat.u32 %u0, %u1, %u2',
     ["line 13; error   : Feature 'add.sat' requires PTX ISA .version 9.2 or later", "line 13; error   : Feature 'add.sat' not supported on .target 'sm_90'"]),
    ('8.7', 'sm_90', 'add.sat.u64 %l0, %l1, %l2',
     ["line 13; error   : Modifier '.sat' does not apply to '.u64' type"]),
    ('8.7', 'sm_90', 'sub.rz.ftz.sat.u16 %s0, %s1, %s2',
     ["line 13; error   : Illegal modifier '.ftz' for instruction 'sub'", "line 13; error   : Modifier '.sat' does not apply to '.u16' type", "line 13; error   : Illegal rounding modifier for instruction 'sub'"]),
    ('8.7', 'sm_90', 'mad.hi.sat.cc.s32 %u0, %u1, %u2, %u3',
     ["line 13; error   : Modifier '.cc' cannot be combined with modifier '.sat'"]),
    ('8.7', 'sm_90', 'add.ftz.sat.u32 %u0, %u1, %f2',
     ["line 13; error   : Arguments mismatch for instruction 'add'"]),
    ('8.7', 'sm_90', 'madc.wide.u16 %u0, %s1, %s2, %u3',
     ["line 13; error   : Unknown modifier '.wide'", "line 13; error   : Not a name of any known instruction: 'madc'"]),
    # atomics without an operation; spaces ldu and createpolicy do not take
    ('8.7', 'sm_90', 'red.global.u32 [%l1], %u2',
     ["line 13; error   : Illegal operation '' for instruction 'red'", "line 13; error   : Operation  requires  type for instruction 'red'", "line 13; error   : Reduction operation is required for instruction 'red'"]),
    ('8.7', 'sm_90', 'ldu.shared::cta.u32 %u0, [%l1]',
     ["line 13; error   : Illegal modifier '::cta' for instruction 'ldu'", "line 13; error   : State space incorrect for instruction 'ldu'"]),
    ('8.7', 'sm_90', 'createpolicy.range.shared::cluster.L2::evict_unchanged.L2::evict_first.b64 %l0, [%l1], %u2, %u3',
     ["line 13; error   : Illegal modifier '::cluster' for instruction 'createpolicy.range'", "line 13; error   : State space incorrect for instruction 'createpolicy.range'"]),
    # cvt
    ('8.7', 'sm_90', 'cvt.ftz.u32.s16 %u0, %s1',
     ["line 13; error   : Illegal modifier '.ftz' for instruction 'cvt'", "line 13; error   : Modifier '.ftz' does not apply to this type of convert operation"]),
    ('8.7', 'sm_90', 'cvt.relu.sat.f64.u32 %d0, %u1',
     ["line 13; error   : Modifier '.relu' cannot be combined with modifier '.sat'", "line 13; error   : Unexpected instruction types specified for 'cvt'"]),
    ('8.7', 'sm_90', 'cvt.rni.satfinite.s16.f32 %s0, %f1',
     ["line 13; error   : Unexpected instruction types specified for 'cvt'"]),
    # scalar video instructions
    ('8.7', 'sm_90', 'vmin.u32.u32.u32.add %u0, %u1, %u2',
     ["line 13; error   : Arguments mismatch for instruction 'vmin'"]),
    ('8.7', 'sm_90', 'vadd.s32.s32.f16.add %u0, %u1, %u2, %u3',
     ["line 13; error   : Unexpected instruction types specified for 'vadd'"]),
    ('8.7', 'sm_90', 'vmin.u32.u32.u32.sat.add.min %u0, %u1, %u2, %u3',
     ['line 13; error   : Multiple instruction post-operation flags set']),
    ('8.7', 'sm_90', 'vshl.u32.u32.s32.clamp %u0, %u1, %u2',
     ['line 13; error   : Operation requires .u32 type']),
    ('8.7', 'sm_90', 'vset4.s32.s32 %u0, %u1, %u2, %u3',
     ["line 13; error   : Comparison modifier required for instruction 'vset4'"]),
    ('8.7', 'sm_90', 'vmin.u32.u32.u32 %u0, %f1, %u2',
     ["line 13; error   : Arguments mismatch for instruction 'vmin'"]),
    # vote with a type its operation does not take: the operands first (reject26's leftover)
    ('8.7', 'sm_90', 'vote.sync.all.b32 %p0, %p1, 0xffffffff',
     ["line 13; error   : Arguments mismatch for instruction 'vote'"]),
    ('8.7', 'sm_90', 'vote.sync.ballot.pred %u0, %p1, 0xffffffff',
     ["line 13; error   : Arguments mismatch for instruction 'vote'"]),
    # mbarrier (a missing state crashed the code generator)
    ('8.7', 'sm_90', 'mbarrier.test_wait.shared.b64 %p0, [%l1]',
     ["line 13; error   : Arguments mismatch for instruction 'mbarrier.test_wait'"]),
    ('8.7', 'sm_90', 'mbarrier.arrive.expect_tx.shared.b64 %l0, [%l1]',
     ["line 13; error   : Arguments mismatch for instruction 'mbarrier.arrive.expect_tx'"]),
    ('8.7', 'sm_90', 'mbarrier.test_wait.arrive_drop.b64 %p0, [%l1], %l2',
     ["line 13; error   : Unknown modifier '.arrive_drop'"]),
    ('8.7', 'sm_90', 'mbarrier.arrive.global.b64 %l0, [%l1]',
     ["line 13; error   : State space incorrect for instruction 'mbarrier.arrive'"]),
    ('8.7', 'sm_90', 'mbarrier.init.shared.u64 [%l1], %u2',
     ["line 13; error   : Unexpected instruction types specified for 'mbarrier.init'"]),
    ('8.7', 'sm_90', 'mbarrier.arrive.expect_tx.release.cta.shared::cluster.b64 %l0, [%l1], %u2',
     ["line 13; error   : Sink '_' is expected as a destination operand for instruction 'mbarrier.arrive.expect_tx' with '.shared::cluster'"]),
]


@pytest.mark.parametrize("v,arch,ins,want", LITERAL_CASES)
def test_refused_with_ptxas_lines(v, arch, ins, want):
    assert our_lines(KERNEL_MIXED.format(v=v, arch=arch, ins=ins), arch) == want


@pytest.mark.parametrize("v,arch,ins,want", LITERAL_CASES[::7])
def test_literals_are_ptxas_output(v, arch, ins, want):
    assert ptxas_lines(KERNEL_MIXED.format(v=v, arch=arch, ins=ins), arch) == want


# ... and forms ptxas 13.5.37 accepts that ours refused (values: tests/test_codegen_int_extra.py)
ACCEPTED = [
    "addc.s16 %s0, %s1, %s2", "subc.u16 %s0, %s1, %s2", "madc.lo.u16 %s0, %s1, %s2, %s3",
    "madc.hi.s16 %s0, %s1, %s2, %s3", "addc.sat.s32 %u0, %u1, %u2", "subc.sat.s32 %u0, %u1, %u2",
    "madc.hi.sat.s32 %u0, %u1, %u2, %u3", "add.sat.sat.s32 %u0, %u1, %u2",
    "sin.approx.approx.f32 %f0, %f1",
    "ld.global.L2::cache_hint.u32 %u0, [%l1], 5",
    "mbarrier.arrive.expect_tx.shared.b64 %l0, [%l1], %u2",
    "mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%l1], %u2",
]


@pytest.mark.parametrize("ins", ACCEPTED)
def test_accepted_as_ptxas(ins):
    from ptx2sass import codegen
    ptx = KERNEL_MIXED.format(v="8.7", arch="sm_90", ins=ins)
    codegen.compile_ptx(ptx, "sm_90")
