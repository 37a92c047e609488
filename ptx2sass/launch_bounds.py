"""What ptxas 13.5 derives from a kernel's `.maxntid`/`.reqntid` and `.minnctapersm`: the
CTAs it plans to keep resident on one SM, and the registers per thread that leaves.

It ignores `.minnctapersm`, with a warning, where that many CTAs could not be resident at
once (the Target's `resident_limits`: first the CTA count, then the threads, counted in
whole warps). The register limit is what lets the resident warps, spread evenly over the
SM's four sub-partitions, share a sub-partition's quarter of the register file, in steps of
8 registers (probed: `.maxntid 800` gets 72, 25 warps being 7 on one sub-partition)."""
from __future__ import annotations

REGISTER_FILE_PER_SM = 65536     # 32-bit registers per SM, sm_75 to sm_121
SUB_PARTITIONS = 4               # warp schedulers per SM, each with a quarter of the file
REGISTER_GRANULE = 8             # registers per thread are allotted in steps of 8


def ignored_minnctapersm(kernel: str, threads: int, blocks: int, target) -> str | None:
    """ptxas's warning when it ignores `.minnctapersm blocks` for CTAs of `threads`."""
    max_threads, max_ctas = target.resident_limits
    if blocks > max_ctas:
        return f"Value of minnctapersm for entry {kernel} is out of range. minnctapersm will be ignored"
    if _warps(threads) * 32 * blocks > max_threads:
        return (f"Value of threads per SM for entry {kernel} is out of range. "
                ".minnctapersm will be ignored")
    return None


def register_limit(threads: int, blocks: int, target) -> int | None:
    """Registers per thread for `blocks` resident CTAs of `threads` (`blocks` as ptxas keeps
    it: 1 where it ignores the directive); None where it is 255 or more."""
    if ignored_minnctapersm("", threads, blocks, target):
        blocks = 1
    per_sub_partition = -(-_warps(threads) * blocks // SUB_PARTITIONS)
    per_thread = REGISTER_FILE_PER_SM // SUB_PARTITIONS // (per_sub_partition * 32)
    limit = per_thread // REGISTER_GRANULE * REGISTER_GRANULE
    return limit if limit < 255 else None


def _warps(threads: int) -> int:
    return -(-threads // 32)



def resident_ctas(threads: int, registers: int, target) -> int:
    """CTAs of `threads` that can be resident on one SM at `registers` per thread (rounded
    up to REGISTER_GRANULE; each sub-partition holds a quarter of the file and of the warps,
    as `register_limit` counts them); 0 where not one fits."""
    max_threads, max_ctas = target.resident_limits
    per_thread = -(-max(registers, 1) // REGISTER_GRANULE) * REGISTER_GRANULE
    warps = _warps(threads)
    fit = 0
    for blocks in range(1, max_ctas + 1):
        if warps * 32 * blocks > max_threads:
            break
        if -(-warps * blocks // SUB_PARTITIONS) * 32 * per_thread > REGISTER_FILE_PER_SM // SUB_PARTITIONS:
            break
        fit = blocks
    return fit


def occupancy_ceiling(threads: int, registers: int, target, file: int = 255) -> int:
    """The most registers per thread (at most `file`) that keep as many CTAs of `threads`
    resident as `registers` do: what a pass may add without costing the SM warps
    (256-thread CTAs on sm_89: 35 registers and 40 keep six resident, 41 only five)."""
    ctas = resident_ctas(threads, registers, target)
    best = registers
    for r in range(registers + 1, file + 1):
        if resident_ctas(threads, r, target) < ctas:
            break
        best = r
    return best


def full_occupancy_registers(target) -> int:
    """The most registers per thread at which an SM holds its most threads (the Target's
    `resident_limits`), in steps of REGISTER_GRANULE: 32 where 2048 threads fit (sm_80,
    sm_90), 40 where 1536 do (sm_86, sm_89). ptxas keeps a kernel that bounds nothing
    within it where an order allows (spmv_csr's scalar and vector loops: 32 on sm_80/sm_90,
    40 on sm_86/sm_89)."""
    max_threads, _ = target.resident_limits
    return REGISTER_FILE_PER_SM // max_threads // REGISTER_GRANULE * REGISTER_GRANULE
