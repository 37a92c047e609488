"""The differential fuzzer itself (ptx2sass/fuzz): its programs are valid PTX, deterministic,
valid under any deletion of statements; the classifier tells a wrong answer, a refusal and
an internal error apart; the reducer shrinks; campaigns run on a process pool and on a
local Ray instance with the same results; `ptx2sass diff` runs on corpus files."""
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.errors import CompileError
from ptx2sass.fuzz import runner
from ptx2sass.fuzz.campaign import Options, run_local, run_seed
from ptx2sass.fuzz.coverage import coverage_summary, match, parse_key
from ptx2sass.fuzz.generator import FEATURES, generate
from ptx2sass.fuzz.inputs import case_from_program, launch_data, read_case
from ptx2sass.fuzz.program import render, walk
from ptx2sass.fuzz.report import build_report, text_report

REPO = Path(__file__).resolve().parent.parent
SEEDS = range(9000, 9025)


def _ptxas_ok(case):
    run = oracle.ptxas(case.text, "sm_89", () if case.fmad else ("--fmad=false",))
    return run.ok, run.stderr


def test_generated_programs_are_valid_ptx():
    """ptxas accepts every program (a rejection is a generator bug: class `invalid`)."""
    for seed in SEEDS:
        case = case_from_program(generate(seed))
        ok, err = _ptxas_ok(case)
        assert ok, f"seed {seed}: {err}"


def test_every_feature_group_generates_valid_ptx():
    for i, feature in enumerate(sorted(FEATURES)):
        case = case_from_program(generate(7100 + i, {"int32", "branch", feature}, size=30))
        ok, err = _ptxas_ok(case)
        assert ok, f"{feature}: {err}"


def test_generation_is_deterministic():
    for seed in (3, 77, 9001):
        a, b = case_from_program(generate(seed)), case_from_program(generate(seed))
        assert a.text == b.text and a.slots == b.slots
        da, db = launch_data(a), launch_data(b)
        assert da.buffers == db.buffers


def test_any_subset_of_statements_is_valid():
    """What the reducer relies on: deleting statements keeps the program valid PTX."""
    rng = random.Random(5)
    for seed in (11, 12, 13, 14):
        prog = generate(seed, size=40)
        for _ in range(3):
            stmts = [(s, holder) for body in [prog.body] + [f.body for f in prog.funcs] for s, holder in walk(body)]
            for s, holder in rng.sample(stmts, k=len(stmts) // 3):
                if any(x is s for x in holder):
                    holder.remove(s)
            ok, err = _ptxas_ok(case_from_program(prog))
            assert ok, f"seed {seed}: {err}"


def test_inputs_include_special_values():
    case = case_from_program(generate(9003, {"int32", "f32", "f64"}, size=40))
    data = np.frombuffer(launch_data(case).buffers["in"][1], dtype=np.uint32)
    assert (data == 0x7F800000).any() and (data == 0xFFC00001).any() and (data == 0).any()


def test_nan_compares_equal_only_in_float_results():
    assert runner.equal_slot(0x7FC00000, 0x7FFFFFFF, 32, ("f32",), 0.0)
    assert not runner.equal_slot(0x7FC00000, 0x7FFFFFFF, 32, (), 0.0)
    assert not runner.equal_slot(0x3F800000, 0x3F800001, 32, ("f32",), 0.0)
    assert runner.equal_slot(0x3F800000, 0x3F800001, 32, ("f32",), 2 ** -20)
    assert runner.equal_slot(0x7E00_3C00, 0x7E01_3C00, 32, ("f16x2",), 0.0)
    assert not runner.equal_slot(0x7E00_3C00, 0x7E01_3C01, 32, ("f16x2",), 0.0)


# ------------------------------------------------------------------------------ classifying
# ptx2sass stood in for by ptxas itself on an altered program: a wrong answer on purpose.

def _ptxas_of(text):
    run = oracle.ptxas(text, "sm_89")
    assert run.ok, run.stderr
    return run.output


def _case_with(line_in, seed=9100, runs_clean=False):
    """A small integer program whose text satisfies `line_in` (and, with `runs_clean`, whose
    ptxas cubin runs in the emulator without a finding)."""
    for s in range(seed, seed + 200):
        case = case_from_program(generate(s, {"int32"}, size=20))
        if not line_in(case.text):
            continue
        if runs_clean:
            saved = runner.compile_ours
            runner.compile_ours = lambda c: _ptxas_of(c.text)
            try:
                if runner.run_case(case).cls != "pass":
                    continue
            finally:
                runner.compile_ours = saved
        return case
    raise AssertionError("no such program")


FIRST_STORE = re.compile(r"\n    st\.global\.b32 \[%g_outp\+0\], (%r\d+);")


def _off_by_one(text):
    """The program with its first output one more than it should be."""
    return FIRST_STORE.sub(lambda m: f"\n    add.u32 {m.group(1)}, {m.group(1)}, 1;{m.group(0)}", text, count=1)


def test_a_wrong_answer_is_a_mismatch(monkeypatch):
    case = _case_with(lambda t: FIRST_STORE.search(t), runs_clean=True)
    monkeypatch.setattr(runner, "compile_ours", lambda c: _ptxas_of(_off_by_one(c.text)))
    out = runner.run_case(case)
    assert out.cls == "mismatch" and out.sig.startswith("mismatch: "), out.sig
    assert "thread 0" in out.detail and "slot 0" in out.detail


def test_the_same_program_passes(monkeypatch):
    case = _case_with(lambda t: FIRST_STORE.search(t), runs_clean=True)
    monkeypatch.setattr(runner, "compile_ours", lambda c: _ptxas_of(c.text))
    assert runner.run_case(case).cls == "pass"


def test_refusals_and_internal_errors_are_told_apart(monkeypatch):
    case = _case_with(lambda t: True)

    def refuse(c):
        raise CompileError("`frob.b32` not supported yet", "fuzz.ptx", 12)
    monkeypatch.setattr(runner, "compile_ours", refuse)
    out = runner.run_case(case)
    assert (out.cls, out.sig) == ("refuse", "refuse: `frob.b32` not supported yet")

    def crash(c):
        raise KeyError("R255")
    monkeypatch.setattr(runner, "compile_ours", crash)
    out = runner.run_case(case)
    assert out.cls == "crash" and out.sig.startswith("crash: KeyError")


def test_an_emulator_fault_on_ptxas_cubin_is_emu_fail(monkeypatch):
    from ptx2sass.emu.errors import EmuFault
    case = _case_with(lambda t: True)

    def fault(program, c, hazard_check=True):
        raise EmuFault("unsupported instruction FROB", kernel=c.kernel, offset=0x40)
    monkeypatch.setattr(runner, "compile_ours", lambda c: _ptxas_of(c.text))
    monkeypatch.setattr(runner, "execute", fault)
    out = runner.run_case(case)
    assert (out.cls, out.sig) == ("emu_fail", "emu_fail: unsupported instruction FROB")


def test_reducer_shrinks_to_the_failing_statement(monkeypatch, tmp_path):
    """A stand-in compiler that refuses `bfe`: the reducer keeps only what the refusal needs,
    and the written test reads back as a runnable case."""
    from ptx2sass.fuzz import reducer

    def refuse_bfe(c):
        for n, line in enumerate(c.text.splitlines(), 1):
            if line.strip().startswith(("bfe.", "@")) and "bfe." in line:
                raise CompileError("`bfe` not supported yet", "fuzz.ptx", n)
        return _ptxas_of(c.text)
    monkeypatch.setattr(runner, "compile_ours", refuse_bfe)
    seed = next(s for s in range(9200, 9400) if "bfe." in case_from_program(generate(s, {"int32", "bits", "branch"},
                                                                                    size=25)).text)
    options = Options(features=["int32", "bits", "branch"], size=25, peel=0)
    red = reducer.reduce_seed(seed, "refuse: `bfe` not supported yet", options, max_trials=150)
    assert red is not None and red.lines_after < red.lines_before
    stmts = [s for s, _ in walk(red.program.body)]
    assert len(stmts) == 1, [type(s).__name__ for s in stmts]
    path = reducer.write_regression(red, tmp_path, xfail="bfe refused")
    case = read_case(path.read_text())
    assert case is not None and "bfe." in case.text and "// xfail: bfe refused" in path.read_text()


# ------------------------------------------------------------------------------ campaigns

def _summary(results):
    return sorted((r["seed"], r["class"], r["sig"]) for r in results)


def test_local_campaign_and_report(tmp_path):
    results = run_local(range(9300, 9306), Options(), jobs=2)
    assert len(results) == 6
    assert not [r for r in results if r["class"] in ("invalid", "generator_error")]
    rep = build_report(results, {"wall_seconds": 10})
    assert rep["programs"] == 6 and sum(rep["first_class"].values()) == 6
    text = text_report(rep)
    assert "class" in text and "generator coverage" in text
    assert rep["coverage"]["inventory"]["covered"] > 0


def test_ray_campaign_matches_the_local_one():
    pytest.importorskip("ray")
    from ptx2sass.fuzz.campaign import run_ray
    seeds = range(9310, 9313)
    ray_results = run_ray(seeds, Options(), "local", jobs=1, batch=1)
    local = [run_seed(s, Options()) for s in seeds]
    assert _summary(ray_results) == _summary(local)


def test_fuzz_command_writes_reports(tmp_path):
    out = tmp_path / "campaign"
    proc = subprocess.run([sys.executable, "-m", "ptx2sass.fuzz.cli", "--seeds", "9320:9323", "--out", str(out),
                           "--quiet"], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["programs"] == 3
    assert (out / "coverage.svg").read_text().startswith("<svg")
    assert len((out / "results.jsonl").read_text().splitlines()) == 3
    # `report` takes the campaign's directory too; a missing or foreign file is an error
    # message, not a traceback
    report = lambda *a: subprocess.run([sys.executable, "-m", "ptx2sass.fuzz.cli", "report", *a, "--out",  # noqa: E731
                                        str(tmp_path / "rep")], capture_output=True, text=True, cwd=REPO)
    ok = report(str(out))
    assert ok.returncode == 0 and "3 programs" in ok.stdout, ok.stderr
    (tmp_path / "bad.jsonl").write_text("not json\n")
    for bad in (str(tmp_path / "missing.jsonl"), str(tmp_path / "bad.jsonl")):
        proc = report(bad)
        assert proc.returncode == 2 and proc.stderr.startswith("ptx2sass-fuzz: error: ") \
            and "Traceback" not in proc.stderr, proc.stderr


def test_coverage_keys_match_inventory_forms():
    assert parse_key("add.rn.ftz.sat.f32") == ("add", (".rn", ".ftz", ".sat"), (".f32",))
    assert parse_key("mov.special.tid") == ("mov", ("%tid",), ())
    from ptx2sass.fuzz.coverage import inventory_forms
    by_op = {}
    for f in inventory_forms()[1]:
        by_op.setdefault(f["opcode"], []).append(f)
    # the ISA inventory (issue 15, on main) holds each exact spelling; the interim table
    # matched the base form with its optional modifiers
    exact = inventory_forms()[0].startswith("PTX ISA inventory")
    assert match("add.rn.ftz.sat.f32", by_op) == (["add.rn.ftz.sat.f32"] if exact else ["add.f32"])
    assert match("setp.lt.and.u32", by_op) == (["setp.lt.and.u32"] if exact else ["setp.lt.u32"])
    assert match("add.frob.f32", by_op) == []
    cov = coverage_summary([{"coverage": {"keys": ["add.s32"], "spaces": ["global"], "shapes": ["loop_const"],
                                          "launch": [[1, 1, 1], [32, 1, 1]], "pressure": "low"}}])
    assert cov["inventory"]["covered"] == 1 and cov["spaces"] == {"global": 1}


# ------------------------------------------------------------------------------ ptx2sass diff

def _diff(*args):
    return subprocess.run([sys.executable, "-m", "ptx2sass", "diff", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


@pytest.mark.parametrize("path", ["tests/corpus/cuda/atomics.ptx", "examples/vecadd.ptx"])
def test_diff_on_corpus_files(path):
    proc = _diff(path, "--width", "40")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "outputs: identical" in proc.stdout and "registers" in proc.stdout and "| ptxas" in proc.stdout


def test_diff_shows_the_first_difference_of_a_fuzz_case(tmp_path, monkeypatch):
    """A fuzz case file whose program ptx2sass gets wrong: `diff` names the output and exits 1.
    (The wrong answer is made by editing the PTX ptx2sass compiles.)"""
    case = _case_with(lambda t: FIRST_STORE.search(t), runs_clean=True)
    from ptx2sass.fuzz.inputs import case_header
    path = tmp_path / "case.ptx"
    path.write_text(case_header(case) + case.text)
    from ptx2sass.fuzz import diff
    import ptx2sass
    monkeypatch.setattr(ptx2sass, "compile", lambda text, arch, **kw: _ptxas_of(_off_by_one(text)))
    assert diff.main([str(path), "--no-listing"]) == 1


def test_diff_lowers_a_fuzz_case_s_target_for_an_older_arch(tmp_path):
    """Fuzz programs are sm_89 PTX; the campaign runner lowers `.target` for sm_75, and
    `diff --arch sm_75` must too (ptxas refuses a `.target` newer than -arch)."""
    from ptx2sass.fuzz.inputs import case_header
    case = _case_with(lambda t: ".target sm_89" in t, runs_clean=True)
    path = tmp_path / "case.ptx"
    path.write_text(case_header(case) + case.text)
    proc = _diff(str(path), "--arch", "sm_75", "--no-listing")
    assert "ptxas rejects" not in proc.stdout, proc.stdout
    assert proc.returncode == 0 and "outputs: identical" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["emu_fail_cs2r_to_suld_s22001287",
                                  "emu_fail_hazard_in_ptxas_s_cubin_reads_r_written_by_tld_at_0_s2"])
def test_diff_binds_a_fuzz_case_s_texture_and_surface_objects(name):
    """A fuzz case with `suld` / `tex.2d` on bindless handles: `diff` binds the objects the
    case describes, as the fuzz runner does (it faulted before: 'handle 0x1: nothing bound')."""
    proc = _diff(f"tests/fuzz_regressions/{name}.ptx", "--no-listing")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 texture/surface objects bound" in proc.stdout
    assert "outputs: identical" in proc.stdout and "faults" not in proc.stdout


MODULE_TEXREF = """.version 8.0
.target sm_89
.address_size 64
.global .texref tex0;
.global .surfref surf0;
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<8>;
    .reg .b64 %d<4>;
    ld.param.u64 %d0, [out];
    cvta.to.global.u64 %d0, %d0;
    mov.u32 %r0, %tid.x;
    and.b32 %r1, %r0, 15;
    shr.u32 %r2, %r0, 4;
    cvt.rn.f32.u32 %f0, %r1;
    cvt.rn.f32.u32 %f1, %r2;
    add.f32 %f0, %f0, 0f3F000000;
    add.f32 %f1, %f1, 0f3F000000;
    tex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [tex0, {%f0, %f1}];
    shl.b32 %r3, %r1, 2;
    suld.b.2d.b32.clamp {%r4}, [surf0, {%r3, %r2}];
    add.u32 %r4, %r4, %r0;
    sust.b.2d.b32.clamp [surf0, {%r3, %r2}], {%r4};
    mul.wide.u32 %d1, %r0, 4;
    add.u64 %d2, %d0, %d1;
    st.global.f32 [%d2], %f2;
    ret;
}
"""


def test_diff_binds_module_texrefs_and_compares_surfaces(tmp_path, monkeypatch):
    """A plain file's module `.texref`/`.surfref` get deterministic objects (fresh for each
    cubin); a surface one cubin writes differently is the first difference."""
    path = tmp_path / "texref.ptx"
    path.write_text(MODULE_TEXREF)
    from ptx2sass.fuzz import diff
    import ptx2sass
    args = [str(path), "--no-listing", "--grid", "1", "--block", "256"]
    assert diff.main(args) == 0
    wrong = MODULE_TEXREF.replace("add.u32 %r4, %r4, %r0;", "add.u32 %r4, %r4, 1;")
    monkeypatch.setattr(ptx2sass, "compile", lambda text, arch, **kw: _ptxas_of(wrong))
    assert diff.main(args) == 1


# ------------------------------------------------------------------------------ ptxas's own bugs
# Fuzz findings where ptxas, not ptx2sass, departs from the PTX ISA: checked against the
# manual's semantics computed here, so ptx2sass is never made to copy them.

SHIFT_BY_FMA = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<2>;
    .reg .b64 %d<4>;
    ld.param.u64 %d2, [out];
    ld.param.u64 %d3, [in];
    ld.global.b32 %r0, [%d3];
    ld.global.b64 %d0, [%d3+8];
    fma.rn.f32 %r1, %r0, %r0, %r0;
    shr.u64 %d1, %d0, %r1;
    st.global.b64 [%d2], %d1;
    ret;
}
"""


def test_64bit_shift_by_a_register_an_fma_wrote_uses_its_bits():
    """`shr.u64 d, a, b` with `b` a .b32 register that fma.f32 wrote: PTX shifts by b's bits
    (0x40c00000 for 6.0: clamped to 64, result 0). ptxas 13.5.37 converts the float to an
    integer first (F2I.U64.TRUNC, shifting by 6): a ptxas miscompile the fuzzer found (seed 14
    of the first 10,000-program campaign). ptx2sass follows the manual."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    inp = np.zeros(4, np.uint32)
    inp[0] = 0x40000000                          # 2.0: fma gives 6.0
    inp[2], inp[3] = 0, 0x80000000
    want = 0                                     # shift amount 0x40c00000 >= 64
    out = np.zeros(2, np.uint32)
    run(ptx2sass.compile(SHIFT_BY_FMA), "k", (1,), (1,), [out, inp.copy()])
    assert int(out[0]) | int(out[1]) << 32 == want
    theirs = oracle.ptxas(SHIFT_BY_FMA).output
    assert "F2I.U64.TRUNC" in oracle.nvdisasm(theirs)
    run(theirs, "k", (1,), (1,), [out, inp.copy()], hazard_check=False)
    assert int(out[0]) | int(out[1]) << 32 == 0x8000000000000000 >> 6


GUARDED_SET_F32 = """
.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 flag)
{
    .reg .pred %p0;
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.param.u32 %r3, [flag];
    setp.ne.u32 %p0, %r3, 0;
    mov.u32 %r0, %ctaid.x;
    ld.global.s32 %r1, [%d1];
    ld.global.u8 %r2, [%d1+4];
    @!%p0 set.ge.f32.s32 %r2, %r0, %r1;
    st.global.b32 [%d0], %r2;
    ret;
}
"""

ABS_BF16X2_OF_SAT = """
.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b32 %r1, [%d1];
    ld.global.b32 %r2, [%d1+4];
    add.rm.ftz.sat.f32 %r2, %r2, %r1;
    abs.bf16x2 %r3, %r2;
    st.global.b32 [%d0], %r3;
    ret;
}
"""


def test_guarded_set_f32_leaves_its_destination_alone():
    """`@!p set.ge.f32.s32 d, a, b` with p true: PTX leaves d as it was (230 from a u8
    load). ptxas 13.5.37 selects 0/-1 under the guard and converts d to float after the
    merge (I2FP of |d|), so the untaken path stores 230.0f: a ptxas miscompile the fuzzer
    found (seed 300156; `set.eq.f16.f16` the same way, seed 300060). ptx2sass follows the
    manual."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    inp = np.array([5, 230], np.uint32)
    out = np.zeros(1, np.uint32)
    run(ptx2sass.compile(GUARDED_SET_F32), "k", (1,), (1,), [out, inp.copy(), np.uint32(1)])
    assert int(out[0]) == 230
    theirs = oracle.ptxas(GUARDED_SET_F32).output
    run(theirs, "k", (1,), (1,), [out, inp.copy(), np.uint32(1)], hazard_check=False)
    assert int(out[0]) == int(np.float32(230).view(np.uint32))


GUARDED_SET_U16 = """
.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 flag)
{
    .reg .pred %p0;
    .reg .b16 %h0;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.param.u32 %r2, [flag];
    ld.global.b32 %r1, [%d1];
    ld.global.s16 %h0, [%d1+4];
    setp.ne.u32 %p0, %r2, 0;
    @!%p0 set.lo.u32.u16 %r1, %h0, %h0;
    st.global.u32 [%d0], %r1;
    ret;
}
"""


def test_guarded_set_u16_leaves_its_destination_alone():
    """`@!p set.lo.u32.u16 d, h, h` with p true leaves d (0x00018000) as it was. ptxas
    13.5.37 sign-extends d's low half (PRMT d, d, 0x9910) on the untaken path and stores
    0xffff8000: a ptxas miscompile the fuzzer found (seed 600095, seen through sqrt and
    min.NaN.xorsign.abs). ptx2sass follows the manual; the generator no longer guards set."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    inp = np.array([0x00018000, 7], np.uint32)
    out = np.zeros(1, np.uint32)
    run(ptx2sass.compile(GUARDED_SET_U16), "k", (1,), (1,), [out, inp.copy(), np.uint32(1)])
    assert int(out[0]) == 0x00018000
    theirs = oracle.ptxas(GUARDED_SET_U16).output
    run(theirs, "k", (1,), (1,), [out, inp.copy(), np.uint32(1)], hazard_check=False)
    assert int(out[0]) == 0xFFFF8000


GUARDED_TESTP_OWN_GUARD = """
.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 flag)
{
    .reg .pred %p0;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.param.u32 %r2, [flag];
    ld.global.b32 %r0, [%d1];
    setp.ne.u32 %p0, %r2, 0;
    @!%p0 testp.notanumber.f32 %p0, %r0;
    selp.u32 %r1, 1, 0, %p0;
    st.global.u32 [%d0], %r1;
    ret;
}
"""


def test_guarded_testp_writing_its_own_guard_keeps_it():
    """`@!p testp.notanumber.f32 p, 1.0` with p true: the testp does not run, p stays true
    and selp stores 1. ptxas 13.5.37 drops the guard (LOP3/ISETP unguarded, SEL on the
    test's result) and stores 0: a ptxas miscompile the fuzzer found (seed 600097;
    `testp.subnormal.f64` the same way, seed 400105). ptx2sass follows the manual;
    the generator no longer guards testp (forms.guard_miscompiled)."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    inp = np.array([0x3F800000], np.uint32)
    out = np.zeros(1, np.uint32)
    run(ptx2sass.compile(GUARDED_TESTP_OWN_GUARD), "k", (1,), (1,), [out, inp.copy(), np.uint32(1)])
    assert int(out[0]) == 1
    theirs = oracle.ptxas(GUARDED_TESTP_OWN_GUARD).output
    run(theirs, "k", (1,), (1,), [out, inp.copy(), np.uint32(1)], hazard_check=False)
    assert int(out[0]) == 0


def test_abs_bf16x2_of_a_saturated_f32_clears_both_signs():
    """abs.bf16x2 clears bit 15 and bit 31. The f32 `add.sat` result 0x3f008000 is >= 0, but
    its low half (0x8000) is a negative bf16: abs gives 0x3f000000. ptxas 13.5.37 drops the
    abs (HFMA2.BF16_V2 d, -RZ, RZ, a keeps 0x3f008000): a ptxas miscompile the fuzzer found
    (seed 300054). ptx2sass follows the manual."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    inp = np.array([0x3F008000, 0], np.uint32)
    out = np.zeros(1, np.uint32)
    run(ptx2sass.compile(ABS_BF16X2_OF_SAT), "k", (1,), (1,), [out, inp.copy()])
    assert int(out[0]) == 0x3F000000
    theirs = oracle.ptxas(ABS_BF16X2_OF_SAT).output
    run(theirs, "k", (1,), (1,), [out, inp.copy()], hazard_check=False)
    assert int(out[0]) == 0x3F008000


SHIFT16_BY_IMMEDIATE = """
.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b16 %h<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.b16 %h0, [%d1];
    shr.b16 %h1, %h0, AMOUNT;
    shr.s16 %h2, %h0, AMOUNT;
    shl.b16 %h3, %h0, AMOUNT;
    st.global.b16 [%d0], %h1;
    st.global.b16 [%d0+2], %h2;
    st.global.b16 [%d0+4], %h3;
    ret;
}
"""


@pytest.mark.parametrize("amount,ptxas_shift", [("0x80000000", 0), ("0x10001", 1)])
def test_16bit_shift_by_a_large_immediate_clamps(amount, ptxas_shift):
    """shl/shr take the amount as an unsigned 32-bit value and clamp it to the width: a
    16-bit shift by 0x80000000 or 0x10001 shifts all bits out (shr.s16 fills with the sign).
    ptxas 13.5.37 truncates the immediate to 16 bits first (shifting by 0 or 1): a ptxas
    departure from the manual the fuzzer found (seed 38 of the first campaign; the generator
    draws amounts up to 200 only). ptx2sass follows the manual."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    src = SHIFT16_BY_IMMEDIATE.replace("AMOUNT", amount)
    x = 0xFFD2                                   # -46
    inp = np.array([x, 0], np.uint16)
    out = np.zeros(4, np.uint16)
    run(ptx2sass.compile(src), "k", (1,), (1,), [out, inp.copy()])
    assert [int(v) for v in out[:3]] == [0, 0xFFFF, 0]
    theirs = oracle.ptxas(src).output
    run(theirs, "k", (1,), (1,), [out, inp.copy()], hazard_check=False)
    signed = x - 0x10000
    assert [int(v) for v in out[:3]] == [x >> ptxas_shift, (signed >> ptxas_shift) & 0xFFFF,
                                         (x << ptxas_shift) & 0xFFFF]


FNS_INT_MIN = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b32 %r<4>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    ld.global.u32 %r0, [%d1];
    ld.global.u32 %r1, [%d1+4];
    fns.b32 %r2, %r0, 25, %r1;
    fns.b32 %r3, %r0, 25, -2147483648;
    st.global.u32 [%d0], %r2;
    st.global.u32 [%d0+4], %r3;
    ret;
}
"""


@pytest.mark.parametrize("mask", [0xFFFFFFFF, 0x02000000])
def test_fns_with_offset_int_min_finds_nothing(mask):
    """fns d, mask, base, offset with offset = -2^31 searches for the 2^31-th set bit below
    `base`: there is none, d = 0xffffffff (the manual's pseudocode, in 32-bit or exact
    arithmetic alike). ptxas 13.5.37 gives 0 for a register or an immediate offset, even when
    bit 0 of the mask is clear: a ptxas departure the fuzzer found (campaign 6 seed 800032).
    ptx2sass follows the manual; the generator keeps register offsets above -34."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    inp = np.array([mask, 0x80000000], np.uint32)
    out = np.zeros(2, np.uint32)
    run(ptx2sass.compile(FNS_INT_MIN), "k", (1,), (1,), [out, inp.copy()])
    assert [int(v) for v in out] == [0xFFFFFFFF, 0xFFFFFFFF]
    run(oracle.ptxas(FNS_INT_MIN).output, "k", (1,), (1,), [out, inp.copy()], hazard_check=False)
    assert [int(v) for v in out] == [0, 0]


_FLOAT_MINMAX_SAME = re.compile(r"\b(?:min|max)(?:\.\w+)*\.(?:f16|f16x2|bf16|bf16x2|f32|f64)\s+[^,]+,\s*(%\w+),\s*\1;")


def test_float_min_max_never_take_one_register_twice():
    """min/max(x, x) of a NaN x has a payload the manual leaves open (ptxas folds it to x,
    the instruction gives the canonical NaN; seeds 400099, 400108, 600086 compared them),
    so the generator draws two different registers."""
    from ptx2sass.fuzz.campaign import make_program
    seen = 0
    for seed in range(40):
        for feats in (["f32"], ["f64"], ["f16"], ["bf16"]):
            text = case_from_program(make_program(seed, Options(features=feats))).text
            seen += len(re.findall(r"\b(?:min|max)(?:\.\w+)*\.(?:f16|f16x2|bf16|bf16x2|f32|f64)\s", text))
            assert not _FLOAT_MINMAX_SAME.search(text), (seed, feats, _FLOAT_MINMAX_SAME.search(text).group(0))
    assert seen > 20


_NAN_OPEN = re.compile(r"(?<![.\w])(?:(?:abs|neg)(?:\.ftz)?\.(f32|f64)|(?:min|max)(?:\.\w+)*\.(f64))\s+(%\w+),[^\n]*\n")


def test_float_results_with_an_open_nan_payload_are_canonicalised():
    """abs/neg.f32/f64 of a NaN and min/max.f64 of two NaNs give a NaN whose payload the
    manual leaves open (ptxas keeps it with FSEL, canonicalises with FADD, orders DSETP's
    operands as it likes: campaign 7 seeds 841119, 842521, 845077, 842905, 845221, 841270),
    and integer instructions reading the register see it. The generator follows each with
    testp.notanumber + selp of the canonical NaN."""
    from ptx2sass.fuzz.campaign import make_program
    seen = 0
    for seed in range(60):
        text = case_from_program(make_program(seed, Options(features=["f32", "f64"]))).text
        for m in _NAN_OPEN.finditer(text):
            t = m.group(1) or m.group(2)
            rest = text[m.end():].split("\n")
            assert rest[0].strip().startswith(f"testp.notanumber.{t}") and m.group(3) in rest[0], m.group(0)
            assert rest[1].strip().startswith(f"selp.b{t[1:]} {m.group(3)}, 0x7fff"), (m.group(0), rest[1])
            seen += 1
    assert seen > 20


def test_16bit_shift_immediates_stay_below_the_width_ptxas_truncates():
    """The ISA-inventory generator draws a shift's immediate amount below 201, as op_logic
    does (campaign 7 seed 840424: `shr.b16 d, a, 0x80000000`, which ptxas truncates; see
    test_16bit_shift_by_a_large_immediate_clamps); register amounts stay any value."""
    from ptx2sass.fuzz import forms
    from ptx2sass.fuzz.generator import Builder, Ctx, Generator
    shifts = [f for f in forms.isa_families()["alu"] if f.opcode in ("shl", "shr") and f.types[0].endswith("16")]
    assert len(shifts) >= 3
    immediates = []
    for seed in range(60):
        g = Generator(seed, {"forms"})
        for f in shifts:
            got, ops = forms._isa_alu(g, Ctx(), Builder(g, Ctx()), f)
            if got is not None and not ops.text[2].startswith("$"):
                immediates.append(int(ops.text[2], 0))
    assert len(immediates) > 20 and max(immediates) <= 200


GUARDED_VADD4_ADD = """
.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .s32 a)
{
    .reg .pred %p0;
    .reg .b32 %r<5>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u64 %d1, [in];
    mov.u32 %r4, %tid.x;
    setp.lt.u32 %p0, %r4, 1;
    ld.global.u8 %r0, [%d1];
    ld.global.u16 %r1, [%d1+2];
    ld.global.u16 %r2, [%d1+4];
    ld.param.s32 %r3, [a];
    @%p0 vadd4.u32.u32.u32.add %r2, %r3, %r1, %r0;
    mul.wide.u32 %d1, %r4, 4;
    add.s64 %d0, %d0, %d1;
    st.global.b32 [%d0], %r2;
    ret;
}
"""


def test_guarded_vadd4_add_leaves_its_destination_alone():
    """`@p vadd4.u32.u32.u32.add d, a, b, c` with p false (thread 1) leaves d, a loaded u16
    (14), as it was; thread 0 gets the sum of the byte sums plus c. ptxas 13.5.37 drops the
    guard (two IDP.4A and an IADD3, d's load removed) and stores the sum for both threads: a
    ptxas miscompile (campaign 9, seed 20002962). ptx2sass follows the manual; the generator
    no longer guards SIMD video instructions with a secondary `.add`."""
    import ptx2sass
    from ptx2sass.emu.launch import run
    a, b, c = 0x01020304, 0x0506, 0x07
    inp = np.array([c | (b << 16), 14], np.uint32)
    total = sum(((a >> s) & 255) + ((b >> s) & 255) for s in (0, 8, 16, 24)) + c
    out = np.zeros(2, np.uint32)
    run(ptx2sass.compile(GUARDED_VADD4_ADD), "k", (1,), (2,), [out, inp.copy(), np.int32(a)])
    assert [int(v) for v in out] == [total, 14]
    theirs = oracle.ptxas(GUARDED_VADD4_ADD).output
    run(theirs, "k", (1,), (2,), [out, inp.copy(), np.int32(a)], hazard_check=False)
    assert [int(v) for v in out] == [total, total]


def test_simd_video_with_add_is_never_guarded():
    """The generator steps around the miscompile above in both paths (80 programs with the
    video group)."""
    pat = re.compile(r"^\s*@!?%\w+ v\w+[24]\.[^ ]*\.add ")
    seen = 0
    for seed in range(20002900, 20002980):
        for line in render(generate(seed, {"video", "guard", "forms", "int32"})).text.split("\n"):
            assert not pat.match(line), f"seed {seed}: {line.strip()}"
            seen += bool(re.match(r"^\s*v\w+[24]\.[^ ]*\.add ", line))
    assert seen >= 5
