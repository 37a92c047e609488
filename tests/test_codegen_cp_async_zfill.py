"""cp.async with the source size in a register (CUTLASS's predicated/zero-filled tile
loads): ptxas moves the source address up by (cp-size - n) mod cp-size and runs
LDGSTS.ZFILL with the copy predicate n != 0; the hardware zeroes as many trailing bytes
as the address's low bits say. Ours and ptxas's cubin run in the emulator and must both
give the PTX result (the first n bytes copied, the rest zero), computed here with NumPy."""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program

THREADS = 64


def _kernel(arch: str, cp_size: int, cache: str, offset: int, hint: bool = False) -> str:
    copy = (f"cp.async.{cache}.shared.global.L2::cache_hint [%r5], [%rd7+{offset}], {cp_size}, %r2, %rd9;"
            if hint else f"cp.async.{cache}.shared.global [%r5], [%rd7+{offset}], {cp_size}, %r2;")
    return f""".version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 pout, .param .u64 psrc, .param .u64 psize)
{{
.reg .b64 %rd<10>; .reg .b32 %r<12>;
.shared .align 16 .b8 sbuf[{THREADS * cp_size}];
ld.param.u64 %rd1, [pout]; ld.param.u64 %rd2, [psrc]; ld.param.u64 %rd3, [psize];
cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, 4;
add.s64 %rd5, %rd3, %rd4;
ld.global.u32 %r2, [%rd5];
mul.wide.u32 %rd6, %r1, {cp_size};
add.s64 %rd7, %rd2, %rd6;
mov.u32 %r3, sbuf;
mul.lo.u32 %r4, %r1, {cp_size};
add.u32 %r5, %r3, %r4;
createpolicy.fractional.L2::evict_last.b64 %rd9, 1.0;
{copy}
cp.async.commit_group;
cp.async.wait_group 0;
add.s64 %rd8, %rd1, %rd6;
{"".join(f"ld.shared.u32 %r6, [%r5+{4 * i}]; st.global.u32 [%rd8+{4 * i}], %r6;" + chr(10)
         for i in range(cp_size // 4))}ret;
}}
"""


def _expected(src: np.ndarray, sizes: np.ndarray, cp_size: int, offset: int) -> np.ndarray:
    out = np.zeros((THREADS, cp_size), np.uint8)
    for t in range(THREADS):
        n = int(sizes[t])
        row = src[t * cp_size + offset: t * cp_size + offset + cp_size]
        out[t, :n] = row[:n]
    return out


def _run(cubin: bytes, src: np.ndarray, sizes: np.ndarray, cp_size: int, hazards: bool):
    out = np.zeros(THREADS * cp_size, np.uint8)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, src.copy(), sizes.astype(np.uint32)],
              hazard_check=hazards)
    if hazards:
        assert not res.hazards, res.hazards[:3]
    return out.reshape(THREADS, cp_size)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
@pytest.mark.parametrize("cp_size,cache,offset,hint", [(16, "ca", 0, False), (16, "cg", 16, False),
                                                       (8, "ca", 8, False), (4, "ca", 0, False),
                                                       (16, "cg", 0, True)])
def test_register_source_size_zero_fills_as_ptxas(arch, cp_size, cache, offset, hint):
    rng = np.random.default_rng(cp_size * 7 + offset)
    src = rng.integers(1, 256, THREADS * cp_size + 64, dtype=np.uint8)     # no zero bytes
    sizes = np.array([t % (cp_size + 1) for t in range(THREADS)], np.uint32)
    rng.shuffle(sizes)
    ptx = _kernel(arch, cp_size, cache, offset, hint)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, arch, "k.ptx")
    expected = _expected(src, sizes, cp_size, offset)
    assert (_run(theirs.output, src, sizes, cp_size, False) == expected).all()
    assert (_run(ours, src, sizes, cp_size, True) == expected).all()
    zfill = [i for _, i in load_program(ours).instructions if i.opcode == "LDGSTS"]
    assert zfill and all("ZFILL" in i.modifiers and len(i.operands) == 3 for i in zfill)


def test_zfill_reads_only_the_copied_bytes():
    """The bytes past the source size are never read: a copy that ends at the end of an
    allocation must not fault (ptxas's cubin, whose address moves into the last bytes)."""
    arch = "sm_89"
    ptx = _kernel(arch, 16, "ca", 0)
    theirs = oracle.ptxas(ptx, arch)
    src = np.arange(1, 1 + THREADS * 16, dtype=np.uint32).astype(np.uint8)
    src[src == 0] = 1
    sizes = np.full(THREADS, 16, np.uint32)
    sizes[-1] = 3                  # the last thread's row is the allocation's end
    expected = _expected(src, sizes, 16, 0)
    assert (_run(theirs.output, src, sizes, 16, False) == expected).all()
    assert (_run(ptx2sass.compile(ptx, arch, "k.ptx"), src, sizes, 16, True) == expected).all()


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_cache_hint_policy_is_the_last_operand(arch):
    """With .L2::cache_hint a fourth operand is the policy, not a source size (ptxas takes
    `[d], [s], 16, %rd` and refuses a 32-bit one; without the hint the other way round).
    The policy is a hint: our copy is the plain one; the copied bytes equal ptxas's."""
    head = f".version 7.8\n.target {arch}\n.address_size 64\n"
    body = """.visible .entry k(.param .u64 pout, .param .u64 psrc)
{
.reg .b64 %rd<10>; .reg .b32 %r<8>;
.shared .align 16 .b8 sbuf[1024];
ld.param.u64 %rd1, [pout]; ld.param.u64 %rd2, [psrc];
cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
createpolicy.fractional.L2::evict_first.b64 %rd9, 1.0;
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd6, %r1, 16;
add.s64 %rd7, %rd2, %rd6;
mov.u32 %r3, sbuf;
shl.b32 %r4, %r1, 4;
add.u32 %r5, %r3, %r4;
cp.async.ca.shared.global.L2::cache_hint [%r5], [%rd7], 16, %rd9;
cp.async.wait_all;
add.s64 %rd8, %rd1, %rd6;
ld.shared.v4.u32 {%r1, %r2, %r3, %r4}, [%r5];
st.global.v4.u32 [%rd8], {%r1, %r2, %r3, %r4};
ret;
}
"""
    ptx = head + body
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    src = np.random.default_rng(3).integers(0, 256, THREADS * 16, dtype=np.uint8)
    results = []
    for cubin in (theirs.output, ptx2sass.compile(ptx, arch, "k.ptx")):
        out = np.zeros(THREADS * 16, np.uint8)
        run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, src.copy()])
        results.append(out)
    assert (results[0] == src).all() and (results[1] == src).all()
    wrong = ptx.replace("16, %rd9;", "16, %r2;")
    assert not oracle.ptxas(wrong, arch).ok
    with pytest.raises(ptx2sass.CompileError, match="Arguments mismatch for instruction 'cp.async'"):
        ptx2sass.compile(wrong, arch, "k.ptx")
