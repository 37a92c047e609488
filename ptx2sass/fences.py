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


# mbarrier.inval (`SYNCS.CCTL.IV [a]`): the SYNCS unit writes the object back to shared
# memory after the instruction issues, so the next access that may reach shared memory waits
# for it on a write scoreboard, as ptxas 13.5's sm_90 code does in every fuzz cubin of GPU run
# 25 with one (LDS, ATOMS, generic LD/ATOM wait; STG/ATOMG, global only, do not). The H200 showed
# why: our LDS one instruction after it (fuzz 9500138) and our ATOMS three after it (9500082)
# read the object's earlier state, or had their own write overwritten by the write-back.
MBARRIER_INVALIDATION: Fence = ("SYNCS", ("CCTL", "IV"))
# opcodes that may read or write shared memory (shared, generic or asynchronous accesses)
SHARED_ACCESSES = frozenset({
    "LDS", "STS", "ATOMS", "LD", "ST", "ATOM", "RED", "LDSM", "STSM", "LDGSTS", "SYNCS", "ARRIVES",
    "UBLKCP", "UBLKRED", "UTMALDG", "UTMASTG", "UTMAREDG", "REDAS",
})


def is_mbarrier_invalidation(opcode: str, modifiers) -> bool:
    return (opcode, tuple(modifiers)) == MBARRIER_INVALIDATION
