"""mbarrier.inval (SYNCS.CCTL.IV) writes the object back to shared memory after it issues: the
next access that may reach shared memory waits on the invalidation's write scoreboard
(`ptx2sass.fences.MBARRIER_INVALIDATION`).

ptxas 13.5's sm_90 code does so in every fuzz cubin of H200 run 25 with one; ours set no
write scoreboard, and on the H200 our LDS one instruction after it read the object's state
from before the write-back (fuzz 9500138, even with every instruction stalling 15 cycles),
our ATOMS three after it lost its write (9500082), and our next mbarrier.init (SYNCS.EXCH) ~70
cycles after it was overwritten and the kernel hung (9500217). The scheduler now sets the
scoreboard and the checker flags an access that does not wait for it.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

ARCH = "sm_90"
THREADS = 64

# Per thread an mbarrier that completes a phase, then is invalidated and used as plain
# shared memory: loaded, exchanged, loaded again.
PTX = """
.version 8.0
.target sm_90
.address_size 64

.shared .align 16 .b8 bars[1024];

.visible .entry k(.param .u64 p_out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %d<5>;
    ld.param.u64 %d0, [p_out];
    cvta.to.global.u64 %d0, %d0;
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, bars;
    mad.lo.u32 %r1, %r0, 16, %r1;
    mbarrier.init.shared::cta.b64 [%r1], 1;
    mbarrier.arrive.shared::cta.b64 %d1, [%r1];
$Lw:
    mbarrier.try_wait.parity.shared::cta.b64 %p0, [%r1], 0;
    @!%p0 bra $Lw;
    mbarrier.inval.shared::cta.b64 [%r1];
    ld.shared.v2.u32 {%r2, %r3}, [%r1];
    atom.shared.exch.b64 %d2, [%r1], 42;
    ld.shared.u64 %d3, [%r1];
    mul.wide.u32 %d4, %r0, 24;
    add.s64 %d4, %d0, %d4;
    st.global.v2.u32 [%d4], {%r2, %r3};
    st.global.u64 [%d4+8], %d2;
    st.global.u64 [%d4+16], %d3;
    ret;
}
"""

SHARED = ("LDS", "STS", "ATOMS", "LD", "ST", "ATOM", "SYNCS")


def _ours() -> bytes:
    cubin, _ = codegen.generate_module(codegen.lower_ptx(PTX, ARCH, "k.ptx"), ARCH, filename="k.ptx")
    return cubin


def _ptxas() -> bytes:
    res = oracle.ptxas(PTX, ARCH)
    assert res.ok, res.stderr
    return res.output


def _listing(cubin: bytes) -> list[tuple[str, int, int]]:
    """(instruction text, write scoreboard, wait mask) in order (7: no scoreboard)."""
    out, text = [], None
    for line in oracle.nvdisasm(cubin).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]+ \*/", line)
        if m:
            text = m.group(1)
            continue
        m = re.search(r"^\s*/\* (0x[0-9a-f]+) \*/", line)
        if m and text is not None:
            control = int(m.group(1), 16) >> 41
            out.append((text, control >> 5 & 7, control >> 11 & 0x3F))
            text = None
    return out


def _opcode(text: str) -> str:
    parts = text.split()
    if parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0].split(".")[0]


def _next_shared(cubin: bytes) -> list[tuple[int, str, int]]:
    """Per SYNCS.CCTL.IV: (its write scoreboard, the next shared access, that one's wait mask)."""
    rows = _listing(cubin)
    found = []
    for i, (text, wr, _wait) in enumerate(rows):
        if not text.startswith("SYNCS.CCTL.IV"):
            continue
        nxt = next((t, w) for t, _, w in rows[i + 1:] if _opcode(t) in SHARED)
        found.append((wr, nxt[0], nxt[1]))
    return found


@pytest.mark.parametrize("build", ["ptxas", "ours"])
def test_access_after_inval_waits_for_its_write_back(build):
    """ptxas's code is the reference: its CCTL.IV sets a write scoreboard that the next shared
    access waits on; ours the same (before: no write scoreboard, the LDS waited on nothing)."""
    cubin = _ptxas() if build == "ptxas" else _ours()
    found = _next_shared(cubin)
    assert found
    for wr, access, wait in found:
        assert wr != 7, f"{build}: SYNCS.CCTL.IV sets no write scoreboard"
        assert wait >> wr & 1, f"{build}: {access} does not wait on SB{wr} of SYNCS.CCTL.IV"


def _emulate(cubin: bytes):
    out = np.zeros(THREADS * 3, np.uint64)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out])
    return out, res


def test_outputs_and_no_hazards():
    ours, res = _emulate(_ours())
    assert not res.hazards, [str(h) for h in res.hazards]
    theirs, res = _emulate(_ptxas())
    assert not res.hazards, [str(h) for h in res.hazards]
    assert np.array_equal(ours, theirs)
    assert (ours[2::3] == 42).all()      # the exchange's value, loaded after it


def test_checker_flags_an_access_that_does_not_wait():
    """Our cubin with the invalidation's scoreboard removed (the code before the fix): the
    checker names the LDS after it; the GPU check's `inval_wait` variant (the rule applied to
    such a cubin) is clean again."""
    from tools.gpu_check.variants import rewrite, transform

    def drop(word: int, control: int, op: str, index: int) -> int:
        if op == "SYNCS" and (control >> 5 & 7) != 7 and index in targets:
            return (word & ((1 << 105) - 1)) | ((control | 7 << 5) << 105)
        return word
    cubin = _ours()
    rows = _listing(cubin)
    targets = {i for i, (t, _, _) in enumerate(rows) if t.startswith("SYNCS.CCTL.IV")}
    assert targets
    before = rewrite(cubin, ARCH, drop)
    _, res = _emulate(before)
    flagged = [str(h) for h in res.hazards if "mbarrier.inval" in str(h)]
    assert flagged and "LDS" in flagged[0], [str(h) for h in res.hazards]
    _, res = _emulate(rewrite(before, ARCH, transform("inval_wait", ARCH)))
    assert not res.hazards, [str(h) for h in res.hazards]
