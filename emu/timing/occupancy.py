"""Occupancy: resident CTAs and warps per SM from registers, shared memory and threads per
CTA, by the CUDA occupancy rules (CUDA C++ Programming Guide, 'Multiprocessor Level' /
occupancy calculator): registers are allocated per warp in units of `register_unit`, and a
warp's registers come from one sub-partition's quarter of the file; shared memory per CTA
is its static + dynamic bytes plus the 1 KB the system reserves, rounded to `shared_unit`."""
from __future__ import annotations

from dataclasses import dataclass

from .facts import SmFacts


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    ctas: int                 # resident CTAs per SM
    warps: int                # resident warps per SM
    limiter: str              # "warps", "ctas", "registers", "shared" (the binding limit)
    shared_carveout: int      # bytes of the unified L1/shared array given to shared memory

    def fraction(self, facts: SmFacts) -> float:
        return self.warps / facts.max_warps


class LaunchTooLarge(ValueError):
    """The CTA cannot be resident at all (too many threads, registers or shared bytes)."""


def occupancy(facts: SmFacts, threads_per_cta: int, registers_per_thread: int,
              shared_per_cta: int = 0) -> Occupancy:
    if not 1 <= threads_per_cta <= facts.max_threads_per_cta:
        raise LaunchTooLarge(f"{threads_per_cta} threads per CTA (limit {facts.max_threads_per_cta})")
    if registers_per_thread > facts.max_registers_per_thread:
        raise LaunchTooLarge(f"{registers_per_thread} registers per thread")
    if shared_per_cta > facts.shared_per_cta:
        raise LaunchTooLarge(f"{shared_per_cta} shared bytes per CTA (limit {facts.shared_per_cta})")
    warps_per_cta = -(-threads_per_cta // 32)
    limits = {"warps": facts.max_warps // warps_per_cta, "ctas": facts.max_ctas}
    regs_per_warp = _round_up(max(registers_per_thread, 1) * 32, facts.register_unit)
    per_sp = facts.registers // facts.sub_partitions // regs_per_warp
    limits["registers"] = per_sp * facts.sub_partitions // warps_per_cta
    smem = _round_up(shared_per_cta + facts.shared_reserved_per_cta, facts.shared_unit)
    limits["shared"] = facts.shared_per_sm // smem
    limiter = min(limits, key=lambda k: limits[k])    # dict order breaks ties: warps first
    ctas = limits[limiter]
    if ctas == 0:
        raise LaunchTooLarge(f"a CTA of {threads_per_cta} threads x {registers_per_thread} registers "
                             f"and {shared_per_cta} shared bytes does not fit an SM ({limiter})")
    need = ctas * smem if shared_per_cta else 0
    carveout = next((kb * 1024 for kb in facts.shared_carveouts_kb if kb * 1024 >= need),
                    facts.shared_carveouts_kb[-1] * 1024)
    return Occupancy(ctas, ctas * warps_per_cta, limiter, carveout)
