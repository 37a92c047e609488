"""The SM-level timing model (issue 20): a kernel launch's cycles on a named GPU, from the
functional emulator's instruction trace, with occupancy, per-pipe throughput, dependent
latency, L1/L2/DRAM and shared-memory bank conflicts. Facts are data (`gpus.json`).

    from ptx2sass.emu.timing import estimate
    est = estimate(cubin, "kernel", grid, block, params)   # est.cycles, est.occupancy
"""
from .facts import SmFacts, facts_for
from .occupancy import Occupancy, occupancy
from .model import Estimate, estimate, simulate

__all__ = ["SmFacts", "facts_for", "Occupancy", "occupancy", "Estimate", "estimate", "simulate"]
