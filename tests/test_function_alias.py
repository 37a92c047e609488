"""`.alias a, b;` (PTX ISA: `a` another name of the function `b`), found by a directive sweep
of the lead's (2026-11-29): ptxas 13.5 compiles a call of `a` as a call of `b`, and under -c
names `a` as a global function symbol at `b`'s start (size 0, after the others); ours
refused the call ("call of the extern function `g` (relocatable output) not supported yet")
in whole-program and -c modes alike."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin
from test_relocatable import _for, _nvlink, _ours_c, _ptxas_c

MODULE = """.version 7.8
.target sm_89
.address_size 64
.visible .func (.param .b32 r) f(.param .b32 a)
{
 .reg .b32 %r<3>;
 ld.param.b32 %r1, [a]; mul.lo.u32 %r2, %r1, 3; add.u32 %r2, %r2, 7; st.param.b32 [r], %r2; ret;
}
.visible .func (.param .b32 r) g(.param .b32 a);
.alias g, f;
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<4>; .reg .b64 %rd<3>;
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, %tid.x;
 { .param .b32 a; .param .b32 r; st.param.b32 [a], %r1; call (r), g, (a); ld.param.b32 %r2, [r]; }
 mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
 st.global.u32 [%rd1], %r2;
 ret;
}
"""

# another unit calls the alias by name (declared extern), linked with MODULE's -c object
CALLER = """.version 7.8
.target sm_89
.address_size 64
.extern .func (.param .b32 r) g(.param .b32 a);
.visible .entry caller(.param .u64 p)
{
 .reg .b32 %r<4>; .reg .b64 %rd<3>;
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, %tid.x; add.u32 %r1, %r1, 100;
 { .param .b32 a; .param .b32 r; st.param.b32 [a], %r1; call (r), g, (a); ld.param.b32 %r2, [r]; }
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
 st.global.u32 [%rd1], %r2;
 ret;
}
"""

ARCHS = ["sm_89", "sm_90", "sm_120"]


@pytest.mark.parametrize("arch", ARCHS)
def test_call_of_an_alias_runs_as_ptxas(arch):
    src = _for(MODULE, arch)
    ref = oracle.ptxas(src, arch)
    assert ref.ok, ref.stderr
    outs = []
    for cubin in (codegen.compile_ptx(src, arch), ref.output):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out], hazard_check=cubin is not ref.output)
        assert not res.hazards
        outs.append(out.tolist())
    assert outs[0] == outs[1] == [3 * t + 7 for t in range(64)]


def _function_symbols(cubin: bytes) -> list[tuple]:
    c = read_cubin(cubin)
    return sorted((s.name, s.type, s.bind, s.size if s.name == "g" else None, s.section)
                  for s in c.symbols if s.name in ("f", "g", "k"))


@pytest.mark.parametrize("arch", ARCHS)
def test_relocatable_alias_symbol_as_ptxas(arch):
    assert _function_symbols(_ours_c(MODULE, arch)) == _function_symbols(_ptxas_c(MODULE, arch))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_alias_links_from_another_unit(arch, tmp_path):
    linked = _nvlink(_ptxas_c(CALLER, arch), _ours_c(MODULE, arch), tmp_path=tmp_path, arch=arch)
    out = np.zeros(32, np.uint32)
    run(linked, "caller", 1, 32, [out])
    assert out.tolist() == [3 * (t + 100) + 7 for t in range(32)]
