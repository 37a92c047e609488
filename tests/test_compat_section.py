"""`.nv.compat` of our cubins equals ptxas 13.5's on every Blackwell arch and variant.

ptxas adds records to sm_90's on sm_100 and sm_120 (0x07 = 0x0101, a nonzero 8-byte 0x0b
value per variant, sm_100a's 0x05 = 5) and writes ACCELERATOR_TARGET 1 for the "a"
variants only ("f" keeps 0); sm_103 and sm_121 write sm_90's records, sm_107 sm_90's with
record 0x0d = 0x103. Expected bytes are
ptxas's cubin's, for vecadd and a few ZLUDA kernels."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import oracle
from ptx2sass.codegen import compile_ptx
from tools.emu_testing import ZLUDA_DIR, zluda_manifest, zluda_ptx

REPO = Path(__file__).resolve().parent.parent
ARCHS = ["sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_103", "sm_103a", "sm_103f", "sm_107", "sm_107a", "sm_107f",
         "sm_120", "sm_120a", "sm_120f", "sm_121", "sm_121a", "sm_121f"]


def _compat(cubin: bytes) -> bytes | None:
    s = ELFFile(io.BytesIO(cubin)).get_section_by_name(".nv.compat")
    return None if s is None else s.data()


def _sources() -> list[tuple[str, str]]:
    out = [("vecadd", (REPO / "examples" / "vecadd.ptx").read_text())]
    if (ZLUDA_DIR / "manifest.json").is_file():
        zl = [e for e in zluda_manifest() if "ptxas_error" not in e]
        out += [(e["name"], zluda_ptx(e)) for e in zl[5::60]]
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_compat_section_is_ptxas_s(arch):
    compared = 0
    for name, ptx in _sources():
        theirs = oracle.ptxas(ptx, arch)
        if not theirs.ok:
            continue
        assert _compat(compile_ptx(ptx, arch)) == _compat(theirs.output), name
        compared += 1
    assert compared >= 1
