"""cp.async address offsets: an unrolled tile copy (`add.s64 s, p, 16*k; add.s32 d, b, 16*k;
cp.async [d], [s]`, as NVVM writes `cuda::memcpy_async`) is one LDGSTS per chunk in ptxas's
SASS, the offsets in LDGSTS's immediates (`[R+0x10], [R.64+0x10]`), not three adds per chunk.
Those immediates are narrower than a load's (signed 20 bits for the shared destination, 12
for the global source): an offset past them is added to the base first (it failed to encode
before). Ours and ptxas's cubins run in the emulator and must both give the copy NumPy
computes, with no hazards."""
import re

import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

CHUNKS = 32          # 512 bytes, as bulk_pipeline's tiles
FAR_SHARED = 600000  # past the shared immediate's 2^19
FAR_GLOBAL = 2048    # just past the global immediate's 2^11


def _kernel(arch: str) -> str:
    copies = "".join(f"add.s64 %rd{10 + k}, %rd2, {16 * k}; add.s32 %r{10 + k}, %r1, {16 * k};\n"
                     f"cp.async.cg.shared.global [%r{10 + k}], [%rd{10 + k}], 16;\n"
                     for k in range(1, CHUNKS))
    return f""".version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 pout, .param .u64 psrc, .param .u32 pfar, .param .u64 pback)
{{
.reg .b64 %rd<80>; .reg .b32 %r<80>; .reg .pred %p1;
.shared .align 16 .b8 sbuf[{16 * (CHUNKS + 2)}];
ld.param.u64 %rd1, [pout]; ld.param.u64 %rd2, [psrc];
ld.param.u32 %r2, [pfar]; ld.param.u64 %rd3, [pback];
cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
mov.u32 %r1, sbuf;
mov.u32 %r3, %tid.x;
setp.ne.u32 %p1, %r3, 0;
@%p1 bra WAIT;
cp.async.cg.shared.global [%r1], [%rd2], 16;
{copies}add.s32 %r4, %r1, %r2;
sub.s64 %rd4, %rd2, %rd3;
cp.async.cg.shared.global [%r4+{16 * CHUNKS - FAR_SHARED}], [%rd4+{FAR_GLOBAL + 16 * CHUNKS}], 16;
cp.async.cg.shared.global [%r1+{16 * CHUNKS + 16}], [%rd2+{FAR_GLOBAL}], 16;
WAIT:
cp.async.wait_all;
bar.sync 0;
mul.wide.u32 %rd5, %r3, 4;
add.s64 %rd6, %rd1, %rd5;
shl.b32 %r5, %r3, 2;
add.s32 %r6, %r1, %r5;
ld.shared.u32 %r7, [%r6];
st.global.u32 [%rd6], %r7;
ret;
}}
"""


def _expected(src: np.ndarray) -> np.ndarray:
    """sbuf as the copies leave it: the tile, then the far copy (shared base + FAR_SHARED,
    offset back down to chunk CHUNKS; source base - FAR_GLOBAL, offset up to byte 16*CHUNKS),
    then the chunk FAR_GLOBAL bytes into the source."""
    out = np.empty(16 * (CHUNKS + 2), np.uint8)
    out[:16 * (CHUNKS + 1)] = src[:16 * (CHUNKS + 1)]
    out[16 * (CHUNKS + 1):] = src[FAR_GLOBAL:FAR_GLOBAL + 16]
    return out.view(np.uint32)


def _run(cubin: bytes, src: np.ndarray) -> np.ndarray:
    out = np.zeros(4 * (CHUNKS + 2), np.uint32)
    res = run(cubin, "k", (1, 1, 1), (4 * (CHUNKS + 2), 1, 1),
              [out, src.copy(), np.uint32(FAR_SHARED), np.uint64(FAR_GLOBAL)], hazard_check=True)
    assert not res.hazards, res.hazards[:3]
    return out


def _sass(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin)
    return [ln.split("*/", 1)[1].split(";")[0].strip() for ln in text.splitlines()
            if re.match(r"\s+/\*[0-9a-f]{4}\*/", ln)
            and not ln.split("*/", 1)[1].strip().startswith(("NOP", "."))]


@pytest.mark.parametrize("arch", ["sm_80", "sm_89", "sm_90"])
def test_tile_copy_offsets_in_ldgsts_immediates(arch):
    ptx = _kernel(arch)
    theirs = oracle.ptxas(ptx, arch)
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, arch, "k.ptx")
    rng = np.random.default_rng(34)
    src = rng.integers(0, 256, FAR_GLOBAL + 16 * (CHUNKS + 2), dtype=np.uint8)
    got, want = _run(ours, src), _run(theirs.output, src)
    assert np.array_equal(want, _expected(src))
    assert np.array_equal(got, want)
    ours_sass, theirs_sass = _sass(ours), _sass(theirs.output)
    # every chunk of the unrolled copy takes its offsets in its immediates, as in ptxas's
    def tile_chunks_with_offsets(sass):
        offsets = [re.search(r"\.64\+(0x[0-9a-f]+)\]", s) for s in sass if s.startswith("LDGSTS")]
        return sum(1 for m in offsets if m and 0 < int(m.group(1), 16) < 16 * CHUNKS)
    assert tile_chunks_with_offsets(theirs_sass) == CHUNKS - 1
    assert tile_chunks_with_offsets(ours_sass) == CHUNKS - 1, "\n".join(ours_sass)
    assert len(ours_sass) <= len(theirs_sass), "\n".join(ours_sass)
