"""The sink `_` as an instruction's whole first result ("result discard mode"): which
instructions ptxas 13.5 takes it for (atom, setp, plain lop3, match.all, mbarrier
arrive/arrive_drop), its fatal 'Result discard mode is not allowed for instruction ...'
everywhere else (the name as ptxas spells it: `mul.wide`, `shf.l`, `mbarrier.test_wait.parity`,
`cvt.pack`), 'Predicate output expected' where a `d|p` pair is wanted, and the sink as a call
argument. One line per name, from every inventory form probed on sm_89 and sm_100 (ptxas
crashes, signal 11, on a sink in place of the result vector of wmma.load/wmma.mma/mma/
ldmatrix/movmatrix/tcgen05.ld and on cvt.rna...tf32: there we give the fatal message).
Expected: ptxas's messages for the same module, all of them, in order."""

import pytest

from ptx2sass import codegen, oracle
from ptx2sass.errors import CompileError
from tools.inventory_kernels import acceptance_module
from ptxas_refusals import diagnostic_lines


def _verdicts(arch: str, lines: list[str], version=(8, 8)):
    ptx, _ = acceptance_module(lines, int(arch[3:]), version)
    theirs = oracle.ptxas(ptx, arch)
    try:
        codegen.compile_ptx(ptx, arch)
        ours = []
    except CompileError as e:
        ours = diagnostic_lines("\n".join(str(d) for d in e.diagnostics))
    return (diagnostic_lines(theirs.stderr) if not theirs.ok else []), ours


ROWS = [
    ("sm_89", "add.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'add'
    ("sm_89", "sub.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'sub'
    ("sm_89", "addc.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'addc'
    ("sm_89", "subc.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'subc'
    ("sm_89", "mul.lo.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'mul.lo'
    ("sm_89", "mul.hi.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'mul.hi'
    ("sm_89", "mul.wide.u16 _, %h1, %h2;"),  # Result discard mode is not allowed for instruction 'mul.wide'
    ("sm_89", "mad.lo.u16 _, %h2, %h3, %h4;"),  # Result discard mode is not allowed for instruction 'mad.lo'
    ("sm_89", "mad.hi.u16 _, %h2, %h3, %h4;"),  # Result discard mode is not allowed for instruction 'mad.hi'
    ("sm_89", "mad.wide.u16 _, %h1, %h2, %r2;"),  # Result discard mode is not allowed for instruction 'mad.wide'
    ("sm_89", "madc.lo.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'madc.lo'
    ("sm_89", "madc.hi.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'madc.hi'
    ("sm_89", "mul24.lo.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'mul24.lo'
    ("sm_89", "mul24.hi.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'mul24.hi'
    ("sm_89", "mad24.lo.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'mad24.lo'
    ("sm_89", "mad24.hi.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'mad24.hi'
    ("sm_89", "sad.u16 _, %h2, %h3, %h4;"),  # Result discard mode is not allowed for instruction 'sad'
    ("sm_89", "div.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'div'
    ("sm_89", "rem.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'rem'
    ("sm_89", "abs.s16 _, %h2;"),  # Result discard mode is not allowed for instruction 'abs'
    ("sm_89", "neg.s16 _, %h2;"),  # Result discard mode is not allowed for instruction 'neg'
    ("sm_89", "min.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'min'
    ("sm_89", "max.u16 _, %h2, %h3;"),  # Result discard mode is not allowed for instruction 'max'
    ("sm_89", "popc.b32 _, %r2;"),  # Result discard mode is not allowed for instruction 'popc'
    ("sm_89", "clz.b32 _, %r2;"),  # Result discard mode is not allowed for instruction 'clz'
    ("sm_89", "bfind.u32 _, %r2;"),  # Result discard mode is not allowed for instruction 'bfind'
    ("sm_89", "fns.b32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'fns'
    ("sm_89", "brev.b32 _, %r2;"),  # Result discard mode is not allowed for instruction 'brev'
    ("sm_89", "bfe.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'bfe'
    ("sm_89", "bfi.b32 _, %r2, %r3, %r4, %r5;"),  # Result discard mode is not allowed for instruction 'bfi'
    ("sm_89", "szext.clamp.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'szext'
    ("sm_89", "bmsk.clamp.b32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'bmsk'
    ("sm_89", "dp4a.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'dp4a'
    ("sm_89", "dp2a.lo.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'dp2a.lo'
    ("sm_89", "dp2a.hi.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'dp2a.hi'
    ("sm_89", "testp.finite.f32 _, %r1;"),  # Result discard mode is not allowed for instruction 'testp'
    ("sm_89", "copysign.f32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'copysign'
    ("sm_89", "mul.f32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'mul'
    ("sm_89", "fma.rn.f32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'fma'
    ("sm_89", "mad.rn.f32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'mad'
    ("sm_89", "div.full.f32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'div.full'
    ("sm_89", "rcp.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'rcp'
    ("sm_89", "sqrt.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'sqrt'
    ("sm_89", "rsqrt.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'rsqrt'
    ("sm_89", "sin.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'sin'
    ("sm_89", "cos.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'cos'
    ("sm_89", "lg2.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'lg2'
    ("sm_89", "ex2.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'ex2'
    ("sm_89", "tanh.approx.f32 _, %r2;"),  # Result discard mode is not allowed for instruction 'tanh'
    ("sm_89", "set.eq.u32.b16 _, %h1, %h2;"),  # Result discard mode is not allowed for instruction 'set'
    ("sm_89", "setp.eq.b16 _, %h1, %h2;"),  # OK setp
    ("sm_89", "selp.b16 _, %h2, %h3, %p2;"),  # Result discard mode is not allowed for instruction 'selp'
    ("sm_89", "slct.b16.s32 _, %h2, %h3, %r1;"),  # Result discard mode is not allowed for instruction 'slct'
    ("sm_89", "and.pred _, %p2, %p2;"),  # Result discard mode is not allowed for instruction 'and'
    ("sm_89", "or.pred _, %p2, %p2;"),  # Result discard mode is not allowed for instruction 'or'
    ("sm_89", "xor.pred _, %p2, %p2;"),  # Result discard mode is not allowed for instruction 'xor'
    ("sm_89", "not.pred _, %p2;"),  # Result discard mode is not allowed for instruction 'not'
    ("sm_89", "cnot.b16 _, %h2;"),  # Result discard mode is not allowed for instruction 'cnot'
    ("sm_89", "lop3.b32 _, %r2, %r3, %r4, 0x96;"),  # OK lop3
    ("sm_89", "lop3.or.b32 _, %r2, %r3, %r4, 0x96, %p2;"),  # Predicate output expected for instruction 'lop3'
    ("sm_89", "shf.l.clamp.b32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'shf.l'
    ("sm_89", "shf.r.clamp.b32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'shf.r'
    ("sm_89", "shl.b16 _, %h2, %r1;"),  # Result discard mode is not allowed for instruction 'shl'
    ("sm_89", "shr.b16 _, %h2, %r1;"),  # Result discard mode is not allowed for instruction 'shr'
    ("sm_89", "mov.pred _, %p2;"),  # Result discard mode is not allowed for instruction 'mov'
    ("sm_89", "shfl.sync.up.b32 _, %r2, %r3, %r4, %r5;"),  # Result discard mode is not allowed for instruction 'shfl'
    ("sm_89", "prmt.b32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'prmt'
    ("sm_89", "ld.global.b8 _, [%rd30];"),  # Result discard mode is not allowed for instruction 'ld'
    ("sm_89", "ldu.global.b8 _, [%rd30];"),  # Result discard mode is not allowed for instruction 'ldu'
    ("sm_89", "createpolicy.fractional.L2::evict_last.b64 _, %r1;"),  # Result discard mode is not allowed for instruction 'createpolicy.fractional'
    ("sm_89", "createpolicy.range.L2::evict_last.b64 _, [%rd30], %r1, %r2;"),  # Result discard mode is not allowed for instruction 'createpolicy.range'
    ("sm_89", "isspacep.const _, %rd1;"),  # Result discard mode is not allowed for instruction 'isspacep'
    ("sm_89", "cvta.global.u64 _, %rd2;"),  # Result discard mode is not allowed for instruction 'cvta'
    ("sm_89", "cvta.to.global.u64 _, %rd2;"),  # Result discard mode is not allowed for instruction 'cvta.to'
    ("sm_89", "cvt.u8.u8 _, %h2;"),  # Result discard mode is not allowed for instruction 'cvt'
    ("sm_89", "tex.1d.v4.s32.s32 _, [tex0, {%r5}];"),  # Result discard mode is not allowed for instruction 'tex'
    ("sm_89", "tex.level.1d.v4.s32.s32 _, [tex0, {%r5}], %r6;"),  # Result discard mode is not allowed for instruction 'tex.level'
    ("sm_89", "tld4.r.2d.v4.s32.f32 _, [tex0, {%r5, %r6}];"),  # Result discard mode is not allowed for instruction 'tld4'
    ("sm_89", "txq.width.b32 _, [tex0];"),  # Result discard mode is not allowed for instruction 'txq'
    ("sm_89", "istypep.texref _, %rd1;"),  # Result discard mode is not allowed for instruction 'istypep'
    ("sm_89", "suld.b.1d.b8.trap _, [surf0, {%r1}];"),  # Result discard mode is not allowed for instruction 'suld.b'
    ("sm_89", "suq.width.b32 _, [surf0];"),  # Result discard mode is not allowed for instruction 'suq'
    ("sm_89", "bar.red.popc.u32 _, %r2, %r3, %p2;"),  # Result discard mode is not allowed for instruction 'bar.red'
    ("sm_89", "barrier.red.popc.u32 _, %r2, %r3, %p2;"),  # Result discard mode is not allowed for instruction 'barrier.red'
    ("sm_89", "atom.and.b32 _, [%rd30], %r2;"),  # OK atom
    ("sm_89", "vote.sync.all.pred _, %p2, %r1;"),  # Result discard mode is not allowed for instruction 'vote'
    ("sm_89", "match.any.sync.b32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'match'
    ("sm_89", "match.all.sync.b32 _, %r2, %r3;"),  # OK match all
    ("sm_89", "activemask.b32 _;"),  # Result discard mode is not allowed for instruction 'activemask'
    ("sm_89", "redux.sync.add.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'redux'
    ("sm_89", "mbarrier.arrive.b64 _, [%rd30];"),  # OK mbarrier arrive
    ("sm_89", "mbarrier.arrive_drop.b64 _, [%rd30];"),  # OK mbarrier arrive_drop
    ("sm_89", "mbarrier.test_wait.b64 _, [%rd30], %rd1;"),  # Result discard mode is not allowed for instruction 'mbarrier.test_wait'
    ("sm_89", "mbarrier.test_wait.parity.b64 _, [%rd30], %r1;"),  # Result discard mode is not allowed for instruction 'mbarrier.test_wait.parity'
    ("sm_89", "mbarrier.pending_count.b64 _, %rd1;"),  # Result discard mode is not allowed for instruction 'mbarrier.pending_count'
    ("sm_89", "vadd.u32.u32.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vadd'
    ("sm_89", "vsub.u32.u32.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vsub'
    ("sm_89", "vabsdiff.u32.u32.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vabsdiff'
    ("sm_89", "vmin.u32.u32.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vmin'
    ("sm_89", "vmax.u32.u32.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vmax'
    ("sm_89", "vshl.u32.u32.u32.clamp _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vshl'
    ("sm_89", "vshr.u32.u32.u32.clamp _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vshr'
    ("sm_89", "vmad.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vmad'
    ("sm_89", "vset.u32.u32.eq _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'vset'
    ("sm_89", "vadd2.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vadd2'
    ("sm_89", "vsub2.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vsub2'
    ("sm_89", "vavrg2.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vavrg2'
    ("sm_89", "vabsdiff2.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vabsdiff2'
    ("sm_89", "vmin2.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vmin2'
    ("sm_89", "vmax2.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vmax2'
    ("sm_89", "vset2.u32.u32.eq _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vset2'
    ("sm_89", "vadd4.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vadd4'
    ("sm_89", "vsub4.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vsub4'
    ("sm_89", "vavrg4.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vavrg4'
    ("sm_89", "vabsdiff4.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vabsdiff4'
    ("sm_89", "vmin4.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vmin4'
    ("sm_89", "vmax4.u32.u32.u32 _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vmax4'
    ("sm_89", "vset4.u32.u32.eq _, %r2, %r3, %r4;"),  # Result discard mode is not allowed for instruction 'vset4'
    ("sm_89", "alloca.u32 _, %r2, 8;"),  # Result discard mode is not allowed for instruction 'alloca'
    ("sm_89", "stacksave.u32 _;"),  # Result discard mode is not allowed for instruction 'stacksave'
    ("sm_100", "mapa.u32 _, %r2, %r3;"),  # Result discard mode is not allowed for instruction 'mapa'
    ("sm_100", "getctarank.u32 _, %r2;"),  # Result discard mode is not allowed for instruction 'getctarank'
    ("sm_100", "elect.sync _, %r2;"),  # Predicate output expected for instruction 'elect'
    ("sm_100", "mbarrier.try_wait.b64 _, [%rd30], %rd1, %r1;"),  # Result discard mode is not allowed for instruction 'mbarrier.try_wait'
    ("sm_100", "mbarrier.try_wait.parity.b64 _, [%rd30], %r1, %r2;"),  # Result discard mode is not allowed for instruction 'mbarrier.try_wait.parity'
    # beyond the inventory
    ("sm_100", "multimem.ld_reduce.relaxed.sys.global.add.u32 _, [%rd30];"),
    ("sm_100", "cvt.pack.sat.u8.s32.b32 _, %r1, %r2, %r3;"),
    ("sm_100", "atom.global.cas.b32 _, [%rd30], %r1, %r2;"),
    ("sm_100", "mov.b64 _, {%r1,%r2};"),
    ("sm_100", "setp.eq.f16x2 _, %r1, %r2;"),
    ("sm_100", "shfl.sync.idx.b32 _|%p1, %r1, %r2, %r3, %r4;"),
    ("sm_100", "mbarrier.arrive.expect_tx.b64 _, [%rd30], %r1;"),
    ("sm_89", "@%p1 mov.b32 _, %r1;"),
    # a side of a `d|p` pair (both sides: a syntax error)
    ("sm_89", "setp.eq.b16 %p1|_, %h1, %h2;"),
    ("sm_89", "setp.eq.b16 _|_, %h1, %h2;"),
    ("sm_89", "lop3.or.b32 _|%p3, %r2, %r3, %r4, 0x96, %p2;"),
    ("sm_89", "lop3.or.b32 %r1|_, %r2, %r3, %r4, 0x96, %p2;"),
    ("sm_89", "shfl.sync.up.b32 %r1|_, %r2, %r3, %r4, %r5;"),
    ("sm_89", "match.all.sync.b32 _|%p3, %r2, %r3;"),
    ("sm_100", "elect.sync _|%p3, %r2;"),
    ("sm_100", "elect.sync %r1|_, %r2;"),
]


@pytest.mark.parametrize("arch,line", ROWS, ids=[f"{a}-{line.split()[0]}" for a, line in ROWS])
def test_result_discard_as_ptxas(arch, line):
    theirs, ours = _verdicts(arch, [line])
    assert ours == theirs


@pytest.mark.parametrize("lines", [
    # errors of earlier lines come first; unknown symbols (reported at the end) never do
    ["add.s32 %r1, %r2, %zz;", "mov.b32 _, %r1;", "add.s32 %r1, %r2, %yy;"],
    ["add.s32 %r1, %r2, %zz;", "ld.global.v2.u32 _, [%rd1];"],
    # the instruction's own errors instead of the fatal
    ["mov.b32 _, %zz;"],
    ["mov.b32 _, %r1, %r2;"],
    # taken together
    ["lop3.b32 _, %r2, %r3, %r4, 0x96;", "setp.eq.s32 _, %r1, %r2;",
     "match.all.sync.b32 _, %r2, %r3;", "atom.global.add.u32 _, [%rd1], %r1;"],
])
def test_result_discard_order_as_ptxas(lines):
    theirs, ours = _verdicts("sm_89", lines)
    assert ours == theirs
