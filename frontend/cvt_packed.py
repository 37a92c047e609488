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
PACKED = frozenset((".f16x2", ".bf16x2", ".tf32", ".ue8m0x2") + _FP8 + _FP6_FP4)

PAIRS: dict[tuple[str, str], int] = {
    (".f16x2", ".f32"): 3, (".bf16x2", ".f32"): 3, (".tf32", ".f32"): 2,
    **{(t, ".f32"): 3 for t in _FP8 + _FP6_FP4},
    **{(t, s): 2 for t in _FP8 for s in (".f16x2", ".bf16x2")},
    **{(d, t): 2 for t in _FP8 + _FP6_FP4 for d in (".f16x2", ".bf16x2")},
    (".ue8m0x2", ".f32"): 3, (".ue8m0x2", ".bf16x2"): 2, (".bf16x2", ".ue8m0x2"): 2,
}
# the pairs whose rounding this module checks (the others have target/version rules of
# their own, e.g. `.rz` with fp8 is PTX 9.4)
_ROUNDINGS = {(".f16x2", ".f32"): (".rn", ".rz"), (".bf16x2", ".f32"): (".rn", ".rz"),
              **{(t, ".f32"): (".rn",) for t in _FP8}, **{(t, ".f16x2"): (".rn",) for t in _FP8},
              **{(".f16x2", t): (".rn",) for t in _FP8}}
_ROUNDING = (".rn", ".rz", ".rm", ".rp", ".rna", ".rs", ".rni", ".rzi", ".rmi", ".rpi")


def involved(dst: str, src: str) -> bool:
    return dst in PACKED or src in PACKED


def types_problem(dst: str, src: str) -> str | None:
    if involved(dst, src) and (dst, src) not in PAIRS:
        return "Unexpected instruction types specified for 'cvt'"
    return None


def operand_count(dst: str, src: str, modifiers) -> int | None:
    n = PAIRS.get((dst, src))
    if n == 3 and ".rs" in modifiers:
        return 4                        # the random bits
    return n


def modifier_problem(dst: str, src: str, modifiers) -> str | None:
    """An illegal or missing rounding, a missing .satfinite, for the pairs checked here."""
    allowed = _ROUNDINGS.get((dst, src))
    if allowed is None:
        return None
    rounding = [m for m in modifiers if m in _ROUNDING]
    fp8 = dst in _FP8 or src in _FP8
    if rounding and rounding[-1] not in allowed and rounding[-1] != ".rz":
        # (an fp8 pair says it twice)
        return "\n".join(["Illegal rounding modifier for instruction 'cvt'"] * (2 if fp8 else 1))
    lines = []
    if dst in _FP8 and ".satfinite" not in modifiers:
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
