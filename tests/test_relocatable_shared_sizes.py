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


def _linked_module(own: list, module: list, func: list) -> tuple[str, list[int]]:
    """Thread t writes byte t + 17 i of each variable i (where t < its size) in the kernel
    and in `f` (its own and the module's), then, after a barrier, sums what it reads back:
    overlapping placements would clobber bytes. Returns the PTX and the variables' sizes in
    the order numbered."""
    every = own + module + func

    def writes(decls: list, first: int) -> str:
        return "".join(f"  setp.lt.u32 %p1, %r1, {s}; mov.u32 %r2, {n}; add.u32 %r2, %r2, %r1;"
                       f" add.u32 %r3, %r1, {17 * (first + i)}; @%p1 st.shared.u8 [%r2], %r3;\n"
                       for i, (n, s, _) in enumerate(decls))

    reads = "".join(f"  setp.lt.u32 %p1, %r1, {s}; mov.u32 %r2, {n}; add.u32 %r2, %r2, %r1;"
                    f" mov.u32 %r3, 0; @%p1 ld.shared.u8 %r3, [%r2]; add.u32 %r4, %r4, %r3;\n"
                    for n, s, _ in own + module)
    src = (HEADER + _vars(module)
           + ".visible .func (.param .b32 r) f(.param .b32 a)\n{\n .reg .b32 %r<6>; .reg .pred %p<2>;\n"
           + _vars(func, "  ") + " ld.param.b32 %r1, [a];\n" + writes(func, len(own) + len(module))
           + "  bar.sync 0;\n  mov.u32 %r4, 0;\n"
           + "".join(f"  setp.lt.u32 %p1, %r1, {s}; mov.u32 %r2, {n}; add.u32 %r2, %r2, %r1;"
                     f" mov.u32 %r3, 0; @%p1 ld.shared.u8 %r3, [%r2]; add.u32 %r4, %r4, %r3;\n" for n, s, _ in func)
           + " st.param.b32 [r], %r4;\n ret;\n}\n"
           + ".visible .entry k0(.param .u64 p)\n{\n .reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .pred %p<2>;\n"
           + _vars(own, "  ") + " ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd1, %rd1;\n mov.u32 %r1, %tid.x;\n"
           + writes(own + module, 0)
           + "  { .param .b32 a; .param .b32 rr; st.param.b32 [a], %r1; call.uni (rr), f, (a);"
           " ld.param.b32 %r5, [rr]; }\n  mov.u32 %r4, %r5;\n" + reads
           + " mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r4;\n ret;\n}\n")
    return src, [s for _, s, _ in every]


LINKED = {
    "small_aligned": ([("x", 16, 16), ("y", 3, 1)], [("m", 4, 16), ("n", 20, 4)], [("fy", 5, 2), ("fz", 16, 16)]),
    "bytes": ([("x", 1, 1), ("y", 2, 2), ("z", 1, 8)], [("m", 1, 1)], [("fy", 1, 16)]),
}


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_120"])
@pytest.mark.parametrize("objects_by", ["ours", "ptxas"])
@pytest.mark.parametrize("name", list(LINKED))
def test_sized_shared_variables_link_and_run(name, objects_by, arch, tmp_path):
    """The module above linked by nvlink (ours or ptxas's object) and run in the emulator:
    every variable keeps its bytes (NumPy's sums); the linked kernel's shared window is
    ptxas's."""
    import numpy as np

    from ptx2sass.emu.launch import run
    from test_relocatable import _nvlink, _ours_c, _ptxas_c

    src, sizes = _linked_module(*LINKED[name])
    build = _ours_c if objects_by == "ours" else _ptxas_c
    linked = _nvlink(build(src, arch), tmp_path=tmp_path, arch=arch)
    out = np.zeros(64, np.uint32)
    res = run(linked, "k0", 1, 64, [out], hazard_check=objects_by == "ours")
    assert not res.hazards
    t = np.arange(64)
    want = sum(np.where(t < s, (t + 17 * i) & 0xFF, 0) for i, s in enumerate(sizes))
    assert out.tolist() == want.tolist()
    sizes_linked = shared_sizes(linked)["sections"]
    assert sizes_linked == shared_sizes(_nvlink(_ptxas_c(src, arch), tmp_path=tmp_path, arch=arch))["sections"]
