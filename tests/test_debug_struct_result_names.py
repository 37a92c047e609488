"""nvcc names every function's result `func_retval0` and every call's result `retval0`: a
struct (`.param .b8 x[8]`) in one function or call sequence, a scalar in the next. Under -g
the calls stay calls and a struct travels as packed words; the struct-ness of a name must
end with its function or block. It did not: nvcc -G's PTX for a module with
`make_float2` (a struct result) before `rsqrtf` compiled `rsqrtf` to a bare RET (its
scalar result was taken for the struct's first word), a wrong answer in 5 of 6 kernels of
tests/corpus/realworld/src/geometry.cu built with -G. Expected values: the arithmetic
below, exact in f32; ptxas -g's cubin must give the same."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"

PAIR = """.func (.param .align 8 .b8 func_retval0[8]) pair(.param .b32 pair_a, .param .b32 pair_b)
{
  .reg .f32 %f<3>;
  ld.param.f32 %f1, [pair_a];
  ld.param.f32 %f2, [pair_b];
  st.param.f32 [func_retval0+0], %f2;
  st.param.f32 [func_retval0+4], %f1;
  ret;
}
"""

TWICE = """.func (.param .b32 func_retval0) twice(.param .b32 twice_a)
{
  .reg .f32 %f<3>;
  ld.param.f32 %f1, [twice_a];
  fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;
  st.param.f32 [func_retval0+0], %f2;
  ret;
}
"""


def _kernel(calls: str) -> str:
    return (".visible .entry k(.param .u64 k_p)\n{\n  .reg .f32 %f<8>; .reg .b32 %r<2>; .reg .b64 %rd<4>;\n"
            "  ld.param.u64 %rd1, [k_p];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r1, %tid.x;\n"
            "  mul.wide.u32 %rd2, %r1, 8;\n  add.s64 %rd1, %rd1, %rd2;\n"
            "  ld.global.f32 %f1, [%rd1];\n  ld.global.f32 %f2, [%rd1+4];\n" + calls +
            "  st.global.f32 [%rd1], %f3;\n  st.global.f32 [%rd1+4], %f4;\n  ret;\n}\n")


CALL_TWICE = ("  { .param .b32 param0; st.param.f32 [param0+0], %f1; .param .b32 retval0;\n"
              "    call.uni (retval0), twice, (param0); ld.param.f32 %f3, [retval0+0]; }\n")
CALL_PAIR = ("  { .param .b32 param0; st.param.f32 [param0+0], %f1; .param .b32 param1;\n"
             "    st.param.f32 [param1+0], %f2; .param .align 8 .b8 retval0[8];\n"
             "    call.uni (retval0), pair, (param0, param1); ld.param.f32 %f5, [retval0+0];\n"
             "    ld.param.f32 %f6, [retval0+4]; }\n")
CALL_TWICE_OF_5 = ("  { .param .b32 param0; st.param.f32 [param0+0], %f5; .param .b32 retval0;\n"
                   "    call.uni (retval0), twice, (param0); ld.param.f32 %f4, [retval0+0]; }\n")

MODULES = {
    # a struct-result function (never called) defined before the scalar one: the geometry case
    "struct_function_first": (HEAD + ".func (.param .b32 func_retval0) twice(.param .b32 twice_a);\n" + PAIR
                              + _kernel(CALL_TWICE + "  mov.f32 %f4, %f2;\n") + TWICE),
    # one kernel: a struct-result call sequence, then a scalar one reusing `retval0`
    "struct_call_first": (HEAD + PAIR + TWICE + _kernel(CALL_PAIR + "  mov.f32 %f3, %f6;\n" + CALL_TWICE_OF_5)),
}


def _expected(name: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if name == "struct_function_first":
        return a * np.float32(2) + np.float32(1), b
    return a, b * np.float32(2) + np.float32(1)          # pair swaps: %f5 = b, %f6 = a


@pytest.mark.parametrize("name", sorted(MODULES))
def test_struct_result_names_end_with_their_function(name):
    rng = np.random.default_rng(5)
    data = rng.integers(-64, 64, 128).astype(np.float32)        # small integers: exact
    want = _expected(name, data[0::2], data[1::2])
    ptxas = oracle.ptxas(MODULES[name], "sm_89", ("-g",), name="k.ptx")
    assert ptxas.ok, ptxas.stderr
    ours = codegen.compile_ptx(MODULES[name], "sm_89", "k.ptx", debug=True, opt_level=0)
    for cubin, check in ((ours, True), (ptxas.output, False)):
        buf = data.copy()
        res = run(cubin, "k", 1, 64, [buf], hazard_check=check)
        if check:
            assert res.hazards == [], [str(h) for h in res.hazards[:3]]
        np.testing.assert_array_equal(buf[0::2], want[0])
        np.testing.assert_array_equal(buf[1::2], want[1])
