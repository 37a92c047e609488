"""EIATTR_CRS_STACK_SIZE of a kernel whose `.func` calls are inlined: ptxas 13.5 writes the
record (value 0, whatever the call depth, the callee's frame or the arch) when a call
survives its dead-code removal, and none for a call that is unreachable. Expected values:
ptxas's cubin for the same module, read back."""
import pytest

from ptx2sass import oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.encoder.cubin import read_cubin

REGS = ".reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<4>;"
ST = "st.global.u32 [%rd1], %r1;"
LOCAL = (".local .align 4 .b8 buf[64]; mov.u64 %rd2, buf; cvt.u64.u32 %rd3, %r1; and.b64 %rd3, %rd3, 15; "
         "shl.b64 %rd3, %rd3, 2; add.u64 %rd2, %rd2, %rd3; st.local.u32 [%rd2], %r1; "
         "ld.local.u32 %r2, [buf+8]; st.global.u32 [%rd1], %r2;")


def _kernel(body):
    return f".visible .entry k(.param .u64 p)\n{{\n{REGS}\nld.param.u64 %rd1, [p];\nmov.u32 %r1, %tid.x;\n{body}\nret;\n}}\n"


def _func(body, name="g", result=False):
    ret = "(.param .b32 rv) " if result else ""
    return f".func {ret}{name}(.param .b64 a)\n{{\n{REGS}\nld.param.b64 %rd1, [a];\nmov.u32 %r1, %tid.x;\n{body}\nret;\n}}\n"


def _call(name="g", guard=""):
    return f"{{ .param .b64 a0; st.param.b64 [a0], %rd1; {guard}call.uni {name}, (a0); }}"


MODULES = {      # name: (module, ptxas writes the record)
    "store": (_func(ST) + _kernel(_call()), True),
    "empty_function": (_func("") + _kernel(_call()), True),
    "result": (_func(ST + " st.param.b32 [rv], %r1;", result=True)
               + _kernel("{ .param .b64 a0; .param .b32 r0; st.param.b64 [a0], %rd1; call.uni (r0), g, (a0); "
                         "ld.param.b32 %r3, [r0]; } st.global.u32 [%rd1+4], %r3;"), True),
    "local_frame": (_func(LOCAL) + _kernel(_call()), True),
    "depth_3": (_func(ST, "h3") + _func(_call("h3"), "h2") + _func(_call("h2")) + _kernel(_call()), True),
    "branch_around": (_func(ST) + _kernel("setp.eq.u32 %p1, %r1, 0; @%p1 bra L; " + _call() + " L:"), True),
    "guarded_call": (_func(ST) + _kernel("setp.eq.u32 %p1, %r1, 0; " + _call(guard="@%p1 ")), True),
    "in_a_loop": (_func(ST) + _kernel("mov.u32 %r4, 0; LP: " + _call() + " add.u32 %r4, %r4, 1; "
                                      "setp.lt.u32 %p1, %r4, %r1; @%p1 bra LP;"), True),
    "unreachable": (_func(ST) + _kernel("ret; " + _call()), False),
    "no_call": (_kernel(ST), False),
}


def _crs(cubin):
    return {k.name: [r.u32s()[0] for r in k.attributes if r.name == "CRS_STACK_SIZE"]
            for k in read_cubin(cubin).kernels}


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("name", list(MODULES))
def test_crs_stack_size_of_inlined_calls(arch, name):
    module, written = MODULES[name]
    ptx = f".version 9.1\n.target {arch}\n.address_size 64\n" + module
    ref = oracle.ptxas(ptx.encode(), arch)
    assert ref.ok, ref.stderr
    assert _crs(ref.output) == {"k": [0] if written else []}     # the rule, as read off ptxas
    assert _crs(compile_ptx(ptx, arch)) == _crs(ref.output)
