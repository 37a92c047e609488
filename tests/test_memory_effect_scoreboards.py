"""Instructions whose memory effect completes after they issue (`ptx2sass.fences.memory_effect`):
the instructions that depend on it wait on a scoreboard they set, as ptxas 13.5's sm_90 code.

mbarrier.inval (SYNCS.CCTL.IV) writes the object back to shared memory after it issues: the
next access that may reach shared memory waits on the invalidation's write scoreboard.

ptxas 13.5's sm_90 code does so in every fuzz cubin of H200 run 25 with one; ours set no
write scoreboard, and on the H200 our LDS one instruction after it read the object's state
from before the write-back (fuzz 9500138, even with every instruction stalling 15 cycles),
our ATOMS three after it lost its write (9500082), and our next mbarrier.init (SYNCS.EXCH) ~70
cycles after it was overwritten and the kernel hung (9500217). The scheduler now sets the
scoreboard and the checker flags an access that does not wait for it.

fence.proxy.async (FENCE.VIEW.ASYNC.S) sets a write scoreboard the next async-proxy instruction
waits on (wgmma's WARPGROUP.ARRIVE), and waits itself on the read scoreboard of the MEMBAR.CTA
before it. Ours set neither, and on the H200 our wgmma K loop with an mbarrier wait
(tools/wgmma_kloop.py, kloop_n16_k3_c1_first_mbarrier) read stale shared memory: 830 of 1024
outputs wrong, with every control-code variant (none adds a scoreboard).
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
    """(instruction text, write scoreboard, read scoreboard, wait mask) in order (7: none)."""
    out, text = [], None
    for line in oracle.nvdisasm(cubin).splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]+ \*/", line)
        if m:
            text = m.group(1)
            continue
        m = re.search(r"^\s*/\* (0x[0-9a-f]+) \*/", line)
        if m and text is not None:
            control = int(m.group(1), 16) >> 41
            out.append((text, control >> 5 & 7, control >> 8 & 7, control >> 11 & 0x3F))
            text = None
    return out


def _next_waits(cubin: bytes, producer: str, consumers, field: str = "wr") -> list[tuple[int, str, int]]:
    """Per instruction starting with `producer`: (its scoreboard of `field`, the next
    instruction whose opcode is in `consumers`, that one's wait mask)."""
    rows = _listing(cubin)
    found = []
    for i, (text, wr, rd, _wait) in enumerate(rows):
        if not text.startswith(producer):
            continue
        nxt = next(((t, w) for t, _, _, w in rows[i + 1:] if _opcode(t) in consumers), None)
        if nxt is not None:
            found.append((wr if field == "wr" else rd, nxt[0], nxt[1]))
    return found


def _opcode(text: str) -> str:
    parts = text.split()
    if parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0].split(".")[0]


@pytest.mark.parametrize("build", ["ptxas", "ours"])
def test_access_after_inval_waits_for_its_write_back(build):
    """ptxas's code is the reference: its CCTL.IV sets a write scoreboard that the next shared
    access waits on; ours the same (before: no write scoreboard, the LDS waited on nothing)."""
    cubin = _ptxas() if build == "ptxas" else _ours()
    found = _next_waits(cubin, "SYNCS.CCTL.IV", SHARED)
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
    targets = {i for i, (t, _, _, _) in enumerate(rows) if t.startswith("SYNCS.CCTL.IV")}
    assert targets
    before = rewrite(cubin, ARCH, drop)
    _, res = _emulate(before)
    flagged = [str(h) for h in res.hazards if "mbarrier.inval" in str(h)]
    assert flagged and "LDS" in flagged[0], [str(h) for h in res.hazards]
    _, res = _emulate(rewrite(before, ARCH, transform("inval_wait", ARCH)))
    assert not res.hazards, [str(h) for h in res.hazards]



def _kloop():
    from tools import wgmma_kloop as W
    case = W.Case(n=16, ktiles=3, scale="first", wait="mbarrier", seed=2)
    ptx = W.ptx(case)
    theirs = oracle.ptxas(ptx, "sm_90a")
    assert theirs.ok, theirs.stderr
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_90a", "k.ptx"), "sm_90a", filename="k.ptx")
    return W, case, {"ptxas": theirs.output, "ours": ours}


ASYNC = ("WARPGROUP", "HGMMA", "SYNCS", "UBLKCP")


@pytest.mark.parametrize("build", ["ptxas", "ours"])
def test_wgmma_waits_for_the_proxy_fence(build):
    """ptxas's code is the reference: FENCE.VIEW.ASYNC.S sets a write scoreboard that
    WARPGROUP.ARRIVE waits on, and waits on the read scoreboard of the MEMBAR.ALL.CTA before it;
    ours the same (before: neither had a scoreboard, nothing waited)."""
    _, _, cubins = _kloop()
    fences = _next_waits(cubins[build], "FENCE.VIEW.ASYNC.S", ASYNC)
    membars = _next_waits(cubins[build], "MEMBAR.ALL.CTA", ("FENCE",), field="rd")
    assert fences and membars
    for sb, nxt, wait in fences + membars:
        assert sb != 7, f"{build}: no scoreboard before {nxt}"
        assert wait >> sb & 1, f"{build}: {nxt} does not wait on SB{sb}"


def test_checker_flags_wgmma_after_an_unwaited_proxy_fence():
    """Ours is hazard-free and gives NumPy's product; with the fence's scoreboard removed (the
    code before the fix) the checker names the WARPGROUP.ARRIVE."""
    from tools.gpu_check.variants import rewrite, transform
    W, case, cubins = _kloop()
    rows = _listing(cubins["ours"])
    targets = {i for i, (t, _, _, _) in enumerate(rows) if t.startswith("FENCE.VIEW.ASYNC")}

    def drop(word: int, control: int, op: str, index: int) -> int:
        if index in targets:
            return (word & ((1 << 105) - 1)) | ((control | 7 << 5) << 105)
        return word

    def launch(cubin):
        a = W.launch_args(case)
        res = run(cubin, "kloop", (1, 1, 1), (W.THREADS, 1, 1),
                  [a["img"].view(np.uint32).copy(), a["d"], np.uint32(a["ktiles"]), np.uint64(a["da"]),
                   np.uint64(a["db"]), np.uint32(1)], hazard_check=True)
        return a["d"], res
    d, res = launch(cubins["ours"])
    assert not res.hazards, [str(h) for h in res.hazards]
    assert np.array_equal(d, W.expected(case))
    before = rewrite(cubins["ours"], "sm_90a", drop)
    _, res = launch(before)
    flagged = [str(h) for h in res.hazards if "proxy fence" in str(h)]
    assert flagged and "WARPGROUP" in flagged[0], [str(h) for h in res.hazards]
    # the GPU check's `effect_wait` variant (the rule applied to such a cubin): clean again
    _, res = launch(rewrite(before, "sm_90a", transform("effect_wait", "sm_90a")))
    assert not res.hazards, [str(h) for h in res.hazards]


# sm_100/110/120 (branch isa35): mbarrier.init of a per-lane address is STS.64, FENCE.VIEW.ASYNC.S
# and SYNCS.CCTL.IVALL; ptxas 13.5 gives the fence a write scoreboard the IVALL waits on, and
# the IVALL one the next SYNCS, ATOMS or BAR.SYNC waits on (it moves plain LDS/STS above the
# pair). Ours set neither scoreboard.
INIT_PTX = """
.version 8.7
.target {arch}
.address_size 64

.shared .align 16 .b8 bars[1024];
.shared .align 4 .b32 words[256];

.visible .entry k(.param .u64 p_out, .param .u32 p_count)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    ld.param.u32 %r6, [p_count];
    .reg .b64 %d<5>;
    ld.param.u64 %d0, [p_out];
    cvta.to.global.u64 %d0, %d0;
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, bars;
    mad.lo.u32 %r1, %r0, 16, %r1;
    mov.u32 %r5, words;
    mad.lo.u32 %r5, %r0, 4, %r5;
    st.shared.u32 [%r5], %r0;
    mbarrier.init.shared::cta.b64 [%r1], %r6;
    atom.shared.add.u32 %r2, [%r5], 5;
    bar.sync 0;
    mbarrier.arrive.shared::cta.b64 %d1, [%r1];
$Lw:
    mbarrier.try_wait.parity.shared::cta.b64 %p0, [%r1], 0;
    @!%p0 bra $Lw;
    ld.shared.u64 %d3, [%r1];
    ld.shared.u32 %r3, [%r5];
    mul.wide.u32 %d4, %r0, 16;
    add.s64 %d4, %d0, %d4;
    st.global.v2.u32 [%d4], {{%r2, %r3}};
    st.global.u64 [%d4+8], %d3;
    ret;
}}
"""
BLACKWELL = ("sm_100", "sm_110", "sm_120")
WAITERS = ("SYNCS", "ATOMS", "BAR", "LDS", "STS", "LD", "ST", "ATOM")


def _init_cubin(arch: str, build: str) -> bytes:
    ptx = INIT_PTX.format(arch=arch).replace(".version 8.7", ".version 9.0" if arch == "sm_110" else ".version 8.7")
    if build == "ptxas":
        res = oracle.ptxas(ptx, arch)
        assert res.ok, res.stderr
        return res.output
    cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    return cubin


@pytest.mark.parametrize("build", ["ptxas", "ours"])
@pytest.mark.parametrize("arch", BLACKWELL)
def test_access_after_init_waits_for_the_syncs_invalidation(arch, build):
    """ptxas's code is the reference: the IVALL waits on the proxy fence's write scoreboard and
    sets one the next shared access (here the ATOMS) waits on; ours the same (before: no
    scoreboard on either, nothing waited)."""
    cubin = _init_cubin(arch, build)
    ivall = _next_waits(cubin, "SYNCS.CCTL.IVALL", WAITERS)
    fence = _next_waits(cubin, "FENCE.VIEW.ASYNC.S", ("SYNCS",))
    assert ivall and fence
    for sb, nxt, wait in ivall + fence:
        assert sb != 7, f"{build}: no scoreboard before {nxt}"
        assert wait >> sb & 1, f"{build}: {nxt} does not wait on SB{sb}"


def _emulate_init(cubin: bytes, arch: str):
    out = np.zeros(THREADS * 4, np.uint32)
    res = run(cubin, "k", (1, 1, 1), (THREADS, 1, 1), [out, np.uint32(1)])
    return out, res


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_init_outputs_and_the_checker(arch):
    """Ours and ptxas's: the same words, no hazard; ours with the IVALL's scoreboard removed
    (the code before the fix): the checker names the access after it."""
    from tools.gpu_check.variants import rewrite
    ours, theirs = _init_cubin(arch, "ours"), _init_cubin(arch, "ptxas")
    a, res = _emulate_init(ours, arch)
    assert not res.hazards, [str(h) for h in res.hazards]
    b, res = _emulate_init(theirs, arch)
    assert not res.hazards, [str(h) for h in res.hazards]
    assert np.array_equal(a, b)
    assert (a.reshape(THREADS, 4)[:, 0] == np.arange(THREADS)).all()

    rows = _listing(ours)
    targets = {i for i, (t, _, _, _) in enumerate(rows) if t.startswith("SYNCS.CCTL.IVALL")}
    assert targets

    def drop(word: int, control: int, op: str, index: int) -> int:
        if index in targets:
            return (word & ((1 << 105) - 1)) | ((control | 7 << 5) << 105)
        return word
    _, res = _emulate_init(rewrite(ours, arch, drop), arch)
    flagged = [str(h) for h in res.hazards if "mbarrier.init" in str(h)]
    assert flagged and "ATOMS" in flagged[0], [str(h) for h in res.hazards]


@pytest.mark.parametrize("build", ["ptxas", "ours"])
def test_tensor_memory_access_waits_for_wait_st(build):
    """tcgen05.wait::st (FENCE.VIEW.ASYNC.T): ptxas 13.5 sets a write scoreboard the next
    STTM/LDTM waits on; ours the same (before: none)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from test_codegen_tcgen05 import ROUND_TRIP
    ptx = ROUND_TRIP.replace("  tcgen05.wait::st.sync.aligned;\n", "  tcgen05.wait::st.sync.aligned;\n"
                             "  tcgen05.st.sync.aligned.32x32b.x1.b32 [r2+8], {r10};\n", 1)
    if build == "ptxas":
        res = oracle.ptxas(ptx, "sm_100a")
        assert res.ok, res.stderr
        cubin = res.output
    else:
        cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_100a", "k.ptx"), "sm_100a", filename="k.ptx")
    found = _next_waits(cubin, "FENCE.VIEW.ASYNC.T", ("LDTM", "STTM"))
    assert found
    for sb, nxt, wait in found:
        assert sb != 7, f"{build}: no scoreboard before {nxt}"
        assert wait >> sb & 1, f"{build}: {nxt} does not wait on SB{sb}"


# SYNCS.EXCH.64 (mbarrier.init of a uniform object; sm_90's per-lane objects loop it over the
# lanes' addresses), branch isa35: ptxas 13.5 gives it a write scoreboard the next SYNCS waits
# on, and a read scoreboard it waits on before writing the exchange's uniform registers again
# (its address UR and the data pair). Ours set neither.
UNIFORM_INIT_PTX = """
.version 8.7
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .b32 r<8>;
  .reg .b64 st, ad;
  .shared .align 8 .b64 bar[4];
  .shared .align 8 .b32 buf[64];
  ld.param.u64 ad, [p];
  mov.u32 r1, %tid.x;
  mbarrier.init.shared.b64 [bar], 32;
  ld.shared.b32 r2, [buf];
  st.shared.b32 [buf+4], r1;
  mbarrier.arrive.shared.b64 st, [bar];
  st.global.b64 [ad], st;
  st.global.b32 [ad+8], r2;
  ret;
}}
"""


def _uniform_regs(text: str) -> set[str]:
    """The uniform registers an `SYNCS.EXCH.64 URZ, [URa], URb` reads: URa, URb, URb + 1."""
    a, b = re.findall(r"UR(\d+)", text.split(",", 1)[1])[:2]
    return {f"UR{a}", f"UR{b}", f"UR{int(b) + 1}"}


@pytest.mark.parametrize("build", ["ptxas", "ours"])
@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_syncs_exchange_scoreboards(arch, build):
    ptx = UNIFORM_INIT_PTX.format(arch=arch)
    if build == "ptxas":
        res = oracle.ptxas(ptx, arch)
        assert res.ok, res.stderr
        cubin = res.output
    else:
        cubin, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    found = _next_waits(cubin, "SYNCS.EXCH", ("SYNCS",))
    assert found
    for sb, nxt, wait in found:
        assert sb != 7 and wait >> sb & 1, f"{build}: {nxt} does not wait on the exchange's SB{sb}"
    rows = _listing(cubin)
    exch = [i for i, (t, *_) in enumerate(rows) if t.startswith("SYNCS.EXCH")]
    rewrites = 0
    for i in exch:
        text, _, rd, _ = rows[i]
        regs = _uniform_regs(text)
        for later, _, _, wait in rows[i + 1:]:
            parts = later.split()
            dest = parts[1].rstrip(",") if len(parts) > 1 and not parts[0].startswith("@") else None
            if dest in regs:
                rewrites += 1
                assert rd != 7 and wait >> rd & 1, f"{build}: {later} overwrites {dest} before the exchange read it"
                break
    assert rewrites, "no later write of the exchange's uniform registers to check"


def test_l2_prefetch_after_inval_is_not_a_shared_access():
    """cp.async.bulk.prefetch.L2 (UBLKPF) reads global memory only: ptxas 13.5 issues it right
    after an mbarrier.inval whose SYNCS.CCTL.IV it gives no scoreboard (held-out fuzz seed
    35090117, sm_90a), and the checker flagged ptxas's cubin (before: UBLKPF counted among the
    shared accesses that wait for the write-back)."""
    ptx = PTX.replace("    ld.shared.v2.u32 {%r2, %r3}, [%r1];\n    atom.shared.exch.b64 %d2, [%r1], 42;\n"
                      "    ld.shared.u64 %d3, [%r1];\n",
                      "    cp.async.bulk.prefetch.L2.global [%d0], 256;\n    mov.u32 %r2, 0;\n    mov.u32 %r3, 0;\n"
                      "    mov.u64 %d2, 42;\n    mov.u64 %d3, 42;\n")
    assert "prefetch" in ptx
    res = oracle.ptxas(ptx, ARCH)
    assert res.ok, res.stderr
    rows = _listing(res.output)
    at = next(i for i, (t, *_) in enumerate(rows) if t.startswith("SYNCS.CCTL.IV"))
    assert rows[at + 1][0].startswith("UBLKPF") and not rows[at + 1][3], rows[at:at + 2]
    _, hazards = _emulate(res.output)
    assert not hazards.hazards, [str(h) for h in hazards.hazards]
