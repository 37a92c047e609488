"""Separate compilation (`ptxas -c`, `--compile-only`): our relocatable cubin must have the
structure ptxas 13.5's has for the same PTX (ELF type, sections, symbols, relocation kinds,
`.nv.prototype` strings, `.nv.info` records, call graph), and nvlink must link it with
ptxas's cubin of the module defining what it calls; the linked program runs in the emulator
against a NumPy reference (ptx2sass/abi.py has the calling convention)."""
from __future__ import annotations

import io
import struct
import subprocess

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin
from test_codegen_syscalls import ZLUDA, _section_names

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"

# Calls `addk` (defined in CALLEE) and reads `gval` (defined there too).
CALLER = HEADER + """
.extern .func (.param .b32 r) addk(.param .b32 x, .param .b64 y);
.extern .global .align 4 .u32 gval;
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<16>;
  ld.param.u64 %a0, [p];
  ld.global.u32 %r1, [%a0];
  ld.global.u32 %r2, [%a0+4];
  ld.global.u32 %r3, [gval];
  { .param .b32 x; st.param.b32 [x], %r1; .param .b64 y; st.param.b64 [y], %a0;
    .param .b32 r; call.uni (r), addk, (x, y); ld.param.b32 %r9, [r]; }
  add.u32 %r10, %r9, %r2; add.u32 %r10, %r10, %r3;
  st.global.u32 [%a0], %r10;
  ret;
}
"""
CALLEE = HEADER + """
.visible .global .align 4 .u32 gval = 100;
.visible .func (.param .b32 r) addk(.param .b32 x, .param .b64 y)
{
  .reg .u32 %r<4>; .reg .u64 %a<2>;
  ld.param.u32 %r1, [x];
  ld.param.u64 %a1, [y];
  ld.global.u32 %r2, [%a1+8];
  mad.lo.u32 %r3, %r1, 3, %r2;
  st.param.u32 [r], %r3;
  ret;
}
"""

# A callee that uses R0..R15 and R32 up without saving them (ptxas's ABI): a caller keeping
# its 20 values in those registers across the call would read garbage.
N_HEAVY = 48
HEAVY_CALLEE = HEADER + f"""
.visible .func (.param .b32 r) heavy(.param .b32 x, .param .b64 y)
{{
  .reg .u32 %r<{N_HEAVY}>; .reg .u32 %s; .reg .u64 %a1;
  ld.param.u32 %s, [x];
  ld.param.u64 %a1, [y];
""" + "".join(f"  ld.global.u32 %r{i}, [%a1+{4 * i}];\n" for i in range(N_HEAVY)) \
    + "".join(f"  mad.lo.u32 %s, %r{i}, %r{(7 * i + 3) % N_HEAVY}, %s;\n" for i in range(N_HEAVY)) \
    + "".join(f"  add.u32 %r{i}, %r{i}, 1;\n  st.global.u32 [%a1+{4 * i}], %r{i};\n" for i in range(N_HEAVY)) \
    + """  st.param.u32 [r], %s;
  ret;
}
"""
N_LIVE = 20
HEAVY_CALLER = HEADER + """
.extern .func (.param .b32 r) heavy(.param .b32 x, .param .b64 y);
.visible .entry k(.param .u64 p, .param .u64 q)
{
  .reg .u64 %a<4>; .reg .u32 %v<32>; .reg .u32 %t;
  ld.param.u64 %a0, [p];
  ld.param.u64 %a1, [q];
""" + "".join(f"  ld.global.u32 %v{i}, [%a0+{4 * i}];\n" for i in range(N_LIVE)) + """
  { .param .b32 x; st.param.b32 [x], %v0; .param .b64 y; st.param.b64 [y], %a1;
    .param .b32 r; call.uni (r), heavy, (x, y); ld.param.b32 %t, [r]; }
""" + "".join(f"  mad.lo.u32 %t, %t, 3, %v{i};\n" for i in range(N_LIVE)) + """
  st.global.u32 [%a0+128], %t;
  ret;
}
"""

# vprintf (a system call in whole-program mode) is an ordinary extern here; own globals,
# one visible, addressed through relocations too.
OWN_GLOBALS = HEADER + """
.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);
.global .align 4 .u32 own = 5;
.visible .global .align 4 .u32 vis[4];
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<16>;
  ld.param.u64 %a0, [p];
  ld.global.u32 %r3, [own];
  mov.u64 %a1, vis;
  st.global.u64 [%a0+8], %a1;
  { .param .b64 x; st.param.b64 [x], %a0; .param .b64 y; st.param.b64 [y], %a0;
    .param .b32 r; call.uni (r), vprintf, (x, y); ld.param.b32 %r9, [r]; }
  add.u32 %r10, %r9, %r3;
  st.global.u32 [%a0], %r10;
  ret;
}
"""

# Prototype strings of several signatures (floats, 64-bit, no result, a struct).
PROTOTYPES = HEADER + """
.extern .func f1();
.extern .func (.param .b64 r) f2(.param .b32 a);
.extern .func f3(.param .f32 a, .param .f64 b);
.extern .func (.param .f32 r) f5(.param .s32 a, .param .u32 b);
.visible .entry k(.param .u64 p) {
 call.uni f1, ();
 { .param .b32 a; st.param.b32 [a], 1; .param .b64 r; call.uni (r), f2, (a); }
 { .param .f32 a; st.param.f32 [a], 0f00000000; .param .f64 b; st.param.f64 [b], 0d0000000000000000;
   call.uni f3, (a, b); }
 { .param .s32 a; st.param.s32 [a], 1; .param .u32 b; st.param.u32 [b], 1; .param .f32 r;
   call.uni (r), f5, (a, b); }
 ret; }
"""

# Our own `.visible .func` called in its module: ptxas -c compiles it out of line as a link
# target and calls it through the relocation too.
LOCAL_CALL = HEADER + """
.visible .func (.param .b32 r) addk(.param .b32 x, .param .b64 y)
{
  .reg .u32 %r<4>; .reg .u64 %a<2>;
  ld.param.u32 %r1, [x];
  ld.param.u64 %a1, [y];
  ld.global.u32 %r2, [%a1+8];
  mad.lo.u32 %r3, %r1, 3, %r2;
  st.param.u32 [r], %r3;
  ret;
}
.visible .entry k2(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<16>;
  ld.param.u64 %a0, [p];
  ld.global.u32 %r1, [%a0];
  { .param .b32 x; st.param.b32 [x], %r1; .param .b64 y; st.param.b64 [y], %a0;
    .param .b32 r; call.uni (r), addk, (x, y); ld.param.b32 %r9, [r]; }
  st.global.u32 [%a0+4], %r9;
  ret;
}
"""

SOURCES = {"caller": CALLER, "heavy_caller": HEAVY_CALLER, "own_globals": OWN_GLOBALS,
           "prototypes": PROTOTYPES, "callee": CALLEE, "heavy_callee": HEAVY_CALLEE,
           "local_call": LOCAL_CALL}


# the archs whose relocatable output is linked and run here; sm_100 and later write no
# Mercury sections (SASS-only objects: test_sass_only_objects_are_what_nvlink_links below)
ARCHS = ["sm_89", "sm_90", "sm_100", "sm_110", "sm_120"]
# ... and whose structure is compared with ptxas's (sm_103/sm_121: sm_100's/sm_120's code)
STRUCTURE_ARCHS = ARCHS + ["sm_103", "sm_121"]


def _sm(arch: str) -> int:
    return int(arch.split("_")[1].rstrip("af"))


def _for(ptx: str, arch: str) -> str:
    ptx = ptx.replace(".target sm_89", f".target {arch}")
    return ptx.replace(".version 7.8", ".version 9.0") if _sm(arch) >= 100 else ptx


def _is_mercury(name: str) -> bool:
    return name.startswith((".nv.merc.", ".nv.capmerc."))


def _ptxas_c(ptx: str, arch: str = "sm_89") -> bytes:
    r = oracle.ptxas(_for(ptx, arch), arch=arch, options=("-c",))
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _ours_c(ptx: str, arch: str = "sm_89") -> bytes:
    return codegen.compile_ptx(_for(ptx, arch), arch=arch, compile_only=True)


def _strtab(data: bytes) -> bytes:
    from elftools.elf.elffile import ELFFile
    return ELFFile(io.BytesIO(data)).get_section_by_name(".strtab").data()


def _structure(data: bytes) -> dict:
    """What must agree between ptxas's and our relocatable cubin of the same PTX: the
    code differs, so text relocations compare as (symbol, type, REL/RELA) multisets."""
    c = read_cubin(data)
    names = [s.name for s in c.symbols]
    proto = {}
    try:
        blob, strtab = c.section(".nv.prototype").data, _strtab(data)
        for at in range(0, len(blob), 8):
            sym, off = struct.unpack_from("<Ii", blob, at)
            proto[names[sym]] = strtab[off:strtab.index(b"\0", off)].decode()
    except KeyError:
        pass
    sections, flags = _section_names(data), c.e_flags
    if any(map(_is_mercury, sections)):
        # ptxas's Mercury form of the code (sm_100+), which we do not write: compared without
        # it, its e_flags bit 0x2 read as the SASS-only bit 0x4 that ours carries instead
        sections, flags = [n for n in sections if not _is_mercury(n)], flags & ~0x2 | 0x4
    return {
        "elf": (c.e_type, flags),
        "sections": sections,
        "symbols": [(s.name, s.type, s.bind, s.other, s.section, s.size if s.section is None
                     or not s.section.startswith(".text") else None) for s in c.symbols],
        "frame relocations": {rs.name: [(r.offset, names[r.symbol], r.type, r.addend) for r in rs.relocations]
                              for rs in c.reloc_sections},
        "text relocations": {k.name: sorted((names[r.symbol], r.type, r.addend is None) for r in k.relocations)
                             for k in c.kernels},
        "callgraph": _callgraph(c, names, _strtab(data)),
        "module records": [(r.name, names[r.u32s()[0]] if r.fmt.name == "SVAL" else r.fmt.name) for r in c.module_attributes],
        "kernel records": {k.name: [r.name for r in k.attributes] for k in c.kernels},
        "prototypes": proto,
    }


def _callgraph(c, names: list[str], strtab: bytes) -> list:
    """`.nv.callgraph` by name: (caller, callee) symbol pairs, except after the second
    marker (an address-taken function) and the third (a kernel calling through a pointer),
    where the symbol is paired with the `.strtab` offset of a prototype string (read as the
    string; ptxas 13.5.37)."""
    out, marker = [], 0
    for a, b in c.callgraph:
        if a == 0 and b < 0:
            marker = -b
            out.append((a, b))
        elif marker in (2, 3) and b > 0:
            out.append((names[a], strtab[b:strtab.index(b"\0", b)].decode()))
        else:
            out.append((names[a] if a > 0 else a, names[b] if b > 0 else b))
    return out


@pytest.mark.parametrize("arch", STRUCTURE_ARCHS)
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_relocatable_cubin_is_built_like_ptxas(name, arch):
    theirs, ours = _structure(_ptxas_c(SOURCES[name], arch)), _structure(_ours_c(SOURCES[name], arch))
    assert ours == theirs


# An uncalled `.visible .func` declared before the kernel: ptxas writes the kernel's FDE
# first, then the function's (its CIE pointer is the second FDE's).
FUNC_AFTER_KERNEL_FDE = HEADER + """
.global .align 4 .u32 v0 = 3;
.visible .func (.param .b32 r) f(.param .b32 a)
{
  .reg .b32 %t;
  ld.param.b32 %t, [a];
  add.u32 %t, %t, 1;
  st.param.b32 [r], %t;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  ld.global.u32 %r1, [v0];
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


# Several kernels with module variables of each kind, one calling an extern function
# (EXT_CALLEE); the second FDE's CIE is at 104, the third's at 208.
THREE_KERNELS = HEADER + """
.visible .global .align 4 .u32 gv = 11;
.global .align 8 .u64 lv = 5;
.const .align 4 .u32 cv[2] = {20, 30};
.extern .func (.param .b32 r) ext(.param .b32 a);
.visible .entry k1(.param .u64 p)
{
  .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.global.u32 %r1, [gv];
  ld.const.u32 %r2, [cv+4];
  add.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry k2(.param .u64 p, .param .u32 x)
{
  .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [x];
  { .param .b32 a0; .param .b32 r0;
    st.param.b32 [a0], %r1;
    call.uni (r0), ext, (a0);
    ld.param.b32 %r2, [r0]; }
  ld.global.u64 %rd2, [lv];
  cvt.u32.u64 %r3, %rd2;
  add.u32 %r2, %r2, %r3;
  st.global.u32 [%rd1+4], %r2;
  ret;
}
.visible .entry k3(.param .u64 p)
{
  .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.const.u32 %r2, [cv];
  st.global.u32 [%rd1+8], %r2;
  ret;
}
"""
EXT_CALLEE = HEADER + """
.visible .func (.param .b32 r) ext(.param .b32 a)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [a];
  mul.lo.s32 %r2, %r1, 3;
  st.param.b32 [r], %r2;
  ret;
}
"""


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100"])
@pytest.mark.parametrize("name", ["func_after_kernel", "three_kernels"])
def test_frame_cie_pointers_past_the_first_fde(name, arch):
    """sm_90+: ptxas's CIE-pointer addend is 8 bytes past the CIE per FDE before it, kernel's
    or `.func`'s (112, 224 for CIEs at 104, 208; ours wrote 104, 208, or +8 per `.func` FDE
    before it only): from generated modules (tuning seeds of test_relocatable_sm110's
    generator) and THREE_KERNELS; held out there. sm_89: no addend (REL)."""
    src = {"func_after_kernel": FUNC_AFTER_KERNEL_FDE, "three_kernels": THREE_KERNELS}[name]
    theirs, ours = _structure(_ptxas_c(src, arch)), _structure(_ours_c(src, arch))
    assert ours["frame relocations"] == theirs["frame relocations"]
    if arch == "sm_100":      # (ptxas reads `cv+4` with LDCU: relocation type 0x73, ours LDC, 0x42)
        for st in (ours, theirs):
            st["text relocations"] = {k: sorted({r[0] for r in v}) for k, v in st["text relocations"].items()}
    assert ours == theirs


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_110", "sm_120"])
@pytest.mark.parametrize("kernels_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours"), ("ours", "ours")])
def test_three_kernels_link_and_run(kernels_by, callee_by, arch, tmp_path):
    """Each kernel of THREE_KERNELS reads its module's variables after nvlink placed them
    (and k2 calls EXT_CALLEE): the manual's values, 11 + 30, 3 * 7 + 5, 20."""
    linked = _nvlink((_ours_c if kernels_by == "ours" else _ptxas_c)(THREE_KERNELS, arch),
                     (_ours_c if callee_by == "ours" else _ptxas_c)(EXT_CALLEE, arch), tmp_path=tmp_path, arch=arch)
    out = np.zeros(3, np.uint32)
    for k, params in (("k1", [out]), ("k2", [out, np.uint32(7)]), ("k3", [out])):
        res = run(linked, k, (1, 1, 1), (1, 1, 1), params, hazard_check=True)
        assert not res.hazards
    assert out.tolist() == [11 + 30, 3 * 7 + 5, 20]


def _run_nvlink(*cubins: bytes, tmp_path, arch: str = "sm_89") -> tuple[subprocess.CompletedProcess, bytes | None]:
    nvlink = oracle.tool_path("ptxas").parent / "nvlink"
    if not nvlink.is_file():
        pytest.skip("nvlink not installed")
    paths = []
    for i, data in enumerate(cubins):
        paths.append(tmp_path / f"m{i}.cubin")
        paths[-1].write_bytes(data)
    out = tmp_path / "linked.cubin"
    out.unlink(missing_ok=True)
    r = subprocess.run([str(nvlink), f"-arch={arch}", *map(str, paths), "-o", str(out)],
                       capture_output=True, text=True)
    return r, out.read_bytes() if out.is_file() else None


def _nvlink(*cubins: bytes, tmp_path, arch: str = "sm_89") -> bytes:
    r, linked = _run_nvlink(*cubins, tmp_path=tmp_path, arch=arch)
    assert r.returncode == 0, r.stderr
    return linked


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ptxas"),
                                                  ("ptxas", "ours"), ("ours", "ours")])
def test_callers_link_with_callees_and_run(caller_by, callee_by, arch, tmp_path):
    """Our caller with ptxas's `.visible .func addk`, and ptxas's caller with ours."""
    caller = _ours_c(CALLER, arch) if caller_by == "ours" else _ptxas_c(CALLER, arch)
    callee = _ours_c(CALLEE, arch) if callee_by == "ours" else _ptxas_c(CALLEE, arch)
    linked = _nvlink(caller, callee, tmp_path=tmp_path, arch=arch)
    data = (np.arange(1, 9, dtype=np.uint32) * 7)
    want = data.copy()
    want[0] = (3 * data[0] + data[2]) + data[1] + 100      # addk(x, p) + p[1] + gval
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check="ours" in (caller_by, callee_by))
    assert not res.hazards
    assert data.tolist() == want.tolist()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours"), ("ptxas", "ptxas")])
def test_values_live_across_an_extern_call_survive_a_callee_using_scratch_registers(
        caller_by, callee_by, arch, tmp_path):
    """Our caller keeps its values out of the callee's scratch registers; our callee (48
    values live) saves the R16..R31 it uses, which ptxas's caller keeps its 20 values in."""
    linked = _nvlink((_ours_c if caller_by == "ours" else _ptxas_c)(HEAVY_CALLER, arch),
                     (_ours_c if callee_by == "ours" else _ptxas_c)(HEAVY_CALLEE, arch), tmp_path=tmp_path,
                     arch=arch)
    rng = np.random.default_rng(1)
    p = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    q = rng.integers(0, 1 << 32, N_HEAVY, dtype=np.uint64).astype(np.uint32)
    p0, q0 = p.copy(), q.copy()
    run(linked, "k", (1, 1, 1), (1, 1, 1), [p, q])
    s = int(p0[0])
    for i in range(N_HEAVY):
        s = (int(q0[i]) * int(q0[(7 * i + 3) % N_HEAVY]) + s) & 0xFFFFFFFF
    t = s
    for i in range(N_LIVE):
        t = (t * 3 + int(p0[i])) & 0xFFFFFFFF
    assert int(p[32]) == t
    assert q.tolist() == ((q0.astype(np.uint64) + 1) & 0xFFFFFFFF).astype(np.uint32).tolist()


@pytest.mark.parametrize("arch", ARCHS)
def test_own_visible_function_called_in_its_module_links_and_runs(arch, tmp_path):
    """ptxas -c calls a `.visible .func` of the same module through the link (CALL.ABS);
    ours does too, and the linked program computes what NumPy says."""
    linked = _nvlink(_ours_c(LOCAL_CALL, arch), tmp_path=tmp_path, arch=arch)
    data = np.arange(3, 11, dtype=np.uint32) * 5
    want = data.copy()
    want[1] = 3 * data[0] + data[2]
    res = run(linked, "k2", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert data.tolist() == want.tolist()
    text = {k.name: k.text for k in read_cubin(_ours_c(LOCAL_CALL, arch)).kernels}
    assert set(text) == {"addk", "k2"}        # not inlined: its own section, as ptxas's


def test_whole_program_still_refuses_unresolved_externs():
    with pytest.raises(CompileError, match="Unresolved extern function 'addk'"):
        codegen.compile_ptx(CALLER)
    assert "Unresolved extern function 'addk'" in oracle.ptxas(CALLER).stderr


def test_zluda_extern_func_struct_result_compiles():
    """zluda's compile_only/extern_func returns a 16-byte struct: ptxas -c accepts it and so
    do we now (branch struct28; struct results in R4.., tests/test_link_struct_arguments.py),
    with ptxas's `.nv.prototype` string (`#b16l`)."""
    import re
    path = ZLUDA / "compile_only" / "extern_func.ptx"
    if not path.is_file():
        pytest.skip("zluda corpus not present")
    theirs = _ptxas_c(path.read_text())
    ours = _ours_c(path.read_text())
    assert re.findall(rb"#[a-z0-9]+", theirs) == [b"#b16l"]
    assert re.findall(rb"#[a-z0-9]+", ours) == [b"#b16l"]


def test_command_writes_a_relocatable_cubin(tmp_path):
    from ptx2sass import cli
    src = tmp_path / "a.ptx"
    src.write_text(CALLER)
    out = tmp_path / "a.cubin"
    assert cli.main(["-arch=sm_89", "-c", str(src), "-o", str(out)]) == 0
    assert read_cubin(out.read_bytes()).e_type == 1
    assert cli.main(["-arch=sm_89", str(src), "-o", str(tmp_path / "b.cubin")]) != 0


def _command_c(ptx: str, tmp_path) -> bytes:
    from ptx2sass import cli
    src, out = tmp_path / "m.ptx", tmp_path / "m.cubin"
    src.write_text(ptx)
    assert cli.main(["-arch=sm_89", "-c", str(src), "-o", str(out)]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("name", ["callee", "local_call"])
def test_command_keeps_exported_functions(name, tmp_path):
    """`ptx2sass -c` (the command, not only the API) keeps every `.visible .func` as a link
    target: it inlined them away (nvlink: undefined reference), and refused a module of
    device functions only ('the module has no kernels')."""
    ours = {k.name for k in read_cubin(_command_c(SOURCES[name], tmp_path)).kernels}
    theirs = {k.name for k in read_cubin(_ptxas_c(SOURCES[name])).kernels}
    assert ours == theirs


def test_command_built_callee_links_and_runs(tmp_path):
    linked = _nvlink(_ptxas_c(CALLER), _command_c(CALLEE, tmp_path), tmp_path=tmp_path)
    data = (np.arange(1, 9, dtype=np.uint32) * 7)
    want = data.copy()
    want[0] = (3 * data[0] + data[2]) + data[1] + 100
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert data.tolist() == want.tolist()


def _without_mercury(data: bytes, low_flags: int) -> bytes:
    """ptxas's sm_100+ object without its Mercury sections (ptxas writes them last: the
    section header table is cut before the first) and with e_flags bits 0-7 = `low_flags`."""
    out = bytearray(data)
    names = _section_names(data)
    first = next(i for i, n in enumerate(names) if _is_mercury(n)) + 1    # (+1: the null section)
    assert all(map(_is_mercury, names[first - 1:]))
    struct.pack_into("<H", out, 0x3C, first)
    out[0x30] = low_flags
    return bytes(out)


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_sass_only_objects_are_what_nvlink_links(arch, tmp_path):
    """Why our sm_100+ objects have no Mercury sections and e_flags bit 0x4 for ptxas's 0x2
    (pinned nvlink 13.5.37, the oracle): ptxas's own objects stripped of their Mercury
    sections do not link while they keep 0x2 (nvlink crashes), link alone with 0x0 but not
    beside an object that has them ('unsupported elf type'), and link in every mix with 0x4,
    the value nvlink itself writes into a cubin linked from such objects; the linked code is
    the same bytes as linking ptxas's objects as they are. nvlink warns that such a program
    runs on that SM alone (no Mercury form to finalise for another)."""
    caller, callee = _ptxas_c(CALLER, arch), _ptxas_c(CALLEE, arch)
    assert any(map(_is_mercury, _section_names(caller))) and caller[0x30] & 0xFF == 0x02
    r, full = _run_nvlink(caller, callee, tmp_path=tmp_path, arch=arch)
    assert r.returncode == 0 and "limited to run" not in r.stderr
    want = {k.name: k.text for k in read_cubin(full).kernels}
    assert set(want) == {"k", "addk"}
    for low, mixed, links in ((0x02, False, False), (0x00, False, True), (0x00, True, False),
                              (0x04, False, True), (0x04, True, True)):
        stripped = _without_mercury(caller, low)
        r, linked = _run_nvlink(stripped, callee if mixed else _without_mercury(callee, low),
                                tmp_path=tmp_path, arch=arch)
        assert (r.returncode == 0) == links, (low, mixed, r.returncode, r.stderr)
        if links:
            assert f"Output is limited to run on SM Arch '{_sm(arch)}' only" in r.stderr
            assert read_cubin(linked).e_flags & 0xFF == 0x04
            assert not any(map(_is_mercury, _section_names(linked)))
            assert {k.name: k.text for k in read_cubin(linked).kernels} == want


@pytest.mark.parametrize("arch", ["sm_100", "sm_110", "sm_120"])
def test_sass_only_relocatable_output_past_sm_90(arch, tmp_path):
    """ptxas -c for sm_100+ also writes `.nv.merc.*`/`.nv.capmerc.text.*` sections; ours
    (the command, too) writes none and says so in e_flags (0x4 for 0x2)."""
    from ptx2sass import cli
    src = tmp_path / "a.ptx"
    src.write_text(_for(CALLER, arch))
    assert any(map(_is_mercury, _section_names(_ptxas_c(CALLER, arch))))
    assert cli.main([f"-arch={arch}", "-c", str(src), "-o", str(tmp_path / "a.o")]) == 0
    ours = (tmp_path / "a.o").read_bytes()
    assert not any(map(_is_mercury, _section_names(ours)))
    c = read_cubin(ours)
    assert c.e_type == 1 and c.e_flags & 0xFF == 0x04


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("opts", [{"lineinfo": True}, {"debug": True, "opt_level": 0}], ids=["lineinfo", "g"])
def test_debug_objects_link_and_run(opts, arch, tmp_path):
    """-c with -lineinfo / -g: nvlink links our caller and callee (sm_100: SASS-only objects
    with the debug sections) and the program computes what NumPy says."""
    compile_c = lambda src: codegen.compile_ptx(_for(src, arch), arch=arch, compile_only=True, **opts)
    linked = _nvlink(compile_c(CALLER), compile_c(CALLEE), tmp_path=tmp_path, arch=arch)
    data = np.arange(1, 9, dtype=np.uint32) * 7
    want = data.copy()
    want[0] = (3 * data[0] + data[2]) + data[1] + 100
    res = run(linked, "k", (1, 1, 1), (1, 1, 1), [data], hazard_check=True)
    assert not res.hazards
    assert data.tolist() == want.tolist()
