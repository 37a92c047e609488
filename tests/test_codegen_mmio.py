"""`.mmio` loads and stores (PTX 8.2, sm_70+: `ld/st.mmio.relaxed.sys`, 9.3: ld's
`.acquire`, st's `.release`): the accesses ptxas writes (LDG/STG/LD/ST .MMIO.SYS, with the
fences of acquire/release), the same values in the emulator, and ptxas's refusals of the
forms it does not take, in its words."""
from collections import Counter

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run

KERNEL = """.version 9.3
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 dev, .param .u32 v)
{{
.reg .b64 %rd<16>;
.reg .b32 %r<16>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [dev];
ld.param.u32 %r1, [v];
cvta.to.global.u64 %rd1, %rd1;
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd3, %r2, 16;
add.s64 %rd4, %rd2, %rd3;
ld.mmio.relaxed.sys.global.u32 %r3, [%rd2];
ld.mmio.relaxed.sys.global.s8 %r6, [%rd4+1];
ld.mmio.relaxed.sys.global.u64 %rd5, [%rd4+8];
ld.mmio.relaxed.sys.u16 %r9, [%rd4+2];
ld.mmio.acquire.sys.global.u32 %r4, [%rd4+4];
st.mmio.relaxed.sys.global.u32 [%rd4], %r1;
st.mmio.relaxed.sys.global.u16 [%rd4+6], %r2;
st.mmio.relaxed.sys.u64 [%rd4+8], %rd3;
st.mmio.release.sys.global.u8 [%rd4+5], %r1;
add.u32 %r3, %r3, %r4;
add.u32 %r3, %r3, %r6;
add.u32 %r3, %r3, %r9;
mul.wide.u32 %rd6, %r2, 16;
add.s64 %rd7, %rd1, %rd6;
st.global.u32 [%rd7], %r3;
st.global.u64 [%rd7+8], %rd5;
ret;
}}
"""


def _memory_ops(listing: str) -> Counter:
    """The memory accesses and fences by spelling (guards left out)."""
    ops = (line.split()[1] if line.startswith("@") else line.split()[0]
           for line in listing.splitlines() if line.strip())
    return Counter(op for op in ops if op.startswith(("LDG", "STG", "LD.", "ST.", "MEMBAR", "CCTL", "ERRBAR")))


def _listing(cubin: bytes) -> str:
    out = []
    for line in oracle.cuobjdump_sass(cubin).splitlines():
        if "/*0" in line and "*/" in line:
            out.append(line.split("*/", 1)[1].split(";")[0].strip())
    return "\n".join(out)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89"])
def test_mmio_accesses_as_ptxas(arch):
    text = KERNEL.format(arch=arch)
    theirs = oracle.ptxas(text, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(text, arch, "k.ptx"), arch, filename="k.ptx")
    assert _memory_ops(_listing(ours)) == _memory_ops(_listing(theirs.output))
    assert _memory_ops(_listing(ours))["LDG.E.S8.MMIO.SYS"] == 1
    results = []
    for cubin, hazards in ((ours, True), (theirs.output, False)):
        dev = np.arange(64 * 4, dtype=np.uint32) * 0x01010101
        out = np.zeros((64, 4), np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, dev, np.uint32(0xA5C3)], hazard_check=hazards)
        assert not (hazards and res.hazards)
        results.append((out, dev))
    assert all((a == b).all() for a, b in zip(*results))


FORMS = [
    ("8.2", "ld.mmio.relaxed.sys.global.u32 %r3, [%rd2];"),
    ("8.2", "ld.relaxed.mmio.sys.global.u32 %r3, [%rd2];"),
    ("8.2", "ld.mmio.relaxed.sys.u8 %r3, [%rd2];"),
    ("8.2", "st.mmio.relaxed.sys.global.u64 [%rd2], %rd2;"),
    ("8.2", "ld.mmio.sys.global.u32 %r3, [%rd2];"),
    ("8.2", "st.mmio.sys.global.u32 [%rd2], %r1;"),
    ("8.2", "ld.mmio.relaxed.gpu.global.u32 %r3, [%rd2];"),
    ("8.2", "ld.mmio.relaxed.sys.shared.u32 %r3, [%rd2];"),
    ("8.2", "ld.mmio.relaxed.sys.global.v2.u32 {%r3, %r1}, [%rd2];"),
    ("8.2", "ld.mmio.relaxed.sys.global.L1::evict_last.u32 %r3, [%rd2];"),
    ("8.2", "ld.mmio.acquire.sys.global.u32 %r3, [%rd2];"),
    ("9.3", "ld.mmio.acquire.sys.global.u32 %r3, [%rd2];"),
    ("9.3", "st.mmio.release.sys.u32 [%rd2], %r1;"),
    ("8.2", "ld.relaxed.gpu.global.cg.u32 %r3, [%rd2];"),
    ("8.2", "ld.acquire.gpu.global.ca.u32 %r3, [%rd2];"),
    ("8.2", "st.release.gpu.global.wb.u32 [%rd2], %r1;"),
    ("8.2", "ld.volatile.global.cg.u32 %r3, [%rd2];"),
    ("8.2", "st.mmio.relaxed.sys.global.cg.u32 [%rd2], %r1;"),
]


@pytest.mark.parametrize("version,ins", FORMS)
def test_forms_accepted_or_refused_as_ptxas(version, ins):
    text = f""".version {version}
.target sm_89
.address_size 64
.visible .entry k(.param .u64 g, .param .u32 n)
{{
.reg .b64 %rd<4>; .reg .b32 %r<4>;
ld.param.u64 %rd2, [g]; ld.param.u32 %r1, [n];
{ins}
st.global.u32 [%rd2+64], %r3;
ret;
}}
"""
    theirs = oracle.ptxas(text, "sm_89")
    try:
        codegen.generate_module(codegen.lower_ptx(text, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
        ours = None
    except CompileError as e:
        ours = str(e)
    assert (ours is None) == theirs.ok, (theirs.stderr, ours)
    if ours is not None:
        assert theirs.stderr.strip().splitlines()[0].split(": ", 1)[1] in ours


FENCES = """.version 8.2
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 dev, .param .u32 v)
{{
.reg .b64 %rd<16>;
.reg .b32 %r<16>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [dev];
ld.param.u32 %r1, [v];
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd3, %r2, 8;
add.s64 %rd4, %rd2, %rd3;
atom.sys.exch.b32 %r12, [%rd4], %r2;
fence.proxy.alias;
atom.sys.exch.b32 %r13, [%rd2], %r1;
membar.proxy.alias;
setp.lt.u32 %p1, %r2, 5;
@%p1 fence.proxy.alias;
atom.global.sys.exch.b32 %r14, [%rd4+4], %r1;
add.u32 %r12, %r12, %r14;
cvta.to.global.u64 %rd1, %rd1;
add.s64 %rd5, %rd1, %rd3;
st.global.u32 [%rd5], %r12;
ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89"])
def test_proxy_alias_fences_and_system_exchange(arch):
    """fence/membar.proxy.alias: MEMBAR.SC.SYS or .GPU by the driver's word c[0x0][0x128],
    then CCTL.IVALL (ptxas branches, we predicate); generic atom.sys.exch.b32 is
    ATOM.E.EXCH.STRONG.SYS. Values as ptxas's in the emulator."""
    text = FENCES.format(arch=arch)
    theirs = oracle.ptxas(text, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(text, arch, "k.ptx"), arch, filename="k.ptx")
    mine, their = _memory_ops(_listing(ours)), _memory_ops(_listing(theirs.output))
    for op in ("MEMBAR.SC.SYS", "MEMBAR.SC.GPU", "CCTL.IVALL"):
        assert mine[op] == their[op] == 3, (op, mine, their)
    assert "ATOM.E.EXCH.STRONG.SYS" in _listing(ours)
    assert "ERRBAR" not in _listing(ours) and "ERRBAR" not in _listing(theirs.output)
    results = []
    for cubin, hazards in ((ours, True), (theirs.output, False)):
        dev = np.arange(64 * 2, dtype=np.uint32) * 3 + 1
        out = np.zeros(128, np.uint32)
        res = run(cubin, "k", (1, 1, 1), (64, 1, 1), [out, dev, np.uint32(77)], hazard_check=hazards)
        assert not (hazards and res.hazards)
        results.append((out, dev))
    assert all((a == b).all() for a, b in zip(*results))


@pytest.mark.parametrize("op,expect", [("exch.b64", lambda old, b: b), ("add.u64", lambda old, b: old + b)])
def test_generic_64_bit_atomics_apply_once(op, expect):
    """ptxas's generic 64-bit atomics test ATOM's predicate result (false for a local
    address, which it then loads and stores itself): the emulator sets it, so ptxas's
    code and ours apply the operation once to a global word (it applied it twice)."""
    text = f""".version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 cells)
{{
.reg .b64 %rd<8>;
.reg .b32 %r<2>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [cells];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 8;
add.s64 %rd4, %rd2, %rd3;
cvt.u64.u32 %rd5, %r1;
add.u64 %rd5, %rd5, 0x100000001;
atom.{op} %rd6, [%rd4], %rd5;
add.s64 %rd7, %rd1, %rd3;
st.u64 [%rd7], %rd6;
ret;
}}
"""
    theirs = oracle.ptxas(text, "sm_89")
    ours, _ = codegen.generate_module(codegen.lower_ptx(text, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    init = np.arange(32, dtype=np.uint64) * 0x10001 + 5
    b = np.arange(32, dtype=np.uint64) + 0x100000001
    for cubin in (ours, theirs.output):
        out, cells = np.zeros(32, np.uint64), init.copy()
        run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, cells])
        assert (out == init).all() and (cells == expect(init, b)).all()


@pytest.mark.parametrize("name", ["red.gpu.global.add.noftz.f16x2 m,a", "red.add.noftz.f16x2 m,a",
                                  "atom.global.add.noftz.f16x2 d,m,a", "atom.add.noftz.f16x2 d,m,a",
                                  "atom.shared.add.noftz.f16x2 d,m,a", "red.shared.add.noftz.f16x2 m,a"])
def test_f16x2_atomic_adds_as_ptxas(name):
    """atom/red.add.noftz.f16x2: ADD.F16x2.RN (it was ADD.F32.FTZ.RN: wrong sums; on shared
    memory a compare-and-swap loop with HADD2, was refused), checked
    by the per-form kernel (each thread its own word) against ptxas's code in the emulator."""
    from tools.inventory_coverage import check_form, sm89_forms
    form = next(f for f in sm89_forms() if f.name == name)
    assert check_form(form, 3) == ("match", "")


@pytest.mark.parametrize("name", ["atom.global.L2::cache_hint.add.u32 d,m,a,r",
                                  "red.global.L2::cache_hint.add.u32 m,a,r"])
def test_atomics_with_a_cache_policy(name):
    """The L2 cache policy operand of atom/red is a hint we leave out (as for ld/st): the
    policy register reached the encoder as a data operand (an internal error); values as
    ptxas's desc[UR][R.64] forms in the emulator."""
    from tools.inventory_coverage import check_form, sm89_forms
    form = next(f for f in sm89_forms() if f.name == name)
    assert check_form(form, 5) == ("match", "")


@pytest.mark.parametrize("name", ["atom.shared.and.b64 d,m,a", "atom.shared.or.b64 d,m,a",
                                  "atom.shared.xor.b64 d,m,a", "atom.shared.min.s64 d,m,a",
                                  "atom.shared.max.u64 d,m,a", "red.shared.max.s64 m,a",
                                  "red.shared.min.u64 m,a"])
def test_shared_64_bit_logic_and_min_max(name):
    """64-bit and/or/xor/min/max on shared memory (no ATOMS form): the compare-and-swap
    loop with LOP3 on both words, or a 64-bit compare and SEL (were refused); values as
    ptxas's code in the emulator (edge values: signs, all ones, zero)."""
    from tools.inventory_coverage import check_form, sm89_forms
    form = next(f for f in sm89_forms() if f.name == name)
    assert check_form(form, 7) == ("match", "")
