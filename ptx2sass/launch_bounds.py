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
