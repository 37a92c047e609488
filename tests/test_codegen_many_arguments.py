"""Out-of-line (recursive) functions with more argument words than the old private limit of
24 registers: ptxas passes what does not fit in R4..R15 on the stack; our whole-program
convention (ptx2sass.abi) keeps every argument in a register from R4 up, within the
function's register limit, and refuses the call past it. The kernel's result against
ptxas's cubin and the arithmetic in the emulator."""
import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.errors import CompileError

N = 40


def _program(n: int = N) -> str:
    params = ", ".join(f".param .u32 a{i}" for i in range(n))
    loads = "".join(f"  ld.param.u32 %r{i}, [a{i}];\n" for i in range(n))
    sums = "".join(f"  add.u32 %s, %s, %r{i};\n" for i in range(n))
    decls = "".join(f".param .u32 p{i}; " for i in range(n))
    names = ", ".join(f"p{i}" for i in range(n))
    return f""".version 8.5
.target sm_89
.address_size 64
.func (.param .u32 ret) f(.param .u32 depth, {params})
{{
  .reg .u32 %r<{n}>; .reg .u32 %s, %d, %t; .reg .pred %p;
  ld.param.u32 %d, [depth];
{loads}  mov.u32 %s, 0;
{sums}  setp.eq.u32 %p, %d, 0;
  @%p bra DONE;
  sub.u32 %d, %d, 1;
  {{ .param .u32 rv; .param .u32 pd; {decls}
  st.param.u32 [pd], %d;
  {"".join(f"st.param.u32 [p{i}], %r{i}; " for i in range(n))}
  call.uni (rv), f, (pd, {names});
  ld.param.u32 %t, [rv]; }}
  add.u32 %s, %s, %t;
DONE:
  st.param.u32 [ret], %s;
  ret;
}}
.visible .entry k(.param .u64 out)
{{
  .reg .u64 %o; .reg .u32 %v, %x; .reg .u32 %a<{n}>;
  ld.param.u64 %o, [out];
  mov.u32 %x, %tid.x;
  add.u32 %x, %x, 5;
{"".join(f"  mad.lo.u32 %a{i}, %x, {i + 3}, {i};" + chr(10) for i in range(n))}  {{ .param .u32 rv; .param .u32 pd; {decls}
  st.param.u32 [pd], 3;
  {"".join(f"st.param.u32 [p{i}], %a{i}; " for i in range(n))}
  call.uni (rv), f, (pd, {names});
  ld.param.u32 %v, [rv]; }}
  cvta.to.global.u64 %o, %o;
  st.global.u32 [%o], %v;
  ret;
}}
"""


def test_forty_argument_recursion_matches_ptxas():
    """Was 'arguments ... need more than 24 registers (passing on the stack) not supported yet'."""
    from ptx2sass.emu.launch import run
    ptx = _program()
    ours = codegen.compile_ptx(ptx, arch="sm_89")
    theirs = oracle.ptxas(ptx, "sm_89").output
    want = 4 * sum(5 * (i + 3) + i for i in range(N))       # depth 3: four levels of the same sum
    for cubin in (ours, theirs):
        out = np.zeros(1, np.uint32)
        res = run(cubin, "k", (1, 1, 1), (1, 1, 1), [out], hazard_check=cubin is ours)
        assert not res.hazards
        assert int(out[0]) == want


def test_arguments_past_the_register_limit_are_refused_in_words():
    """Under -maxrregcount 32 the 41 argument registers cannot be kept: refused at the
    function (ptxas spills them to the stack), not compiled past the limit."""
    with pytest.raises(CompileError, match="past the register limit 32"):
        codegen.compile_ptx(_program(), arch="sm_89", maxrregcount=32)
