"""A chain of ordinary (non-recursive) `.func` calls deeper than 8 was refused as a
"recursive `call`": the inliner's nesting bound (8) doubled as its recursion test, though
recursive functions are found from the call graph and stay calls. nvcc -G's CUB code nests
ordinary calls deeper than that (found by tools/realworld_debug on sm_120). The bound is now
64 and says what it is. Expected values: the chain's arithmetic, computed here; ptxas's cubin
must agree."""
import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run


def _chain(depth: int) -> str:
    """f1(x) = f2(x + 1) ^ 7, ..., f_i(x) = f_{i+1}(x + i) ^ 7i, f_depth(x) = 3x."""
    parts = [".version 8.0\n.target sm_89\n.address_size 64\n"]
    for i in range(depth, 0, -1):
        if i == depth:
            body = "  .reg .b32 %r<3>;\n  ld.param.b32 %r1, [a];\n  mul.lo.u32 %r2, %r1, 3;\n  st.param.b32 [r], %r2;\n"
        else:
            body = (f"  .reg .b32 %r<4>;\n  ld.param.b32 %r1, [a];\n  add.u32 %r1, %r1, {i};\n"
                    f"  {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), f{i + 1}, (pa);"
                    f" ld.param.b32 %r2, [pr]; }}\n  xor.b32 %r3, %r2, {7 * i};\n  st.param.b32 [r], %r3;\n")
        parts.append(f".func (.param .b32 r) f{i}(.param .b32 a)\n{{\n{body}  ret;\n}}\n")
    parts.append(".visible .entry k(.param .u64 out)\n{\n  .reg .b32 %r<3>; .reg .b64 %rd<3>;\n"
                 "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r1, %tid.x;\n"
                 "  { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), f1, (pa);"
                 " ld.param.b32 %r2, [pr]; }\n  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd1, %rd1, %rd2;\n"
                 "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n")
    return "".join(parts)


def _expected(depth: int, x: np.ndarray) -> np.ndarray:
    def f(i, v):
        if i == depth:
            return (v * 3) & 0xFFFFFFFF
        return f(i + 1, (v + i) & 0xFFFFFFFF) ^ (7 * i)
    return np.array([f(1, int(v)) for v in x], np.uint32)


@pytest.mark.parametrize("depth", [9, 14, 40])
def test_deep_chain_of_calls_is_inlined(depth):
    ptx = _chain(depth)
    theirs = oracle.ptxas(ptx, "sm_89", name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx")
    want = _expected(depth, np.arange(64))
    for cubin, check in ((ours, True), (theirs.output, False)):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out], hazard_check=check)
        assert res.hazards == []
        np.testing.assert_array_equal(out, want)


def test_the_bound_names_itself():
    with pytest.raises(CompileError, match="nested deeper than 64 inlined calls"):
        codegen.compile_ptx(_chain(70), "sm_89", "k.ptx")
