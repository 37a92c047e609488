"""Element-wise kernels for code-generation tests: each thread loads a few inputs of one
type, runs a PTX body on them and stores one result; our cubin and ptxas's run in the
emulator on the same inputs (random bit patterns plus the special values of the type) and
must agree bit for bit, with zero hazards in ours."""
from __future__ import annotations

import numpy as np

import os

from ptx2sass import codegen, oracle
from ptx2sass.encoder.arch import target as arch_target
from ptx2sass.emu.launch import run

# Every test that runs a corpus on sm_90 too takes every HOPPER_STRIDE-th kernel for it in
# the default run (PTX2SASS_SAMPLE=all: all of them).
HOPPER_STRIDE = 3


def with_hopper(entries: list) -> list[tuple]:
    """(entry, arch) pairs: every entry on sm_89, a deterministic sample of them on sm_90, and
    the same sample on each arch named in PTX2SASS_EXTRA_ARCHS (comma-separated; not in CI:
    e.g. sm_120, whose corpus figures STATUS reports)."""
    stride = 1 if os.environ.get("PTX2SASS_SAMPLE") == "all" else HOPPER_STRIDE
    extra = [a for a in os.environ.get("PTX2SASS_EXTRA_ARCHS", "").split(",") if a]
    return [(e, "sm_89") for e in entries] + [(e, a) for a in ["sm_90", *extra] for e in entries[::stride]]

THREADS = 64
DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

# Bit patterns worth including for each floating type: zeros, ones, infinities, NaNs (quiet,
# signalling, with payloads), subnormals, the largest finite values.
SPECIAL = {
    16: [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00, 0x0001, 0x8001,
         0x03FF, 0x7BFF, 0xFBFF, 0x3F80, 0x7F80, 0xFF80, 0x7FC0, 0x0080],
    32: [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
         0x7F800001, 0xFFC00001, 0x00000001, 0x80000001, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF,
         0x00800000, 0x80000000, 0x7FFFFFFF, 0x4B000000],
    64: [0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000,
         0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000001, 0x1,
         0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
         0x7FFFFFFFFFFFFFFF, 0x0010000000000000],
}


def kernel(body: str, in_bits: int, n_in: int, out_bits: int, version: str = "8.0",
           target: str = "sm_89") -> str:
    """PTX for `body`, which reads %a0..%a{n_in-1} (.b{in_bits}) and writes %o (.b{out_bits});
    %p0..%p3 (.pred) and %x0..%x7 (.b32) are free for it."""
    isz, osz = in_bits // 8, out_bits // 8
    loads = "\n".join(f"ld.global.b{in_bits} %a{k}, [%rd4+{k * isz}];" for k in range(n_in))
    return f""".version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rd<6>;
.reg .b32 %t;
.reg .pred %p<4>;
.reg .b32 %x<8>;
.reg .b{in_bits} %a<{n_in}>;
.reg .b{out_bits} %o;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [in];
mov.u32 %t, %tid.x;
mul.wide.u32 %rd3, %t, {isz * n_in};
add.s64 %rd4, %rd2, %rd3;
{loads}
{body}
mul.wide.u32 %rd3, %t, {osz};
add.s64 %rd5, %rd1, %rd3;
st.global.b{out_bits} [%rd5], %o;
ret;
}}
"""


def inputs(in_bits: int, n_in: int, seed: int = 0, values=None) -> np.ndarray:
    """THREADS * n_in values: every pair of special values first (for n_in == 2, as far as
    they go), then random bit patterns and random small integers."""
    rng = np.random.default_rng(seed)
    dtype = DTYPES[in_bits]
    count = THREADS * n_in
    special = list(values if values is not None else SPECIAL.get(in_bits, []))
    out = []
    if n_in == 2:
        for a in special:
            for b in special:
                out += [a, b]
    else:
        for a in special:
            out += [a] * n_in
    out = out[:count // 2]
    rest = count - len(out)
    rand = rng.integers(0, 1 << min(in_bits, 63), size=rest, dtype=np.uint64)
    small = rng.integers(-5, 6, size=rest).astype(np.int64).astype(np.uint64)
    mixed = np.where(rng.random(rest) < 0.25, small, rand)
    return np.concatenate([np.array(out, dtype=np.uint64), mixed]).astype(dtype)


def run_both(body: str, in_bits: int, n_in: int, out_bits: int, seed: int = 0, values=None,
             data: np.ndarray | None = None, version: str = "8.0", arch: str = "sm_89",
             target: str | None = None):
    """(ours, ptxas's) output arrays, both compiled for `arch`; raises if ours faults or has
    hazards. `data` (n_in values per thread, at most 1024 threads) replaces the generated
    inputs. The PTX's `.target` is `target`, by default sm_89 (what most bodies are written
    for) or `arch` itself where that is older; forms that need a newer target name it."""
    if target is None:
        target = arch if arch_target(arch).sm < 89 else "sm_89"
    ptx = kernel(body, in_bits, n_in, out_bits, version, target)
    if data is None:
        data = inputs(in_bits, n_in, seed, values)
    threads = len(data) // n_in
    theirs_cubin = oracle.ptxas(ptx, arch).output
    ours_cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch,
                                            filename="k.ptx")
    results = []
    for cubin, check in ((ours_cubin, True), (theirs_cubin, False)):
        out = np.zeros(threads, dtype=DTYPES[out_bits])
        res = run(cubin, "k", (1, 1, 1), (threads, 1, 1), [out, data.copy()], hazard_check=check)
        if check:
            assert not res.hazards, [str(h) for h in res.hazards[:3]]
        results.append(out)
    return results[0], results[1], data


def assert_tinygrad_matches_ptxas(entry: dict, cubin: bytes, reconverge: str = "optimistic",
                                  arch: str = "sm_89"):
    """Run a tinygrad corpus kernel with ptxas's cubin (for `arch`) and with `cubin` on the
    same inputs: ours runs, has no hazards and writes ptxas's buffers bit for bit. Returns
    (ours, theirs)."""
    from tools.emu_testing import run_tinygrad
    theirs = run_tinygrad(entry, hazard_check=False, arch=arch)
    ours = run_tinygrad(entry, cubin=cubin, reconverge=reconverge)
    assert ours.ok, ours.reason
    assert not ours.result.hazards, [str(h) for h in ours.result.hazards[:5]]
    for name, want in theirs.result.buffers.items():
        assert ours.result.buffers[name] == want, f"buffer {name} differs from ptxas's"
    return ours, theirs


def assert_corpus_kernel_matches(corpus, ptx_dir, entry: dict, arch: str = "sm_89") -> None:
    """A Triton/LLVM corpus kernel (`corpus`: tests/triton_corpus.py or llvm_corpus.py, which
    give `launch`, `check_reference`): ptxas's cubin and ours run hazard-free, ours writes
    ptxas's outputs byte for byte, and both meet the NumPy reference (both compilers
    targeting `arch`)."""
    ptx = (ptx_dir / entry["file"]).read_text()
    theirs_result, theirs = corpus.launch(entry, oracle.ptxas(ptx, arch).output)
    assert not theirs_result.hazards, [str(h) for h in theirs_result.hazards[:3]]
    assert corpus.check_reference(entry, theirs) == []
    cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, entry["file"]), arch,
                                       filename=entry["file"])
    ours_result, ours = corpus.launch(entry, cubin)
    assert not ours_result.hazards, [str(h) for h in ours_result.hazards[:3]]
    for name, want in theirs.items():
        got = ours[name]
        bad = np.nonzero(got.view(np.uint8) != want.view(np.uint8))[0]
        assert not len(bad), f"{name}: {len(bad)} bytes differ from ptxas's, first at byte {bad[0]}"
    assert corpus.check_reference(entry, ours) == []


def dmma_chain(a_row, b_col, c, mode: str = "RN") -> float:
    """What DMMA computes (an H200, GPU run 11): c + a·b as four fused multiply-adds in k
    order, each rounded in `mode` (finite operands; an exact zero is +0 here)."""
    from fractions import Fraction
    from ptx2sass.emu import fp
    acc = float(c)
    for x, y in zip(a_row, b_col):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(acc)
        acc = fp.round_rational(exact, "f64", mode) if exact else 0.0
    return acc


def registers_against_ptxas(ptx: str, arch: str, out_shape: tuple, data: np.ndarray,
                            *params, threads: int = THREADS) -> tuple[int, int]:
    """Kernel `k(out, in, *params)` compiled by ptx2sass and by ptxas, run in the emulator on
    `data` with one block of `threads`: outputs must agree bit for bit and ours must have no
    hazard. Returns (our registers, ptxas's registers) for the test's bound."""
    from ptx2sass.emu.loader import load_program

    theirs = oracle.ptxas(ptx, arch).output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    outs, regs = [], []
    for cubin in (ours, theirs):
        out = np.zeros(out_shape, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (threads, 1, 1), [out, data.copy(), *params], hazard_check=True)
        assert not res.hazards or cubin is theirs, [str(h) for h in res.hazards[:3]]
        outs.append(out)
        regs.append(load_program(cubin, "k").regcount)
    assert outs[0].tobytes() == outs[1].tobytes()
    return regs[0], regs[1]


def assert_refused_in_ptxas_words(ptx: str, arch: str) -> None:
    """ptxas refuses `ptx` for `arch` and ours refuses it with the same error lines, in order
    (the text after each `error   : `)."""
    import pytest

    from ptx2sass import CompileError
    theirs = oracle.ptxas(ptx, arch)
    assert not theirs.ok
    want = [line.split("error   : ")[1] for line in theirs.stderr.splitlines() if "error   :" in line]
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, arch)
    got = [line.split("error   : ")[1] for d in e.value.diagnostics for line in str(d).splitlines()
           if "error   :" in line]
    assert got == want
