"""cp.reduce.async.bulk (sm_90+), found by the lead's sweep of sm_90 instructions against
ptxas 13.5 (2026-11-29): the float reductions into global memory (add f32/f64, add.noftz
f16/bf16, min/max f16/bf16) were refused as "not supported yet" though the tables encode
UBLKRED.G.S.<OP>.<TYPE>.RN; and the frontend took every integer operation x type x `.noftz`
x destination, where ptxas refuses 161 of the 200 combinations below (frontend/cp_reduce_bulk.py;
the float ones ours refused, in other words). Checked: each
combination's verdict and messages against ptxas's, and the float reductions' results
against ptxas's cubin in the emulator."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

OPS = ["add", "add.noftz", "min", "max", "inc", "dec", "and", "or", "xor", "min.noftz"]
TYPES = ["b32", "u32", "s32", "b64", "u64", "s64", "f16", "bf16", "f32", "f64"]


def kernel(instruction: str, version: str = "8.8", arch: str = "sm_90") -> str:
    return f""".version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
 .reg .b32 %r<8>; .reg .b64 %rd<4>;
 .shared .align 16 .b8 sm[256];
 .shared .align 8 .b64 mb;
 ld.param.u64 %rd1, [p];
 mov.u32 %r3, sm; mov.u32 %r4, mb;
 {instruction}
 ret;
}}
"""


def reduce_into(dst: str, op: str, ty: str) -> str:
    if dst == "global":
        return f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{op}.{ty} [%rd1], [%r3], 64;"
    return (f"cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{op}.{ty} "
            "[%r3+128], [%r3], 64, [%r4];")


def messages(text: str) -> list[str]:
    """The diagnostics without the tool's name (ptxas / ptx2sass)."""
    return [re.sub(r"^(ptxas|ptx2sass) ", "", line) for line in text.splitlines() if line.strip()]


def ours(src: str, arch: str = "sm_90") -> tuple[bool, list[str]]:
    try:
        codegen.compile_ptx(src, arch, "k.ptx")
        return True, []
    except codegen.CompileError as e:
        return False, [m for d in getattr(e, "diagnostics", [e]) for m in messages(str(d))]


@pytest.mark.parametrize("version", ["8.8", "9.4"])
@pytest.mark.parametrize("dst", ["global", "shared::cluster"])
@pytest.mark.parametrize("op", OPS)
def test_operation_types_as_ptxas(op, dst, version):
    """Every type of one operation and destination: same verdict, same messages."""
    for ty in TYPES:
        src = kernel(reduce_into(dst, op, ty), version)
        ref = oracle.ptxas(src, "sm_90", name="k.ptx")
        ok, said = ours(src)
        assert ok == ref.ok, (ty, ref.stderr, said)
        if not ok:
            want = [m for m in messages(ref.stderr) if not m.startswith("fatal")]
            assert [m for m in said if not m.startswith("fatal")] == want, ty


FLOAT_FORMS = ["add.f32", "add.noftz.f16", "add.noftz.bf16", "min.f16", "max.bf16", "add.f64", "min.s64"]
VALUES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "s64": np.int64}


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("form", FLOAT_FORMS)
def test_float_reduction_results_equal_ptxas(form, arch):
    """Shared memory filled from one buffer, reduced into another (64 bytes), both cubins in
    the emulator: the same bytes (bf16 as raw halves of the f32 pattern)."""
    ty = form.rsplit(".", 1)[1]
    body = (" mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; add.u32 %r5, %r3, %r2;\n"
            " mul.wide.u32 %rd2, %r1, 4; ld.param.u64 %rd3, [q]; add.u64 %rd3, %rd3, %rd2;\n"
            " ld.global.u32 %r6, [%rd3]; st.shared.u32 [%r5], %r6;\n"
            " fence.proxy.async.shared::cta; bar.sync 0;\n"
            " setp.eq.u32 %p1, %r1, 0;\n"
            f" @%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group.{form} [%rd1], [%r3], 64;\n"
            " cp.async.bulk.commit_group; cp.async.bulk.wait_group 0;")
    src = kernel(body, "9.0" if arch == "sm_100" else "8.8", arch)
    src = src.replace(".param .u64 p)", ".param .u64 p, .param .u64 q)").replace(
        ".reg .b32 %r<8>;", ".reg .b32 %r<8>; .reg .pred %p<2>;")
    rng = np.random.default_rng(7)
    kind = VALUES.get(ty, np.float16 if ty == "bf16" else np.float32)
    start = (rng.standard_normal(64 // np.dtype(kind).itemsize) * 100).astype(kind)
    add = (rng.standard_normal(64 // np.dtype(kind).itemsize) * 100).astype(kind)
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    outs = []
    for cubin in (codegen.compile_ptx(src, arch), ref.output):
        out = np.frombuffer(start.tobytes(), np.uint32).copy()
        run(cubin, "k", 1, 16, [out, np.frombuffer(add.tobytes(), np.uint32).copy()])
        outs.append(out.tolist())
    assert outs[0] == outs[1]
    assert outs[0] != np.frombuffer(start.tobytes(), np.uint32).tolist()     # it reduced


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("form", ["add.f32", "min.s64", "and.b32", "max.bf16"])
def test_cache_hint_reduction_results_equal_ptxas(form, arch):
    """`.L2::cache_hint` with a policy register (an internal 'cannot encode UBLKRED ...
    desc[UR]' before branch inv32: UBLKRED's descriptor form probed from
    tools/isa_seeds/bulk_reduce_cache_hint_{90,100,120}.words): ours and ptxas's cubin in
    the emulator give the same bytes, and they are reduced ones."""
    ty = form.rsplit(".", 1)[1]
    body = (" mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; add.u32 %r5, %r3, %r2;\n"
            " mul.wide.u32 %rd2, %r1, 4; ld.param.u64 %rd3, [q]; add.u64 %rd3, %rd3, %rd2;\n"
            " ld.global.u32 %r6, [%rd3]; st.shared.u32 [%r5], %r6;\n"
            " fence.proxy.async.shared::cta; bar.sync 0;\n"
            " createpolicy.fractional.L2::evict_last.b64 %rd2, 1.0;\n"
            " setp.eq.u32 %p1, %r1, 0;\n"
            " @%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint."
            f"{form} [%rd1], [%r3], 64, %rd2;\n"
            " cp.async.bulk.commit_group; cp.async.bulk.wait_group 0;")
    src = kernel(body, "8.8", arch)
    src = src.replace(".param .u64 p)", ".param .u64 p, .param .u64 q)").replace(
        ".reg .b32 %r<8>;", ".reg .b32 %r<8>; .reg .pred %p<2>;")
    rng = np.random.default_rng(11)
    kind = VALUES.get(ty, np.float16 if ty == "bf16" else np.uint32)
    start = (rng.standard_normal(64 // np.dtype(kind).itemsize) * 100).astype(kind)
    add = (rng.standard_normal(64 // np.dtype(kind).itemsize) * 100).astype(kind)
    if kind == np.uint32:
        start = rng.integers(0, 2**32, 16, dtype=np.uint32)
        add = rng.integers(0, 2**32, 16, dtype=np.uint32)
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    outs = []
    for cubin in (codegen.compile_ptx(src, arch), ref.output):
        out = np.frombuffer(start.tobytes(), np.uint32).copy()
        run(cubin, "k", 1, 16, [out, np.frombuffer(add.tobytes(), np.uint32).copy()])
        outs.append(out.tolist())
    assert outs[0] == outs[1]
    assert outs[0] != np.frombuffer(start.tobytes(), np.uint32).tolist()     # it reduced
