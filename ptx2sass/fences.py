"""The fences ptxas writes around memory accesses with ordering semantics, as (opcode,
modifiers): one definition for the selector, which writes them (isel/memory.py, multimem,
SYNCS mbarriers, bulk copies), the scheduler, which makes an acquire's invalidation wait for
the access before it (sched/control.py), and the timing model (emu/timing/model.py).

As ptxas 13.5 writes them, per SASS scope ("SM" or "CTA", "GPU", "SYS"): a release drains
earlier accesses with MEMBAR.<kind>.<scope>, beyond the CTA also ERRBAR (CGAERRBAR after it
where `Target.cga_errbar`); an acquire beyond the CTA then invalidates the L1 (CCTL.IVALL),
so that no later load is served a stale line; within the CTA nothing follows. A fence
(`fence.acq_rel`, `membar`) is both: the release's barriers, then the acquire's
invalidation."""
from __future__ import annotations

Fence = tuple[str, tuple[str, ...]]

# the L1 invalidation after an acquire beyond the CTA
ACQUIRE_INVALIDATION: Fence = ("CCTL", ("IVALL",))
ERROR_BARRIER: Fence = ("ERRBAR", ())
# after each ERRBAR of a fence where the target has clusters (`Target.cga_errbar`)
CLUSTER_ERROR_BARRIER: Fence = ("CGAERRBAR", ())
# opcodes that order memory without an access of their own (an acquire's invalidation
# waits for no earlier access once one of these came between)
ORDERING_OPCODES = frozenset({"MEMBAR", "ERRBAR", "FENCE"})


def within_cta(scope: str) -> bool:
    return scope in ("SM", "CTA")


def release_fences(scope: str, kind: str = "ALL") -> tuple[Fence, ...]:
    """Before a release (`kind` "ALL"; a `.sc` fence's MEMBAR is "SC") at `scope`."""
    if within_cta(scope):
        return (("MEMBAR", (kind, "CTA")),)
    return (("MEMBAR", (kind, scope)), ERROR_BARRIER)


def acquire_fences(scope: str) -> tuple[Fence, ...]:
    """After an acquire at `scope`."""
    return () if within_cta(scope) else (ACQUIRE_INVALIDATION,)


def is_acquire_invalidation(opcode: str, modifiers) -> bool:
    return (opcode, tuple(modifiers)) == ACQUIRE_INVALIDATION



# Instructions whose effect on memory completes after they issue, so that later instructions
# that depend on it wait on a scoreboard they set, as ptxas 13.5's sm_90 code does (every cubin
# of H200 run 25): kind -> the opcodes that wait for it. Which kinds a target's code waits for is
# its latency table's `late_memory_effects` (sm_90's: inval, proxy, membar, exch;
# sm_100/110/120's: proxy, ivall, tensor, exch).
#
# * mbarrier.inval (`SYNCS.CCTL.IV [a]`): the SYNCS unit writes the object back to shared
#   memory; the next access that may reach shared memory waits (LDS, ATOMS, generic LD/ATOM,
#   SYNCS; STG/ATOMG, global only, do not). The H200 showed why: our LDS right after it (fuzz
#   9500138) and our ATOMS three after it (9500082) read the object's earlier state or lost
#   their write to the write-back, our next mbarrier.init ~70 cycles after it was overwritten
#   and the kernel hung (9500217).
# * fence.proxy.async (`FENCE.VIEW.ASYNC.S/.G`, a write scoreboard in all of ptxas's): the next
#   async-proxy instruction waits (wgmma's WARPGROUP.ARRIVE, SYNCS, UBLKCP; plain loads and
#   stores after it do not wait in ptxas's code).
#   Our HGMMA after one without the wait read stale shared memory on the H200 (wgmma
#   kloop_n16_k3_c1_first_mbarrier: 830 of 1024 outputs off by up to 1e-2, with every variant).
# * `MEMBAR.*.CTA`: a read scoreboard in all of ptxas's (66 of 66); the FENCE.VIEW.ASYNC after it
#   waits on it (the proxy fence orders the writes the barrier has made visible).
# (not the L2 prefetches UBLKPF/UTMAPF, which read global memory only: ptxas 13.5's sm_90a
# code issues a UBLKPF right after an unwaited SYNCS.CCTL.IV, held-out fuzz seed 35090117)
SHARED_ACCESSES = frozenset({
    "LDS", "STS", "ATOMS", "LD", "ST", "ATOM", "RED", "LDSM", "STSM", "LDGSTS", "SYNCS", "ARRIVES",
    "UBLKCP", "UBLKRED", "UTMALDG", "UTMASTG", "UTMAREDG", "REDAS",
})
# the SYNCS unit's and the async proxy's instructions (bulk copies, TMA, wgmma)
ASYNC_PROXY = frozenset({"SYNCS", "ARRIVES", "UBLKCP", "UBLKRED", "UBLKPF", "UTMALDG", "UTMASTG", "UTMAREDG",
                         "UTMAPF", "UTMACMDFLUSH", "WARPGROUP", "HGMMA", "IGMMA", "QGMMA"})
# * `SYNCS.CCTL.IVALL` (sm_100/110/120's mbarrier.init after its STS.64 and proxy fence: the
#   SYNCS unit drops what it holds of shared memory): a write scoreboard in ptxas 13.5's code
#   (the fence's waited on first), and the next SYNCS (arrive), ATOMS or BAR.SYNC waits on it;
#   ptxas moves plain LDS/STS/LD above the fence pair, so none of them is seen after it
#   unwaited (branch isa35: per-lane inits followed by each kind of access, sm_100/110/120).
# * `FENCE.VIEW.ASYNC.T` (tcgen05.wait::st): a write scoreboard; the next LDTM or STTM waits
#   (ptxas 13.5, sm_100a: tests/test_codegen_tcgen05.py's round trip and variants of it).
# * `SYNCS.EXCH.64` (mbarrier.init of a uniform object, or once per lane value in a loop): a
#   write scoreboard in ptxas 13.5's code on sm_90/100/110/120, which the next SYNCS (arrive,
#   or the loop's next exchange) waits on; LDS/STS after it do not wait (branch isa35). Its
#   uniform sources are read late too (`uniform_late_readers`: ptxas waits on its read
#   scoreboard before writing them again).
TENSOR_MEMORY_ACCESSES = frozenset({"LDTM", "STTM"})
# L2 prefetches (UBLKPF, UTMAPF) write nothing a program reads: no proxy fence orders them
# (ptxas 13.5.37 moves a PTX-earlier `cp.async.bulk.prefetch.L2` after a FENCE.VIEW.ASYNC.S
# that then sets no scoreboard: branch fuzz35's sm_90a seed 47200147)
L2_PREFETCHES = frozenset({"UBLKPF", "UTMAPF"})
EFFECT_WAITERS = {"inval": SHARED_ACCESSES, "proxy": ASYNC_PROXY - L2_PREFETCHES, "membar": frozenset({"FENCE"}),
                  "ivall": SHARED_ACCESSES | {"BAR"}, "tensor": TENSOR_MEMORY_ACCESSES,
                  "exch": frozenset({"SYNCS"})}
MBARRIER_INVALIDATION: Fence = ("SYNCS", ("CCTL", "IV"))
SYNCS_INVALIDATE_ALL: Fence = ("SYNCS", ("CCTL", "IVALL"))


def memory_effect(opcode: str, modifiers) -> str | None:
    """The kind of late memory effect an instruction has (`EFFECT_WAITERS`), or None."""
    mods = tuple(modifiers)
    if (opcode, mods) == MBARRIER_INVALIDATION:
        return "inval"
    if (opcode, mods) == SYNCS_INVALIDATE_ALL:
        return "ivall"
    if opcode == "SYNCS" and mods[:1] == ("EXCH",):
        return "exch"
    if opcode == "FENCE" and mods == ("VIEW", "ASYNC", "T"):
        return "tensor"
    if opcode == "FENCE" and mods[:2] == ("VIEW", "ASYNC") and mods[2:] in (("S",), ("G",)):
        return "proxy"
    if opcode == "MEMBAR" and mods[-1:] == ("CTA",):
        return "membar"
    return None


def effect_on_read_scoreboard(kind: str) -> bool:
    """Whether ptxas puts the effect on the instruction's read scoreboard (MEMBAR's)."""
    return kind == "membar"
