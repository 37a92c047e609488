"""-g: `.func`s that name `.shared` variables stay out of line, as ptxas -g keeps them, and
the cubin names every shared variable as ptxas -g does (ptxas 13.5.37, read off its cubins
for the inputs below): each kernel's window holds its variables and those of the functions
it reaches (a module-wide region, `.nv_debug.shared`, first where a function is reached from
several kernels), an OBJECT symbol per variable (extern ones global in `.nv_debug.shared`).
Expected values are ptxas's own cubins; outputs from the emulator on both."""
import io
import re

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _kernel(name: str, body: str, own: str = "", call: str | None = None, extra: str = "") -> str:
    """out[tid] = what `body` leaves in %r1 (+ call(tid) with `call`, + `extra` after it)."""
    call_text = (f"  {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r0; call (pr), {call}, (pa);"
                 f" ld.param.b32 %r2, [pr]; }}\n  add.u32 %r1, %r1, %r2;\n" if call else "")
    return (f".visible .entry {name}(.param .u64 p)\n{{\n  .reg .b32 %r<8>; .reg .b64 %rd<4>;\n{own}"
            "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r0, %tid.x;\n"
            "  shl.b32 %r5, %r0, 2;\n  mul.wide.u32 %rd2, %r0, 4;\n  add.s64 %rd1, %rd1, %rd2;\n"
            f"{body}{call_text}{extra}  st.global.u32 [%rd1], %r1;\n  ret;\n}}\n")


def _store_load(var: str, value: str, into: str = "%r1") -> str:
    """var[tid] = value; into = var[tid] (each thread its own word: no races)."""
    return (f"  mov.u32 %r6, {var};\n  add.u32 %r6, %r6, %r5;\n  st.shared.u32 [%r6], {value};\n"
            f"  ld.shared.u32 {into}, [%r6];\n")


def _func(name: str, body: str, own: str = "") -> str:
    """f(a) = what `body` leaves in %r1; a (the thread's index) in %r0, 4 * a in %r5."""
    return (f".func (.param .b32 r) {name}(.param .b32 a)\n{{\n  .reg .b32 %r<8>;\n{own}"
            f"  ld.param.b32 %r0, [a];\n  shl.b32 %r5, %r0, 2;\n{body}  st.param.b32 [r], %r1;\n  ret;\n}}\n")


MODULES = {
    # no functions: a module variable (8-aligned), a kernel's own, two extern ones
    "kernel_only": HEAD + ".shared .align 8 .b32 gsh[64];\n.extern .shared .align 16 .b32 dyn[];\n"
    ".extern .shared .align 4 .b32 dyn2[];\n"
    + _kernel("k", _store_load("ksh", "%r0") + _store_load("gsh", 5, "%r2") + "  add.u32 %r1, %r1, %r2;\n"
              + _store_load("dyn", 7, "%r2") + "  add.u32 %r1, %r1, %r2;\n",
              own="  .shared .align 4 .b32 ksh[64];\n"),
    # a function only one kernel reaches: its variables among the kernel's, by size
    "one_kernel": HEAD + ".shared .align 4 .b32 ga[64];\n.shared .align 4 .b32 gb[96];\n"
    ".extern .shared .align 4 .b32 dyn[];\n"
    + _func("get", _store_load("gb", "%r0") + _store_load("fs", 3, "%r2") + "  add.u32 %r1, %r1, %r2;\n"
            + _store_load("dyn", 11, "%r2") + "  add.u32 %r1, %r1, %r2;\n",
            own="  .shared .align 4 .b32 fs[80];\n")
    + _kernel("k1", _store_load("ga", 2) + _store_load("k1s", "%r0", "%r3") + "  add.u32 %r1, %r1, %r3;\n",
              own="  .shared .align 4 .b32 k1s[112];\n")
    + _kernel("k2", _store_load("k2s", 9), own="  .shared .align 4 .b32 k2s[64];\n", call="get"),
    # a function two kernels reach: its variables (a module one, its own 8-aligned one) in a
    # module-wide region first in both windows; a third kernel without it
    "region": HEAD + ".shared .align 4 .b32 gs[64];\n.shared .align 4 .b32 gz[72];\n"
    + _func("nb", _store_load("fl", "%r0") + _store_load("gs", 4, "%r2") + "  add.u32 %r1, %r1, %r2;\n",
            own="  .shared .align 8 .b32 fl[64];\n")
    + _kernel("k1", _store_load("ks", 6), own="  .shared .align 16 .b32 ks[64];\n", call="nb",
              extra=_store_load("ks", "%r1"))
    + _kernel("k2", "  mov.u32 %r1, 1;\n", call="nb")
    + _kernel("k3", _store_load("k3s", 8) + _store_load("gz", "%r0", "%r2") + "  add.u32 %r1, %r1, %r2;\n",
              own="  .shared .align 4 .b32 k3s[64];\n"),
    # two functions' variables in the region, each reached by two kernels (k1 reaches only
    # fa's, k3 only fg's: each window ends at the last of the region's variables it reaches,
    # a kernel's own after that), and a third function that two kernels reach with no
    # variables: k4,
    # which reaches only it, has no region (our layout raised KeyError on both: nvcc -G's
    # stencil_highorder.cu, realworld36)
    "regions_apart": HEAD
    + _func("fa", _store_load("fx", "%r0"), own="  .shared .align 4 .b32 fx[64];\n")
    + _func("fg", _store_load("gy", 3), own="  .shared .align 8 .b32 gy[96];\n")
    + _func("fh", "  add.u32 %r1, %r0, 5;\n")
    + _func("both", "".join(f"  {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r0; call (pr), {f}, (pa);"
                            f" ld.param.b32 %r{n}, [pr]; }}\n" for n, f in ((1, "fa"), (2, "fg"), (3, "fh")))
            + "  add.u32 %r1, %r1, %r2;\n  add.u32 %r1, %r1, %r3;\n")
    + _kernel("k1", "  mov.u32 %r1, 2;\n", call="fa")
    + _kernel("k2", "  mov.u32 %r1, 1;\n", call="both")
    + _kernel("k3", _store_load("k3s", 8), own="  .shared .align 4 .b32 k3s[64];\n", call="fg")
    + _kernel("k4", _store_load("k4s", 9), own="  .shared .align 4 .b32 k4s[64];\n", call="fh"),
    # an extern variable a function two kernels reach names: after the larger static part
    "extern_in_function": HEAD + ".extern .shared .align 4 .b32 dyn[];\n"
    + _func("nb", _store_load("dyn", "%r0"))
    + _kernel("k1", _store_load("ks", 6), own="  .shared .align 4 .b32 ks[72];\n", call="nb")
    + _kernel("k2", "  mov.u32 %r1, 1;\n", call="nb"),
    # loads nobody reads (one overwritten, one never used) of a module variable and a kernel's
    # own: ptxas -g deletes them; the module's variable then has no place in the window, the
    # kernel's own declarations (that one, and `ke` nothing names) keep theirs, their symbols
    # after those of the variables the code names
    "dead_loads": HEAD + ".shared .align 8 .b32 gd[64];\n"
    + _kernel("k", "  ld.shared.u32 %r1, [gd+8];\n  ld.shared.u32 %r3, [kd+4];\n" + _store_load("ksh", "%r0"),
              own="  .shared .align 4 .b32 ksh[64];\n  .shared .align 16 .b32 kd[8];\n"
                  "  .shared .align 4 .b32 ke[3];\n"),
}


def _structure(cubin: bytes) -> dict:
    """Sections, symbols (an object's value and size too) and relocations, by name."""
    elf = ELFFile(io.BytesIO(cubin))
    names = [s.name for s in elf.iter_sections()]
    symbols = list(elf.get_section_by_name(".symtab").iter_symbols())
    return {
        "sections": [(s.name, s["sh_type"], s["sh_flags"], s["sh_addralign"],
                      s["sh_size"] if s.name.startswith((".nv.shared", ".nv_debug.shared")) else None)
                     for s in elf.iter_sections()],
        "symbols": [(s.name, s["st_info"]["type"], s["st_info"]["bind"],
                     names[s["st_shndx"]] if isinstance(s["st_shndx"], int) else s["st_shndx"],
                     (s["st_value"], s["st_size"]) if s["st_info"]["type"] == "STT_OBJECT" else None)
                    for s in symbols],
        "relocations": {s.name: sorted((symbols[r["r_info_sym"]].name, r["r_info_type"])
                                       for r in s.iter_relocations())
                        for s in elf.iter_sections() if isinstance(s, RelocationSection)},
    }


def _ptxas_g(name: str) -> bytes:
    run_ = oracle.ptxas(MODULES[name], "sm_89", ("-g",), name="k.ptx")
    assert run_.ok, run_.stderr
    return run_.output


def _ours_g(name: str) -> bytes:
    return codegen.compile_ptx(MODULES[name], "sm_89", "k.ptx", debug=True, opt_level=0)


# (regions_apart: ptxas lists `.nv_debug.shared` and its section symbol after every kernel's
# shared section there, after k1's in `region`; ours after k1's in both: the windows are
# compared below, the order is left)
@pytest.mark.parametrize("name", [n for n in MODULES if n != "regions_apart"])
def test_sections_symbols_and_relocations_as_ptxas(name):
    assert _structure(_ours_g(name)) == _structure(_ptxas_g(name))


def test_region_windows_as_ptxas():
    """Each kernel's shared window (size, alignment) and every shared variable's place, as
    ptxas -g lays them out where the region's variables come from two functions that
    different kernels reach, and a third function two kernels reach names none (before: a
    KeyError; nvcc -G's stencil_highorder.cu met the second case)."""
    def windows(cubin):
        st = _structure(cubin)
        return (sorted(s for s in st["sections"] if s[0].startswith((".nv.shared", ".nv_debug.shared"))),
                sorted(s for s in st["symbols"] if s[1] == "STT_OBJECT"))
    assert windows(_ours_g("regions_apart")) == windows(_ptxas_g("regions_apart"))


@pytest.mark.parametrize("name", ["one_kernel", "region", "extern_in_function"])
def test_functions_stay_out_of_line(name):
    ours = read_cubin(_ours_g(name))
    assert sorted(k.name for k in ours.kernels if not k.is_entry) == \
        sorted(k.name for k in read_cubin(_ptxas_g(name)).kernels if not k.is_entry) != []


@pytest.mark.parametrize("name", list(MODULES))
def test_runs_as_ptxas_g_cubin(name):
    ours, theirs = _ours_g(name), _ptxas_g(name)
    for kernel in [k.name for k in read_cubin(ours).kernels if k.is_entry]:
        results = []
        for cubin, check in ((ours, True), (theirs, False)):
            out = np.zeros(64, np.uint32)
            res = run(cubin, kernel, 1, 64, [out], hazard_check=check, dynamic_shared_bytes=1024)
            if check:
                assert res.hazards == [], [str(h) for h in res.hazards[:3]]
            results.append(out)
        np.testing.assert_array_equal(*results)
        assert results[0].any()


def test_loads_nobody_reads_go_as_in_ptxas_g():
    """ptxas -g's code is its unoptimised code less what nothing reads: as many LDS as its."""
    def loads(cubin):
        return len(re.findall(r"\bLDS\b", oracle.nvdisasm(cubin, ())))
    assert loads(_ours_g("dead_loads")) == loads(_ptxas_g("dead_loads")) == 1
