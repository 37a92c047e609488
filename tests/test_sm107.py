"""sm_107 / sm_107a / sm_107f (issue 21: `-arch=sm_107*` was refused for want of a code
generator). ptxas 13.5.37 writes sm_120's instructions and words for sm_107 (same opcodes
and encodings; its own schedule), so the Target reads the blackwell table's sm_120 forms;
the cubin facts are sm_107's own: e_flags 0x6006b02, `.nv.compat` record 0x0d = 0x103, the
unnamed kernel record 0x5f = 0x103 and a last record 0x67 (BVAL 0, not under -c), and
ptxas's residency limits (1024 threads, 16 CTAs per SM). Every expectation is ptxas's: its
cubin's structure and records, its cubin's values in the emulator."""
from __future__ import annotations

import io

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.codegen import compile_ptx
from ptx2sass.emu.launch import run
from tools.arch_structure import structure

HEADER = ".version 9.4\n.target {target}\n.address_size 64\n"

# integer and f32 arithmetic with sm_120-only choices (IADD, VIMNMX.S32, VIADD.S32.ISAT, sad
# without VABSDIFF) and a sign-extended index
ARITH = """
.visible .entry arith(.param .u64 p, .param .u32 m)
{
 .reg .b32 %r<20>; .reg .b64 %rd<8>; .reg .f32 %f<8>;
 ld.param.u64 %rd1, [p]; ld.param.u32 %r10, [m];
 mov.u32 %r2, %tid.x;
 cvta.to.global.u64 %rd2, %rd1; cvt.s64.s32 %rd3, %r2; shl.b64 %rd3, %rd3, 4; add.s64 %rd2, %rd2, %rd3;
 ld.global.u32 %r6, [%rd2]; ld.global.u32 %r7, [%rd2+4];
 add.s32 %r8, %r6, %r7; min.s32 %r9, %r8, %r6; add.sat.s32 %r11, %r9, %r7; sad.u32 %r12, %r11, %r6, %r7;
 max.u32 %r13, %r12, %r10;
 st.global.u32 [%rd2], %r13;
 ld.global.v2.f32 {%f1,%f2}, [%rd2+8];
 add.f32 %f3, %f1, %f2; mul.f32 %f4, %f3, %f1; fma.rn.f32 %f5, %f4, %f2, %f3;
 st.global.f32 [%rd2+4], %f5;
 ret;
}
"""

# FP64 (fixed-latency on sm_107: ptxas gives DFMA no write scoreboard) in a dependent chain
# and a loop
FP64 = """
.visible .entry dchain(.param .u64 p)
{
 .reg .b32 %r<6>; .reg .b64 %rd<6>; .reg .f64 %d<8>; .reg .pred %q;
 ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd1, %rd1;
 mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 8; add.s64 %rd3, %rd1, %rd2;
 ld.global.f64 %d1, [%rd3]; mov.f64 %d2, 0d3FF0000000000000; mov.u32 %r2, 0;
LOOP:
 fma.rn.f64 %d2, %d2, %d1, 0d3FE0000000000000; mul.rn.f64 %d3, %d2, %d2; add.rn.f64 %d2, %d3, %d1;
 mul.rn.f64 %d2, %d2, 0d3FD0000000000000; sub.rn.f64 %d2, %d2, %d3;
 add.s32 %r2, %r2, 1; setp.lt.u32 %q, %r2, 5; @%q bra LOOP;
 st.global.f64 [%rd3], %d2;
 ret;
}
"""

# shared memory, a barrier and shared atomics
SHARED = """
.visible .entry sh(.param .u64 p)
{
 .shared .align 4 .b32 buf[64];
 .reg .b32 %r<10>; .reg .b64 %rd<6>;
 ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd1, %rd1;
 mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, buf; add.s32 %r4, %r3, %r2;
 mul.lo.u32 %r5, %r1, 7; st.shared.u32 [%r4], %r5; bar.sync 0;
 xor.b32 %r6, %r1, 5; shl.b32 %r6, %r6, 2; add.s32 %r6, %r3, %r6; ld.shared.u32 %r7, [%r6];
 and.b32 %r8, %r1, 3; shl.b32 %r8, %r8, 2; add.s32 %r8, %r3, %r8; bar.sync 0;
 atom.shared.add.u32 %r9, [%r8], %r7;
 mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r7;
 ret;
}
"""

# a function kept out of line under -g and -c (the records of both functions; without them
# ptxas keeps it as a subroutine of the kernel, ours inlines it)
CALL = """
.func (.param .b32 r) f(.param .b32 a)
{
 .reg .b32 %r<3>;
 ld.param.b32 %r1, [a]; add.s32 %r2, %r1, 7; st.param.b32 [r], %r2; ret;
}
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<4>; .reg .b64 %rd<3>;
 ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
 mov.u32 %r1, %tid.x;
 { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), f, (pa); ld.param.b32 %r2, [pr]; }
 st.global.u32 [%rd2], %r2; ret;
}
"""

MODULES = {"arith": ARITH, "fp64": FP64, "shared": SHARED, "call": CALL}
# records whose values follow the code (register count, offsets, stack, frame): compared by
# kind only
_CODE_RECORDS = {0x2F, 0x1C, 0x1D, 0x11, 0x12, 0x23, 0x1E, 0x31, 0x34, 0x46}


def _ptx(name: str, target: str) -> str:
    return HEADER.format(target=target) + MODULES[name]


def _structure(cubin: bytes) -> dict:
    return structure(cubin, _CODE_RECORDS)


def _ours(ptx: str, arch: str, options: tuple[str, ...]) -> bytes:
    kw = {}
    if "-c" in options:
        kw["compile_only"] = True
    if "-g" in options:
        kw.update(debug=True, opt_level=0)
    return compile_ptx(ptx, arch, "k.ptx", **kw)


@pytest.mark.parametrize("arch", ["sm_107", "sm_107a", "sm_107f"])
@pytest.mark.parametrize("name", ["arith", "fp64", "shared"])
def test_cubin_structure_is_ptxas_s(name, arch):
    """ELF type and flags, sections (but Mercury), symbols, every `.nv.info` record (values
    but the code's own) and `.nv.compat` = ptxas's."""
    ptx = _ptx(name, arch)
    theirs = oracle.ptxas(ptx, arch, name="k.ptx")
    assert theirs.ok, theirs.stderr
    assert _structure(_ours(ptx, arch, ())) == _structure(theirs.output)


@pytest.mark.parametrize("options", [("-g",), ("-c",)], ids=["g", "c"])
def test_function_records_as_ptxas_s(options):
    """-g keeps `f` out of line and gives it the 0x67 record too; -c writes none (e_flags
    aside: our -c objects are SASS only, `Target.mercury_e_flag`)."""
    ptx = _ptx("call", "sm_107")
    theirs = oracle.ptxas(ptx, "sm_107", options, name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours, want = _structure(_ours(ptx, "sm_107", options)), _structure(theirs.output)
    if "-c" in options:
        ours.pop("header"), want.pop("header")
    if "-g" in options:      # -g's DWARF sections are compared in test_debuginfo; the records here
        ours = ours["records"]
        want = want["records"]
    assert ours == want


def _inputs(name: str, n: int = 64) -> list[np.ndarray]:
    rng = np.random.default_rng(107)
    if name == "arith":
        words = rng.integers(-2**31, 2**31, size=4 * n, dtype=np.int64).astype(np.uint32)
        words[2::4] = rng.standard_normal(n).astype(np.float32).view(np.uint32)
        words[3::4] = rng.standard_normal(n).astype(np.float32).view(np.uint32)
        return [words, np.uint32(0x40000000)]
    if name == "fp64":
        return [rng.uniform(0.1, 2.0, size=n)]
    return [np.zeros(n, dtype=np.uint32)]


@pytest.mark.parametrize("name", ["arith", "fp64", "shared"])
def test_values_are_ptxas_s_in_the_emulator(name):
    """Our sm_107 cubin and ptxas's give the same values; neither has a hazard under the
    sm_107 latency table (ptxas's code is taken as hazard-free: one flagged in it would be
    the table's error)."""
    ptx = _ptx(name, "sm_107")
    kernel = {"arith": "arith", "fp64": "dchain", "shared": "sh"}[name]
    theirs = oracle.ptxas(ptx, "sm_107", name="k.ptx")
    assert theirs.ok, theirs.stderr
    outputs = []
    for cubin in (_ours(ptx, "sm_107", ()), theirs.output):
        bufs = [b.copy() if isinstance(b, np.ndarray) else b for b in _inputs(name)]
        res = run(cubin, kernel, (1, 1, 1), (64, 1, 1), bufs)
        assert not res.hazards, res.hazards[:3]
        outputs.append(bufs[0])
    assert outputs[0].tobytes() == outputs[1].tobytes()


@pytest.mark.parametrize("ntid, ctas, warns", [(512, 2, False), (544, 2, True), (32, 16, False), (32, 17, True)])
def test_residency_limits_as_ptxas_s(ntid, ctas, warns, tmp_path):
    """ptxas ignores `.minnctapersm` past 1024 threads or 16 CTAs per SM on sm_107, with a
    warning (sm_120: 1536 and 24)."""
    from ptx2sass import cli
    ptx = _ptx("arith", "sm_107").replace(
        ".entry arith(.param .u64 p, .param .u32 m)",
        f".entry arith(.param .u64 p, .param .u32 m) .maxntid {ntid},1,1 .minnctapersm {ctas}")
    theirs = oracle.ptxas(ptx, "sm_107", name="k.ptx")
    assert theirs.ok and ("out of range" in theirs.stderr) == warns, theirs.stderr
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    import contextlib
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli.main(["-arch=sm_107", str(src), "-o", str(tmp_path / "k.cubin")])
    assert rc == 0
    assert err.getvalue().replace("ptx2sass", "ptxas").splitlines() == theirs.stderr.splitlines()


@pytest.mark.parametrize("target", ["sm_107", "sm_107a", "sm_107f"])
def test_target_needs_ptx_9_4(target, tmp_path):
    """`.target sm_107*` needs PTX ISA 9.4: ptxas's words for 9.3."""
    from ptx2sass import cli
    ptx = _ptx("arith", target).replace(".version 9.4", ".version 9.3")
    theirs = oracle.ptxas(ptx, target, name="k.ptx")
    assert not theirs.ok
    (tmp_path / "k.ptx").write_text(ptx)
    import contextlib
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli.main([f"-arch={target}", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")])
    assert rc == 255
    first = theirs.stderr.splitlines()[0].split(";", 1)[1]
    assert first in err.getvalue()


# ptxas's own sm_107 code under the sm_107 latency table (blackwell_sm107.json): launches whose
# hazards taught the table its rules (FP64 fixed-latency, the tensor cores' timings, IADD's 5)
AUDITED = {"triton": {"flash_attn_fwd", "matmul_f16", "float64_ops"},
           "llvm": {"divide", "double", "safe_checks"},
           "cuda": {"ieee_f64"}}


@pytest.fixture(scope="module")
def sm107_audit():
    from tools import latency_audit as la
    a = la.run_audit(tuple(AUDITED), names=AUDITED, arch="sm_107")
    if a.kernels < 5:
        pytest.skip(f"only {a.kernels} launches audited (corpus or oracle missing)")
    return a


def test_sm107_table_passes_ptxas_s_cubins(sm107_audit):
    """No hazard in ptxas's sm_107 code (one there would be the table's error: sm_120's table
    flagged FP64 results read without a scoreboard and HMMA results read after 19 cycles)."""
    from tools import latency_audit as la
    assert not sm107_audit.skipped, sm107_audit.skipped[:3]
    assert not sm107_audit.hazards, sm107_audit.hazards[:5]
    fixed_sb, var_nosb = la.scoreboard_findings(sm107_audit)
    assert not [r for r in var_nosb if r[3]], var_nosb


@pytest.mark.parametrize("arch", ["sm_107", "sm_120", "sm_121", "sm_100"])
@pytest.mark.parametrize("op", ["add.sat.s32", "sub.sat.s32", "add.s32"])
def test_saturating_add_sets_isa_class_2(op, arch):
    """`.nv.compat` ISA_CLASS is 2 where the code has VIADD.S32.ISAT (add/sub.sat.s32 on
    sm_107/sm_120/sm_121; ours wrote 1), 1 without it and on sm_100 (no such VIADD)."""
    ptx = _ptx("arith", arch).replace("add.sat.s32 %r11, %r9, %r7", f"{op} %r11, %r9, %r7")
    theirs = oracle.ptxas(ptx, arch, name="k.ptx")
    assert theirs.ok, theirs.stderr
    assert _structure(_ours(ptx, arch, ()))["compat"] == _structure(theirs.output)["compat"]


def test_sm100a_tensor_copy_modes_are_refused_cleanly():
    """sm_107a's ptxas takes cp.async.bulk.tensor's `.cta_group::2` and `im2col::w::128`
    (sm_100a's UTMALDG .2CTA / .W128); our sm_107 reads sm_120's forms, which have no such
    words: a "not supported yet" error naming the target, not an internal encoding error."""
    from ptx2sass.frontend import inventory
    from tools import arch_specific_coverage as asc
    from tools.inventory_kernels import version_for
    forms = [f for f in inventory.forms() if f.opcode == "cp" and f.valid_on(107, version_for(f, 107), True)
             and ("cta_group::2" in f.name or "im2col::w::128" in f.name)]
    assert forms
    for form in forms[::max(1, len(forms) // 6)]:
        status, detail = asc.check(form, 107, "sm_107a")
        assert status == "refused", (form.name, status, detail)
        assert "not supported yet" in detail and "internal error" not in detail, (form.name, detail)
