"""Floating-point contraction (ptx2sass/opt/contract.py): where ptxas fuses a multiply into an
add, so do we, and the results agree bit for bit in the emulator; with `--fmad=false` and at
-O0 neither fuses. The inputs are ordinary numbers (not random bit patterns), for which a
fused and an unfused multiply-add visibly differ in the last bit."""
from __future__ import annotations

import numpy as np
import pytest

from codegen_harness import kernel
from ptx2sass import codegen, oracle
from ptx2sass.emu import run

THREADS = 256


def _data(bits: int, n_in: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    values = rng.standard_normal(THREADS * n_in) * rng.choice([1e-3, 1.0, 1e3], THREADS * n_in)
    ftype, itype = {16: (np.float16, np.uint16), 32: (np.float32, np.uint32),
                    64: (np.float64, np.uint64)}[bits]
    return values.astype(ftype).view(itype)


def _run(ptx: str, cubin: bytes, out_bits: int, data: np.ndarray, check: bool) -> np.ndarray:
    out = np.zeros(THREADS, dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[out_bits])
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, data.copy()], hazard_check=check)
    if check:
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
    return out


def _both(body: str, bits: int, n_in: int, ptxas_options: tuple = (), our_options: dict | None = None):
    ptx = kernel(body, bits, n_in, bits)
    data = _data(bits, n_in)
    theirs = oracle.ptxas(ptx, options=ptxas_options).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89",
                                      our_options or {}, filename="k.ptx")
    return _run(ptx, ours, bits, data, True), _run(ptx, theirs, bits, data, False), data


CASES = [
    (32, 3, "mul.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; add.f32 %o, %a2, %x0;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; sub.f32 %o, %x0, %a2;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; sub.f32 %o, %a2, %x0;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; neg.f32 %x1, %x0; add.f32 %o, %x1, %a2;"),
    (32, 3, "mul.ftz.f32 %x0, %a0, %a1; add.ftz.f32 %o, %x0, %a2;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; add.sat.f32 %o, %x0, %a2;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; add.f32 %x1, %x0, %a2; add.f32 %o, %x0, %x1;"),
    (32, 2, "mul.f32 %x0, %a0, 0f40000000; mul.f32 %x1, %a1, 0f40400000; sub.f32 %o, %x0, %x1;"),
    (32, 2, "mul.f32 %x0, %a0, 0f3DCCCCCD; add.f32 %o, %x0, %a1;"),
    (32, 3, "div.full.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;"),
    (32, 3, "div.full.f32 %x0, %a0, %a1; sub.f32 %o, %a2, %x0;"),
    (32, 3, "div.full.ftz.f32 %x0, %a0, %a1; add.ftz.f32 %o, %a2, %x0;"),
    (32, 3, "div.full.f32 %x0, %a0, %a1; sub.f32 %x1, %a2, %x0; sub.f32 %o, %x1, %x0;"),
    (32, 3, "div.full.f32 %x0, %a0, %a1; add.f32 %x1, %a2, %x0; st.global.f32 [%rd4], %x0; "
            "mov.f32 %o, %x1;"),
    (32, 3, "div.full.f32 %x0, %a0, %a1; neg.f32 %x1, %x0; add.f32 %o, %x1, %a2;"),
    (32, 3, "div.full.ftz.f32 %x0, %a0, %a1; neg.ftz.f32 %x1, %x0; add.ftz.f32 %o, %x1, %a2;"),
    # -use_fast_math divisions: the multiply by MUFU.RCP fuses when the add's .ftz matches
    (32, 3, "div.approx.ftz.f32 %x0, %a0, %a1; add.ftz.f32 %o, %x0, %a2;"),
    (32, 3, "div.approx.ftz.f32 %x0, %a0, %a1; sub.ftz.f32 %o, %a2, %x0;"),
    (32, 3, "div.approx.ftz.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;"),
    (32, 3, "div.approx.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;"),
    (32, 3, "div.approx.f32 %x0, %a0, %a1; neg.f32 %x1, %x0; add.f32 %o, %x1, %a2;"),
    (32, 3, "div.approx.f32 %x0, %a0, %a1; add.ftz.f32 %o, %x0, %a2;"),
    # not contracted by ptxas either: explicit rounding, mixed .ftz, .sat product, other readers
    (32, 3, "mul.rn.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; add.rn.f32 %o, %x0, %a2;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; add.ftz.f32 %o, %x0, %a2;"),
    (32, 3, "mul.sat.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; add.f32 %x1, %x0, %a2; st.global.f32 [%rd4], %x0; "
            "mov.f32 %o, %x1;"),
    (32, 3, "mul.f32 %x0, %a0, %a1; setp.gt.f32 %p0, %a2, 0f00000000; @%p0 bra L1; "
            "mov.f32 %o, %a0; bra L2; L1: add.f32 %o, %x0, %a2; L2:"),
    # ... nor where our if-conversion joins the blocks (a branch around the add alone)
    (32, 3, "mul.f32 %x0, %a0, %a1; mov.f32 %o, %a0; setp.gt.f32 %p0, %a2, 0f00000000; "
            "@!%p0 bra L2; add.f32 %o, %x0, %a2; L2:"),
    (64, 3, "mul.f64 %rd5, %a0, %a1; add.f64 %o, %rd5, %a2;"),
    (64, 3, "mul.f64 %rd5, %a0, %a1; sub.f64 %o, %a2, %rd5;"),
    (16, 3, ".reg .f16 %h; mul.f16 %h, %a0, %a1; sub.f16 %o, %h, %a2;"),
    (32, 3, ".reg .b32 %h; mul.f16x2 %h, %a0, %a1; add.f16x2 %o, %h, %a2;"),
]


@pytest.mark.parametrize("bits,n_in,body", CASES, ids=[c[2][:60] for c in CASES])
def test_contraction_matches_ptxas(bits, n_in, body):
    ours, theirs, _ = _both(body, bits, n_in)
    bad = np.nonzero(ours != theirs)[0]
    assert not len(bad), f"{len(bad)} differ, first at {bad[0]}: {ours[bad[0]]:#x} vs {theirs[bad[0]]:#x}"


def test_contraction_changes_results():
    """The inputs are such that fusing shows: ptxas's fused f32 results differ from the
    unfused ones NumPy computes, so the tests above could fail without contraction."""
    ours, theirs, data = _both("mul.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;", 32, 3)
    a, b, c = data.view(np.float32).reshape(-1, 3).T
    unfused = (a * b + c).astype(np.float32).view(np.uint32)
    assert (theirs != unfused).sum() > 5
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("ptxas_options,our_options", [(("--fmad=false",), {"fmad": False}),
                                                       (("-O0",), {"opt_level": 0})])
def test_no_contraction_when_disabled(ptxas_options, our_options):
    body = "mul.f32 %x0, %a0, %a1; add.f32 %o, %x0, %a2;"
    ours, theirs, data = _both(body, 32, 3, ptxas_options, our_options)
    a, b, c = data.view(np.float32).reshape(-1, 3).T
    unfused = (a * b + c).astype(np.float32).view(np.uint32)
    np.testing.assert_array_equal(theirs, unfused)
    np.testing.assert_array_equal(ours, theirs)
