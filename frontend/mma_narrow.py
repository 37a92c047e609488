"""`mma.sync`'s kind::f8f6f4 with fp6/fp4 operands and the block-scaled kinds (kind::mxf8f6f4,
kind::mxf4, kind::mxf4nvf4 `.block_scale[.scale_vec::NX] ... .stype d, a, b, c, scale-a,
{byte-id-a, thread-id-a}, scale-b, {byte-id-b, thread-id-b}`): ptxas 13.5.37's refusals, in its
words and order (branch mma120_31; read off its messages for tools/mma_sm120_sweep.py's forms
and single probes on sm_120a/f, sm_121a/f, sm_120, sm_100a/f, sm_103a, sm_110a, sm_90a, sm_89,
sm_80, sm_75).

Where ptxas takes them: the FP6/FP4 operand types and block scaling on sm_120a/f and sm_121a/f
only (its instruction lines "mma with with FP6/FP4 floating point type" -- the word twice, as
ptxas writes it -- and "mma with block scale"); `.kind::f8f6f4`, the mx kinds and `.block_scale`
are features of the a/f targets from sm_100 on (so sm_100a compiles kind::f8f6f4 with fp8
operands), `.scale_vec::NX` of the a targets and sm_12x's f targets (sm_100f: "Feature
'.scale_vec::1X' not supported", written or implied). PTX 8.7 for all of it, `.scale_vec::4X`
with `.ue8m0` 9.1.

A selector pair is checked per instruction (argument 5 is A's pair, 7 B's): byte-id in [0..3]
for `::1X` ("value out of range"), 0 or 2 for `::2X`, 0 for `::4X` ("unexpected value, expected
to be ..."); thread-id-a in [0..1], thread-id-b in [0..3]."""
from __future__ import annotations

KINDS = (".kind::f8f6f4", ".kind::mxf8f6f4", ".kind::mxf4", ".kind::mxf4nvf4")
BLOCK_KINDS = KINDS[1:]
FP8 = (".e4m3", ".e5m2")
NARROW = (".e3m2", ".e2m3", ".e2m1")
SCALE_TYPES = (".ue8m0", ".ue4m3")
SCALE_VECS = (".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X")
# the size a block-scaled kind implies when none is written (PTX ISA; mxf4nvf4 needs one)
DEFAULT_VEC = {".kind::mxf8f6f4": ".scale_vec::1X", ".kind::mxf4": ".scale_vec::2X"}
# shape of each kind (the block-scaled ones)
KIND_SHAPE = {".kind::mxf8f6f4": ".m16n8k32", ".kind::mxf4": ".m16n8k64",
              ".kind::mxf4nvf4": ".m16n8k64"}
# byte-id's allowed values per size: a range (1X) or a list (2X, 4X)
BYTE_IDS = {".scale_vec::1X": range(4), ".scale_vec::2X": (0, 2), ".scale_vec::4X": (0,)}


def involved(modifiers) -> bool:
    """Whether this `mma` is one of the forms this module checks (fp8 m16n8k64 too: ptxas's
    "Incorrect instruction type" line)."""
    return any(m in KINDS or m in NARROW or m in SCALE_TYPES or m in SCALE_VECS
               or m == ".block_scale" for m in modifiers) \
        or (".m16n8k64" in modifiers and any(m in FP8 for m in modifiers))


def _split(target: str) -> tuple[int, str]:
    digits = "".join(c for c in target[3:] if c.isdigit())
    return int(digits or 0), target[-1:] if target[-1:] in ("a", "f") else ""


def sync_target(target: str) -> bool:
    """Whether `target` has these forms (sm_120a/f, sm_121a/f)."""
    sm, suffix = _split(target)
    return bool(suffix) and 120 <= sm < 130


def _types(modifiers) -> list[str]:
    return [m for m in modifiers if m in (".f16", ".f32") + FP8 + NARROW + SCALE_TYPES
            or m in (".bf16", ".tf32", ".s8", ".u8", ".s4", ".u4", ".b1", ".f64", ".s32")]


def size(modifiers) -> str | None:
    """The scale-vector size written, or implied by the kind."""
    written = next((m for m in modifiers if m in SCALE_VECS), None)
    kind = next((m for m in modifiers if m in BLOCK_KINDS), None)
    return written or DEFAULT_VEC.get(kind)


def problems(modifiers, n_operands: int, version, target: str, fp8_problems, sizes=()) -> list[str]:
    """ptxas's lines for this spelling (the selector values aside): PTX version, target, then
    the form's own consistency. `fp8_problems()` gives the fp8 mma lines (sm_89, PTX 8.4)."""
    mods = tuple(modifiers)
    sm, suffix = _split(target)
    kind = next((m for m in mods if m in KINDS), None)
    types = _types(mods)
    narrow = any(t in NARROW for t in types)
    stype = next((t for t in types if t in SCALE_TYPES), None)
    written_vec = next((m for m in mods if m in SCALE_VECS), None)
    scaled = kind in BLOCK_KINDS or ".block_scale" in mods
    sync = sync_target(target)
    feature_target = bool(suffix) and sm >= 100
    unsupported = f"not supported on .target '{target}'"
    out = []
    # each feature's PTX version line, then its target line, feature by feature (ptxas's order)
    if scaled:
        if version < (8, 7):
            out.append("Feature 'mma with block scale' requires PTX ISA .version 8.7 or later")
        if not sync:
            out.append(f"Instruction 'mma with block scale' {unsupported}")
        if written_vec == ".scale_vec::4X" and stype == ".ue8m0" and version < (9, 1):
            out.append("Feature 'mma with .scale_vec::4X and .ue8m0 scale type' requires PTX ISA "
                       ".version 9.1 or later")
        if kind == ".kind::mxf4nvf4" and version < (8, 7):
            out.append("Feature '.kind::mxf4nvf4' requires PTX ISA .version 8.7 or later")
        if kind is not None and not feature_target:
            out.append(f"Feature '{kind}' {unsupported}")
        if ".block_scale" in mods and not feature_target:
            out.append(f"Feature '.block_scale' {unsupported}")
        if written_vec == ".scale_vec::4X" and version < (8, 7):
            out.append("Feature '.scale_vec::4X' requires PTX ISA .version 8.7 or later")
        vec = size(mods)
        if vec is not None and not sync and not (feature_target and suffix == "a"):
            out.append(f"Feature '{vec}' {unsupported}")
        if not sync:
            return out
    else:
        if narrow and version < (8, 7):
            out.append("Feature 'mma with with FP6/FP4 floating point type' requires PTX ISA "
                       ".version 8.7 or later")
        if any(t in FP8 for t in types[1:3]) and not narrow:
            out += fp8_problems()
        if not sync:
            if narrow:
                out.append(f"Instruction 'mma with with FP6/FP4 floating point type' {unsupported}")
            if kind is not None and not feature_target:
                out.append(f"Feature '{kind}' {unsupported}")
            elif kind is None and narrow:
                out.append(".kind::f8f6f4 modifier required for instruction 'mma'")
            return out
    if any(m.startswith(".sp") for m in mods):
        return out + _sparse_problems(mods, kind, types, stype, written_vec, n_operands,
                                      tuple(sizes))
    return out + _form_problems(mods, kind, types, stype, written_vec, n_operands, tuple(sizes))


# the dense shape whose rules a sparse kind's shape follows (k halved: A keeps half its elements)
SPARSE_TO_DENSE = {".m16n8k64": ".m16n8k32", ".m16n8k128": ".m16n8k64"}


def _sparse_problems(mods, kind, types, stype, written_vec, n_operands, sizes) -> list[str]:
    """`mma.sp[::ordered_metadata] ... .kind::*` (branch sparse120, read off
    tools/mma_sparse_sm120_forms.py's `--refusals` grid): a scale type with f16, `.block_scale`
    without a scale type; the unscaled spellings (kind::f8f6f4's operands) at a shape other than
    m16n8k64; the scaled ones as the dense form of half the k says them (its shape renamed
    back, no "Arguments mismatch": ten operands are the sparse form's count), mxf4's at
    m16n8k32 their own lines. `sparse_tail` gives the lines after the selectors'."""
    shape = next((m for m in mods if m.startswith(".m") and "n" in m and "k" in m), None)
    ab = [t for t in types if t in FP8 + NARROW]
    if stype is not None and ".f16" in types:
        return ["Unexpected instruction types specified for 'mma'"]
    if stype is None and ".block_scale" in mods and n_operands == 10:
        return ["Arguments mismatch for instruction 'mma'"]
    vector = ["Argument vector size mismatch for instruction 'mma'"] * 2
    if stype is None:
        out = [f"Illegal modifier '{kind}' for instruction 'mma'"] if kind in BLOCK_KINDS else []
        if shape != ".m16n8k64":
            out += [f"Incorrect instruction type specified for Sparse mma with shape '{shape}'"] + vector
            if shape == ".m16n8k128":
                out.append("Illegal matrix shape '.m16n8k128' for instruction 'mma'")
        return out
    if n_operands != 10:
        return []
    dense = SPARSE_TO_DENSE.get(shape, ".m16n8k16")
    dense_mods = tuple(dense if m == shape else m for m in mods if not m.startswith(".sp"))
    out = []
    for line in _form_problems(dense_mods, kind, types, stype, written_vec, 8, sizes[:4] + sizes[6:]):
        if line.startswith("Illegal matrix shape"):     # the sparse instruction's name and operands
            out += [f"Illegal matrix shape '{shape}' for instruction 'Sparse mma'"] \
                + [v.replace("'mma'", "'Sparse mma'") for v in vector]
        elif not line.startswith("Arguments mismatch"):
            out.append(line.replace(f"'{dense}'", f"'{shape}'"))
    return out


# lines after which ptxas says nothing more of a sparse kind spelling
_FINAL = ("Unexpected instruction types", "Arguments mismatch",
          "Incorrect instruction type specified for mma with shape")


def sparse_tail(modifiers, sparsity, problems) -> list[str]:
    """The sparse kinds' lines after the scale selectors' (ptxas's order): a sparsity selector
    out of range (0 only; 0 or 1 at m16n8k32), plain `.sp`, and an unscaled spelling's
    `.scale_vec` modifier. None after a final line; no selector line after a missing
    `.block_scale`."""
    mods = tuple(modifiers)
    kind = next((m for m in mods if m in KINDS), None)
    if kind is None or not any(m.startswith(".sp") for m in mods) \
            or any(line.startswith(_FINAL) for line in problems):
        return []
    stype = next((m for m in mods if m in SCALE_TYPES), None)
    out = []
    allowed = (0, 1) if ".m16n8k32" in mods else (0,)
    if sparsity is not None and sparsity not in allowed \
            and not any(".block_scale modifier required" in line for line in problems):
        name = "Sparse mma" if stype is not None else "mma"
        out.append(f"Argument 5 of instruction '{name}': unexpected value '{sparsity}', expected to be "
                   + " or ".join(str(v) for v in allowed))
    if ".sp" in mods:
        out.append("Illegal modifier '.sp' for instruction 'mma'")
    written_vec = next((m for m in mods if m in SCALE_VECS), None)
    if stype is None and written_vec:
        out.append(f"Illegal modifier '{written_vec}' for instruction 'mma'")
    return out


def _form_problems(mods, kind, types, stype, written_vec, n_operands, sizes=()) -> list[str]:
    """The form's consistency on a target that has it (ptxas's order). `sizes`: each
    operand's vector length (1 for a scalar)."""
    shape = next((m for m in mods if m.startswith(".m") and "n" in m and "k" in m), None)
    ab = [t for t in types if t in FP8 + NARROW]
    block = ".block_scale" in mods
    out = []
    if stype is not None and ".f16" in types:       # block scaling has f32 accumulators only
        return ["Unexpected instruction types specified for 'mma'"]
    if stype is not None and n_operands == 8 and kind in BLOCK_KINDS:
        lines = _block_scaled_problems(kind, shape, ab, stype, written_vec)
        if block or lines[:1] == [f"Incorrect instruction type specified for mma with shape '{shape}'"]:
            return lines
        # no `.block_scale`: its line after the kind's own ones, then the mismatch (or the shape)
        vec = written_vec or DEFAULT_VEC.get(kind)
        if kind == ".kind::mxf4nvf4" and vec in (None, ".scale_vec::1X"):
            at = None
        else:
            at = max((i + 1 for i, line in enumerate(lines) if "cannot be combined" in line
                      or line.startswith(f"Illegal modifier '{kind}'")), default=0)
        if kind == ".kind::mxf8f6f4" and written_vec in (".scale_vec::2X", ".scale_vec::4X"):
            lines = [f"Illegal modifier '{written_vec}' for instruction 'mma'"]
        if at is not None:
            lines.insert(at, ".block_scale modifier required for instruction 'mma'")
        if not lines[-1].startswith("Illegal matrix shape"):
            lines.append("Arguments mismatch for instruction 'mma'")
        return lines
    if stype is None and n_operands == 4:
        narrow = any(t in NARROW for t in ab)
        if block:
            out.append("Illegal modifier '.block_scale' for instruction 'mma'")
        if kind in BLOCK_KINDS and narrow:
            out.append(f"Illegal modifier '{kind}' for instruction 'mma'")
        if kind is None and narrow:
            out.append(".kind::f8f6f4 modifier required for instruction 'mma'")
        if kind is not None and shape == ".m16n8k16" and len(sizes) == 4:
            # m16n8k16's A is two registers, B one: each other length is a line
            out += ["Argument vector size mismatch for instruction 'mma'"
                    for got, want in zip(sizes[1:3], (2, 1)) if got != want]
        if shape == ".m16n8k64":
            out.append("Incorrect instruction type specified for mma with shape '.m16n8k64'")
        elif block:
            out.append("Arguments mismatch for instruction 'mma'")
        if block:
            out.append("Illegal modifier '.block_scale' for instruction 'mma'")
        if written_vec:
            out.append(f"Illegal modifier '{written_vec}' for instruction 'mma'")
        if out or kind != ".kind::f8f6f4":
            return out
        floats = [t for t in types if t in (".f16", ".f32")]
        if len(floats) == 2 and floats[0] != floats[1]:
            return ["Unexpected instruction types specified for 'mma'"]
        if shape == ".m16n8k16" and narrow:
            return ["Illegal matrix shape '.m16n8k16' for instruction 'mma'"]
        return []
    if stype is not None and n_operands == 8 and kind in (".kind::f8f6f4", None):
        if shape != ".m16n8k32" or stype != ".ue8m0":      # no mxf8f6f4 form of these types
            return [f"Incorrect instruction type specified for mma with shape '{shape}'"]
        out.append(".kind::mxf8f6f4 modifier required for instruction 'mma'" if kind is None
                   else "Illegal modifier '.kind::f8f6f4' for instruction 'mma'")
        if not block:
            out.append(".block_scale modifier required for instruction 'mma'")
        if written_vec in (".scale_vec::2X", ".scale_vec::4X"):
            out.append(f"Illegal modifier '{written_vec}' for instruction 'mma'")
        if not block:
            out.append("Arguments mismatch for instruction 'mma'")
        return out
    return ["Arguments mismatch for instruction 'mma'"]


def _block_scaled_problems(kind, shape, ab, stype, written_vec) -> list[str]:
    """`.kind::mx*.block_scale ... .stype` with its eight operands."""
    if kind == ".kind::mxf8f6f4":
        if shape != ".m16n8k32" or stype != ".ue8m0" or len(ab) != 2:
            return [f"Incorrect instruction type specified for mma with shape '{shape}'"]
        if written_vec in (".scale_vec::2X", ".scale_vec::4X"):
            return [f"Illegal modifier '{written_vec}' for instruction 'mma'"]
        return []
    if len(ab) != 2 or any(t != ".e2m1" for t in ab):
        return [f"Incorrect instruction type specified for mma with shape '{shape}'"]
    out = []
    vec = written_vec or DEFAULT_VEC.get(kind)
    with_type = f" for instruction 'mma' with type '{stype}'"
    if kind == ".kind::mxf4":
        if vec in (".scale_vec::1X", ".scale_vec::4X"):
            out.append(f"Modifier '{vec}' cannot be combined with modifier '.kind::mxf4'")
        if stype == ".ue4m3":
            out.append(f"Illegal modifier '.kind::mxf4'{with_type}")
        if vec == ".scale_vec::1X":
            out.append("Illegal modifier '.scale_vec::1X' for instruction 'mma'")
        elif vec == ".scale_vec::2X" and stype == ".ue4m3":
            out.append(f"Illegal modifier '.scale_vec::2X'{with_type}")
        if stype == ".ue4m3" and vec != ".scale_vec::4X":
            out.append("Unexpected instruction types specified for 'mma'")
    else:
        if vec is None:
            out.append(".scale_vec_size modifier required for instruction 'mma'")
        elif vec == ".scale_vec::1X":
            out.append("Illegal modifier '.scale_vec::1X' for instruction 'mma'")
        elif vec == ".scale_vec::2X" and stype == ".ue4m3":
            out += [f"Illegal modifier '.scale_vec::2X'{with_type}",
                    f"Illegal modifier '.kind::mxf4nvf4'{with_type}",
                    f"Illegal modifier '.scale_vec::2X'{with_type}",
                    "Unexpected instruction types specified for 'mma'"]
    if shape != ".m16n8k64":
        out.append(f"Illegal matrix shape '{shape}' for instruction 'mma'")
    return out


def selectors_checked(modifiers, problems) -> bool:
    """Whether ptxas goes on to the selector values after these lines: not after a type or
    operand-count failure (f16 accumulators with a scale type, "Incorrect instruction type",
    "Arguments mismatch")."""
    if any(t in modifiers for t in SCALE_TYPES) and ".f16" in modifiers:
        return False
    return not any("Incorrect instruction type" in p or "Arguments mismatch" in p
                   or ".block_scale modifier required" in p or "Illegal matrix shape" in p
                   for p in problems)


def selector_problems(modifiers, pairs, first: int = 5, name: str = "mma") -> list[str]:
    """ptxas's lines for the selector pairs ((byte-id, thread-id) of A, of B; None where not
    an immediate): A's pair is argument `first` (5; 7 in the sparse forms), B's two after;
    byte-id's line, then thread-id's (both); `name`: 'Sparse mma' in the sparse mx kinds'
    byte-id line."""
    vec = size(modifiers)
    if vec is None:
        return []
    out = []
    for (arg, top), pair in zip(((first, 1), (first + 2, 3)), pairs):
        byte, thread = pair
        allowed = BYTE_IDS[vec]
        if byte is not None and byte not in allowed:
            if isinstance(allowed, range):
                out.append(f"Argument {arg} of instruction 'mma': value '{byte}' out of range, "
                           f"expected to be in range [0..{allowed[-1]}]")
            else:
                out.append(f"Argument {arg} of instruction '{name}': unexpected value '{byte}', "
                           f"expected to be {' or '.join(str(v) for v in allowed)}")
        if thread is not None and not 0 <= thread <= top:
            out.append(f"Argument {arg} of instruction 'mma': value '{thread}' out of range, "
                       f"expected to be in range [0..{top}]")
    return out
