"""cvt with packed (`.f16x2`, `.bf16x2`, fp8/fp6/fp4 pairs) and `.tf32` types, as ptxas
13.5.37 checks them (probed on branch reject28).

The form table takes any type with a packed one (its operands are `*`), so ours accepted
conversions ptxas does not have (`cvt.sat.bf16x2.u16`, `cvt.u8.bf16x2`, `cvt.rn.f16x2.f16`)
and any operand count (`cvt.rn.bf16x2.f32 d, a`, `cvt.rna.satfinite.tf32.f32 d, a, b`).
The PTX ISA's conversions with these types, (destination, source) -> operand count:
"""
from __future__ import annotations

_FP8 = (".e4m3x2", ".e5m2x2")
_FP6_FP4 = (".e2m1x2", ".e2m3x2", ".e3m2x2")
# four-element narrowings, stochastic rounding only (`cvt.rs.satfinite.e4m3x4.f32 d, {a, b,
# e, f}, rbits`: PTX 8.7)
QUADS = (".e4m3x4", ".e5m2x4", ".e2m3x4", ".e3m2x4", ".e2m1x4")
PACKED = frozenset((".f16x2", ".bf16x2", ".tf32", ".ue8m0x2") + _FP8 + _FP6_FP4 + QUADS)
# `.rs` (stochastic rounding, an rbits operand): ptxas 13.5.37 takes it on these targets
# only ("Feature '.rs' not supported on .target 'sm_100f'", also sm_107f, sm_110a, sm_120a,
# sm_121a) and from PTX 8.7
RS_TARGETS = frozenset(("sm_100a", "sm_103a", "sm_107a"))
RS_VERSION = (8, 7)

PAIRS: dict[tuple[str, str], int] = {
    (".f16x2", ".f32"): 3, (".bf16x2", ".f32"): 3, (".tf32", ".f32"): 2,
    **{(t, ".f32"): 3 for t in _FP8 + _FP6_FP4},
    **{(t, s): 2 for t in _FP8 + _FP6_FP4 for s in (".f16x2", ".bf16x2")},
    **{(d, t): 2 for t in _FP8 + _FP6_FP4 for d in (".f16x2", ".bf16x2")},
    (".ue8m0x2", ".f32"): 3, (".ue8m0x2", ".bf16x2"): 2, (".bf16x2", ".ue8m0x2"): 2,
    **{(t, ".f32"): 3 for t in QUADS},       # d, {a, b, e, f}, rbits
}
# the pairs whose rounding this module checks (the others have target/version rules of
# their own, e.g. `.rz` with fp8 is PTX 9.4)
_ROUNDINGS = {(".f16x2", ".f32"): (".rn", ".rz", ".rs"), (".bf16x2", ".f32"): (".rn", ".rz", ".rs"),
              **{(t, ".f32"): (".rs",) for t in QUADS},
              **{(t, ".f32"): (".rn",) for t in _FP8 + _FP6_FP4},
              **{(t, s): (".rn",) for t in _FP8 + _FP6_FP4 for s in (".f16x2", ".bf16x2")},
              **{(".f16x2", t): (".rn",) for t in _FP8 + _FP6_FP4},
              **{(".bf16x2", t): (".rn",) for t in _FP8 + _FP6_FP4},
              (".ue8m0x2", ".f32"): (".rz", ".rp"), (".ue8m0x2", ".bf16x2"): (".rz", ".rp"),
              (".bf16x2", ".ue8m0x2"): (".rn",)}
# The register a narrow pair lives in, by exact type (ptxas 13.5.37: a .u16, .f16 or wider
# one is "Arguments mismatch"), and that of the f16x2/bf16x2 side of such a conversion (.u32
# refused too).
_NARROW_REGISTER = {".e2m1x2": (".b8",), **{t: (".b16",) for t in _FP8 + (".e2m3x2", ".e3m2x2", ".ue8m0x2")},
                    ".e2m1x4": (".b16",), **{t: (".b32",) for t in QUADS[:4]}}
_HALF_PAIR_REGISTER = (".b32", ".f16x2")
_ROUNDING = (".rn", ".rz", ".rm", ".rp", ".rna", ".rs", ".rni", ".rzi", ".rmi", ".rpi")


def involved(dst: str, src: str) -> bool:
    return dst in PACKED or src in PACKED


def types_problem(dst: str, src: str) -> str | None:
    if involved(dst, src) and (dst, src) not in PAIRS:
        return "Unexpected instruction types specified for 'cvt'"
    return None


def operand_count(dst: str, src: str, modifiers) -> int | None:
    n = PAIRS.get((dst, src))
    if n == 3 and ".rs" in modifiers and dst not in QUADS:
        return 4                        # the random bits
    return n


# conversions newer than their types (ptxas 13.5.37: "Feature 'cvt.e2m1x2.f16x2' requires PTX
# ISA .version 9.1 or later"); the rest of the fp6/fp4/ue8m0 pairs are PTX 8.6
_NEWER = {**{(t, ".bf16x2"): (9, 1) for t in _FP8 + _FP6_FP4},
          **{(t, ".f16x2"): (9, 1) for t in _FP6_FP4},
          **{(".bf16x2", t): (9, 2) for t in _FP8 + _FP6_FP4}}


def target_problems(dst: str, src: str, modifiers, version: tuple[int, int], target: str,
                    sm: int) -> list[str]:
    """ptxas's version and target messages for the fp6/fp4 and ue8m0 pairs (PTX 8.6, the
    sm_100+ arch- or family-specific targets: sm_100a, sm_103f, sm_120a, ...), for the fp8
    pairs' newer bf16x2 forms (PTX 9.1/9.2, the same targets; the fp8 pairs' own rules are in
    checks.py), and for `.rz` into an fp8/fp6/fp4 pair (PTX 9.4, newer than ptxas 13.5.37:
    refused on every target)."""
    if (dst, src) not in PAIRS:
        return []
    if ".rs" in modifiers and (dst, src) in _ROUNDINGS and ".rs" in _ROUNDINGS[dst, src]:
        out = []
        if version < RS_VERSION:
            out.append(f"Feature '.rs' requires PTX ISA .version {RS_VERSION[0]}.{RS_VERSION[1]} or later")
        if target not in RS_TARGETS:
            out.append(f"Feature '.rs' not supported on .target '{target}'")
        return out
    if ".rz" in modifiers and (src == ".f32" and dst in _FP8 + _FP6_FP4
                               or dst in (".f16x2", ".bf16x2") and src in _FP8 + _FP6_FP4):
        name = f"cvt with {dst}{src}.rz"
        return [f"Instruction '{name}' not supported on .target '{target}'",
                f"Feature '{name}' requires PTX ISA .version 9.4 or later"]
    out = []
    needed = _NEWER.get((dst, src))
    if ".ue8m0x2" in (dst, src):
        name, kind = "cvt with .ue8m0x2", "Instruction"
    elif dst in _FP6_FP4 or src in _FP6_FP4 or needed:
        name, kind = f"cvt{dst}{src}", "Feature"
    else:
        return []
    needed = needed or (8, 6)
    if version < needed:
        out.append(f"Feature '{name}' requires PTX ISA .version {needed[0]}.{needed[1]} or later")
    if not (sm >= 100 and target[-1:] in ("a", "f")):
        out.append(f"{kind} '{name}' not supported on .target '{target}'")
    return out


def registers_fit(dst: str, src: str, register_types, modifiers=()) -> bool:
    """Whether the operands' registers (their declared types; None: not a register) are of
    the types ptxas takes for a conversion to or from a narrow pair, and for `.rs`'s rbits
    (exactly .b32: ptxas 13.5.37 refuses .u32/.s32 and immediates)."""
    if ".rs" in modifiers and (dst, src) in ((".f16x2", ".f32"), (".bf16x2", ".f32")):
        return register_types[0] in (None,) + _HALF_PAIR_REGISTER and \
            (len(register_types) < 4 or register_types[3] == ".b32")
    if dst not in _NARROW_REGISTER and src not in _NARROW_REGISTER:
        return True
    if dst in QUADS:
        # d exactly .b32 (.b16 for e2m1x4), rbits exactly .b32 (the vector is checked
        # elsewhere)
        return (register_types[0] in (None,) + _NARROW_REGISTER[dst]) and \
            (len(register_types) < 3 or register_types[2] == ".b32")
    for i, reg in enumerate(register_types):
        ty = dst if i == 0 else src
        allowed = _NARROW_REGISTER.get(ty) or \
            (_HALF_PAIR_REGISTER if ty in (".f16x2", ".bf16x2") else None)
        if allowed and reg is not None and reg not in allowed:
            return False
    return True


def illegal_modifiers(dst: str, src: str, modifiers) -> list[str]:
    """ptxas 13.5.37's lines for .sat and .ftz on a packed conversion (both illegal there;
    ours took them before): a clamp with .sat, .satfinite with .ftz into f16x2/bf16x2 (where
    .satfinite is optional) "cannot be combined" first; .ftz from a packed source "does not
    apply" besides."""
    clamp = next((m for m in modifiers if m in (".relu", ".satfinite")), None)
    lines = []
    if clamp and ".sat" in modifiers:
        lines.append(f"Modifier '{clamp}' cannot be combined with modifier '.sat'")
    if ".satfinite" in modifiers and ".ftz" in modifiers and dst in (".f16x2", ".bf16x2"):
        lines.append("Modifier '.satfinite' cannot be combined with modifier '.ftz'")
    if ".sat" in modifiers:
        lines.append("Illegal modifier '.sat' for instruction 'cvt'")
    if ".ftz" in modifiers:
        lines.append("Illegal modifier '.ftz' for instruction 'cvt'")
        if src != ".f32":
            lines.append("Modifier '.ftz' does not apply to this type of convert operation")
    return lines


def modifier_problem(dst: str, src: str, modifiers) -> str | None:
    """An illegal or missing rounding, a missing .satfinite, for the pairs checked here."""
    allowed = _ROUNDINGS.get((dst, src))
    if (dst, src) == (".tf32", ".f32") and not any(m in _ROUNDING for m in modifiers):
        return "Rounding modifier required for instruction 'cvt'"     # (branch cvt31)
    if allowed is None:
        return None
    if ".satfinite" in modifiers and src in _NARROW_REGISTER and dst != ".bf16x2":
        # (widening: nothing to clamp; ptxas 13.5.37 takes it into bf16x2, PTX 9.2)
        return "Unexpected instruction types specified for 'cvt'"
    rounding = [m for m in modifiers if m in _ROUNDING]
    widening = dst in (".f16x2", ".bf16x2") and src in _FP8 + _FP6_FP4
    twice = dst in _FP8 or src in _FP8 or widening
    if rounding and rounding[-1] == ".rz" and widening:
        return "Illegal rounding modifier for instruction 'cvt'"     # (after the PTX 9.4 lines)
    if rounding and rounding[-1] not in allowed and not (rounding[-1] == ".rz" and src == ".f32"):
        # (an fp8 pair, or a widening, says it twice)
        return "\n".join(["Illegal rounding modifier for instruction 'cvt'"] * (2 if twice else 1))
    lines = []
    if ".relu" in modifiers and ".ue8m0x2" in (dst, src):
        lines.append("Illegal modifier '.relu' for instruction 'cvt' with type '.ue8m0x2'")
        if dst == ".bf16x2":
            lines.append("Illegal modifier '.relu' for instruction 'cvt' with type '.bf16x2.ue8m0x2'")
    if ".satfinite" in modifiers and src == ".ue8m0x2":
        lines.append(f"Illegal modifier '.satfinite' for instruction 'cvt' with type '{dst}{src}'")
    if (dst in _FP8 or dst in _FP6_FP4 or dst in QUADS) and ".satfinite" not in modifiers:
        lines.append(f"'.satfinite' modifier required for instruction 'cvt' with destination type '{dst}'")
    if not rounding:
        lines.append("Rounding modifier required for instruction 'cvt'")
    return "\n".join(lines) or None


# cvt.pack.sat: (u16|s16).s32 d, a, b; (u8|s8|u4|s4|u2|s2).s32.b32 d, a, b, c
_PACK_TYPES = frozenset((".u16", ".s16", ".u8", ".s8", ".u4", ".s4", ".u2", ".s2", ".s32", ".b32",
                         ".u32", ".b16", ".b64", ".u64", ".s64", ".f16", ".f32", ".f64", ".bf16",
                         ".f16x2", ".bf16x2", ".pred", ".tf32"))


def pack_problems(modifiers, n_operands: int) -> list[str]:
    """ptxas's messages for `cvt.pack` (it checked leniently before: any types were taken)."""
    types = tuple(m for m in modifiers[1:] if m in _PACK_TYPES)
    ok = (len(types) == 2 and types[0] in (".u16", ".s16") and types[1] == ".s32") or \
        (len(types) == 3 and types[0] in (".u8", ".s8", ".u4", ".s4", ".u2", ".s2")
         and types[1:] == (".s32", ".b32"))
    if not ok:
        return ["Unexpected instruction types specified for 'cvt.pack'"]
    out = [f"Illegal modifier '{m}' for instruction 'cvt.pack'" for m in modifiers[1:]
           if m not in _PACK_TYPES and m not in _ROUNDING and m != ".sat"]
    if any(m in _ROUNDING for m in modifiers):
        out.append("Illegal rounding modifier for instruction 'cvt.pack'")
    if out:
        return out
    if ".sat" not in modifiers:
        out.append(".sat modifier required for instruction 'cvt.pack'")
    if not out and n_operands != len(types) + 1:
        out.append("Arguments mismatch for instruction 'cvt.pack'")
    return out
