"""The checks ptxas 13.5 makes of the tcgen05 tensor-memory instructions (PTX ISA
"Tensor Memory": tcgen05.alloc/dealloc/relinquish_alloc_permit, tcgen05.ld/st), in its words.

* ld/st: the shape (`.32x32b`, `.16x64b`, `.16x128b`, `.16x256b`, `.16x32bx2`), the `.num`
  `.x1`..`.x128` (a power of two; at most `.x64` for `.16x128b` and `.x32` for `.16x256b`),
  the type `.b32`, two operands (three for `.16x32bx2`: the immediate half-split offset) and
  a register vector of num registers times the shape's (2 for `.16x128b`, 4 for
  `.16x256b`).
* alloc/dealloc: `.cta_group::1` or `::2`; an immediate column count a multiple of 32, a
  power of two and in 32..512.
* On a target without tcgen05 (not sm_100a/f and up): ptxas names the shape or the CTA group
  as a feature too, around its "Instruction ... not supported" line.
* mma `.block_scale` (`block_scale_problems`, branch tcgen29): the mx kinds, their scale-vector
  sizes (written or implied by the PTX version), the scale-address operands, in ptxas's line
  order (checked by tools/tcgen05_block_scale_sweep on tcgen05 targets and targets without it).
"""
from __future__ import annotations

import re
from dataclasses import replace

from ptx2sass.frontend import ast

SHAPES = {".32x32b": (1, 128), ".16x64b": (1, 128), ".16x128b": (2, 64),
          ".16x256b": (4, 32), ".16x32bx2": (1, 128)}     # (registers per num, largest num)
COPY_SHAPES = (".128x256b", ".4x256b", ".128x128b", ".64x128b", ".32x128b")    # tcgen05.cp
NUMS = {f".x{1 << k}": 1 << k for k in range(8)}
CTA_GROUPS = (".cta_group::1", ".cta_group::2")


def _name(ins: ast.Instruction) -> str:
    """`tcgen05.wait` for `tcgen05.wait::ld` (ptxas names the instruction without the kind),
    `tcgen05.mma.ws` for the weight-stationary MMA."""
    return "tcgen05" + (ins.modifiers[0].split("::")[0] if ins.modifiers else "") \
        + (".ws" if ins.modifiers[:1] == (".mma",) and ".ws" in ins.modifiers else "")


def supported(ins: ast.Instruction, target: str, sm: int) -> bool:
    """ptxas 13.5 has tcgen05 on the arch-specific (a) and family (f) targets of sm_100 to
    sm_11x, not on sm_12x; tcgen05.shift on the a targets only."""
    if target[-1:] not in ("a", "f") or not 100 <= sm < 120:
        return False
    return not (tuple(ins.modifiers[:1]) == (".shift",) and target[-1:] == "f")


# tcgen05.mma kinds ptxas 13.5 takes on some tcgen05 targets only (kind::i8: not on the family
# targets nor sm_103a: "Feature '.kind::i8' not supported on .target 'sm_100f'")
KIND_TARGETS = {".kind::i8": ("sm_100a", "sm_110a")}
# targets where ptxas 13.5 refuses tcgen05.mma's scale-input-d ("Feature 'argument
# scale-inp-d-imm' not supported on .target 'sm_110a'"), and the kinds it refuses with `.sp` on
# the family targets ("Feature '.kind::mxf4 with .sp modifier' not supported on .target
# 'sm_100f'"; the a targets take them) -- found by tools/tcgen05_block_scale_sweep --wide
NO_SCALE_INPUT_D_TARGETS = ("sm_110a", "sm_110f")
NO_FAMILY_SPARSE_KINDS = (".kind::mxf4", ".kind::mxf4nvf4")


def kind_target_problems(ins: ast.Instruction, target: str, version=(9, 9)) -> list[str]:
    """kind::i8 off sm_100a/sm_110a (`.scale_vec::NX` on the family targets: in
    block_scale_problems, where ptxas orders that line)."""
    out = [f"Feature '{m}' not supported on .target '{target}'" for m in ins.modifiers
           if m in KIND_TARGETS and target not in KIND_TARGETS[m]]
    if ins.modifiers[:1] == (".mma",) and target in NO_SCALE_INPUT_D_TARGETS and _has_scale_input_d(ins):
        out.append(f"Feature 'argument scale-inp-d-imm' not supported on .target '{target}'")
    return out


def _has_scale_input_d(ins: ast.Instruction) -> bool:
    """A dense tcgen05.mma (not .ws, not block-scaled) with its scale-input-d operand."""
    mods = ins.modifiers
    if ".ws" in mods or ".block_scale" in mods or any(m in BLOCK_SCALE_KINDS for m in mods):
        return False
    ops = list(ins.operands)
    if ".sp" in mods and len(ops) > 3 and isinstance(ops[3], ast.Address):
        ops = ops[:3] + ops[4:]
    if any(isinstance(op, ast.Address) for op in ops[4:]):
        return False
    vector = len(ops) > 4 and isinstance(ops[4], ast.VectorOperand)
    return len(ops) == 6 + vector


def target_problems(ins: ast.Instruction, target: str, version=(9, 9)) -> list[str]:
    """ptxas's lines for a tcgen05 instruction on a target without it: the shape as a
    feature, the instruction, cp's warp multicast as an illegal modifier, the CTA group as a
    feature."""
    name = _name(ins)
    line = f"Instruction '{name}' not supported on .target '{target}'"
    if target[-1:] == "f" and 100 <= int(target[3:-1]) < 120:
        return [line]                 # a family target with tcgen05 but not this instruction
    out = []
    shape = next((m for m in ins.modifiers if m in SHAPES or m in COPY_SHAPES), None)
    if shape is not None:
        out.append(f"Feature '{shape}' not supported on .target '{target}'")
    out.append(line)
    # a block-scaled (or block-scale-looking) MMA: ptxas's modifier and operand lines come
    # after the instruction line, each modifier's `Illegal modifier` line after its feature
    scaled = block_scale_problems(ins, version, target) if ins.modifiers[:1] == (".mma",) else None
    illegal = {}
    if scaled is not None:
        for problem in scaled:
            m = re.match(r"Illegal modifier '([^']+)' for instruction", problem)
            if m and (m.group(1) == ".block_scale" or m.group(1) in SCALE_VECS + BLOCK_SIZES):
                illegal[m.group(1)] = problem
            elif "requires PTX ISA .version 8.8" in problem:
                illegal.setdefault("version", []).append(problem)
            else:
                out.append(problem)
    if name == "tcgen05.cp":
        out += [f"Illegal modifier '{m}' for instruction 'tcgen05.cp', for arch '{target}'"
                for m in ins.modifiers if m.startswith(".warpx")]
    group = next((m for m in ins.modifiers if m in CTA_GROUPS), None)
    if group is not None and (shape is None or name == "tcgen05.cp"):
        out.append(f"Feature '{group}' not supported on .target '{target}'")
    sm = int("".join(c for c in target[3:] if c.isdigit()) or 0)
    mma_sync_target = target[-1:] in ("a", "f") and 120 <= sm < 130
    for m in ins.modifiers:
        # tcgen05.mma's kind (kind::f8f6f4 and the mx kinds are also mma.sync's features on the
        # sm_12x a/f targets)
        if m.startswith(".kind::") and not ((m == ".kind::f8f6f4" or m in BLOCK_SCALE_KINDS)
                                            and mma_sync_target):
            sparse = " with .sp modifier" if ".sp" in ins.modifiers and m in NO_FAMILY_SPARSE_KINDS else ""
            out.append(f"Feature '{m}{sparse}' not supported on .target '{target}'")
    # `.block_scale` and its vector size, written or implied (mma.sync's `.block_scale` and
    # `.scale_vec::NX` on the sm_12x a/f targets: not named there)
    if scaled is not None:
        vec = scale_vector(ins, version)
        if ".block_scale" in ins.modifiers and not mma_sync_target:
            out.append(f"Feature '.block_scale' not supported on .target '{target}'")
        out += [illegal[".block_scale"]] if ".block_scale" in illegal else []
        out += illegal.get("version", [])
        if vec is not None and not (mma_sync_target and vec in SCALE_VECS):
            out.append(f"Feature '{vec}' not supported on .target '{target}'")
        out += [illegal[vec]] if vec in illegal else []
    # tcgen05.mma's `.ashift` and collector usage, after the kind, in their order
    out += [f"Feature '{m}' not supported on .target '{target}'" for m in ins.modifiers
            if m == ".ashift" or m.startswith(".collector::")]
    return out


def problems(ins: ast.Instruction, register_type=lambda name: None, version=(9, 9), target: str = "") -> list[str]:
    """ptxas's errors for a tcgen05 instruction's modifiers and operands (`register_type`:
    a register's declared type, for tcgen05.mma.ws's 64-bit zero-column mask; `version`: the
    module's PTX version, which decides `.block_scale`'s implied vector size)."""
    kind = ins.modifiers[0] if ins.modifiers else ""
    if kind in (".ld", ".st"):
        return _load_store_problems(ins)
    if kind in (".alloc", ".dealloc"):
        return _allocation_problems(ins)
    if kind == ".mma":
        scaled = block_scale_problems(ins, version, target)
        if scaled is not None:
            sm = int("".join(c for c in target[3:] if c.isdigit()) or 0)
            return scaled if not target or supported(ins, target, sm) else []
        usage = _usage_problems(ins, version)
        if usage:
            return usage
        shift = 0
        if ".sp" in ins.modifiers:          # the sparsity metadata's [address] after b-desc
            name = "tcgen05.mma.ws" if ".ws" in ins.modifiers else "tcgen05.mma"
            if ins.modifiers.count(".sp") > 1:
                return ["Multiple sparsity modifiers specified"]
            ops = ins.operands
            if len(ops) < 5 or not isinstance(ops[3], ast.Address):
                return [f"Arguments mismatch for instruction '{name}'",
                        f"Illegal modifier '.sp' for instruction '{name}'"]
            ins = replace(ins, operands=ops[:3] + ops[4:])
            shift = 1
        if ".ws" in ins.modifiers:
            return _ws_problems(ins, register_type)
        return _mma_problems(ins, shift)
    return []


# tcgen05.mma `.block_scale`: the mx kinds and the scale-vector sizes each takes (ptxas 13.5;
# `.blockN` from PTX 8.8); the size ptxas implies when none is written (its error lines name
# it: `.block32` from PTX 8.8, before that `.scale_vec::1X` / `::2X`; kind::mxf4nvf4 needs one)
BLOCK_SCALE_KINDS = {".kind::mxf8f6f4": (".scale_vec::1X", ".block32"),
                     ".kind::mxf4": (".scale_vec::2X", ".block32"),
                     ".kind::mxf4nvf4": (".scale_vec::2X", ".scale_vec::4X", ".block16", ".block32")}
SCALE_VECS = (".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X")
BLOCK_SIZES = (".block16", ".block32")
OLD_DEFAULT_VEC = {".kind::mxf8f6f4": ".scale_vec::1X", ".kind::mxf4": ".scale_vec::2X"}


def scale_vector(ins: ast.Instruction, version) -> str | None:
    """The scale-vector modifier written, else the one ptxas implies (None for mxf4nvf4)."""
    written = next((m for m in ins.modifiers if m in SCALE_VECS + BLOCK_SIZES), None)
    if written is not None:
        return written
    kind = next((m for m in ins.modifiers if m in BLOCK_SCALE_KINDS), None)
    if kind is None or kind == ".kind::mxf4nvf4":
        return None
    return ".block32" if version >= (8, 8) else OLD_DEFAULT_VEC[kind]


def block_scale_problems(ins: ast.Instruction, version, target: str = "") -> list[str] | None:
    """tcgen05.mma's `.block_scale` / mx kinds / scale-vector sizes and their operands
    (`[d], a, b, idesc, [scale-A], [scale-B], enable`, `.sp`'s `[metadata]` before idesc), in
    ptxas 13.5's words (probed on sm_100a/sm_100f; `target` for the family targets' refusal
    of `.scale_vec::NX`); None when the instruction has none of them."""
    mods = ins.modifiers
    kind = next((m for m in mods if m.startswith(".kind::")), None)
    vecs = [m for m in mods if m in SCALE_VECS + BLOCK_SIZES]
    unknown = [m for m in mods if m.startswith(".scale_vec::") and m not in SCALE_VECS]
    block_scale = ".block_scale" in mods
    mx = kind in BLOCK_SCALE_KINDS
    plain = list(ins.operands)
    if ".sp" in mods and len(plain) > 3 and isinstance(plain[3], ast.Address):
        plain = plain[:3] + plain[4:]
    addressed = len(plain) == 7 and all(isinstance(op, ast.Address) for op in plain[4:6])
    if not (block_scale or mx or vecs or unknown or addressed):
        return None
    if unknown:
        return [f"Unknown modifier '{m}'" for m in unknown]
    ws = ".ws" in mods
    name = "tcgen05.mma.ws" if ws else "tcgen05.mma"
    ops = list(ins.operands)
    sparse = ".sp" in mods
    if ws:
        if len(ops) - sparse >= 7:
            return [f"Arguments mismatch for instruction '{name}'"]
        return [f"Illegal modifier '{m}' for instruction '{name}'" for m in mods
                if m in BLOCK_SCALE_KINDS or m == ".block_scale"]
    if mods.count(".block_scale") > 1:
        return ["Multiple .block_scale modifiers specified"]
    if len([m for m in vecs if m in SCALE_VECS]) > 1 or len([m for m in vecs if m in BLOCK_SIZES]) > 1:
        return ["Multiple .scale_vec_size modifiers specified"]
    if len(vecs) > 1:
        return [f"Modifier '{vecs[0]}' cannot be combined with modifier '{vecs[1]}'"]
    # ptxas's lines come in this order: the modifiers' consistency, the operand shape, the
    # family target's refusal of `.scale_vec::NX` (written or implied) or `.blockN`'s PTX
    # version, the size as an illegal modifier of the dense shape
    out = [f"Modifier '{m}' requires modifier '.block_scale' for instruction '{name}'"
           for m in vecs if not block_scale]
    if not mx:
        if block_scale:
            out.append(f"Modifier '{kind}' cannot be combined with modifier '.block_scale'")
        out += [f"Modifier '{kind}' cannot be combined with modifier '{m}'" for m in vecs]
    else:
        out += [f"Modifier '{kind}' cannot be combined with modifier '{m}'" for m in vecs
                if m not in BLOCK_SCALE_KINDS[kind]]
        if not vecs and kind == ".kind::mxf4nvf4":
            out.append(f"Modifier '{kind}' requires modifier '.scale_vectorsize' for instruction '{name}'")
    vec = scale_vector(ins, version)
    # (in the slot of the family line: `.blockN` before PTX 8.8)
    family = [f"Feature '{m}' requires PTX ISA .version 8.8 or later" for m in vecs
              if m in BLOCK_SIZES and version < (8, 8)]
    sm = int("".join(c for c in target[3:] if c.isdigit()) or 0)
    family += [f"Feature '{vec}' not supported on .target '{target}'"] \
        if target[-1:] == "f" and 100 <= sm < 120 and vec in SCALE_VECS else []
    mismatch = f"Arguments mismatch for instruction '{name}'"
    tcgen05_family = target[-1:] == "f" and 100 <= sm < 120
    sparse_kind = [f"Feature '{kind} with .sp modifier' not supported on .target '{target}'"] \
        if sparse and kind in NO_FAMILY_SPARSE_KINDS and tcgen05_family else []
    scale_d = [f"Feature 'argument scale-inp-d-imm' not supported on .target '{target}'"] \
        if target in NO_SCALE_INPUT_D_TARGETS or target and not supported(ins, target, sm) else []
    if sparse:                              # `.sp`'s [metadata] after b-desc
        if len(ops) == 8 and not isinstance(ops[3], ast.Address):
            return out + [mismatch] + family
        if len(ops) < 5 or not isinstance(ops[3], ast.Address):     # no metadata at all
            return out + [mismatch] * 3 + [f"Illegal modifier '.sp' for instruction '{name}'"] + family
        ops = ops[:3] + ops[4:]
    scaled_operands = len(ops) == 7 and all(isinstance(op, ast.Address) for op in ops[4:6]) \
        and not any(isinstance(op, ast.VectorOperand) for op in ops)
    dense = len(ops) in (5, 6) and not any(isinstance(op, ast.Address) for op in ops[4:])
    illegal_vec = [f"Illegal modifier '{vec}' for instruction '{name}'"] if vec else []
    if dense:
        if block_scale:
            out += [mismatch] * 2 + sparse_kind + [f"Illegal modifier '.block_scale' for instruction '{name}'"]
        else:
            out += sparse_kind
        return out + family + illegal_vec
    if not block_scale:
        if len(ops) == 7 and (mx or addressed):       # scale addresses without `.block_scale`
            out += [f".block_scale modifier required for instruction '{name}'"] + scale_d + [mismatch]
        return out + sparse_kind + family
    if not scaled_operands:
        return out + [mismatch] + sparse_kind + family
    if out or not mx:
        return out + sparse_kind + family
    if ".ashift" in mods:
        out.append(f"Illegal modifier '.ashift' for instruction '{name}'")
    return out + sparse_kind + family + _usage_problems(ins, version)


COLLECTOR_OPS = ("fill", "use", "lastuse", "discard")
# tcgen05.mma's collector-usage spellings: `.collector::a::<op>` (A's buffer, not with .ws)
# and `.collector::b<N>::<op>` (B's buffer N, .ws only)
COLLECTOR_A = tuple(f".collector::a::{op}" for op in COLLECTOR_OPS)
COLLECTOR_B = tuple(f".collector::b{n}::{op}" for n in range(4) for op in COLLECTOR_OPS)


def _usage_problems(ins: ast.Instruction, version=(9, 9)) -> list[str]:
    """The collector-usage and `.ashift` modifiers, as ptxas 13.5 words them: an unknown
    spelling, two of them, `.collector::a::*` or `.ashift` with `.ws` (the first named twice by
    ptxas), `.collector::b*` without `.ws` (ptxas: a PTX 9.4 feature as well), `.ashift` with
    `.collector::a::fill/use` or with A from a descriptor."""
    mods = ins.modifiers
    ws = ".ws" in mods
    name = "tcgen05.mma.ws" if ws else "tcgen05.mma"
    usage = [m for m in mods if m.startswith(".collector::")]
    out = [f"Unknown modifier '{m}'" for m in usage if m not in COLLECTOR_A + COLLECTOR_B]
    if out:
        return out
    if len(usage) > 1:
        return ["Multiple .collector_usage modifiers specified"]
    if mods.count(".ashift") > 1:
        return ["Multiple .ashift modifiers specified"]
    if ws:
        for m in mods:
            if m in COLLECTOR_A:
                out += [f"Illegal modifier '{m}' for instruction '{name}'"] * 2
            if m in (".ashift", ".cta_group::2"):
                out.append(f"Illegal modifier '{m}' for instruction '{name}'")
        return out
    if ".ashift" in mods:
        out += [f"Modifier '{m}' cannot be combined with modifier '.ashift'" for m in usage
                if m in (".collector::a::fill", ".collector::a::use")]
    for m in usage:
        if m in COLLECTOR_B:
            out += (["Feature 'tcgen05.mma' requires PTX ISA .version 9.4 or later"] if version < (9, 4) else []) \
                + [f"Illegal modifier '{m}' for instruction '{name}'"]
    if ".ashift" in mods and len(ins.operands) > 1 and not isinstance(ins.operands[1], ast.Address):
        out.append(f"Illegal modifier '.ashift' for instruction '{name}'")
    return out


def _ws_problems(ins: ast.Instruction, register_type) -> list[str]:
    """tcgen05.mma.ws: `[d], a, b, idesc, enable[, zero-column-mask]`, the mask a 64-bit
    register or an immediate; no disable-output-lane vector, no scale-input-d."""
    ops = ins.operands
    mismatch = ["Arguments mismatch for instruction 'tcgen05.mma.ws'"]
    if len(ops) not in (5, 6) or any(isinstance(op, ast.VectorOperand) for op in ops):
        return mismatch
    if len(ops) == 6 and isinstance(ops[5], ast.Name):
        kind = register_type(ops[5].name)
        if kind is not None and kind[-2:] != "64":
            return mismatch
    return []


def _mma_problems(ins: ast.Instruction, shift: int = 0) -> list[str]:
    """scale-input-d (the immediate after enable-input-d): ptxas refuses it with
    kind::f8f6f4 (it takes it with kind::i8 and drops it) and outside [0..15]; the
    disable-output-lane vector counts as one argument."""
    ops = ins.operands
    vector = len(ops) > 4 and isinstance(ops[4], ast.VectorOperand)
    if len(ops) != 6 + vector:
        return []
    out = []
    scale = ops[-1]
    value = None
    if isinstance(scale, ast.IntLit):
        value = scale.value if scale.value < 1 << 63 else scale.value - (1 << 64)
    elif isinstance(scale, ast.Unary) and scale.op == "-" and isinstance(scale.operand, ast.IntLit):
        value = -scale.operand.value
    if value is None and isinstance(scale, ast.Name):      # a register: not an immediate
        return ["Arguments mismatch for instruction 'tcgen05.mma'"]
    if value is not None and not 0 <= value <= 15:
        out.append(f"Argument {len(ops) - 1 + shift} of instruction 'tcgen05.mma': value '{value}' "
                   "out of range, expected to be in range [0..15]")
    if ".kind::f8f6f4" in ins.modifiers:
        out.append("Illegal modifier '.kind::f8f6f4' for instruction 'tcgen05.mma' with 'arg scale-inp-d-imm'")
    return out


def _unknown(ins: ast.Instruction, known) -> list[str]:
    """'Unknown modifier' for an `.xN`/`.cta_group::N` spelling outside `known`."""
    stem = ".x" if known is NUMS else ".cta_group::"
    return [f"Unknown modifier '{m}'" for m in ins.modifiers
            if m.startswith(stem) and m not in known and m[len(stem):].isdigit()]


def _load_store_problems(ins: ast.Instruction) -> list[str]:
    name = _name(ins)
    out = _unknown(ins, NUMS)
    shape = next((m for m in ins.modifiers if m in SHAPES), None)
    num = next((NUMS[m] for m in ins.modifiers if m in NUMS), None)
    if num is None:
        return out + [f".num modifier required for instruction '{name}'"]
    if shape is None:
        return out
    per, largest = SHAPES[shape]
    if num > largest:
        return out + [f"Modifier .x{num} not allowed for instruction {name} with shape '{shape}'"]
    if ins.modifiers[-1] != ".b32":
        return out + [f"Unexpected instruction types specified for '{name}'"]
    if len(ins.operands) != (3 if shape == ".16x32bx2" else 2):
        return out + [f"Unexpected number of arguments specified for {name} with shape '{shape}'"]
    # st's vector follows the address (and 16x32bx2's half-split offset)
    position = 0 if ins.modifiers[0] == ".ld" else 2 if shape == ".16x32bx2" else 1
    vector = ins.operands[position]
    count = len(vector.elements) if isinstance(vector, ast.VectorOperand) else 1
    if count != per * num:
        out.append(f"Argument {position} of instruction '{name}': Argument vector size mismatch")
    return out


def _allocation_problems(ins: ast.Instruction) -> list[str]:
    name = _name(ins)
    out = _unknown(ins, CTA_GROUPS)
    if not any(m in CTA_GROUPS for m in ins.modifiers):
        return out + [f".cta_group modifier required for instruction '{name}'"]
    if len(ins.operands) != 2 or not isinstance(ins.operands[1], ast.IntLit):
        return out
    value = ins.operands[1].value
    if value <= 0:
        out.append(f"Argument 1 of instruction '{name}' : value '{value}' expected to be a non-zero positive")
    elif value % 32:
        out.append(f"Argument 1 of instruction '{name}': unexpected value '{value}', "
                   "expected to be multiple of 32")
    if value > 0 and value & (value - 1):
        out.append(f"Argument 1 of '{name}' instruction: value must be power of 2")
    if not 32 <= value <= 512:
        out.append(f"Argument 1 of instruction '{name}': value '{value}' out of range, "
                   "expected to be in range [32..512]")
    return out
