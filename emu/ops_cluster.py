"""barrier.cluster's split barrier over every thread of a thread-block cluster (sm_90+):
UCGABAR_ARV (barrier.cluster.arrive) counts the arriving lanes and does not block;
UCGABAR_WAIT (barrier.cluster.wait) blocks each lane until every live thread of its cluster
has arrived as often as it has (the machine completes the phases: Machine.
_release_cluster_barriers). A launch without clusters makes each CTA a cluster of one
(ptxas's code then takes its BAR.SYNC path, testing the driver's cluster-launch word)."""
from __future__ import annotations

from .machine import AT_BAR, CLUSTER_BARRIER
from .registry import semantics


@semantics("UCGABAR_ARV", vector=True)
def op_cluster_arrive(w, s, active, mask):
    lanes = w.idx[mask]
    if len(lanes):
        w.m.cga_arrived[lanes] += 1


@semantics("UCGABAR_WAIT", vector=True)
def op_cluster_wait(w, s, active, mask):
    lanes = w.idx[mask]
    if not len(lanes):
        return
    m = w.m
    m.state[lanes] = AT_BAR
    m.wait_arg[lanes] = CLUSTER_BARRIER
