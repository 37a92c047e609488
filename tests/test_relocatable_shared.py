"""`.shared` variables under `-c` as ptxas 13.5.37 -c writes them: every one is a symbol the
linker places (a CUDA object, value its alignment): a kernel's own `$__<name>__<line>` in
`.nv.shared.<k>`, a `.func`'s own and the module's in `.nv_debug.shared`, an extern one an
undefined GLOBAL; the code reads each address from a relocation against it (R_CUDA_ABS32_32,
0x37) and adds the reserved words itself (sm_90+: 0x400). Ours wrote the variables at fixed
offsets in `.nv.shared.<k>` with no symbol or relocation, and refused a `.func` with `.shared`
variables. nvlink links ours with ptxas's objects (a callee placing its variables in the
caller's window) and the linked program runs in the emulator as NumPy says."""
from __future__ import annotations

import numpy as np
import pytest

from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin
from test_relocatable import _nvlink, _ours_c, _ptxas_c, _structure

HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"

# two kernels: their own variables, two module ones (one 16-aligned), an offset access
KERNELS = HEADER + """.shared .align 4 .b32 ga[16];
.shared .align 16 .b32 gb[8];
.visible .entry k1(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 x[64];
  .shared .align 8 .b32 y[2];
  ld.param.u64 %rd1, [p];
  mov.u32 %r6, x; st.shared.u32 [%r6], 1;
  mov.u32 %r6, y; st.shared.u32 [%r6], 2;
  mov.u32 %r6, ga; st.shared.u32 [%r6], 3;
  st.shared.u32 [gb+4], 5;
  st.global.u32 [%rd1], %r6;
  ret;
}
.visible .entry k2(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 x[32];
  ld.param.u64 %rd1, [p];
  mov.u32 %r6, x; st.shared.u32 [%r6], 1;
  mov.u32 %r6, ga; st.shared.u32 [%r6+4], 3;
  st.global.u32 [%rd1], %r6;
  ret;
}
"""

# extern shared memory, an own variable nothing names, own ones named out of order
EXTERN = HEADER + """.extern .shared .align 16 .b32 dyn[];
.shared .align 8 .b32 unused_module[4];
.visible .entry k1(.param .u64 p, .param .u32 q)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 x[64];
  .shared .align 4 .b32 unusedv[64];
  .shared .align 8 .b32 y[2];
  ld.param.u64 %rd1, [p];
  mov.u32 %r6, y; st.shared.u32 [%r6], 2;
  mov.u32 %r6, x; st.shared.u32 [%r6], 1;
  mov.u32 %r6, dyn; st.shared.u32 [%r6], 1;
  st.global.u32 [%rd1], %r6;
  ret;
}
"""

# a `.visible .func` with a shared variable of its own and a module one
CALLEE = HEADER + """.shared .align 4 .b32 gmod[64];
.visible .func (.param .b32 r) g(.param .b32 a)
{
  .reg .b32 %r<10>;
  .shared .align 4 .b32 fs[64];
  ld.param.b32 %r1, [a];
  mov.u32 %r2, %tid.x;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, fs; add.u32 %r4, %r4, %r3;
  mul.lo.u32 %r5, %r1, 3;
  st.shared.u32 [%r4], %r5;
  mov.u32 %r6, gmod; add.u32 %r6, %r6, %r3;
  add.u32 %r7, %r1, 1000;
  st.shared.u32 [%r6], %r7;
  bar.sync 0;
  add.u32 %r2, %r2, 1; and.b32 %r2, %r2, 63; shl.b32 %r3, %r2, 2;
  mov.u32 %r4, fs; add.u32 %r4, %r4, %r3;
  ld.shared.u32 %r8, [%r4];
  mov.u32 %r6, gmod; add.u32 %r6, %r6, %r3;
  ld.shared.u32 %r9, [%r6];
  add.u32 %r8, %r8, %r9;
  st.param.b32 [r], %r8;
  ret;
}
"""

# a kernel with its own and a module variable calling CALLEE's `g`: the linked window holds
# both modules' variables, none overlapping
CALLER = HEADER + """.extern .func (.param .b32 r) g(.param .b32 a);
.shared .align 8 .b32 gk[64];
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<12>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 ksh[64];
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %tid.x;
  shl.b32 %r5, %r0, 2;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd1, %rd1, %rd2;
  mov.u32 %r6, ksh; add.u32 %r6, %r6, %r5;
  add.u32 %r1, %r0, 100;
  st.shared.u32 [%r6], %r1;
  mov.u32 %r7, gk; add.u32 %r7, %r7, %r5;
  add.u32 %r2, %r0, 7000;
  st.shared.u32 [%r7], %r2;
  { .param .b32 a; .param .b32 r; st.param.b32 [a], %r0; call.uni (r), g, (a); ld.param.b32 %r3, [r]; }
  bar.sync 0;
  xor.b32 %r8, %r0, 5; shl.b32 %r8, %r8, 2;
  mov.u32 %r6, ksh; add.u32 %r6, %r6, %r8;
  ld.shared.u32 %r9, [%r6];
  ld.shared.u32 %r10, [gk+8];
  add.u32 %r3, %r3, %r9;
  mul.lo.u32 %r10, %r10, 7;
  add.u32 %r3, %r3, %r10;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""

# module variables of every kind around the shared ones (a visible one's section first, then
# the LOCAL ones in declaration order with the shared ones among them; the extern shared
# variable after the exported ones)
MIXED = HEADER + """.global .align 4 .u32 gv = 3;
.shared .align 4 .b32 ga[16];
.visible .global .align 4 .u32 vv;
.extern .shared .align 16 .b32 dyn[];
.const .align 4 .u32 cv = 5;
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<4>; .reg .b64 %rd<2>;
 .shared .align 4 .b32 ks[8];
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, ga; st.shared.u32 [%r1], 3; ld.global.u32 %r2, [gv]; st.shared.u32 [%r1+4], %r2;
 ld.const.u32 %r2, [cv]; st.global.u32 [vv], %r2;
 mov.u32 %r1, dyn; st.shared.u32 [%r1+8], %r2;
 mov.u32 %r1, ks; st.shared.u32 [%r1], %r2;
 st.global.u32 [%rd1], %r1;
 ret;
}
.visible .entry k2(.param .u64 p)
{
 .reg .b32 %r<4>; .reg .b64 %rd<2>;
 .shared .align 4 .b32 ks2[8];
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, ks2; st.shared.u32 [%r1], 3;
 st.global.u32 [%rd1], %r1;
 ret;
}
"""

# a `.func` first (its text's symbol first), extern shared memory only it names: the extern
# symbol at the first function all the same (found on generated modules, seeds 100-129)
FUNCTION_FIRST = HEADER + """.shared .align 8 .b32 m0[4];
.extern .shared .align 16 .b32 dyn[];
.visible .func (.param .b32 r) f(.param .b32 a)
{
  .reg .b32 %r<4>;
  .shared .align 4 .b32 fs0[4];
  ld.param.b32 %r1, [a];
  mov.u32 %r2, dyn; st.shared.u32 [%r2+4], %r1;
  mov.u32 %r2, fs0; st.shared.u32 [%r2], %r1;
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry k0(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<2>;
  .shared .align 4 .b32 k0s0[2];
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, k0s0; st.shared.u32 [%r2], %r1;
  { .param .b32 a; .param .b32 rr; st.param.b32 [a], %r1; call.uni (rr), f, (a); ld.param.b32 %r1, [rr]; }
  st.global.u32 [%rd1], %r1;
  ret;
}
"""

SOURCES = {"kernels": KERNELS, "extern": EXTERN, "callee": CALLEE, "caller": CALLER, "mixed": MIXED,
           "function_first": FUNCTION_FIRST}
ARCHS = ["sm_89", "sm_90", "sm_100", "sm_110", "sm_120"]
R_CUDA_ABS32_32 = 0x37


def _compared(data: bytes, arch: str) -> dict:
    """test_relocatable's structure, the text relocations as the set of (symbol, type) they
    name: ptxas relocates every use, ours one per address it materialises. sm_75..89:
    symbols only (ptxas relocates an access's immediate offset too, type 0x4a; ours adds
    the offset to the address it moved, type 0x37)."""
    st = _structure(data)
    old = int(arch.split("_")[1]) < 90
    st["text relocations"] = {k: sorted({r[0] if old else r[:2] for r in v})
                              for k, v in st["text relocations"].items()}
    if old:     # (and so no `.rela.text.<k>` for an offset's addend)
        st["sections"] = [n for n in st["sections"] if not n.startswith((".rel.text.", ".rela.text."))]
    return st


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", list(SOURCES))
def test_shared_variables_are_symbols_as_in_ptxas(name, arch):
    assert _compared(_ours_c(SOURCES[name], arch), arch) == _compared(_ptxas_c(SOURCES[name], arch), arch)


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_every_address_comes_from_a_relocation(arch):
    """No fixed offsets left: each shared symbol is relocated, with R_CUDA_ABS32_32."""
    c = read_cubin(_ours_c(KERNELS, arch))
    names = [s.name for s in c.symbols]
    shared = {s.name for s in c.symbols if s.section in (".nv_debug.shared", ".nv.shared.k1", ".nv.shared.k2")
              and s.type != 3}
    assert shared == {"ga", "gb", "$__x__9", "$__y__10", "$__x__22"}
    relocated = {names[r.symbol]: r.type for k in c.kernels for r in k.relocations}
    assert relocated == dict.fromkeys(shared, R_CUDA_ABS32_32)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("caller_by, callee_by", [("ours", "ptxas"), ("ptxas", "ours"), ("ours", "ours")])
def test_shared_variables_link_and_run(caller_by, callee_by, arch, tmp_path):
    """g(a) = 3 * a' + a' + 1000 for the next thread's a'; the kernel adds its own variable
    (another thread's word) and 7 * gk[2] (thread 2's 7002)."""
    linked = _nvlink((_ours_c if caller_by == "ours" else _ptxas_c)(CALLER, arch),
                     (_ours_c if callee_by == "ours" else _ptxas_c)(CALLEE, arch), tmp_path=tmp_path, arch=arch)
    out = np.zeros(64, np.uint32)
    res = run(linked, "k", 1, 64, [out], hazard_check=True)
    assert not res.hazards
    t = np.arange(64)
    nxt = (t + 1) % 64
    want = 3 * nxt + nxt + 1000 + ((t ^ 5) + 100) + 7 * 7002
    assert out.tolist() == want.tolist()


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_kernels_link_and_run(arch, tmp_path):
    """KERNELS linked alone: each kernel's stores land in its own window (k1 writes the
    address it computed last, ga's)."""
    linked = _nvlink(_ours_c(KERNELS, arch), tmp_path=tmp_path, arch=arch)
    for k in ("k1", "k2"):
        out = np.zeros(1, np.uint32)
        res = run(linked, k, 1, 1, [out], hazard_check=True)
        assert not res.hazards
    theirs = _nvlink(_ptxas_c(KERNELS, arch), tmp_path=tmp_path, arch=arch)
    for k in ("k1", "k2"):
        a, b = np.zeros(1, np.uint32), np.zeros(1, np.uint32)
        run(linked, k, 1, 1, [a])
        run(theirs, k, 1, 1, [b])
        assert a.tolist() == b.tolist()
