"""ptxas 13.5's refusals of ldmatrix/stmatrix shape, type and format-conversion combinations,
in its words and order (probed on sm_80, sm_90a, sm_100, sm_100a, sm_120: branch ldsm31).

The 8-bit shapes (`ldmatrix .m16n16/.m8n16`, `stmatrix .m16n8`) and the packed 6-/4-bit
sources exist on the arch-specific and family targets of sm_100 and later only; `.m16n16`
needs `.trans` and at most two matrices, `.m8n16` takes `.b8x16.<packed>` and no `.trans`,
`.m16n8` (stmatrix) `.trans.b8`, `.m8n8` `.b16`."""
import re

_SHAPE = re.compile(r"\.m\d+n\d+$")
LEGAL_SHAPES = {"ldmatrix": (".m8n8", ".m16n16", ".m8n16"), "stmatrix": (".m8n8", ".m16n8")}
BLACKWELL_SHAPES = (".m16n16", ".m8n16", ".m16n8")
PACKED = (".b6x16_p32", ".b4x16_p64")
CONVERSION = ".b8x16"


def _new_forms_target(target_name: str, sm: int) -> bool:
    """The targets with the 8-bit shapes: sm_100a, sm_100f, sm_103a, sm_110a, sm_120a, ..."""
    return sm >= 100 and target_name[-1:] in ("a", "f")


def problems(op: str, mods: tuple, target_name: str, sm: int,
             vector: int | None = None) -> list[str]:
    """ptxas's messages for this ldmatrix/stmatrix spelling, in its order ([] when it has
    none of these); `vector`: the element count of the register vector operand."""
    shape = next((m for m in mods if _SHAPE.match(m)), None)
    if op not in LEGAL_SHAPES or shape is None:
        return []
    packed = [m for m in mods if m in PACKED]
    conv = CONVERSION in mods
    types = [m for m in mods if m in (".b8", ".b16")]
    count = next((int(m[2:]) for m in mods if m in (".x1", ".x2", ".x4")), None)
    legal = shape in LEGAL_SHAPES[op]
    new_shape = shape in BLACKWELL_SHAPES
    # the register vector: ptxas's sizes are 1, 2 and 4; two registers a 16x16 matrix
    illegal_size = [f"Illegal vector size: {vector}"] if vector not in (None, 1, 2, 4) else []
    target_ok = _new_forms_target(target_name, sm)
    feature_shapes = BLACKWELL_SHAPES if op == "ldmatrix" else (".m16n8", ".m16n16")
    shape_feature = [] if target_ok or shape not in feature_shapes or (
        shape == ".m8n16" and target_name[-1:] in ("a", "f")) else \
        [f"Feature '{shape}' not supported on .target '{target_name}'"]
    if op == "stmatrix" and (packed or conv):
        return shape_feature + illegal_size + ["Unexpected instruction types specified for 'stmatrix'"]
    vec = mismatch = []
    if count is not None and vector is not None:
        want = count * (2 if op == "ldmatrix" and shape == ".m16n16" and count < 4 else 1)
        if vector != want:
            vec = [f"Vector of size {want} is expected for argument {0 if op == 'ldmatrix' else 1} "
                   f"of instruction '{op}'"]
            # (a larger vector of a size ptxas has is not told twice)
            mismatch = [f"Argument vector size mismatch for instruction '{op}'"] \
                if vector < want or illegal_size else []
    if op == "stmatrix" and sm < 90:
        shape_feature = shape_feature + ["Feature 'stmatrix' requires .target sm_90 or higher"]
    late_vec = op == "ldmatrix" and shape == ".m16n16" and count == 4   # after the count's problem
    head = illegal_size + vec + shape_feature if op == "ldmatrix" and shape == ".m8n16" \
        else shape_feature + illegal_size + ([] if late_vec else vec)
    if not legal:
        out = head + [f"Illegal matrix shape '{shape}' for instruction '{op}'"]
        if op == "ldmatrix" and ".trans" in mods:
            out.append(f"Modifier .trans not allowed for shape '{shape}'")
        if op == "ldmatrix" and (packed or conv):
            out.append(f"Modifier format conversion not allowed for shape '{shape}'")
        return out + mismatch
    if shape == ".m8n8":
        if packed or conv:
            lines = ["Unexpected number of instruction types specified for ldmatrix with shape '.m8n8'",
                     "Incorrect instruction type specified for ldmatrix with shape '.m8n8'",
                     "Modifier format conversion not allowed for shape '.m8n8'"]
        elif types and types[0] != (".b16"):
            lines = [f"Incorrect instruction type specified for {op} with shape '.m8n8'"]
        else:
            lines = []
        return head + lines + mismatch if lines or vec else []
    if set(mods) & {".global", ".local", ".const", ".param"}:
        head.append(f"State space incorrect for instruction '{op}'")
    off_target = not target_ok
    conversion_feature = [f"Feature 'ldmatrix with format conversion' not supported on .target "
                          f"'{target_name}'"] if off_target and (packed or conv) else []
    b8_feature = [f"Feature '{op}.b8' not supported on .target '{target_name}'"] \
        if off_target and ".b8" in types and shape != ".m8n16" else []
    if packed and conv and mods.index(packed[0]) < mods.index(CONVERSION):
        return head + conversion_feature + \
            [f"Illegal modifier '{packed[0]}{CONVERSION}' for instruction '{op}'"] * 2
    out = list(head)
    if op == "stmatrix":                # .m16n8: .trans.b8
        out += b8_feature
        if types and types[0] != ".b8":
            out.append("Incorrect instruction type specified for stmatrix with shape '.m16n8'")
        if ".trans" not in mods:
            out.append("Modifier '.trans' require for instruction stmatrix with shape '.m16n8'")
        return out + mismatch
    if types and packed:                # `.b8.b6x16_p32`: a type and a packed source
        return out + b8_feature + [
            f"Unexpected number of instruction types specified for ldmatrix with shape '{shape}'",
            "Illegal modifier 'format conversion' for instruction 'ldmatrix'"] + \
            conversion_feature + ["Unexpected number of 'format conversion' modifiers specified"]
    # (the element type's feature: after the vector's problem; the conversion's: after .trans's)
    if shape == ".m16n16":
        if count == 4:
            out += ["Incorrect no. of matrix: 4 for ldmatrix with shape '.m16n16'"] + vec
        out += b8_feature
        if types and types[0] != ".b8":
            out.append("Incorrect instruction type specified for ldmatrix with shape '.m16n16'")
        if ".trans" not in mods:
            out.append("Modifier '.trans' require for instruction ldmatrix with shape '.m16n16'")
        out += conversion_feature
        if not types and bool(packed) != conv:
            out.append("Unexpected number of 'format conversion' modifiers specified")
        return out + mismatch
    if types:                           # .m8n16: a packed source only, no .trans
        out.append("Unexpected number of instruction types specified for ldmatrix with shape '.m8n16'")
    if ".trans" in mods:
        out.append("Modifier .trans not allowed for shape '.m8n16'")
    out += conversion_feature
    if not types and (bool(packed) != conv or not packed):
        out.append("Unexpected number of 'format conversion' modifiers specified")
    return out + mismatch
