"""Struct arguments and results through a function pointer (branch cli29). ptxas 13.5.37
passes them as in the link-time convention (ptx2sass.abi: a struct's words as a unit, a
result over 12 words through a buffer whose address is in R4, aligned to the result's
alignment): whole program and -g alike. Ours refused any `.param` array in a call through a
pointer ("struct (.param array) argument ... not supported yet"); now whole-program calls
pass the words in our own convention (both sides ours) and -g's, where every function is a
link target, ptxas's: checked by running both compilers' cubins in the emulator, and the
-g caller's frame and buffer against ptxas's."""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run


def _module(ret_size: int, ret_align: int, arg_align: int) -> str:
    """k(p): p[0] = f(p[0], {1, 2, 7}, 10) word 0 + its last word, through a pointer;
    f's result words: a + s[2] + 3b, then one more each."""
    body = "\n".join(f"  add.u32 %q, %q, 1; st.param.b32 [r+{4 * k}], %q;" for k in range(1, ret_size // 4))
    ret = f".param .align {ret_align} .b8 r[{ret_size}]"
    return f""".version 7.8
.target sm_89
.address_size 64
.func ({ret}) f(.param .b32 a, .param .align {arg_align} .b8 s[12], .param .b32 b)
{{
  .reg .b32 %q, %t;
  ld.param.b32 %q, [a]; ld.param.b32 %t, [s+8]; add.u32 %q, %q, %t;
  ld.param.b32 %t, [b]; mul.lo.u32 %t, %t, 3; add.u32 %q, %q, %t;
  st.param.b32 [r], %q;
{body}
  ret;
}}
.visible .entry k(.param .u64 p)
{{
  .reg .u64 %p, %fp; .reg .b32 %x, %y, %z;
  ld.param.u64 %p, [p];
  ld.global.u32 %x, [%p];
  mov.u64 %fp, f;
  {{
  .param .b32 a; st.param.b32 [a], %x;
  .param .align {arg_align} .b8 s[12]; st.param.b32 [s], 1; st.param.b32 [s+4], 2; st.param.b32 [s+8], 7;
  .param .b32 b; st.param.b32 [b], 10;
  {ret.replace("r[", "r[")};
  proto: .callprototype (.param .align {ret_align} .b8 _[{ret_size}]) _ (.param .b32 _, .param .align {arg_align} .b8 _[12], .param .b32 _);
  call (r), %fp, (a, s, b), proto;
  ld.param.b32 %y, [r]; ld.param.b32 %z, [r+{ret_size - 4}];
  }}
  add.u32 %y, %y, %z;
  st.global.u32 [%p], %y;
  ret;
}}
"""


SHAPES = [(52, 4, 4), (56, 8, 8), (64, 16, 16), (8, 8, 16)]


def _ptxas(src: str, options: tuple) -> bytes:
    r = oracle.ptxas(src, "sm_89", options)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _ours(src: str, options: tuple) -> bytes:
    return codegen.compile_ptx(src, "sm_89", "k.ptx", debug="-g" in options, opt_level=0 if "-g" in options else 3)


@pytest.mark.parametrize("options", [(), ("-g",)])
@pytest.mark.parametrize("by", ["ours", "ptxas"])
@pytest.mark.parametrize("shape", SHAPES)
def test_struct_through_pointer_runs(shape, by, options):
    src = _module(*shape)
    cubin = (_ours if by == "ours" else _ptxas)(src, options)
    d = np.array([5, 0], np.uint32)
    res = run(cubin, "k", 1, 1, [d], hazard_check=True)
    assert not res.hazards
    assert int(d[0]) == (5 + 7 + 30) * 2 + shape[0] // 4 - 1


def _call_site(cubin: bytes) -> tuple:
    """The kernel's frame, R4's offset from R1 (None: no buffer) and the CALL's form."""
    text = oracle.nvdisasm(cubin, ()).split(".text.k:")[1].split(".section")[0]
    frame = re.search(r"IADD3 R1, R1, -(0x[0-9a-f]+)", text)
    buffer = re.search(r"IADD3 R4, R1, (RZ|0x[0-9a-f]+)|IMAD\.MOV\.U32 R4, RZ, RZ, R1 ()", text)
    call = re.search(r"(CALL\.[A-Z.]+) R\d+", text)
    offset = None if buffer is None else buffer[1] or "RZ"
    return (int(frame[1], 16) if frame else 0,
            None if offset is None else 0 if offset == "RZ" else int(offset, 16), call and call[1])


@pytest.mark.parametrize("shape", SHAPES[:3])
def test_debug_pointer_call_buffer_is_ptxas(shape):
    """-g: a result through memory: the frame, R4 = R1 + the buffer's offset, CALL.ABS.NOINC."""
    src = _module(*shape)
    assert _call_site(_ours(src, ("-g",))) == _call_site(_ptxas(src, ("-g",)))


def test_debug_pointer_call_with_stack_arguments_runs():
    """-g: a call through a pointer with arguments past R15 (the outgoing area is now
    reserved for it; before, -g fell back to inlining the module's functions): out of line
    (CALL.ABS), right, no hazards."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from test_link_stack_arguments import _header, callee_ptx, reference
    types = ["b32"] * 11 + ["b64", "b32", "b32", "b64"]
    sig = ", ".join(f".param .{t} _" for t in types)
    body = [".visible .entry k(.param .u64 p)", "{", "  .reg .u64 %p, %fp; ld.param.u64 %p, [p]; .reg .b32 %res;",
            "  mov.u64 %fp, f;", "  {"]
    for k, ty in enumerate(types):
        body.append(f"  .param .{ty} a{k}; {{ .reg .{ty} %v; ld.global.{ty} %v, [%p+{8 * k}]; st.param.{ty} [a{k}], %v; }}")
    body += [f"  .param .b32 r; proto: .callprototype (.param .b32 _) _ ({sig});",
             f"  call (r), %fp, ({', '.join(f'a{k}' for k in range(len(types)))}), proto; ld.param.b32 %res, [r];",
             "  }", "  st.global.b32 [%p], %res;", "  ret;", "}"]
    src = _header("sm_89") + callee_ptx(types, "b32", visible="") + "\n".join(body) + "\n"
    cubin = _ours(src, ("-g",))
    assert "CALL.ABS.NOINC R" in oracle.nvdisasm(cubin, ())
    data = np.random.default_rng(1).integers(0, 1 << 64, len(types), dtype=np.uint64)
    want = reference(types, data, "b32")
    res = run(cubin, "k", 1, 1, [data], hazard_check=True)
    assert not res.hazards
    assert int(data[0]) & 0xFFFFFFFF == want


SYSTEM_CALL = """.version 7.8
.target sm_89
.address_size 64
.extern .func (.param .align {align} .b8 r[{size}]) malloc(.param .b64 a);
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %y; .reg .u64 %p;
  ld.param.u64 %p, [p];
  {{
  .param .b64 a; st.param.b64 [a], 16;
  .param .align {align} .b8 r[{size}];
  call (r), malloc, (a);
  ld.param.b32 %y, [r+{last}];
  }}
  st.global.u32 [%p], %y;
  ret;
}}
"""


@pytest.mark.parametrize("size, align", [(52, 4), (64, 16)])
def test_system_call_result_through_memory_is_ptxas(size, align):
    """A system function declared with a result over 12 words (ptxas takes it): the buffer
    in R4 (R1 + 0), the argument from R6, the frame as ptxas's (refused before)."""
    src = SYSTEM_CALL.format(size=size, align=align, last=size - 4)
    ours, theirs = _ours(src, ()), _ptxas(src, ())
    assert _call_site(ours) == _call_site(theirs)
    assert "R6," in oracle.nvdisasm(ours, ()).split(".text.k:")[1].split("CALL.ABS")[0]
