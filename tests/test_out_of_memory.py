"""An allocation that fails ends in ptxas's two lines and exit status, not a traceback or
an `internal error` (issue 21). Both tools run under the same address-space limit, on an
input too large for it; ptxas's output is the expected text (its name replaced by ours)."""
from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

from ptx2sass import oracle

LIMIT = 100 * 2 ** 20        # bytes of address space: both start, neither finishes this input


def _big_line(statements: int = 40000) -> str:
    ops = " ".join("xor.b32 %r1, %r1, %r2;" if i % 2 else f"mad.lo.u32 %r1, %r1, {2 * i + 3}, %r2;"
                   for i in range(statements))
    return (".version 8.0\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            ".reg .u32 %r<3>;\n.reg .u64 %rd1;\nld.param.u64 %rd1, [p];\n"
            "ld.global.u32 %r1, [%rd1];\nld.global.u32 %r2, [%rd1+4];\n" + ops
            + "\nst.global.u32 [%rd1], %r1;\nret;\n}\n")


def _limited(argv: list[str]) -> subprocess.CompletedProcess:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
    return subprocess.run(argv, capture_output=True, text=True, preexec_fn=limit, timeout=600)


def test_out_of_memory_in_ptxas_words(tmp_path: Path):
    src = tmp_path / "big.ptx"
    src.write_text(_big_line())
    theirs = _limited([str(oracle.tool_path("ptxas")), "-arch=sm_89", str(src), "-o",
                       str(tmp_path / "p.cubin")])
    assert "Memory allocation failure" in theirs.stderr, "the premise: ptxas runs out here"
    ours = _limited([sys.executable, "-m", "ptx2sass", "-arch=sm_89", str(src), "-o",
                     str(tmp_path / "o.cubin")])
    assert ours.returncode == theirs.returncode
    assert ours.stderr == theirs.stderr.replace("ptxas", "ptx2sass")
    assert not (tmp_path / "o.cubin").exists()
