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
