"""A module of variables and no code (`.global`/`.const` with initialisers, an address held
in a constant): ptxas 13.5.37 writes a cubin of its variables; ours stopped with "internal
error: KeyError" (the variables' symbols were written only beside the first kernel's).
Sections, symbols and relocations as cuobjdump lists them = ptxas's (sm_100+: but for
ptxas's Mercury sections, which we do not write)."""
import re

import pytest

from ptx2sass import codegen, oracle


def _structure(cubin: bytes):
    listing = oracle.cuobjdump_elf(cubin)
    sections = re.findall(r"^\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+(\S+)\s+"
                          r"[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+(\S+)$", listing, re.M)
    symbols = re.findall(r"^\s+0x[0-9a-f]+\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s*(\S*)$",
                         listing, re.M)
    relocations = re.findall(r"^0x[0-9a-f]+\s+(\S+)\s+(R_CUDA_\w+)", listing, re.M)
    return [s for s in sections if ".nv.merc" not in s[1]], symbols, relocations


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_120"])
@pytest.mark.parametrize("relocatable", [False, True], ids=["whole", "c"])
@pytest.mark.parametrize("visible", ["", ".visible "], ids=["local", "visible"])
def test_variables_only(arch, relocatable, visible):
    version = "8.8" if arch == "sm_120" else "8.5"
    ptx = (f".version {version}\n.target {arch}\n.address_size 64\n{visible}.global .u32 g = 5;\n"
           ".const .u64 p = g;\n.global .u32 h[2] = {1, 2};\n")
    options = ("-c",) if relocatable else ()
    theirs = oracle.ptxas(ptx, arch, options)
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx", compile_only=relocatable)
    assert _structure(ours) == _structure(theirs.output)
