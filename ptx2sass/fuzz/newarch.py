"""Programs for sm_90 and newer targets: the `.target` and `.version` they are written for,
and feature groups of those targets' own instructions (thread-block clusters, elect,
mbarrier transaction counts, bulk copies, proxy fences, stmatrix, redux.f32, fp6/fp4
conversions).

Programs for sm_89 and older keep sm_89 PTX, byte for byte as before: the new groups are
drawn from a random stream of their own (`draw_groups`), and only for a campaign arch of
sm_90 or newer, so the generator's main stream (and so every older program) is untouched.

Which target has which group is data (`GROUPS`), from the PTX ISA manual's "Target ISA
notes" of each instruction: the first sm, and whether only the arch-specific (`a`)
targets have it. Each statement is also checked against the PTX ISA inventory where it
knows the spelling (`statement_on_target`).
"""
from __future__ import annotations

import functools
import random
from dataclasses import dataclass

# The first target whose programs are written for the campaign arch itself.
FIRST_OWN_TARGET = 90
# The PTX version of those programs: ptxas 13.5 takes it for every sm_90+ target, and it
# has every form the groups below write (cvt's fp6 from bf16x2 came with PTX 9.1).
OWN_TARGET_PTX = "9.1"


@dataclass(frozen=True)
class Group:
    """A feature group of the newer targets: the probability that a program enables it,
    the first sm that has it, whether only arch-specific targets do."""
    probability: float
    min_sm: int
    arch_specific: bool = False
    max_sm: int | None = None      # the first sm past min_sm that lacks it again


# The manual's Target ISA notes:
#   cluster     %cluster_*, %clusterid, mapa, getctarank, barrier.cluster, ld/st/atom
#               .shared::cluster: sm_90 (PTX 7.8)
#   elect       elect.sync: sm_90 (PTX 8.0)
#   fences      fence.proxy.async*, fence.mbarrier_init, fence.acq_rel.cluster,
#               griddepcontrol, cp.async.bulk.prefetch.L2: sm_90 (PTX 7.8/8.0)
#   bulk        mbarrier.arrive.expect_tx, mbarrier.try_wait.parity, cp.async.bulk between
#               global and shared memory: sm_90 (PTX 8.0)
#   stmatrix    stmatrix.sync.aligned: sm_90 (PTX 7.8); movmatrix: sm_75 (PTX 7.8)
#   reduxf      redux.sync.{min,max}[.abs][.NaN].f32: sm_100a, sm_103a (PTX 8.6); ptxas 13.5
#               refuses it on sm_110a, sm_120a, sm_121a ("Instruction 'redux.f32' not supported")
#   fp6         cvt to/from e2m1x2, e2m3x2, e3m2x2, ue8m0x2: sm_100a, sm_101a, sm_120a
#               (PTX 8.6/8.7)
#   async       st.async / red.async ...mbarrier::complete_tx::bytes into a CTA of the
#               cluster: sm_90 (PTX 8.1); a program with it is launched in clusters
#   maxnreg     setmaxnreg.{inc,dec}.sync.aligned.u32: sm_90a, sm_100a/f, sm_103a, sm_110a,
#               sm_120a, sm_121a (PTX 8.0); the kernel gets a `.maxnreg` (without one ptxas
#               drops the instruction)
#   sparse      mma.sp / mma.sp::ordered_metadata forms the spec gained after the inventory
#               draw's marker (forms.DRAW_UNTIL: f16 accumulators, tf32, 4-bit integers,
#               fp8, ordered metadata): sm_80/sm_89, drawn only here so that programs for
#               sm_89 and older stay as they were
#   corner      fp8/fp6/fp4/ue8m0/f16/bf16 conversions and packed f16x2/bf16x2 arithmetic
#               fed the formats' corner values (fuzz/corners.py): the fp6 group's targets
GROUPS: dict[str, Group] = {
    "cluster": Group(0.4, 90),
    "elect": Group(0.3, 90),
    "fences": Group(0.25, 90),
    "bulk": Group(0.35, 90),
    "stmatrix": Group(0.25, 90),
    "reduxf": Group(0.35, 100, arch_specific=True, max_sm=110),
    "fp6": Group(0.35, 100, arch_specific=True),
    # appended after the groups above: each program's draws of those stay what they were
    "async": Group(0.3, 90),
    "maxnreg": Group(0.3, 90, arch_specific=True),
    "sparse": Group(0.3, 90),
    "corner": Group(0.35, 100, arch_specific=True),
}
# `.maxnreg` of a program with the maxnreg group (its setmaxnreg.dec counts lie below it)
MAXNREG_CHOICES = (64, 128, 168, 232, 240)
# cluster shapes (x CTAs) and how many clusters along x
CLUSTER_SHAPES = ((2, 1, 1), (2, 1, 1), (4, 1, 1))


# ptxas 13.5.37 writes `cp.async.bulk.shared::cluster.global` as a system call (a CALL.ABS
# listed in EIATTR_SYSCALL_OFFSETS) on these targets, and a system call needs the ABI that a
# `.func` with two results turns off: "'Indirect Functions or Extern Functions' requires ABI"
# (fuzz36, sm_121a seed 48300028; sm_120 alike; sm_90a, sm_100a, sm_103a and sm_110a compile it)
BULK_CLUSTER_COPY_SYSCALL_SM = frozenset({120, 121})


def bulk_cluster_copy_is_a_syscall(arch: str | None) -> bool:
    """Whether ptxas makes the global -> shared::cluster bulk copy a system call on `arch`."""
    if arch is None:
        return False
    from ptx2sass.encoder.arch import target
    return target(arch).sm in BULK_CLUSTER_COPY_SYSCALL_SM


def own_target(arch: str | None) -> bool:
    """Whether programs for `arch` are written for `arch` itself (sm_90 and newer)."""
    if arch is None:
        return False
    from ptx2sass.encoder.arch import target
    return target(arch).sm >= FIRST_OWN_TARGET


def is_arch_specific(arch: str) -> bool:
    """`sm_90a`, `sm_100a`: the arch-specific targets."""
    return arch.endswith("a")


def program_header(arch: str | None) -> tuple[str, str] | None:
    """(`.target`, `.version`) of programs for `arch`; None: the generator's own (sm_89)."""
    if not own_target(arch):
        return None
    return arch, OWN_TARGET_PTX


def groups_on(arch: str) -> list[str]:
    from ptx2sass.encoder.arch import target
    sm = target(arch).sm
    return [name for name, g in GROUPS.items()
            if sm >= g.min_sm and (g.max_sm is None or sm < g.max_sm)
            and (is_arch_specific(arch) or not g.arch_specific)]


def draw_maxnreg(seed: int) -> int:
    """The kernel's `.maxnreg` when it has the maxnreg group: a stream of its own."""
    return random.Random(seed * 0x2545F491 + 0x3D).choice(MAXNREG_CHOICES)


def draw_groups(seed: int, arch: str) -> set[str]:
    """The new groups a program enables: a stream of its own, so the draws of the main
    stream stay as they were."""
    rng = random.Random(seed * 0x9E3779B1 + 0x5A90)
    return {name for name in groups_on(arch) if rng.random() < GROUPS[name].probability}


@functools.cache
def spelling_ok(spelling: str, arch: str) -> bool:
    """Whether the PTX ISA inventory has `spelling` on `arch` at the programs' version (a
    spelling it does not know counts as present: GROUPS gates those)."""
    try:
        from ptx2sass.frontend import inventory
    except ImportError:
        return True
    if not inventory.spelling_known(spelling):
        return True
    from ptx2sass.encoder.arch import target
    version = tuple(int(x) for x in OWN_TARGET_PTX.split("."))
    return inventory.spelling_valid(spelling, target(arch).sm, version, is_arch_specific(arch))


def statement_on_target(text: str, arch: str) -> bool:
    from ptx2sass.fuzz.generator import spellings
    return all(spelling_ok(s, arch) for s in spellings(text))
