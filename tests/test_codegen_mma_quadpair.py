"""`mma.sync.aligned.m8n8k4` with f16 inputs on sm_89/90/120 (no tensor-core tile there:
ptx2sass/mma_quadpair.py gathers the quad-pair's fragments with SHFL and computes in f32).

Expected values: a NumPy model of the PTX ISA's definition written here (four 8x8x4
products, one per quad-pair; the manual's fragment layouts), with small-integer inputs so
that every order of summation gives the same exact result; then, on random inputs, ours
must equal ptxas 13.5's cubin bit for bit in the emulator. ptxas's code follows the manual's
layouts in all 12 layout/type combinations (pinned by `test_ptxas_follows_the_manual`; an
earlier note that it used each lane's own fragments only was wrong: it shuffles)."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

COMBOS = [(al, bl, dt, ct) for al, bl, dt, ct in itertools.product(("row", "col"), ("row", "col"),
                                                                   ("f16", "f32"), ("f16", "f32"))
          if not (dt == "f16" and ct == "f32")]       # ptxas: .dtype must be .f32 when .ctype is


def kernel(al, bl, dt, ct, arch):
    nd, nc = (4 if dt == "f16" else 8), (4 if ct == "f16" else 8)
    loads = "ld.global.v4.u32 {%r1,%r2,%r3,%r4}, [%rd4];\n" + "".join(
        f"ld.global.v4.u32 {{%r{5 + k},%r{6 + k},%r{7 + k},%r{8 + k}}}, [%rd4+{16 + 4 * k}];\n"
        for k in range(0, nc, 4))
    stores = "".join(f"st.global.v4.u32 [%rd5+{4 * k}], {{%r{20 + k},%r{21 + k},%r{22 + k},%r{23 + k}}};\n"
                     for k in range(0, nd, 4))
    dregs = ",".join(f"%r{20 + i}" for i in range(nd))
    cregs = ",".join(f"%r{5 + i}" for i in range(nc))
    return f""".version 8.5
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<8>; .reg .b32 %r<40>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %r30, %tid.x;
mul.wide.u32 %rd3, %r30, 48;
add.s64 %rd4, %rd2, %rd3;
mul.wide.u32 %rd6, %r30, 32;
add.s64 %rd5, %rd1, %rd6;
{loads}mma.sync.aligned.m8n8k4.{al}.{bl}.{dt}.f16.f16.{ct} {{{dregs}}}, {{%r1,%r2}}, {{%r3,%r4}}, {{{cregs}}};
{stores}ret;
}}
"""


def coords(kind, layout, lane, i):
    """(row, col) of element i of `lane`'s fragment (PTX ISA, m8n8k4 .f16 fragments)."""
    hi = lane >= 16
    if kind == "A":
        return (lane % 4 + 4 * hi, i) if layout == "row" else (i % 4 + 4 * hi, lane % 4)
    if kind == "B":
        return (lane % 4, i + 4 * hi) if layout == "row" else (i, lane % 4 + 4 * hi)
    if layout == "f16":                 # C/D
        return lane % 4 + 4 * hi, i
    return (lane & 1) + (i & 2) + 4 * hi, (i & 4) + (lane & 2) + (i & 1)


def model(al, bl, dt, ct, a, b, c):
    """D = A.B + C per quad-pair, exact (float64), as D fragments (32, 8)."""
    d = np.zeros((32, 8))
    for q in range(4):
        lanes = [4 * q + j for j in range(4)] + [16 + 4 * q + j for j in range(4)]
        A, B, C = np.zeros((8, 4)), np.zeros((4, 8)), np.zeros((8, 8))
        for lane, i in itertools.product(lanes, range(8)):
            if i < 4:
                A[coords("A", al, lane, i)] = a[lane, i]
                B[coords("B", bl, lane, i)] = b[lane, i]
            C[coords("C", ct, lane, i)] = c[lane, i]
        D = A @ B + C
        for lane, i in itertools.product(lanes, range(8)):
            d[lane, i] = D[coords("C", dt, lane, i)]
    return d


def inputs(ct, seed, exact):
    rng = np.random.default_rng(seed)
    if exact:       # small integers: every product and sum exact in f16
        a, b = (rng.integers(-3, 4, (32, 4)).astype(np.float16) for _ in range(2))
        c = rng.integers(-8, 9, (32, 8))
    else:
        a, b = (rng.standard_normal((32, 4)).astype(np.float16) for _ in range(2))
        c = rng.standard_normal((32, 8)) * 4
    c = c.astype(np.float16 if ct == "f16" else np.float32)
    buf = np.zeros((32, 12), np.uint32)
    buf[:, 0:2], buf[:, 2:4] = a.view(np.uint32), b.view(np.uint32)
    buf[:, 4:8 if ct == "f16" else 12] = c.view(np.uint32)
    return a, b, c, buf


def launch(cubin, buf, hazards=False):
    out = np.zeros((32, 8), np.uint32)
    r = run(cubin, "k", 1, 32, [out, buf.copy()], hazard_check=hazards)
    if hazards:
        assert not r.hazards, [str(h) for h in r.hazards[:3]]
    return out


def values(out, dt):
    return (out[:, :4].copy().view(np.float16) if dt == "f16" else out.view(np.float32)).astype(np.float64)


def cubins(combo, arch):
    ptx = kernel(*combo, arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    return codegen.compile_ptx(ptx, arch), theirs.output


def check_against_the_manual_and_ptxas(combo, arch):
    """ptxas's cubin and ours = the manual's model on exact inputs; ours = ptxas's bit for
    bit on random ones (rounding), ours hazard-free. Returns (ours, ptxas's)."""
    al, bl, dt, ct = combo
    ours, theirs = cubins(combo, arch)
    a, b, c, buf = inputs(ct, 1, exact=True)
    want = model(al, bl, dt, ct, a, b, c.astype(np.float64))
    np.testing.assert_array_equal(values(launch(theirs, buf), dt), want, err_msg="ptxas vs the manual")
    np.testing.assert_array_equal(values(launch(ours, buf, hazards=True), dt), want, err_msg="ours vs the manual")
    for seed in (2, 3):
        _, _, _, buf = inputs(ct, seed, exact=False)
        np.testing.assert_array_equal(launch(ours, buf), launch(theirs, buf), err_msg=f"seed {seed}")
    return ours, theirs


@pytest.mark.parametrize("combo", COMBOS, ids=["_".join(c) for c in COMBOS])
def test_ptxas_follows_the_manual_and_ours_matches(combo):
    check_against_the_manual_and_ptxas(combo, "sm_89")


@pytest.mark.parametrize("arch,combo", [("sm_90", ("row", "col", "f16", "f16")),
                                        ("sm_90", ("col", "row", "f32", "f16")),
                                        ("sm_90", ("col", "col", "f32", "f32")),
                                        ("sm_120", ("row", "row", "f32", "f32"))],
                         ids=lambda v: v if isinstance(v, str) else "_".join(v))
def test_other_archs(arch, combo):
    """sm_90 and sm_120 (ptxas shuffles there too): = the manual's model, = ptxas's bits."""
    al, bl, dt, ct = combo
    ptx = kernel(*combo, arch).replace(".version 8.5", ".version 8.8")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    a, b, c, buf = inputs(ct, 4, exact=True)
    np.testing.assert_array_equal(values(launch(ours, buf, hazards=True), dt),
                                  model(al, bl, dt, ct, a, b, c.astype(np.float64)))
    _, _, _, buf = inputs(ct, 5, exact=False)
    np.testing.assert_array_equal(launch(ours, buf), launch(theirs.output, buf))


@pytest.mark.parametrize("arch,combo", [("sm_89", ("row", "col", "f16", "f16")),
                                        ("sm_89", ("col", "row", "f32", "f32")),
                                        ("sm_90", ("row", "row", "f32", "f32")),
                                        ("sm_75", ("row", "col", "f16", "f16")),
                                        ("sm_75", ("col", "row", "f32", "f32")),
                                        ("sm_75", ("row", "row", "f32", "f16"))],
                         ids=lambda v: v if isinstance(v, str) else "_".join(v))
def test_guarded(arch, combo):
    """`@p mma…m8n8k4` (was refused): D starts as C; a warp-uniform guard read from memory
    (the word after the fragments). True: D = the manual's model, ours = ptxas's bits; false:
    D keeps C's words, for ours and ptxas's."""
    al, bl, dt, ct = combo
    n = 4 if dt == "f16" else 8
    ptx = kernel(*combo, arch).replace(".version 8.5", ".version 8.8")
    init = "".join(f"mov.b32 %r{20 + i}, %r{5 + i};\n" for i in range(n))
    ptx = ptx.replace("mma.sync", "ld.global.u32 %r31, [%rd2+1536];\n.reg .pred %p<2>;\n"
                      "setp.ne.u32 %p1, %r31, 0;\n" + init + "@%p1 mma.sync")
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch)
    a, b, c, buf = inputs(ct, 6, exact=True)
    for flag in (1, 0):
        words = np.concatenate([buf.ravel(), np.array([flag], np.uint32)]).reshape(-1)
        got = []
        for cubin, hazards in ((ours, True), (theirs.output, False)):
            out = np.zeros((32, 8), np.uint32)
            r = run(cubin, "k", 1, 32, [out, words.copy()], hazard_check=hazards)
            assert not (hazards and r.hazards), [str(h) for h in r.hazards[:3]]
            got.append(out)
        if flag:
            np.testing.assert_array_equal(values(got[0], dt), model(al, bl, dt, ct, a, b, c.astype(np.float64)))
        else:
            np.testing.assert_array_equal(got[0][:, :n], buf[:, 4:4 + n])
        np.testing.assert_array_equal(got[0], got[1])


def test_ptxas_refuses_an_f32_c_with_an_f16_d_and_so_do_we():
    from ptx2sass.errors import CompileError
    ptx = kernel("row", "col", "f16", "f32", "sm_89")
    theirs = oracle.ptxas(ptx, "sm_89")
    assert not theirs.ok and ".dtype must be '.f32' when .ctype is '.f32'" in theirs.stderr
    with pytest.raises(CompileError, match="dtype must be '.f32' when .ctype is '.f32'"):
        codegen.compile_ptx(ptx, "sm_89")


@pytest.mark.parametrize("combo", COMBOS, ids=["_".join(c) for c in COMBOS])
def test_sm75_hmma_884_steps(combo):
    """sm_75 has the tile: HMMA.884.<D>.<C>.STEPk (refused before). ptxas's cubin and ours
    = the manual's model (exact inputs; checks the emulator's HMMA.884 against the manual),
    ours = ptxas's bit for bit on random inputs, ours hazard-free, and the same STEP
    instructions as ptxas's (opcode and modifiers, registers aside)."""
    ours, theirs = check_against_the_manual_and_ptxas(combo, "sm_75")

    def steps(cubin):
        """The HMMA lines of nvdisasm's listing: opcode.modifiers and A/B layouts."""
        found = re.findall(r"(HMMA\S*) R\d+, R\d+\.(\w+), R\d+\.(\w+), R\d+", oracle.cuobjdump_sass(cubin))
        assert found
        return found
    assert steps(ours) == steps(theirs)


@pytest.mark.parametrize("combo", [c for c in COMBOS if c[2:] == ("f32", "f16") and c[:2] != ("col", "row")],
                         ids="_".join)
def test_high_halves_read_in_place_sm90(combo):
    """Each shuffled f16 word's high half widens with `HADD2.F32 d, -RZ, w.H1_H1`
    (isel/high_halves.py), not a shift into a register of its own first: with f16 C and
    f32 D (every element a half) ours needed 42-43 registers, ptxas 40 (col/row: 44 -> 42,
    not covered). Outputs equal the manual's and ptxas's; registers no more than ptxas's."""
    from ptx2sass.emu.loader import load_program

    ours, theirs = check_against_the_manual_and_ptxas(combo, "sm_90")
    assert load_program(ours, "k").regcount <= load_program(theirs, "k").regcount
