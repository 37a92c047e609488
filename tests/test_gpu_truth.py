"""The emulator against silicon: fuzz programs whose ptxas cubin an H200 (sm_90) ran in GPU
run 5 (docs/gpu/2026-11-27-h200-sm90.md), with the GPU's output bytes. Each program is
compiled again by the pinned ptxas (the cubin must be the one the GPU ran), run in the
emulator with the same inputs, and its `out` and `atom` buffers must equal the GPU's bit for
bit. Every program here differed from the emulator before the semantics it exercises were
corrected (tools/gpu_truth.py finds and classes the differences; `--write-tests` wrote these
files); the ones the emulator does not reproduce yet are strict xfails with the reason.
"""
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent / "gpu_truth"
MANIFEST = json.loads((HERE / "manifest.json").read_text())


def _params(seed: str):
    entry = MANIFEST[seed]
    marks = [pytest.mark.xfail(strict=True, reason=entry["xfail"])] if "xfail" in entry else []
    return pytest.param(seed, marks=marks, id=seed)


def _load(cubin: bytes, kernel: str):
    from ptx2sass.emu import EmuFault
    from ptx2sass.fuzz.runner import load, load_from_listing
    try:
        return load(cubin, kernel)
    except EmuFault as e:
        if "cannot decode" not in str(e):
            raise
        return load_from_listing(cubin, kernel)


def _first_difference(case, name: str, got: bytes, want: bytes) -> str:
    g, w = np.frombuffer(got, np.uint64), np.frombuffer(want, np.uint64)
    i = int(np.flatnonzero(g != w)[0])
    where = ""
    if name == "out":
        slot = case.slots[i % max(1, len(case.slots))]
        where = f" (thread {i // max(1, len(case.slots))}, {slot[0]}, last written by {slot[4]})"
    return f"{name}: {int((g != w).sum())} words differ; first [{i}]{where}: emulator {int(g[i]):#x}, GPU {int(w[i]):#x}"


def _run_seed(seed: str):
    """(case, the emulator's buffers, the GPU's buffers) of a manifest launch."""
    from ptx2sass import oracle
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import execute
    entry = MANIFEST[seed]
    text = (HERE / f"{seed}.ptx").read_text()
    case = read_case(text)
    # the PTX the GPU's cubin came from: without the header (ptxas's cubin records its input)
    case.text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("// fuzz-case: "))
    # compiled as the GPU check compiled it: run 5's bundle gave ptxas its default options,
    # later ones the case's --fmad=false (the manifest's `ptxas_options`)
    run = oracle.ptxas(case.text, case.arch, tuple(entry.get("ptxas_options", ())), name="fuzz.ptx")
    assert run.ok, run.stderr
    cubin = run.output
    assert hashlib.sha256(cubin).hexdigest() == entry["cubin_sha256"], "ptxas no longer gives the cubin the GPU ran"
    result = execute(_load(cubin, case.kernel), case, hazard_check=False)
    gpu = gzip.decompress((HERE / f"{seed}.gpu.gz").read_bytes())
    want = {"out": gpu[:entry["out"]], "atom": gpu[entry["out"]:]}
    assert len(want["atom"]) == entry["atom"]
    return case, {name: bytes(result.buffers[name]) for name in ("out", "atom")}, want


@pytest.mark.parametrize("seed", [_params(s) for s in sorted(MANIFEST)])
def test_emulator_matches_h200(seed):
    case, got, want = _run_seed(seed)
    for name in ("out", "atom"):
        assert got[name] == want[name], _first_difference(case, name, got[name], want[name])


def test_stmatrix_in_a_partial_warp_stores_nothing():
    """Run 25's 9500363 (an xfail above for rsqrt.approx.ftz.f64's last bit): CTAs of 17
    threads run stmatrix.x2 into their warp's zeroed scratch and read it back; the H200 read
    zeros in every thread, where the emulator had stored the present lanes' elements
    (0x0000003c). The slots stmatrix's read-back wrote must be the GPU's."""
    case, got, want = _run_seed("9500363")
    nslots = len(case.slots)
    cols = [i for i, slot in enumerate(case.slots) if slot[4].startswith("stmatrix.")]
    assert cols
    g = np.frombuffer(got["out"], np.uint64).reshape(-1, nslots)[:, cols]
    w = np.frombuffer(want["out"], np.uint64).reshape(-1, nslots)[:, cols]
    bad = g != w
    assert not bad.any(), (f"{int(bad.sum())} stmatrix slots differ: emulator "
                           f"{[hex(v) for v in g[bad][:3]]}, GPU {[hex(v) for v in w[bad][:3]]}")


def test_rcp_approx_ftz_f64_flushes_a_subnormal_result():
    """MUFU.RCP64H's subnormal result is a zero of its sign: run 5's 9300143 (an xfail above
    for other bits) had rcp.approx.ftz.f64 of ±0x7fefffffffffffff give 0 / 0x8000000000000000
    on the H200, where the emulator gave the exact reciprocal's 0x0004000000000000."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from codegen_harness import kernel
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    cubin = oracle.ptxas(kernel("rcp.approx.ftz.f64 %o, %a0;", 64, 1, 64, target="sm_90"), "sm_90").output
    data = np.array([0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x4000000000000000], dtype=np.uint64)
    out = np.zeros(3, dtype=np.uint64)
    run(cubin, "k", 1, 3, [out, data])
    assert [hex(v) for v in out[:2]] == ["0x0", "0x8000000000000000"]
    assert out[2] == 0x3FE0000000000000          # 1/2, exact in the high word


@pytest.mark.parametrize("threads", [1, 32], ids=["one_lane", "warp"])
def test_dfma_of_an_overflowing_product_and_an_infinite_addend_is_the_addend(threads):
    """fma.rn.f64 keeps the product exact, so finite a and b with an infinite c give c: run
    25's 9500227 had 0x78961d5e21b558d2 * 0x48f6eba040d7881a + -inf give -inf
    (0xfff0000000000000) on the H200, where the emulator's rounded product overflowed to
    +inf and +inf - inf gave NaN. One lane runs the single-lane DFMA, a warp the vector one."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from codegen_harness import kernel
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    build = oracle.ptxas(kernel("fma.rn.f64 %o, %a0, %a1, %a2;", 64, 3, 64, target="sm_90"), "sm_90")
    assert build.ok, build.stderr
    data = np.tile(np.array([0x78961D5E21B558D2, 0x48F6EBA040D7881A, 0xFFF0000000000000], dtype=np.uint64), threads)
    out = np.zeros(threads, dtype=np.uint64)
    run(build.output, "k", 1, threads, [out, data])
    assert {hex(v) for v in out.tolist()} == {"0xfff0000000000000"}


def _fill_runs(case, cubin: bytes, fills=(0, 0x5A)) -> list[dict]:
    """The emulator's `out` and `atom` words of a case's cubin, once per starting byte of
    shared memory (the emulator zeroes it; a GPU starts with what earlier kernels left)."""
    from ptx2sass.emu.launch import run_buffers
    from ptx2sass.fuzz.inputs import launch_data
    from ptx2sass.fuzz.runner import BUDGET
    prog = _load(cubin, case.kernel)
    runs = []
    for fill in fills:
        data = launch_data(case)        # afresh: a run writes into its surface objects
        res = run_buffers(prog, case.grid, case.block, data.params, data.buffers, budget=BUDGET,
                          hazard_check=False, objects=data.objects, shared_fill=fill)
        runs.append({n: np.frombuffer(bytes(res.buffers[n]), np.uint64) for n in ("out", "atom")})
    return runs


def test_run25_probe_differs_only_where_it_reads_unwritten_shared_memory():
    """GPU run 25 (docs/gpu/2026-11-29-h200-sm90-run25.md) ran the saved program
    hmma_f32_probe_s9620049 (`--corpus fuzzfile`; this is the text it ran, the same PTX,
    inputs and ptxas cubin as run 21's, where the H200 equalled the emulator) and gave 72 of
    its 1856 `out` words otherwise than the emulator. All 72 are words of
    `ld.shared.v4.u32 {%r11, %r9, %r6, %r3}, [g_wss + 16 * lane]`, the read-back of a
    `wmma.store.d...col.m16n16k16.shared.s32` with a leading dimension of 32: the store
    writes rows 0-15 of each 32-word column, so lanes 4-7 of every 8 read rows 16-31, which
    nothing wrote (the program predates the generator's zeroing of g_wsc). Every word the
    emulator computes the same whatever shared memory starts with is the H200's."""
    from ptx2sass import oracle
    from ptx2sass.fuzz.inputs import read_case
    text = (HERE / "hmma_f32_probe_s9620049.run25.ptx").read_text()
    case = read_case(text)
    build = oracle.ptxas(text, "sm_90", (), name="fuzz.ptx")
    assert build.ok, build.stderr
    assert hashlib.sha256(build.output).hexdigest().startswith("36f6f3d64c29d005cf20ec4dbc2023e6"), \
        "ptxas no longer gives the cubin the GPU ran"
    gpu = gzip.decompress((HERE / "hmma_f32_probe_s9620049.run25.gpu.gz").read_bytes())
    assert hashlib.sha256(gpu[:14848]).hexdigest().startswith("279c5bb90db2e02f")   # the run report's
    want = {"out": np.frombuffer(gpu[:14848], np.uint64), "atom": np.frombuffer(gpu[14848:], np.uint64)}
    zero, other = _fill_runs(case, build.output)
    for name in ("out", "atom"):
        defined = zero[name] == other[name]
        bad = np.flatnonzero(defined & (zero[name] != want[name]))
        assert not len(bad), f"{name}: {len(bad)} defined words differ from the H200, first [{bad[0]}]"
    nslots = len(case.slots)
    undefined = np.flatnonzero(zero["out"] != other["out"])
    differ = np.flatnonzero(zero["out"] != want["out"])
    assert len(undefined) == 128 and len(differ) == 72
    assert {int(i) % nslots for i in undefined} == {i for i, s in enumerate(case.slots) if s[0] in ("%r3", "%r6", "%r9", "%r11")}
    assert {int(i) // nslots % 32 % 8 for i in undefined} == {4, 5, 6, 7}


def _saved_fuzz_programs():
    folder = Path(__file__).resolve().parent / "gpu_regressions"
    return [p for p in sorted(folder.glob("*.ptx")) if p.read_text().startswith("// fuzz-case: ")]


@pytest.mark.parametrize("path", _saved_fuzz_programs(), ids=lambda p: p.stem)
def test_saved_gpu_programs_do_not_read_unwritten_shared_memory(path):
    """A saved program for `--corpus fuzzfile` (tests/gpu_regressions) is compared with the
    emulator bit for bit on the GPU, so its outputs must not depend on the bytes shared memory
    starts with (run 25: hmma_f32_probe_s9620049's wmma read-back read an unzeroed scratch)."""
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ptxas
    case = read_case(path.read_text())
    case.arch = "sm_90"
    cubin, err = compile_ptxas(case)
    assert cubin is not None, err
    zero, other = _fill_runs(case, cubin)
    for name in ("out", "atom"):
        bad = np.flatnonzero(zero[name] != other[name])
        assert not len(bad), f"{name}: {len(bad)} words follow shared memory's starting bytes, first [{bad[0]}]"
