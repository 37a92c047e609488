"""The IEEE sequences' slow paths as one subroutine per kernel (ptx2sass/slow_paths.py):
each use of `div.rn`, `rcp.rn`, `sqrt.rn` (f32 with and without .ftz, f64) is its fast path
and a `CALL.REL.NOINC` for the lanes its range test rejects, as ptxas 13.5.37 writes it on
sm_75..sm_120. Outputs are compared with ptxas's cubin in the emulator on inputs that take
the slow paths (zeros, subnormals, infinities, NaNs, huge and tiny quotients), with each
kernel calling its subroutine from two places and keeping values live across the calls;
ours must also be free of hazards. The structural test counts CALL targets against ptxas's."""
from __future__ import annotations

import re

import numpy as np
import pytest

from codegen_harness import kernel, run_both
from ptx2sass import codegen, oracle, slow_paths
from test_codegen_ieee import edge_inputs, random_inputs

FORMS = [("div.rn.f32", 2), ("div.rn.ftz.f32", 2), ("rcp.rn.f32", 1), ("rcp.rn.ftz.f32", 1),
         ("sqrt.rn.f32", 1), ("sqrt.rn.ftz.f32", 1), ("div.rn.f64", 2), ("rcp.rn.f64", 1),
         ("sqrt.rn.f64", 1)]
ARCHS = ["sm_75", "sm_90", "sm_120"]


def two_uses(op: str, n_in: int) -> str:
    """Half the lanes take one call site, half the other (operands swapped for binary
    forms); a value computed before the call (the thread index, a product) is read after."""
    bits = 64 if op.endswith("f64") else 32
    swapped = "%a1, %a0" if n_in == 2 else "%a0"
    plain = "%a0, %a1" if n_in == 2 else "%a0"
    keep = "%x2" if bits == 32 else "%rd0"
    return (f"setp.lt.u32 %p0, %t, 128;\n"
            f"{'mul.lo.u32 %x2, %t, 3;' if bits == 32 else 'mul.wide.u32 %rd0, %t, 3;'}\n"
            f"@%p0 {op} %o, {plain};\n@!%p0 {op} %o, {swapped};\n"
            f"and.b{bits} {keep}, {keep}, 0;\nor.b{bits} %o, %o, {keep};")


def data_for(op: str, n_in: int) -> np.ndarray:
    bits = 64 if op.endswith("f64") else 32
    lanes = 512
    edge = edge_inputs(bits, n_in)[:lanes * n_in // 2]
    rand = random_inputs(bits, n_in, seed=7)[-lanes * n_in // 2:]     # the aimed part
    return np.concatenate([edge, rand])


@pytest.fixture
def every_kind_called(monkeypatch):
    """Every kind called from its first use (f64 ones stay inline by default)."""
    monkeypatch.setattr(slow_paths, "MIN_USES", {"f32": 1, "f64": 1})


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("op,n_in", FORMS)
def test_slow_path_subroutine_matches_ptxas(op, n_in, arch, every_kind_called):
    bits = 64 if op.endswith("f64") else 32
    data = data_for(op, n_in)
    ours, theirs, _ = run_both(two_uses(op, n_in), bits, n_in, bits, data=data, arch=arch)
    bad = np.nonzero(ours != theirs)[0]
    detail = [(tuple(hex(int(v)) for v in data[i * n_in:(i + 1) * n_in]), hex(int(ours[i])), hex(int(theirs[i])))
              for i in bad[:5]]
    assert not len(bad), f"{len(bad)} lanes differ (inputs, ours, ptxas): {detail}"


def all_forms_twice(target: str) -> str:
    """Every form, each used twice in one kernel, results summed into the output."""
    lines = [".reg .f32 %f<40>;\n.reg .f64 %d<40>;\nmov.b32 %f0, %a0;\nmov.b32 %f1, %a1;",
             "cvt.f64.f32 %d0, %f0;\ncvt.f64.f32 %d1, %f1;\nmov.f32 %f2, 0f00000000;\nmov.f64 %d2, 0d0000000000000000;"]
    k = 3
    for op, n_in in FORMS:
        wide = op.endswith("f64")
        r, s = ("%d", "%d") if wide else ("%f", "%f")
        for uses in range(2):
            a, b = (f"{s}{uses}", f"{s}{1 - uses}")
            srcs = f"{a}, {b}" if n_in == 2 else a
            lines.append(f"{op} {r}{k}, {srcs};")
            lines.append(f"add.f64 %d2, %d2, %d{k};" if wide else f"add.f32 %f2, %f2, %f{k};")
            k += 1
    lines.append("cvt.rn.f32.f64 %f39, %d2;\nadd.f32 %f2, %f2, %f39;\nmov.b32 %o, %f2;")
    return kernel("\n".join(lines), 32, 2, 32, "8.0", target)


def calls(sass: str) -> list[str]:
    """The CALL targets, as ptxas's subroutine names less their `$..$` prefix."""
    return [t.rsplit("$", 1)[1] for t in re.findall(r"CALL\.REL\.NOINC `\(([^)]*)\)", sass)]


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_100"])
def test_one_subroutine_per_slow_path_like_ptxas(arch, monkeypatch):
    """18 uses: ptxas has 9 subroutines, each called twice. Ours calls the six f32 ones
    as ptxas does (same subroutines, same call counts) and keeps the f64 ones inline (by
    default, slow_paths.MIN_USES); with every kind called, all nine like ptxas. Every
    subroutine's code appears once."""
    ptx = all_forms_twice(arch if arch == "sm_75" else "sm_89")
    theirs = calls(oracle.nvdisasm(oracle.ptxas(ptx, arch).output))
    assert len(set(theirs)) == 9 and len(theirs) == 18
    for least, expected in (({"f32": 2, "f64": None}, [t for t in theirs if "f32" in t]),
                            ({"f32": 1, "f64": 1}, theirs)):
        monkeypatch.setattr(slow_paths, "MIN_USES", least)
        cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
        sass = oracle.nvdisasm(cubin)
        ours = calls(sass)
        assert sorted(ours) == sorted(expected)
        for t in set(ours):
            assert len(re.findall(rf"\n\$k\$\${re.escape(t)}:", sass)) == 1, t
        assert sass.count("RET.REL.NODEC") == len(set(expected))


SHARED_ONLY = """.version 8.0
.target sm_89
.address_size 64
.visible .entry s(.param .f32 x, .param .f32 y)
{
 .reg .f32 %f<8>; .shared .f32 buf[64]; .reg .b32 %r<3>;
 ld.param.f32 %f1, [x]; ld.param.f32 %f2, [y];
 div.rn.f32 %f3, %f1, %f2; div.rn.f32 %f4, %f2, %f3;
 mov.u32 %r1, %tid.x; shl.b32 %r1, %r1, 2; mov.u32 %r2, buf; add.u32 %r1, %r1, %r2;
 st.shared.f32 [%r1], %f4;
 ret;
}
"""


def test_subroutines_shared_between_compiles_do_not_carry_state():
    """The subroutines are compiled once per arch and copied into every kernel: a kernel
    without global memory compiles the same after one that reads global memory (whose
    descriptor load once leaked into the shared subroutine's record)."""
    slow_paths._compiled.clear()
    fresh = codegen.compile_ptx(SHARED_ONLY, "sm_89")
    slow_paths._compiled.clear()
    codegen.compile_ptx(kernel(two_uses("div.rn.f32", 2), 32, 2, 32), "sm_89")
    assert codegen.compile_ptx(SHARED_ONLY, "sm_89") == fresh
