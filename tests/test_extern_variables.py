"""`.extern .global/.const` variables in whole-program compilation (ptxas 13.5.37): an extern
declared before any definition is defined by ptxas itself, with the warning "Unresolved
extern variable 'x' in whole program compilation, ignoring extern qualifier" (an error under
-Werror, none under -w); an extern declaration and a definition of one variable, in one file
or across input files, in either order, are legal (ours: 'not supported yet', then 'Duplicate
definition'). Verdicts and messages against ptxas's; the kernel's result against ptxas's
cubin in the emulator."""
from __future__ import annotations

import numpy as np
import pytest

from test_cli_inputs import _assert_same, _both

HEADER = ".version 8.5\n.target sm_89\n.address_size 64\n"
EXTERNS = ".extern .global .align 4 .u32 gx;\n.extern .const .align 4 .u32 cx;\n"
DEFINITION = ".visible .global .align 4 .u32 gx = 7;\n"
KERNEL = """.visible .entry k(.param .u64 out)
{
  .reg .u64 %o; .reg .u32 %v, %w;
  ld.param.u64 %o, [out];
  ld.global.u32 %v, [gx];
  ld.const.u32 %w, [cx];
  add.u32 %v, %v, %w;
  st.global.u32 [gx], 3;
  cvta.to.global.u64 %o, %o; st.global.u32 [%o], %v; ret;
}
"""
FILES = {"ext.ptx": HEADER + EXTERNS + KERNEL,
         "ext_then_def.ptx": HEADER + EXTERNS + DEFINITION + KERNEL,
         "def_then_ext.ptx": HEADER + DEFINITION + EXTERNS + KERNEL,
         "def.ptx": HEADER + DEFINITION}


@pytest.mark.parametrize("argv", [["ext.ptx"], ["-Werror", "ext.ptx"], ["-w", "ext.ptx"],
                                  ["ext_then_def.ptx"], ["def_then_ext.ptx"],
                                  ["ext.ptx", "def.ptx"], ["def.ptx", "ext.ptx"]],
                         ids=" ".join)
def test_extern_variables_as_ptxas(argv, tmp_path, capsys, monkeypatch):
    theirs, ours = _both(FILES, ["-arch=sm_89", *argv], tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)
    if theirs.output is None:
        return
    from ptx2sass.emu.launch import run
    results = []
    for cubin in (ours[2], theirs.output):
        out = np.zeros(1, np.uint32)
        res = run(cubin, "k", (1, 1, 1), (1, 1, 1), [out], hazard_check=cubin is ours[2])
        assert not res.hazards
        results.append(int(out[0]))
    defined = "def" in " ".join(argv)
    assert results[0] == results[1] == (7 if defined else 0)
