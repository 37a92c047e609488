"""The Blackwell ldmatrix/stmatrix forms of 8-bit tiles (PTX ISA 8.6, sm_100a/sm_120a and
the other `a`/`f` targets; were "not supported yet"):

* `ldmatrix.m16n16.x{1,2}.trans.b8` -> LDSM.8.MT1616[.2] (two registers a matrix),
* `ldmatrix.m8n16.x{1,2,4}.b8x16.{b6x16_p32,b4x16_p64}` -> LDSM.U6x16P32TO8/U4x16P64TO8.M816,
* `ldmatrix.m16n16.x{1,2}.trans.b8x16.{…}` -> LDSM.U6x16P32TO8/U4x16P64TO8.MT1616,
* `stmatrix.m16n8.x{1,2,4}.trans.b8` -> STSM.8.MT168.

Ours writes the LDSM/STSM forms ptxas 13.5 writes, and ours and ptxas's cubins run in the
emulator leave what the NumPy model below (the PTX ISA's fragment layouts: the 16x16 load
gives each lane 4 consecutive columns of 2 rows of the transpose, as mma's 8-bit A
fragment; the 16x8 store takes the accumulator layout) says. Refusals are ptxas's words."""
import re

import numpy as np
import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.emu.launch import run

LOAD = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdi, %g, %ga;
.reg .b32 %sa, %sb, %tx, %row, %a<4>;
.reg .pred %p;
.shared .align 16 .b8 sbuf[512];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
setp.lt.u32 %p, %tx, {limit};
mul.wide.u32 %g, %tx, 16;
add.s64 %rdi, %rdi, %g;
ld.global.v4.u32 {{%a0,%a1,%a2,%a3}}, [%rdi];
mov.u32 %sa, sbuf;
mad.lo.u32 %sb, %tx, 16, %sa;
st.shared.v4.u32 [%sb], {{%a0,%a1,%a2,%a3}};
bar.sync 0;
xor.b32 %row, %tx, 5;
mad.lo.u32 %sb, %row, 16, %sa;
cvta.shared.u64 %ga, sbuf;
mul.wide.u32 %g, %row, 16;
add.s64 %ga, %ga, %g;
mov.u32 %a0, 0; mov.u32 %a1, 0; mov.u32 %a2, 0; mov.u32 %a3, 0;
{guard}{ins} {{{regs}}}, [{addr}];
mul.wide.u32 %g, %tx, 16;
add.s64 %rdo, %rdo, %g;
st.global.v4.u32 [%rdo], {{%a0,%a1,%a2,%a3}};
ret;
}}
"""

STORE = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
.reg .b64 %rdo, %rdi, %g, %ga;
.reg .b32 %sa, %sb, %tx, %row, %a<4>;
.shared .align 16 .b8 sbuf[512];
ld.param.u64 %rdo, [out];
ld.param.u64 %rdi, [in];
mov.u32 %tx, %tid.x;
mov.u32 %sa, sbuf;
mad.lo.u32 %sb, %tx, 16, %sa;
st.shared.v4.u32 [%sb], {{0, 0, 0, 0}};
mul.wide.u32 %g, %tx, 16;
add.s64 %rdi, %rdi, %g;
ld.global.v4.u32 {{%a0,%a1,%a2,%a3}}, [%rdi];
bar.sync 0;
xor.b32 %row, %tx, 5;
mad.lo.u32 %sb, %row, 16, %sa;
cvta.shared.u64 %ga, sbuf;
mul.wide.u32 %g, %row, 16;
add.s64 %ga, %ga, %g;
{ins} [{addr}], {{{regs}}};
bar.sync 0;
mul.wide.u32 %g, %tx, 16;
add.s64 %rdo, %rdo, %g;
mad.lo.u32 %sb, %tx, 16, %sa;
ld.shared.v4.u32 {{%a0,%a1,%a2,%a3}}, [%sb];
st.global.v4.u32 [%rdo], {{%a0,%a1,%a2,%a3}};
ret;
}}
"""
MATRIX_OPS = re.compile(r"\b(?:LDSM|STSM)(?:\.\w+)*")


def unpack(row: bytes, src: str | None) -> list[int]:
    """A 16-byte shared row as the 16 byte elements ldmatrix reads: `.b6x16_p32`/`.b4x16_p64`
    rows hold 16 unsigned 6-/4-bit elements from bit 0 up, then padding (each becomes one
    byte, here with the element in its low bits)."""
    if src is None:
        return list(row)
    width = {"b6x16_p32": 6, "b4x16_p64": 4}[src]
    v = int.from_bytes(row, "little")
    return [(v >> (width * e)) & ((1 << width) - 1) for e in range(16)]


def load_model(smem: np.ndarray, shape: str, n: int, src: str | None) -> np.ndarray:
    """(32 lanes, 4 words) after ldmatrix, lane l addressing shared row l ^ 5."""
    rows = [unpack(smem[lane ^ 5].tobytes(), src) for lane in range(32)]
    out = np.zeros((32, 4), np.uint32)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        regs = []
        for i in range(n):
            if shape == "m16n16":       # rows of matrix i from lanes 16i..16i+15, transposed
                r = rows[16 * i:16 * i + 16]
                for h in range(2):      # register 2i+h: row g+8h, columns 4t..4t+3 of r^T
                    regs.append([r[4 * t + j][g + 8 * h] for j in range(4)])
            else:                       # m8n16: row g of matrix i, columns 4t..4t+3
                regs.append([rows[8 * i + g][4 * t + j] for j in range(4)])
        for k, b in enumerate(regs):
            out[lane, k] = b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24
    return out


def store_model(words: np.ndarray, n: int) -> np.ndarray:
    """(32 rows, 16 bytes) of shared memory after stmatrix.m16n8.trans.b8, lane l addressing
    row l ^ 5: register i of lane l holds bytes M[l/4 + 8(k/2)][2(l%4) + k%2] of the 16x8
    matrix i; row c of its transpose goes to lane 8i+c's address."""
    smem = np.zeros((32, 16), np.uint8)
    for i in range(n):
        m = np.zeros((16, 8), np.uint8)
        for lane in range(32):
            for k in range(4):
                m[(lane >> 2) + 8 * (k >> 1), 2 * (lane % 4) + (k & 1)] = (int(words[lane, i]) >> (8 * k)) & 0xFF
        for c in range(8):
            smem[(8 * i + c) ^ 5] = m[:, c]
    return smem


LOADS = [("m16n16", n, None) for n in (1, 2)] \
    + [("m8n16", n, s) for n in (1, 2, 4) for s in ("b6x16_p32", "b4x16_p64")] \
    + [("m16n16", n, s) for n in (1, 2) for s in ("b6x16_p32", "b4x16_p64")]


def _compile_both(ptx: str, arch: str):
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    assert MATRIX_OPS.findall(oracle.nvdisasm(ours)) == MATRIX_OPS.findall(oracle.nvdisasm(theirs.output))
    return ours, theirs.output


# every form on sm_100a at a shared address; one of each kind on sm_120a at a generic one
CASES = [(*form, "sm_100a", ".shared") for form in LOADS] \
    + [(*LOADS[i], "sm_120a", "") for i in (1, 4, 9)]


@pytest.mark.parametrize("shape,n,src,arch,space", CASES)
def test_ldmatrix(shape, n, src, arch, space):
    trans = ".trans" if shape == "m16n16" else ""
    elem = ".b8" if src is None else f".b8x16.{src}"
    nregs = 2 * n if shape == "m16n16" else n
    ins = f"ldmatrix.sync.aligned.{shape}.x{n}{trans}{space}{elem}"
    check_load(LOAD.format(arch=arch, ins=ins, regs=",".join(f"%a{k}" for k in range(nregs)),
                           addr="%sb" if space else "%ga", guard="", limit=32),
               arch, shape, n, src, nregs, True)


@pytest.mark.parametrize("on", [True, False])
def test_guarded_ldmatrix(on):
    """`@p ldmatrix` with p the same in the whole warp: all loaded, or the registers kept."""
    ins = "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8x16.b4x16_p64"
    check_load(LOAD.format(arch="sm_100a", ins=ins, regs="%a0,%a1,%a2,%a3", addr="%sb",
                           guard="@%p ", limit=32 if on else 0),
               "sm_100a", "m16n16", 2, "b4x16_p64", 4, on)


def check_load(ptx, arch, shape, n, src, nregs, on):
    ours, theirs = _compile_both(ptx, arch)
    x = np.random.default_rng(n * 7 + len(src or "")).integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)
    want = load_model(x.view(np.uint8).reshape(32, 16), shape, n, src)
    want[:, nregs:] = 0
    if not on:
        want[:] = 0
    for name, cubin in (("ours", ours), ("ptxas", theirs)):
        out = np.zeros(128, np.uint32)
        res = run(cubin, "k", 1, 32, [out, x.reshape(-1).copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out.reshape(32, 4), want, err_msg=name)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("arch,space", [("sm_100a", ".shared::cta"), ("sm_120a", "")])
def test_stmatrix(n, arch, space):
    ins = f"stmatrix.sync.aligned.m16n8.x{n}.trans{space}.b8"
    ptx = STORE.format(arch=arch, ins=ins, regs=",".join(f"%a{k}" for k in range(n)),
                       addr="%sb" if space else "%ga")
    ours, theirs = _compile_both(ptx, arch)
    x = np.random.default_rng(40 + n).integers(0, 2**32, (32, 4), dtype=np.uint64).astype(np.uint32)
    want = store_model(x, n)
    for name, cubin in (("ours", ours), ("ptxas", theirs)):
        out = np.zeros(128, np.uint32)
        res = run(cubin, "k", 1, 32, [out, x.reshape(-1).copy()], hazard_check=name == "ours")
        assert not res.hazards
        np.testing.assert_array_equal(out.view(np.uint8).reshape(32, 16), want, err_msg=name)


KERNEL = """.version 8.8
.target {target}
.address_size 64
.visible .entry k()
{{
.reg .b64 %rd30;
.reg .b32 %r<5>;
mov.u64 %rd30, 0;
{line}
ret;
}}
"""
# (target, instruction, ptxas 13.5's messages in its order)
REFUSALS = [
    ("sm_100a", "ldmatrix.sync.aligned.m16n16.x4.trans.shared.b8 {%r1, %r2, %r3, %r4}, [%rd30];",
     ["Incorrect no. of matrix: 4 for ldmatrix with shape '.m16n16'"]),
    ("sm_100a", "ldmatrix.sync.aligned.m16n16.x1.shared.b8 {%r1, %r2}, [%rd30];",
     ["Modifier '.trans' require for instruction ldmatrix with shape '.m16n16'"]),
    ("sm_100a", "ldmatrix.sync.aligned.m8n16.x1.trans.shared.b8x16.b4x16_p64 {%r1}, [%rd30];",
     ["Modifier .trans not allowed for shape '.m8n16'"]),
    ("sm_100a", "ldmatrix.sync.aligned.m8n16.x1.shared.b8 {%r1}, [%rd30];",
     ["Unexpected number of instruction types specified for ldmatrix with shape '.m8n16'"]),
    ("sm_100a", "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8x16 {%r1, %r2}, [%rd30];",
     ["Unexpected number of 'format conversion' modifiers specified"]),
    ("sm_100a", "ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 {%r1, %r2}, [%rd30];",
     ["Vector of size 4 is expected for argument 0 of instruction 'ldmatrix'",
      "Argument vector size mismatch for instruction 'ldmatrix'"]),
    ("sm_100a", "ldmatrix.sync.aligned.m16n8.x1.trans.shared.b8 {%r1}, [%rd30];",
     ["Illegal matrix shape '.m16n8' for instruction 'ldmatrix'",
      "Modifier .trans not allowed for shape '.m16n8'"]),
    ("sm_100a", "ldmatrix.sync.aligned.m8n8.x1.shared.b8x16.b6x16_p32 {%r1}, [%rd30];",
     ["Unexpected number of instruction types specified for ldmatrix with shape '.m8n8'",
      "Incorrect instruction type specified for ldmatrix with shape '.m8n8'",
      "Modifier format conversion not allowed for shape '.m8n8'"]),
    ("sm_100a", "stmatrix.sync.aligned.m16n8.x1.shared.b8 [%rd30], {%r1};",
     ["Modifier '.trans' require for instruction stmatrix with shape '.m16n8'"]),
    ("sm_100a", "stmatrix.sync.aligned.m8n8.x1.shared.b8 [%rd30], {%r1};",
     ["Incorrect instruction type specified for stmatrix with shape '.m8n8'"]),
    ("sm_100a", "stmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 [%rd30], {%r1};",
     ["Unexpected instruction types specified for 'stmatrix'"]),
    ("sm_100", "ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r1, %r2}, [%rd30];",
     ["Feature '.m16n16' not supported on .target 'sm_100'",
      "Feature 'ldmatrix.b8' not supported on .target 'sm_100'"]),
    ("sm_120", "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r1}, [%rd30];",
     ["Feature '.m8n16' not supported on .target 'sm_120'",
      "Feature 'ldmatrix with format conversion' not supported on .target 'sm_120'"]),
    ("sm_90a", "ldmatrix.sync.aligned.m8n16.x1.shared.b8x16.b6x16_p32 {%r1}, [%rd30];",
     ["Feature 'ldmatrix with format conversion' not supported on .target 'sm_90a'"]),
    ("sm_90a", "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%rd30], {%r1};",
     ["Feature '.m16n8' not supported on .target 'sm_90a'",
      "Feature 'stmatrix.b8' not supported on .target 'sm_90a'"]),
]


@pytest.mark.parametrize("target,line,want", REFUSALS)
def test_refusals(target, line, want):
    """Our messages are ptxas 13.5's (listed from its stderr; the first case per target is
    also checked against the pinned ptxas itself)."""
    ptx = KERNEL.format(target=target, line=line)
    with pytest.raises(CompileError) as err:
        codegen.compile_ptx(ptx, target, "k.ptx")
    assert [d.message for d in err.value.diagnostics if d.severity == "error"] == want
    if line == next(l for t, l, _ in REFUSALS if t == target):
        run_ = oracle.ptxas(ptx, target)
        assert not run_.ok
        assert [x.split("error   : ")[-1] for x in run_.stderr.splitlines()
                if "error   : " in x] == want
