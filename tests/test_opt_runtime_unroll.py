"""One-block loops whose trip count is known only at run time (`opt/runtime_unroll.py`):
4 copies per exit test while at least 4 iterations remain, then 2, then 1, as ptxas 13.5
does. Expected values: ptxas's cubin of the same PTX run in our emulator on the same
inputs, each thread with its own trip count (0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 1000 in one
warp, so the copies diverge). Loops whose exit is not decided by their induction arithmetic
(a loaded value) keep their shape. Structure: global loads in flight per exit test (SASS
between two branches), the cuda corpus's ldmatrix copy loop against ptxas's 16; the size up
to which ptxas copies a body (`runtime_unroll.MAX_COST`), at its measured boundaries, and an
ELL-style gather loop (the real-world spmv_ell) run against ptxas's cubin. ptxas's shape of
loops that stop on an ordered compare: signed counters tested once per 4 copies, remainders
guarded or branched around (compares, branches, PLOP3s and guarded loads as ptxas's), outputs
from run-time starts, the copies' pointer steps and zeros as ptxas's."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program
from ptx2sass.opt import runtime_unroll
from ptx2sass.tinygrad import sass_listing
from tools.emu_testing import CUDA_DIR, cuda_reference_module, run_cuda_launch

TRIPS = [0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 1000]
THREADS = 32

HEAD = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 ns, .param .u64 acc)
{
.reg .b32 %r<24>;
.reg .b64 %rd<16>;
.reg .pred %p<4>;
.shared .align 4 .b8 s[1024];
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
ld.param.u64 %rd9, [ns];
ld.param.u64 %rd10, [acc];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd9, %rd3;
ld.global.u32 %r2, [%rd4];
mov.u32 %r5, 0;
mul.lo.u32 %r6, %r1, 7;
"""
LOAD = """and.b32 %r7, %r6, 1023;
mul.wide.u32 %rd5, %r7, 4;
add.s64 %rd6, %rd2, %rd5;
ld.global.u32 %r8, [%rd6];
mad.lo.u32 %r5, %r5, 3, %r8;
add.s32 %r6, %r6, 5;
"""
TAIL = """END:
add.s64 %rd7, %rd1, %rd3;
st.global.u32 [%rd7], %r5;
st.global.u32 [%rd7+128], %r3;
st.global.u32 [%rd7+256], %r6;
ret;
}
"""
# the loops: (before the loop, the loop's end); %r2 = the thread's trip count
LOOPS = {
    # signed count up, the loop's values read after it
    "lt_s32": ("mov.u32 %r3, 0;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\n",
               "add.s32 %r3, %r3, 1;\nsetp.lt.s32 %p1, %r3, %r2;\n@%p1 bra LOOP;\n"),
    # unsigned, wrapping past 0xffffffff, != test, exit on the taken branch
    "ne_u32_wrap": ("add.u32 %r3, %r1, 0xfffffff0;\nadd.u32 %r9, %r3, %r2;\n"
                    "setp.eq.u32 %p0, %r2, 0;\n@%p0 bra END;\n",
                    "add.u32 %r3, %r3, 1;\nsetp.eq.u32 %p1, %r3, %r9;\n@%p1 bra END;\nbra.uni LOOP;\n"),
    # signed count down by 3
    "down_s32": ("mul.lo.s32 %r3, %r2, 3;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\n",
                 "add.s32 %r3, %r3, -3;\nsetp.gt.s32 %p1, %r3, 0;\n@%p1 bra LOOP;\n"),
    # unsigned step 2, with a store and a reduction in the body
    "lo_u32_store_red": ("mov.u32 %r3, 0;\nshl.b32 %r9, %r2, 1;\nsetp.eq.u32 %p0, %r2, 0;\n@%p0 bra END;\n",
                         "and.b32 %r10, %r6, 15;\nmul.wide.u32 %rd11, %r10, 4;\nadd.s64 %rd12, %rd10, %rd11;\n"
                         "red.global.add.u32 [%rd12], %r8;\nadd.s64 %rd13, %rd10, %rd3;\n"
                         "st.global.u32 [%rd13+64], %r5;\n"
                         "add.u32 %r3, %r3, 2;\nsetp.lo.u32 %p1, %r3, %r9;\n@%p1 bra LOOP;\n"),
    # a register step, a multiplied counter (ptxas keeps both as loops; so do we)
    "step_register": ("mov.u32 %r3, 0;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\nadd.u32 %r12, %r1, 1;\n",
                      "add.s32 %r3, %r3, %r12;\nsetp.lt.s32 %p1, %r3, %r2;\n@%p1 bra LOOP;\n"),
    "doubling": ("mov.u32 %r3, 1;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\n",
                 "shl.b32 %r3, %r3, 1;\nsetp.lt.u32 %p1, %r3, %r2;\n@%p1 bra LOOP;\n"),
    # a shared-memory store after the global load: unrolled (ldmatrix_raw's copy loop)
    "st_shared": ("mov.u32 %r3, 0;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\nmov.u32 %r13, s;\n",
                  "and.b32 %r14, %r6, 255;\nshl.b32 %r14, %r14, 2;\nadd.u32 %r14, %r13, %r14;\n"
                  "st.shared.u32 [%r14], %r8;\n"
                  "add.s32 %r3, %r3, 1;\nsetp.lt.s32 %p1, %r3, %r2;\n@%p1 bra LOOP;\n"),
    # volatile loads (as the cuda corpus's device_globals sums partial results): left alone
    "volatile": ("mov.u32 %r3, 0;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\n",
                 "ld.volatile.global.u32 %r16, [%rd2+8];\nadd.u32 %r5, %r5, %r16;\n"
                 "add.s32 %r3, %r3, 1;\nsetp.lt.s32 %p1, %r3, %r2;\n@%p1 bra LOOP;\n"),
    # ex2.approx.f32 (a MUFU with fix-ups, cost 6 in ptxas's budget) in the body: copied, as
    # ptxas copies it (4 loads per exit test, sm_89); `div.rn` bodies are not (softmax_rows)
    "expansion": ("mov.u32 %r3, 0;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\n",
                  "ex2.approx.f32 %r17, %r8;\nxor.b32 %r5, %r5, %r17;\n"
                  "add.s32 %r3, %r3, 1;\nsetp.lt.s32 %p1, %r3, %r2;\n@%p1 bra LOOP;\n"),
    # the exit test reads the load: not the induction's; stays a loop
    "exit_on_load": ("mov.u32 %r3, 0;\nsetp.lt.s32 %p0, %r2, 1;\n@%p0 bra END;\n",
                     "add.s32 %r3, %r3, 1;\nsetp.lt.s32 %p1, %r3, %r2;\nsetp.ne.u32 %p2, %r8, 0;\n"
                     "and.pred %p1, %p1, %p2;\n@%p1 bra LOOP;\n"),
}


def _ptx(name: str) -> str:
    before, end = LOOPS[name]
    return HEAD + before + "LOOP:\n" + LOAD + end + TAIL


def _ours(ptx: str) -> bytes:
    cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    return cubin


def _run(cubin: bytes, ns: np.ndarray, data: np.ndarray, check: bool):
    out = np.zeros(3 * THREADS, np.uint32)
    acc = np.zeros(16 + THREADS + 16, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy(), ns.copy(), acc],
              hazard_check=check)
    if check:
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
    return out, acc


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_runtime_counted_loop_outputs_equal_ptxas(name):
    ptx = _ptx(name)
    data = np.random.default_rng(20).integers(0, 1 << 32, 1024, dtype=np.uint64).astype(np.uint32)
    if name == "exit_on_load":
        data[data % 5 == 0] = 0
    ns = np.array([TRIPS[t % len(TRIPS)] for t in range(THREADS)], np.uint32)
    ours, theirs = _ours(ptx), oracle.ptxas(ptx).output
    got = _run(ours, ns, data, True)
    want = _run(theirs, ns, data, False)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert load_program(ours, "k").regcount <= load_program(theirs, "k").regcount + 8


def _unrolled_blocks(ptx: str) -> int:
    """Blocks runtime_unroll made, after the optimiser."""
    made = []
    real = runtime_unroll._unroll

    def spy(*args):
        done = real(*args)
        made.append(done)
        return done
    runtime_unroll._unroll = spy
    try:
        _ours(ptx)
    finally:
        runtime_unroll._unroll = real
    return sum(made)


@pytest.mark.parametrize("name,unrolled", [("lt_s32", 1), ("down_s32", 1), ("ne_u32_wrap", 1),
                                           ("lo_u32_store_red", 0), ("step_register", 0), ("doubling", 0),
                                           ("st_shared", 1), ("volatile", 0), ("expansion", 1),
                                           ("exit_on_load", 0)])
def test_which_loops_are_unrolled(name, unrolled):
    assert _unrolled_blocks(_ptx(name)) == unrolled


def _loads_per_exit_test(cubin: bytes, kernel: str = "k") -> int:
    """The most global loads between two branches of the kernel's listing."""
    most = count = 0
    inside = False
    for line in sass_listing(cubin).splitlines():
        if "Function :" in line:
            inside, count = line.split(":", 1)[1].strip() == kernel, 0
        elif not inside:
            continue
        elif "LDG" in line:
            count += 1
            most = max(most, count)
        elif "BRA" in line:
            count = 0
    return most


@pytest.mark.parametrize("name", ["lt_s32", "down_s32", "ne_u32_wrap"])
def test_four_loads_in_flight_per_exit_test(name):
    assert _loads_per_exit_test(_ours(_ptx(name))) >= 4


@pytest.mark.parametrize("kernel", ["ldmatrix_raw", "ldmatrix_mma_bf16"])
def test_corpus_copy_loop_has_ptxas_loads_in_flight(kernel):
    """nvcc's 4x copy loop `for (k = lane; k < 256; k += 32)`: ptxas 16 loads per exit test
    (ours 4 as a plain loop); outputs = the corpus's NumPy reference."""
    ref = cuda_reference_module()
    (entry,) = [e for e in ref.load_manifest() if e["name"] == kernel]
    ptx = (CUDA_DIR / entry["ptx"]).read_text()
    ours = _ours(ptx)
    result = run_cuda_launch(entry, ref, hazard_check=True, compiler=lambda *_: ours)
    assert result.passed, result.reason
    theirs = oracle.ptxas(ptx).output
    assert _loads_per_exit_test(ours, entry["kernel"]) >= _loads_per_exit_test(theirs, entry["kernel"]) == 16


def _sum_loop(loads: int, multiplies: int) -> str:
    """A do-while loop of `loads` loads each added into one sum, then `multiplies` multiplies."""
    body = [f"ld.global.f32 %f{10 + j}, [%rd5+{4096 * j}];\nadd.f32 %f1, %f1, %f{10 + j};"
            for j in range(loads)]
    body += ["mul.f32 %f1, %f1, %f2;"] * multiplies
    return _loop_kernel("\n".join(body), "add.s64 %rd5, %rd5, 128;")


def _gather_loop(steps: int, guarded: bool, multiplies: int) -> str:
    """`steps` ELL steps a trip: a column index, then (under `c < ntid` if guarded) the sum
    += x[c] * v[..], then `multiplies` multiplies of the sum."""
    body = []
    for j in range(steps):
        body.append(f"ld.global.nc.u32 %r{10 + j}, [%rd5+{256 * j}];")
        if guarded:
            body.append(f"setp.ge.s32 %p{2 + j}, %r{10 + j}, %r4;\n@%p{2 + j} bra SKIP{j};")
        body.append(f"mul.wide.s32 %rd{10 + j}, %r{10 + j}, 4;\nadd.s64 %rd{30 + j}, %rd6, %rd{10 + j};\n"
                    f"ld.global.nc.f32 %f{10 + j}, [%rd{30 + j}];\n"
                    f"ld.global.nc.f32 %f{40 + j}, [%rd7+{256 * j}];\n"
                    f"fma.rn.f32 %f1, %f{10 + j}, %f{40 + j}, %f1;")
        if guarded:
            body.append(f"SKIP{j}:")
    body += ["mul.f32 %f1, %f1, %f2;"] * multiplies
    return _loop_kernel("\n".join(body), f"add.s64 %rd5, %rd5, {256 * steps};\n"
                                        f"add.s64 %rd7, %rd7, {256 * steps};")


def _loop_kernel(body: str, steps: str) -> str:
    return f""".version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 x, .param .u64 v, .param .u32 n)
{{
.reg .b64 %rd<64>; .reg .b32 %r<64>; .reg .f32 %f<64>; .reg .pred %p<16>;
ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [n];
ld.param.u64 %rd6, [x]; ld.param.u64 %rd7, [v];
mov.u32 %r2, %tid.x; mov.u32 %r4, %ntid.x; mul.wide.u32 %rd3, %r2, 4;
add.s64 %rd5, %rd1, %rd3; add.s64 %rd2, %rd2, %rd3; add.s64 %rd7, %rd7, %rd3;
mov.f32 %f1, 0f00000000; mov.f32 %f2, 0f3f800001; mov.u32 %r3, 0;
LOOP:
{body}
{steps}
add.s32 %r3, %r3, 1;
setp.lt.s32 %p1, %r3, %r1;
@%p1 bra LOOP;
st.global.f32 [%rd2], %f1;
ret;
}}
"""


# (loop, copied by ptxas 13.5 on sm_89): each pair straddles the budget; the pairs marked
# `predicted` were not used to set MAX_COST (measured after it was set, all as predicted)
BUDGET = {
    "sum_4_loads_34_muls": (lambda: _sum_loop(4, 34), True),
    "sum_4_loads_35_muls": (lambda: _sum_loop(4, 35), False),
    "sum_8_loads_22_muls_predicted": (lambda: _sum_loop(8, 22), True),
    "sum_8_loads_23_muls_predicted": (lambda: _sum_loop(8, 23), False),
    "sum_1_load_43_muls_predicted": (lambda: _sum_loop(1, 43), True),
    "sum_1_load_44_muls_predicted": (lambda: _sum_loop(1, 44), False),
    "gather_4_14_muls": (lambda: _gather_loop(4, False, 14), True),
    "gather_4_15_muls": (lambda: _gather_loop(4, False, 15), False),
    "gather_4_guarded_6_muls": (lambda: _gather_loop(4, True, 6), True),
    "gather_4_guarded_7_muls": (lambda: _gather_loop(4, True, 7), False),
    "gather_3_guarded_16_muls_predicted": (lambda: _gather_loop(3, True, 16), True),
    "gather_3_guarded_17_muls_predicted": (lambda: _gather_loop(3, True, 17), False),
}


@pytest.mark.parametrize("name", sorted(BUDGET))
def test_bodies_copied_up_to_ptxas_s_budget(name):
    """Loads per exit test = ptxas's: 4 copies of the body within the budget, one beyond."""
    make, copied = BUDGET[name]
    ptx = make()
    theirs = _loads_per_exit_test(oracle.ptxas(ptx).output)
    mine = _loads_per_exit_test(_ours(ptx))
    assert mine == theirs, (mine, theirs)
    loads = ptx.count("ld.global")
    assert theirs == (4 * loads if copied else loads)


@pytest.mark.parametrize("guarded", [False, True])
def test_gather_loop_outputs_equal_ptxas(guarded):
    """The ELL gather loop, copied 4 times (16 steps per exit test, as ptxas's), on one warp
    with trip counts 0..9 (all threads one count per launch: the loop is a do-while, so n >= 1):
    ours and ptxas's outputs are bit-equal, no hazards."""
    ptx = _gather_loop(4, guarded, 0)
    ours, theirs = _ours(ptx), oracle.ptxas(ptx).output
    assert _loads_per_exit_test(ours) == _loads_per_exit_test(theirs) == 48
    rng = np.random.default_rng(36)
    for n in (1, 2, 3, 4, 5, 7, 9):
        cols = rng.integers(0, 2 * THREADS, 64 * 4 * 10 + THREADS, dtype=np.int64).astype(np.int32)
        x = rng.standard_normal(2 * THREADS).astype(np.float32)
        v = rng.standard_normal(64 * 4 * 10 + THREADS).astype(np.float32)
        outs = []
        for cubin in (ours, theirs):
            out = np.full(THREADS, np.nan, np.float32)
            res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, cols.copy(), x.copy(), v.copy(), np.uint32(n)],
                      hazard_check=cubin is ours)
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
            outs.append(out)
        assert outs[0].tobytes() == outs[1].tobytes(), n


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
def test_copied_pointer_steps_are_one_add(arch):
    """The CS2R test's loop (`add.s64 p, p, 512` a trip), copied: ptxas steps the pointer
    once per block of copies (`IADD3 R, P, R, 0x800` + `IADD3.X`; one pair in the 4-copy loop,
    one in its 2-copy remainder); `opt/reassociate.py` joins the copies' 64-bit adds of
    constants to the same count (before: a pair per copy, 6)."""
    import re
    from test_codegen_quality import _instructions
    from test_cs2r_zero_pairs import F32

    def steps(listing):
        return sum(re.sub(r"^@!?P\d ", "", o).startswith("IADD3.X") for o in listing)
    ptx = F32.replace("ARCH", arch)
    theirs = _instructions(sass_listing(oracle.ptxas(ptx, arch=arch).output))
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")[0]
    assert steps(_instructions(sass_listing(ours))) == steps(theirs)


def _mufu_loop(form: str, multiplies: int) -> str:
    """A do-while loop of one load and two `form` operations on distinct run-time inputs
    (divisions by run-time divisors), each added into the sum, then `multiplies` multiplies."""
    two = form.startswith("div")
    ops = [f"{form} %f20, %f10{', %f1' if two else ''};", f"{form} %f21, %f1{', %f10' if two else ''};"]
    body = ["ld.global.f32 %f10, [%rd5];", *ops, "add.f32 %f1, %f1, %f20;", "add.f32 %f1, %f1, %f21;"]
    body += ["mul.f32 %f1, %f1, %f2;"] * multiplies
    return _loop_kernel("\n".join(body), "add.s64 %rd5, %rd5, 128;")


# (form, the most multiplies with which ptxas 13.5 copies _mufu_loop on sm_89): MUFU_COST's
# figures come from these boundaries; each is checked on both sides
MUFU_BOUNDS = [("div.approx.ftz.f32", 38), ("div.approx.f32", 28), ("div.full.f32", 18),
               ("rcp.approx.f32", 28), ("sqrt.approx.ftz.f32", 40), ("ex2.approx.f32", 30),
               ("lg2.approx.ftz.f32", 40), ("tanh.approx.f32", 40)]


@pytest.mark.parametrize("form,most", MUFU_BOUNDS)
def test_bodies_with_mufu_forms_copied_as_ptxas(form, most):
    """Loads per exit test = ptxas's on both sides of its budget for a body holding an
    f32 approximate (or full-range) division, reciprocal, root or transcendental."""
    for m, copied in ((most, True), (most + 1, False)):
        ptx = _mufu_loop(form, m)
        theirs = _loads_per_exit_test(oracle.ptxas(ptx).output)
        assert theirs == (4 if copied else 1), (form, m, theirs)
        assert _loads_per_exit_test(_ours(ptx)) == theirs, (form, m)


def test_welford_loop_outputs_equal_ptxas():
    """A Welford step (`div.approx.ftz.f32` by the running count), copied 4 times as ptxas's:
    outputs bit-equal to ptxas's for trip counts 1..9 on one warp, no hazards."""
    body = """ld.global.nc.f32 %f10, [%rd5];
sub.ftz.f32 %f11, %f10, %f3;
add.ftz.f32 %f4, %f4, 0f3F800000;
div.approx.ftz.f32 %f12, %f11, %f4;
add.ftz.f32 %f3, %f3, %f12;
sub.ftz.f32 %f13, %f10, %f3;
fma.rn.ftz.f32 %f1, %f11, %f13, %f1;"""
    ptx = _loop_kernel(body, "add.s64 %rd5, %rd5, 128;").replace(
        "mov.u32 %r3, 0;", "mov.u32 %r3, 0; mov.f32 %f3, 0f00000000; mov.f32 %f4, 0f00000000;")
    ours, theirs = _ours(ptx), oracle.ptxas(ptx).output
    assert _loads_per_exit_test(ours) == _loads_per_exit_test(theirs) == 4
    rng = np.random.default_rng(361)
    for n in (1, 2, 3, 4, 5, 7, 9):
        data = rng.standard_normal(32 * 10 + THREADS).astype(np.float32)
        outs = []
        for cubin in (ours, theirs):
            out = np.full(THREADS, np.nan, np.float32)
            res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy(), np.zeros(1, np.float32),
                      np.zeros(1, np.float32), np.uint32(n)], hazard_check=cubin is ours)
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
            outs.append(out)
        assert outs[0].tobytes() == outs[1].tobytes(), n


def test_loops_storing_beside_read_only_loads_copied_as_ptxas():
    """`y[i] = (x[i] - m) * g[i]`: with `ld.global.nc` loads (memory read-only while the
    kernel runs, no store aliases it) ptxas copies the body beside its stores; loads per exit
    test = ptxas's, and the copied loop's outputs = ptxas's, no hazards."""
    ld = "ld.global.nc.f32"
    body = f"""{ld} %f10, [%rd5];
{ld} %f11, [%rd7];
sub.f32 %f12, %f10, %f2;
mul.f32 %f13, %f12, %f11;
st.global.f32 [%rd2], %f13;
add.s64 %rd2, %rd2, 128;
add.s64 %rd7, %rd7, 128;"""
    ptx = _loop_kernel(body, "add.s64 %rd5, %rd5, 128;")
    ours, theirs = _ours(ptx), oracle.ptxas(ptx).output
    assert _loads_per_exit_test(ours) == _loads_per_exit_test(theirs) == 8
    rng = np.random.default_rng(362)
    for n in (1, 3, 4, 5, 9):
        x = rng.standard_normal(32 * 10 + THREADS).astype(np.float32)
        g = rng.standard_normal(32 * 10 + THREADS).astype(np.float32)
        outs = []
        for cubin in (ours, theirs):
            out = np.zeros(32 * 10 + THREADS, np.float32)
            res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, x.copy(), np.zeros(1, np.float32), g.copy(),
                      np.uint32(n)], hazard_check=cubin is ours)
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
            outs.append(out)
        assert outs[0].tobytes() == outs[1].tobytes(), n


def _counted_from(cmp: str, step: int) -> str:
    """A do-while loop whose signed counter starts at the thread's `ss[t]` and steps by `step`
    while `counter CMP ns[t]` (both loaded: nothing is known at compile time)."""
    return f""".version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 ns, .param .u64 ss)
{{
.reg .b64 %rd<12>; .reg .b32 %r<12>; .reg .pred %p<3>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
ld.param.u64 %rd3, [ns];
ld.param.u64 %rd4, [ss];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd5, %r1, 4;
add.s64 %rd6, %rd3, %rd5;
ld.global.u32 %r2, [%rd6];
add.s64 %rd7, %rd4, %rd5;
ld.global.u32 %r3, [%rd7];
add.s64 %rd8, %rd2, %rd5;
mov.u32 %r4, 0;
LOOP:
ld.global.u32 %r5, [%rd8];
mad.lo.u32 %r4, %r4, 3, %r5;
add.s64 %rd8, %rd8, 128;
add.s32 %r3, %r3, {step};
setp.{cmp}.s32 %p1, %r3, %r2;
@%p1 bra LOOP;
add.s64 %rd9, %rd1, %rd5;
st.global.u32 [%rd9], %r4;
st.global.u32 [%rd9+128], %r3;
ret;
}}
"""


SIGNED = [("lt", 1), ("lt", 2), ("le", 1), ("gt", -1), ("ge", -2), ("ge", -3)]


def _control(cubin: bytes) -> dict[str, int]:
    """Compares, branches, predicate operations and guarded global loads of the listing."""
    import re
    from test_codegen_quality import _instructions
    ops = _instructions(sass_listing(cubin))
    count = lambda pat: sum(1 for o in ops if re.match(r"(@!?P\d )?" + pat, o))    # noqa: E731
    return {"ISETP": count("ISETP"), "BRA": count("BRA"), "PLOP3": count("PLOP3"),
            "guarded LDG": sum(1 for o in ops if re.match(r"@!?P\d LDG", o))}


@pytest.mark.parametrize("cmp,step", SIGNED)
def test_signed_counters_tested_once_per_copies_as_ptxas(cmp, step):
    """A signed counter against a bound: ptxas enters the 4 copies while `i < n - 3` (one
    compare a trip, the bound computed once) and then runs 2 copies if `n - i > 1`, one if a
    third remains or nothing ran yet (a PLOP3 flag), here (the bounds differ between lanes)
    as blocks it branches around. Ours: the same compares, branches and PLOP3s (before:
    three exit tests cloned a trip, remainders entered by branches that left through a join)."""
    ptx = _counted_from(cmp, step)
    assert _control(_ours(ptx)) == _control(oracle.ptxas(ptx).output)


@pytest.mark.parametrize("cmp,step", SIGNED)
def test_signed_counters_from_run_time_starts_equal_ptxas(cmp, step):
    """Outputs (the sum and the counter after the loop) = ptxas's, each thread with its own
    start and bound: 1 to 14 trips, starts past the bound (the do-while runs once), negative
    starts; hazard checker on."""
    rng = np.random.default_rng(37)
    ss = rng.integers(-8, 9, THREADS).astype(np.int32)
    direction = 1 if step > 0 else -1
    ns = (ss + direction * rng.integers(-3, 13 * abs(step), THREADS)).astype(np.int32)
    data = rng.integers(0, 1 << 32, 32 * 20, dtype=np.uint64).astype(np.uint32)
    ptx = _counted_from(cmp, step)
    outs = []
    for cubin, check in ((_ours(ptx), True), (oracle.ptxas(ptx).output, False)):
        out = np.zeros(2 * THREADS, np.uint32)
        res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy(), ns.copy(), ss.copy()],
                  hazard_check=check)
        if check:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
def test_uniform_exit_remainders_are_guarded_copies(arch):
    """The CS2R test's loop (its bound a parameter: the exit is the same in every lane): ptxas
    runs the 2- and 1-copy remainders as guarded copies (`@P1 LDG.E.128`, no branch to them),
    the 4 copies while `i < n - 3`. Ours the same compares, branches, PLOP3s and guarded loads
    (before: branches to the remainders, three exit tests cloned a trip)."""
    from test_cs2r_zero_pairs import F32
    ptx = F32.replace("ARCH", arch)
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")[0]
    assert _control(ours) == _control(oracle.ptxas(ptx, arch=arch).output)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_89", "sm_90"])
def test_copies_and_remainders_start_from_one_zero(arch):
    """The CS2R test's loop copied: the 4-copy loop and the remainders after it start from the
    same zeroed accumulators; ptxas zeroes them once (two `CS2R R, SRZ`), where ours zeroed
    them again on the way into the loop (codegen._known_moves: a move of an immediate into a
    register that already holds it goes)."""
    from test_cs2r_zero_pairs import F32, _zero_pairs
    from test_codegen_quality import _instructions
    ptx = F32.replace("ARCH", arch)
    ours = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")[0]
    theirs = oracle.ptxas(ptx, arch=arch).output
    assert _zero_pairs(_instructions(sass_listing(ours))) == _zero_pairs(_instructions(sass_listing(theirs)))
