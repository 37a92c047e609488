"""The sizes of the shared sections ptxas -c (and -c -g) writes for `.shared` variables the
linker places (issue 21, branch shared29): `.nv.shared.<k>` (a kernel's own variables) and
`.nv_debug.shared` (the module's and the `.func`s' own). ptxas 13.5.37 sums the variables'
sizes without padding and adds the section's alignment where that sum is at most the
alignment (`variables.linked_section_size`); the alignment is the largest of the variables'
(no floor of 4). Each case compares against ptxas's cubin of the same PTX; nvlink-linked
runs are test_relocatable_shared's and test_relocatable_shared_debug's."""
from __future__ import annotations

import pytest

from test_debug_reserved_shared import _ours, _ptxas
from test_relocatable import _for
from tools.layout_sweeps import shared_sizes

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"


def _vars(decls: list[tuple[str, int, int]], indent: str = "") -> str:
    return "".join(f"{indent}.shared .align {a} .b8 {n}[{s}];\n" for n, s, a in decls)


def _uses(names: list[str]) -> str:
    return "".join(f"  mov.u32 %r2, {n}; st.shared.u8 [%r2], %r1;\n" for n in names)


def _module(own: list, module: tuple = (), func: list | None = None, extern: bool = False) -> str:
    """A kernel `k0` with its own variables `own` naming every module variable (and `dyn`
    where `extern`), calling `f` with its own variables `func` where given."""
    src = HEADER + _vars(list(module)) + (".extern .shared .align 16 .b8 dyn[];\n" if extern else "")
    names = [n for n, _, _ in module] + (["dyn"] if extern else [])
    call = ""
    if func is not None:
        src += (".visible .func (.param .b32 r) f(.param .b32 a)\n{\n .reg .b32 %r<4>;\n" + _vars(func, "  ")
                + " ld.param.b32 %r1, [a];\n" + _uses([n for n, _, _ in func]) + " st.param.b32 [r], %r1;\n ret;\n}\n")
        call = ("  { .param .b32 a; .param .b32 rr; st.param.b32 [a], %r1; call.uni (rr), f, (a);"
                " ld.param.b32 %r1, [rr]; }\n")
    return (src + ".visible .entry k0(.param .u64 p)\n{\n .reg .b32 %r<4>;\n" + _vars(own, "  ")
            + " mov.u32 %r1, %tid.x;\n" + _uses([n for n, _, _ in own] + names) + call + " ret;\n}\n")


# (name: PTX); each differed from ptxas's in a shared section's size or alignment before
CASES = {
    "one_16a16": _module([("x", 16, 16)]),                     # 32, ours 16
    "one_1a4": _module([("x", 1, 4)]),                         # 5
    "one_1a1": _module([("x", 1, 1)]),                         # 2, aligned 1 (ours 4)
    "one_12a16": _module([("x", 12, 16)]),                     # 28
    "two_4a4_16a16": _module([("x", 4, 4), ("y", 16, 16)]),   # 20: no padding between
    "three_16a16_4a4_4a16": _module([("x", 16, 16), ("y", 4, 4), ("z", 4, 16)]),   # 24 (ours 36)
    "two_1a4_1a8": _module([("x", 1, 4), ("y", 1, 8)]),       # 10
    "three_3a16": _module([("x", 3, 16), ("y", 3, 16), ("z", 3, 16)]),   # 25
    "two_2a1": _module([("x", 2, 1), ("y", 2, 1)]),           # 4, aligned 1
    "own_beside_module_16": _module([("x", 4, 4)], (("m", 16, 16),)),     # k0 20, debug 32
    "module_4a4_4a16": _module([], (("m", 4, 4), ("n", 4, 16))),          # debug 24
    "module_20a16_4a16": _module([], (("m", 20, 16), ("n", 4, 16))),      # debug 24 (ours 36)
    "func_own": _module([("x", 4, 4)], (), [("y", 4, 4)]),                # both 8
    "func_own_and_module": _module([], (("m", 20, 4),), [("y", 4, 16)]),  # debug 24
    "extern_beside": _module([("x", 8, 8)], (("m", 4, 4),), [("y", 2, 2)], extern=True),
}
ARCHS = ["sm_80", "sm_89", "sm_90", "sm_100", "sm_120"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", list(CASES))
def test_shared_section_sizes_as_ptxas(name, arch):
    src = _for(CASES[name], arch)
    assert shared_sizes(_ours(src, arch, ("-c",))) == shared_sizes(_ptxas(src, arch, ("-c",)))


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_120"])
@pytest.mark.parametrize("name", ["one_16a16", "two_4a4_16a16", "module_20a16_4a16", "func_own_and_module",
                                  "extern_beside", "one_1a1"])
def test_shared_section_sizes_as_ptxas_debug(name, arch):
    src = _for(CASES[name], arch)
    assert shared_sizes(_ours(src, arch, ("-c", "-g"))) == shared_sizes(_ptxas(src, arch, ("-c", "-g")))
