"""Refusals compared with ptxas's: the diagnostics of a module both compilers refuse."""
import re

import pytest

from ptx2sass import codegen, oracle
from ptx2sass.errors import CompileError


def diagnostic_lines(text: str) -> list[str]:
    """The `line N; error|fatal|warning : ...` parts of a compiler's messages, in order."""
    return re.findall(r"line \d+; (?:error|fatal|warning)\s*: .*", text)


def our_lines(ptx: str, arch: str) -> list[str]:
    """Our diagnostic lines for `ptx`, which we must refuse."""
    with pytest.raises(CompileError) as e:
        codegen.compile_ptx(ptx, arch)
    return diagnostic_lines("\n".join(str(d) for d in e.value.diagnostics))


def ptxas_lines(ptx: str, arch: str) -> list[str]:
    """The pinned ptxas's diagnostic lines for `ptx` (the test skips without it)."""
    try:
        theirs = oracle.ptxas(ptx, arch)
    except oracle.OracleMissing:
        pytest.skip("pinned ptxas not installed")
    return diagnostic_lines(theirs.stderr)


def assert_refused_as_ptxas(ptx: str, arch: str) -> None:
    """ptxas refuses `ptx`, and ours refuses it with the same messages in the same order."""
    theirs = oracle.ptxas(ptx, arch)
    assert not theirs.ok
    assert our_lines(ptx, arch) == diagnostic_lines(theirs.stderr)


def one_instruction_module(version: str, target: str, decls: str, ins: str) -> str:
    """A kernel of the one instruction `ins`, with `decls` besides `%f<4>` and `%rd<4>`
    (`%rd1` holds its pointer parameter)."""
    return f""".version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 p)
{{
.reg .f32 %f<4>; .reg .b64 %rd<4>;
{decls}
ld.param.u64 %rd1, [p];
{ins}
ret;
}}
"""
