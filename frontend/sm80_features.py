"""What a `.target` below sm_80 (sm_75, Turing) may not use, as data: each rule names the
instructions it applies to and the message ptxas 13.5 prints for it.

Read off ptxas 13.5.37 for `.target sm_75`: every inventory form that exists on sm_80 and
not on sm_75, compiled with `.target sm_75` (tests/test_codegen_turing.py repeats the sweep
on a sample). `checks.Checker.check_features` reports each rule that matches an
instruction's opcode and modifiers, after the general `instructions.FEATURES` table (min/max's
`.NaN` and half types are `checks._minmax_modifier_problems`', with their other modifiers).
"""
from __future__ import annotations

from ptx2sass.records import dataclass

SM = 80


@dataclass(frozen=True, slots=True)
class Rule:
    opcodes: frozenset[str]          # first word ("cvt"); empty: any
    any_of: tuple[str, ...]          # one of these modifiers present
    message: str                     # ptxas's words, before " requires .target sm_80 or higher"
    all_of: tuple[str, ...] = ()     # and all of these
    none_of: tuple[str, ...] = ()    # and none of these
    contains: str = ""               # the dotted spelling contains this (".bf16.f32": the order)
    suffix: str = " requires .target sm_80 or higher"


def _rule(ops: str, any_of: str, message: str, **kw) -> Rule:
    return Rule(frozenset(ops.split()), tuple(any_of.split()), message, **kw)


_DENSE_FLOAT = (".f16", ".bf16", ".tf32", ".e4m3", ".e5m2")
_MMA_SPARSE_INT = dict(all_of=(".sp",), none_of=_DENSE_FLOAT)
# `mma.sp::ordered_metadata` (PTX 8.5) is reported as `mma.sp` is
_MMA_ORDERED_INT = dict(all_of=(".sp::ordered_metadata",), none_of=_DENSE_FLOAT)
_SPARSE = (".sp", ".sp::ordered_metadata")

RULES: tuple[Rule, ...] = (
    _rule("abs cvt fma max min mma neg wmma", ".bf16", "Feature '.bf16'"),
    _rule("abs cvt fma max min neg", ".bf16x2", "Feature '.bf16x2'"),
    _rule("cvt", ".bf16", "Feature 'cvt.bf16.f32'", contains=".bf16.f32"),
    _rule("cvt", ".bf16", "Feature 'cvt with .f32.bf16'", contains=".f32.bf16"),
    _rule("cvt mma wmma", ".tf32", "Feature '.tf32'"),
    _rule("cvt", ".f16x2", "Feature 'cvt.f16x2.f32'", all_of=(".f32",)),
    _rule("cvt", ".bf16x2", "Feature 'cvt.bf16x2.f32'", all_of=(".f32",)),
    _rule("cvt fma", ".relu", "Modifier '.relu'"),
    _rule("atom cp ld red st", ".L2::cache_hint", "Modifier '.L2::cache_hint'"),
    _rule("cp", ".L2::256B", "Modifier '.L2::256B'"),
    _rule("prefetch", ".L2::evict_last .L2::evict_normal", "Modifier 'cache eviction priority' on 'prefetch'"),
    _rule("applypriority", "", "Feature 'applypriority'"),
    _rule("applypriority", ".L2::evict_normal", "Modifier '.evict_normal' on 'applypriority'"),
    _rule("discard", "", "Feature 'discard'"),
    _rule("mma", ".m16n8k64", "Feature '.m16n8k64'", none_of=_SPARSE),
    _rule("mma", ".m16n8k128", "Feature '.m16n8k128'"),
    _rule("mma", ".m16n8k256", "Feature '.m16n8k256'"),
    _rule("mma", ".m16n8k4", "Feature '.m16n8k4'", all_of=(".tf32",)),
    _rule("mma", ".m16n8k8", "Feature '.m16n8k8'", none_of=(".f16",) + _SPARSE),
    _rule("mma", ".m8n8k4", "Feature '.m8n8k4 with double types'", all_of=(".f64",)),
    _rule("mma", ".and", "Modifier '.and' on 'mma'"),
    _rule("mma", " ".join(_SPARSE), "Feature 'Sparse MMA'"),
    *(r for sp in _SPARSE for r in (
        _rule("mma", ".m16n8k16", "Modifier '.m16n8k16'", all_of=(sp,)),
        _rule("mma", ".m16n8k32", "Modifier '.m16n8k32'", all_of=(sp,), none_of=(".s8", ".u8")))),
    *(_rule("mma", f".m16n8k{k}", f"Feature 'Sparse Integer MMA with shape .m16n8k{k}'", **kind)
      for kind in (_MMA_SPARSE_INT, _MMA_ORDERED_INT) for k in (32, 64, 128)),
    _rule("wmma", ".bf16 .tf32", "Feature 'WMMA with .bf16/.tf32 FP types'"),
    _rule("wmma", ".f64", "Feature 'WMMA with fp64 types'"),
    _rule("wmma", ".m8n8k4", "Modifier '.m8n8k4'"),
    _rule("wmma", ".m16n16k8", "Modifier '.m16n16k8'"),
    _rule("wmma", ".and", "Modifier '.and' on 'wmma.mma'"),
    _rule("wmma", ".bf16 .tf32 .f64", "Instruction 'wmma.mma'", contains="wmma.mma",
          suffix=" requires .target 80 or higher"),
    _rule("mbarrier", ".inval", "Feature 'mbarrier.inval'"),
    _rule("mbarrier", ".arrive_drop", "Feature 'mbarrier.arrive_drop'"),
    _rule("mbarrier", ".pending_count", "Feature 'mbarrier.pending_count'"),
    _rule("cp", ".commit_group", "Feature 'cp.async.commit_group'"),
    _rule("cp", ".wait_group", "Feature 'cp.async.wait_group'"),
    _rule("cp", ".wait_all", "Feature 'cp.async.wait_all'"),
    _rule("cp", ".mbarrier", "Feature 'cp.async.mbarrier.arrive'"),
)
# createpolicy (sm_80 and PTX 7.4, per eviction priority as written): checks.createpolicy_problems
# special registers sm_75 has no value for
SPECIAL_REGISTERS = frozenset(f"%reserved_smem_offset_{s}" for s in ("begin", "end", "cap", "0", "1"))


def problems(opcode: str, modifiers: tuple[str, ...], target_sm: int) -> list[str]:
    """ptxas's messages for an instruction spelt `opcode` + `modifiers` on `.target sm_<target_sm>`."""
    if target_sm >= SM:
        return []
    mods = set(modifiers)
    spelling = opcode + "".join(modifiers)
    out = []
    for r in RULES:
        if r.opcodes and opcode not in r.opcodes:
            continue
        if r.any_of and not mods & set(r.any_of):
            continue
        if not mods.issuperset(r.all_of) or mods & set(r.none_of) or r.contains not in spelling:
            continue
        out.append(r.message + r.suffix)
    return out


def register_problem(name: str, target_sm: int) -> str | None:
    """ptxas's message for reading special register `name` on `.target sm_<target_sm>`."""
    if target_sm < SM and name in SPECIAL_REGISTERS:
        return f"Feature '{name}' requires .target sm_{SM} or higher"
    return None
