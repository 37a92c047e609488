"""Instructions straight from the instruction inventory: the long tail of types and
modifiers the hand-written generators (generator.py) do not spell out.

A random form of an opcode whose semantics are total (no undefined result for any input:
integer arithmetic without division, logic, shifts, comparisons and selection, IEEE float
arithmetic with a rounding mode, conversions, which saturate) is filled with types, one
spelling of each required modifier group and some optional ones, and registers of the
widths its types need. The inventory is lenient about combinations, so each spelling is
first compiled alone by ptxas (a one-instruction kernel; cached per spelling, on disk by the
oracle): spellings ptxas rejects are not used. The choice is deterministic given the seed,
since ptxas's verdict is.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

from ptx2sass.fuzz.coverage import inventory_forms

# Opcodes whose every form is defined for every input (division and approximations have
# their own generators, which keep them defined).
TOTAL = ("add", "sub", "mul", "mad", "fma", "min", "max", "abs", "neg", "sad", "mul24", "mad24",
         "and", "or", "xor", "not", "cnot", "shl", "shr", "popc", "clz", "brev", "bfe", "bfi", "bfind",
         "copysign", "testp", "set", "setp", "selp", "slct", "cvt", "prmt", "lop3", "shf", "bmsk",
         "szext", "dp4a", "dp2a", "sqrt", "rcp", "fns", "mov")
# not here: addc/subc/madc read the carry flag a `.cc` instruction must set just before
# (op_carry writes the pairs)
# modifiers the generic path never picks: they need context it does not give
AVOID = {".approx", ".full", ".cc", ".oob", ".rs"}
ROUNDING = (".rn", ".rz", ".rm", ".rp")
KIND_OF_BITS = {1: "pred", 8: "b16", 16: "b16", 32: "b32", 64: "b64"}


# The generator draws the inventory's forms as they stood before this spec section (branch
# inv32's audit appended forms to it): a seed's program stays the same when the inventory grows
# (campaigns, pinned regression seeds); moving the marker is a deliberate new draw.
DRAW_UNTIL = "branch inv32"


def drawable(f) -> bool:
    """May the generator draw this inventory form?"""
    return f.name in isa_inventory().names_before(DRAW_UNTIL)


@functools.cache
def _forms() -> dict:
    by_op: dict[str, list] = {}
    for f in inventory_forms(draw=True)[1]:
        if f["opcode"] in TOTAL:
            by_op.setdefault(f["opcode"], []).append(f)
    return by_op


@functools.cache
def _all_forms() -> list:
    return [f for op in sorted(_forms()) for f in _forms()[op]]


@functools.cache
def _frontend_form(opcode: str, required: tuple, types: tuple):
    """The frontend's Form for an inventory entry (operand codes, optional groups)."""
    from ptx2sass.frontend.instructions import FORMS
    for f in FORMS.get(opcode, ()):
        if len(f.type_slots) != len(types) or not all(t in s for t, s in zip(types, f.type_slots)):
            continue
        req = [g for g, r in f.groups if r]
        if len(req) == len(required) and all(m in g for m, g in zip(required, req)):
            return f
    return None


def _bits(t: str) -> int:
    from ptx2sass.frontend.instructions import TYPE_BITS
    return TYPE_BITS.get(t, 32)


@functools.cache
def valid(spelling_text: str, decls: str) -> bool:
    """Does ptxas accept this one instruction for sm_89?"""
    from ptx2sass import oracle
    ptx = (".version 8.5\n.target sm_89\n.address_size 64\n.visible .entry k(.param .align 16 .b8 pb[32])\n{\n"
           f"{decls}\n{spelling_text}\nret;\n}}\n")
    return oracle.ptxas(ptx, "sm_89").ok


_DECLS = ".reg .pred %p<4>;\n.reg .b16 %h<4>;\n.reg .b32 %r<6>;\n.reg .b64 %d<6>;"
_CANON = {"pred": "%p", "b16": "%h", "b32": "%r", "b64": "%d"}


def op_forms(g, ctx):
    """One instruction of a random inventory form of a total opcode (None if none fits)."""
    from ptx2sass.fuzz.generator import (Builder, _f32_imm, _f64_imm, _int_imm, canonical_nan, cvt_nan_unspecified,
                                          two_nan_unspecified, unspecified_nan)
    rng = g.rng
    by_op = _forms()
    if not by_op:
        return None
    for _attempt in range(6):
        if rng.random() < 0.5:
            opcode = rng.choice(sorted(by_op))
            inv = rng.choice(by_op[opcode])
        else:
            inv = rng.choice(_all_forms())
            opcode = inv["opcode"]
        form = _frontend_form(opcode, inv["required"], inv["types"])
        if form is None:
            continue
        if any(m in AVOID for m in inv["required"]):
            continue
        base = _working_rounding(opcode, tuple(inv["required"]), tuple(inv["types"]))
        if base is False:
            continue
        base = tuple(base or ())
        mods = []
        req_iter = iter(inv["required"])
        for group, required in form.groups:
            if required:
                mods.append(next(req_iter))
                continue
            choices = sorted(m for m in group if m not in AVOID)
            if not choices:
                continue
            known = [m for m in base if m in group]
            if group & set(ROUNDING) and _needs_rounding(opcode, inv["types"], g) and not known:
                mods.append(rng.choice([m for m in choices if m in ROUNDING] or choices))
            elif known and rng.random() < 0.7:
                mods.append(known[0])
            elif rng.random() < (0.35 if opcode != "cvt" else 0.2):
                mods.append(rng.choice(choices))
        types = list(inv["types"])
        if opcode in ("shl", "shr") and _bits(types[0]) == 64:
            continue        # op_logic's 64-bit shifts step around a ptxas bug (see there)
        spelling = ".".join([opcode] + [m.lstrip(".") for m in mods] + [t.lstrip(".") for t in types])
        # operands
        b = Builder(g, ctx)
        ops, canon, k = [], [], {"pred": 0, "b16": 0, "b32": 0, "b64": 0}
        ok = True
        for i, code in enumerate(form.operands):
            if i >= form.optional_from and rng.random() < 0.5:
                break
            kind, is_dst, pair = _operand_kind(code, types, i)
            if kind is None:
                ok = False
                break
            if is_dst:
                text = b.dst(kind)
                if pair and (opcode == "setp" or code == "dp") and rng.random() < 0.4:
                    text += "|" + b.dst("pred")
                    canon.append(f"{_CANON[kind]}{k[kind]}|%p3")
                else:
                    canon.append(f"{_CANON[kind]}{k[kind]}")
            else:
                imm = None
                t = _operand_type(code, types)
                if kind != "pred" and t and (t[1] in "us" or t[1] == "b" and t[2].isdigit()) and _bits(t) >= 16:
                    imm = _int_imm(g, _bits(t), t[1] == "s")
                elif t == ".f32":
                    imm = _f32_imm(g)
                elif t == ".f64":
                    imm = _f64_imm(g)
                text = b.src(kind, None, imm)
                if kind == "pred" and rng.random() < 0.3:
                    text = "!" + text
                canon.append(text if not text.lstrip("!").startswith("$") else
                             ("!" if text.startswith("!") else "") + f"{_CANON[kind]}{k[kind]}")
            k[kind] = min(k[kind] + 1, 3)
            ops.append(text)
        if not ok:
            continue
        if not valid(f"{spelling} {', '.join(canon)};", _DECLS):
            # the optional modifiers drawn do not go together: the spelling known to work
            spelling = _spelling(opcode, base + tuple(inv["required"]), types)
            rounded = any(m in ROUNDING for m in base)
            if (_needs_rounding(opcode, inv["types"], g) and not rounded
                    and any(set(ROUNDING) & grp for grp, _ in form.groups)):
                continue
            if not valid(f"{spelling} {', '.join(canon)};", _DECLS):
                continue
        clamp = clamp_fns_offset(b, opcode, ops) + mask_szext_width(b, opcode, ops)
        line = f"{spelling} {', '.join(ops)};"
        if clamp:
            line = clamp + "@@" + line
        if types and (unspecified_nan(opcode, spelling.split("."), types[0].lstrip("."))
                      or two_nan_unspecified(opcode, types[0].lstrip("."), ops[1:])
                      or cvt_nan_unspecified(opcode, types[0].lstrip("."), types[-1].lstrip("."))):
            line = "@@" + line + canonical_nan(b, ops[0], types[0].lstrip("."))
        return b.build(line, spelling)
    return None


def _needs_rounding(opcode: str, types: tuple, g) -> bool:
    """Float mul/add/sub/fma without a rounding mode may be contracted by ptxas (--fmad=true):
    give them one unless the program turns contraction off."""
    is_float = any(t.startswith((".f", ".bf")) for t in types)
    return is_float and (g.prog_fmad or opcode in ("fma", "mad", "cvt"))


def _operand_type(code: str, types: list) -> str | None:
    """The type of an operand by its code in the form table: a role letter (d destination;
    a, b, c, e sources) then nothing (type slot 0), a slot number, `:wide` or `:TYPE`."""
    if code in ("p", "q"):
        return ".pred"
    if code == "dp":
        return types[0] if types else None
    rest = code[1:]
    if rest == "":
        return types[0] if types else None
    if rest.isdigit():
        i = int(rest)
        return types[i] if i < len(types) else None
    if rest == ":wide":
        t = types[0]
        return t[:2] + str(_bits(t) * 2)
    if rest.startswith(":"):
        return "." + rest[1:]
    return None


def _operand_kind(code: str, types: list, index: int = 0) -> tuple[str | None, bool, bool]:
    """(register kind, is a destination, may be paired with a predicate `d|p`)."""
    if code == "p":
        return "pred", True, code == "p"
    if code == "q":
        return "pred", False, False
    if code == "*" and types:           # cvt's packed sources: typed by the slot of their place
        t = types[min(index, len(types) - 1)]
        bits = _bits(t)
        return KIND_OF_BITS.get(bits if bits >= 8 else 8), False, False
    if code in ("*", "V", "W", "m", "l", "V2", "W2"):
        return None, False, False
    t = _operand_type(code, types)
    if t is None:
        return None, False, False
    kind = KIND_OF_BITS.get(_bits(t)) if t != ".pred" else "pred"
    return kind, code.startswith("d"), code == "dp"


IROUNDING = (".rni", ".rzi", ".rmi", ".rpi")


def instance_valid(inv: dict) -> bool | None:
    """Does ptxas accept some spelling of this inventory form for sm_89 (its required
    modifiers and types, plus nothing or one rounding mode)? None: not a form this module
    can write (memory, control flow, ...)."""
    found = _working_rounding(inv["opcode"], tuple(inv["required"]), tuple(inv["types"]))
    return None if found is None else found is not False


@functools.cache
def _working_rounding(opcode: str, required: tuple, types: tuple):
    """The extra modifiers (none or a rounding mode) with which ptxas accepts the form,
    False if none works, None if this module cannot write the form."""
    if opcode not in TOTAL:
        return None
    form = _frontend_form(opcode, required, types)
    if form is None:
        return None
    operands = _canonical_operands(form, list(types))
    if operands is None:
        return None
    rounding = [()]
    for group, req in form.groups:
        if not req and group & set(ROUNDING + IROUNDING):
            rounding += [(m,) for m in sorted(group & set(ROUNDING + IROUNDING))]
    for extra in rounding:
        if valid(f"{_spelling(opcode, extra + required, types)} {', '.join(operands)};", _DECLS):
            return extra
    return False


def _spelling(opcode: str, mods, types) -> str:
    return ".".join([opcode, *[m.lstrip(".") for m in mods], *[t.lstrip(".") for t in types]])


def _canonical_operands(form, types: list) -> list[str] | None:
    operands, k = [], {"pred": 0, "b16": 0, "b32": 0, "b64": 0}
    for i, code in enumerate(form.operands[:form.optional_from]):
        kind, _, _ = _operand_kind(code, types, i)
        if kind is None:
            return None
        operands.append(f"{_CANON[kind]}{k[kind]}")
        k[kind] = min(k[kind] + 1, 3)
    return operands


# ------------------------------------------------------------------------------ the PTX ISA inventory
# When `ptx2sass.frontend.inventory` (issue 15) is present its sm_89 forms are the source:
# each is one exact spelling with typed operand kinds, so arithmetic, comparisons,
# conversions and moves, loads and stores of every state space, type, vector width and
# memory-order qualifier, and atomics come straight from it.

VIDEO = ("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset", "vadd2", "vsub2", "vavrg2",
         "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4")
ISA_ALU = TOTAL + ("mov", "cvt", "set", "setp") + VIDEO
ISA_SKIP_MODIFIERS = {".approx", ".full", ".cc", ".oob", ".rs", ".param::func"}
MEMORY_LIMIT = 8192          # bytes of the input buffer data-dependent loads reach


def isa_inventory():
    try:
        from ptx2sass.frontend import inventory
    except ImportError:
        return None
    return inventory if hasattr(inventory, "forms_for") else None


@functools.cache
def isa_families() -> dict:
    inv = isa_inventory()
    out = {"alu": [], "mem": [], "atom": [], "mma": [], "policy": []}
    if inv is None:
        return out
    for f in inv.forms_for(89, (8, 5)):
        if getattr(f, "arch_specific", False) or ".b128" in f.types or set(f.modifiers) & ISA_SKIP_MODIFIERS \
                or not drawable(f):
            continue
        kinds = {o.kind for o in f.operands}
        if f.opcode in ISA_ALU and kinds <= {"d", "a", "r", "i", "p", "q", "dp", "pp", "v2", "v4"}:
            out["alu"].append(f)
        elif f.opcode in ("ld", "ldu", "st", "prefetch") and kinds <= {"V", "W", "m", "r", "d"}:
            out["mem"].append(f)
        elif f.opcode in ("atom", "red") and kinds <= {"d", "m", "a", "r"}:
            out["atom"].append(f)
        elif f.spelling.startswith(("mma.sync", "mma.sp.sync")) and kinds <= {"v1", "v2", "v4", "v8", "r", "x"}:
            out["mma"].append(f)
        elif f.opcode == "createpolicy" and ".cvt" not in f.modifiers:
            out["policy"].append(f)     # (.cvt converts a policy: no fraction/range to give)
    return out


def _kind_of_type(t: str | None) -> str | None:
    if t is None:
        return None
    if t == ".pred":
        return "pred"
    return KIND_OF_BITS.get(max(_bits(t), 8))


def _vector_count(f) -> int:
    for m in f.modifiers:
        if m in (".v2", ".v4", ".v8"):
            return int(m[2:])
    return 1


_ISA_DECLS = (".reg .pred %p<9>;\n.reg .b16 %h<9>;\n.reg .b32 %r<9>;\n.reg .b64 %d<9>;\n"
              ".reg .b64 %ad;\n.reg .b32 %as;\nmov.u64 %ad, 0;\nmov.u32 %as, 0;")


class _Operands:
    """Operand texts for the program (`$a0`, `$d1`, immediates) and, in step, for the
    one-instruction kernel that checks the spelling with ptxas."""

    def __init__(self, b, g):
        self.b, self.g = b, g
        self.text: list[str] = []
        self.canon: list[str] = []
        self.count = {"pred": 0, "b16": 0, "b32": 0, "b64": 0}
        self.policy: str | None = None
        self.metadata: str | None = None      # mma.sp's metadata register

    def _name(self, kind: str) -> str:
        n = self.count[kind]
        self.count[kind] = min(n + 1, 8)
        return f"{_CANON[kind]}{n}"

    def dst(self, kind: str, pair: str | None = None):
        text, canon = self.b.dst(kind), self._name(kind)
        if pair and self.g.rng.random() < 0.5:
            text += "|" + self.b.dst(pair)
            canon += "|" + self._name(pair)
        self.text.append(text)
        self.canon.append(canon)

    def src(self, kind: str, t: str | None, immediate: str = "maybe", below: int | None = None):
        from ptx2sass.fuzz.generator import _f32_imm, _f64_imm, _int_imm
        g = self.g
        imm = None
        if immediate != "never" and kind != "pred" and t:
            if below is not None:
                imm = lambda: str(g.rng.randrange(below))     # noqa: E731
            elif t[1] in "us" or t[1] == "b" and t[2:].isdigit():
                imm = _int_imm(g, max(_bits(t), 16), t[1] == "s")
            elif t == ".f32":
                imm = _f32_imm(g)
            elif t == ".f64":
                imm = _f64_imm(g)
        if immediate == "always" and imm is not None:
            value = imm()
            self.text.append(value)
            self.canon.append(value)
            return
        text = self.b.src(kind, None, imm if immediate != "never" else None)
        if not text.startswith("$"):
            self.text.append(text)
            self.canon.append(text)
            return
        neg = "!" if kind == "pred" and g.rng.random() < 0.3 else ""
        self.text.append(neg + text)
        self.canon.append(neg + self._name(kind))

    def vector(self, kind: str, n: int, dst: bool, braces: bool = False):
        """`n` registers; braced when more than one or when the form's operand is a vector
        of one (mma.sync's `{a}`: ptxas wants the braces, "Vector expected")."""
        texts, canons = [], []
        for _ in range(n):
            if dst:
                texts.append(self.b.dst(kind))
            else:
                texts.append(self.b.src(kind))
            canons.append(self._name(kind))
        self.text.append("{" + ", ".join(texts) + "}" if n > 1 or braces else texts[0])
        self.canon.append("{" + ", ".join(canons) + "}" if n > 1 or braces else canons[0])

    def raw(self, text: str, canon: str):
        self.text.append(text)
        self.canon.append(canon)


# operands whose value the manual bounds (outside: undefined behaviour): (opcode, operand
# index) -> values drawn as immediates below the bound
BOUNDED_OPERANDS = {("fns", 2): 32}         # fns's base: "must be <= 31"
# operands whose immediates are drawn below a bound (registers stay any value): a 16-bit
# shift by an immediate of 2^16 or more, which ptxas 13.5.37 truncates to 16 bits where the
# manual clamps the u32 (tests/test_fuzz.py::test_16bit_shift_by_a_large_immediate_clamps)
SMALL_IMMEDIATES = {("shl", 2): 201, ("shr", 2): 201}


def mask_szext_width(b, opcode: str, ops: list) -> str:
    """For `szext d, a, n` with a register width: a line that puts `n & 63` into a
    temporary (`ops[2]` then names it), to go before the instruction. ptxas 13.5.37 writes
    szext of a parameter as SGXT with a constant operand whose word reads `c[0x1c..0x1e][..]`,
    the same word for .s32 and .u32 (tests/test_fuzz_generator_szext.py; campaign 8
    s8900342/462, campaign 9 s20000037 and 5 more): the emulator cannot run it. `& 63` keeps
    what .wrap reads and every width .clamp treats apart."""
    if opcode != "szext" or len(ops) < 3 or not ops[2].startswith("$"):
        return ""
    t = b.tmp("b32")
    line = f"and.b32 {t}, {ops[2]}, 63;\n"
    ops[2] = t
    return line


def clamp_fns_offset(b, opcode: str, ops: list) -> str:
    """For `fns d, mask, base, offset` with a register offset: a line that clamps the offset
    at -33 (into a temporary `ops[3]` then names) and is put before the instruction. ptxas
    13.5.37 gives 0 for offsets far below -32 where the manual finds nothing (0xffffffff;
    tests/test_fuzz.py -k fns); any offset below -33 finds nothing, as -33 does. Campaign 9,
    seed 20001033: an inventory-path fns with an offset a suld returned. An immediate offset
    below -33 becomes -33 (campaign 23, seed 34002033: `fns.b32 d, m, 3, -2147483648`)."""
    if opcode != "fns" or len(ops) < 4:
        return ""
    if not ops[3].startswith("$"):
        try:
            if int(ops[3], 0) < -33:
                ops[3] = "-33"
        except ValueError:
            pass
        return ""
    t = b.tmp("b32")
    line = f"max.s32 {t}, {ops[3]}, -33;\n"
    ops[3] = t
    return line


def _isa_fill(f, ops: _Operands, address=None) -> bool:
    """Fill `ops` with `f`'s operands (False when a kind is not writable here)."""
    g = ops.g
    n = _vector_count(f)
    for i, o in enumerate(f.operands):
        if o.optional and g.rng.random() < 0.5:
            break
        bound = BOUNDED_OPERANDS.get((f.opcode, i))
        if bound:
            value = str(g.rng.randrange(bound))
            ops.raw(value, value)
            continue
        kind = _kind_of_type(o.type)
        if o.kind == "d":
            ops.dst(kind)
        elif o.kind == "p":
            ops.dst("pred")
        elif o.kind == "pp":
            ops.dst("pred", pair="pred")
        elif o.kind == "dp":
            ops.dst(kind, pair="pred")
        elif o.kind in ("a", "r", "i", "q"):
            if o.kind == "r" and ops.metadata:
                ops.raw(ops.metadata, "%r8")
            elif o.kind == "r" and o.type == ".b64" and f.opcode in ("ld", "st", "atom", "red"):
                ops.policy = ops.b.tmp("b64")       # the cache policy, made just before
                ops.raw(ops.policy, "%d8")
            else:
                ops.src("pred" if o.kind == "q" else kind, o.type,
                        "never" if o.kind == "r" else "always" if o.kind == "i" else "maybe",
                        SMALL_IMMEDIATES.get((f.opcode, i)))
        elif o.kind in ("v1", "v2", "v4", "v8"):
            ops.vector(kind, int(o.kind[1]), dst=(i == 0), braces=True)
        elif o.kind == "V":
            ops.vector(kind, n, dst=True)
        elif o.kind == "W":
            ops.vector(kind, n, dst=False)
        elif o.kind == "m" and address is not None:
            ops.raw(*address)
        elif o.kind == "x" and o.type.startswith("0x"):      # a fixed value (mma.sp's selector)
            ops.raw(o.type, o.type)
        else:
            return False
    return True


def guard_miscompiled(f) -> bool:
    """Forms ptxas 13.5.37 miscompiles under a false guard, never guarded here: a guarded
    `set` with a float destination type converts the destination's old value to float
    (tests/test_fuzz.py::test_guarded_set_f32_leaves_its_destination_alone), one with a
    16-bit source sign-extends it (test_guarded_set_u16_leaves_its_destination_alone); a
    guarded `testp` that writes its own guard predicate runs as if unguarded
    (test_guarded_testp_writing_its_own_guard_keeps_it); a guarded SIMD video instruction
    with the secondary `.add` (the sum of its lanes) runs as if unguarded
    (test_guarded_vadd4_add_leaves_its_destination_alone, campaign 9 seed 20002962)."""
    return f.opcode in ("set", "testp") or (f.opcode[:1] == "v" and f.opcode[-1] in "24" and ".add" in f.modifiers)


def _isa_alu(g, ctx, b, f):
    is_float = any(t.startswith((".f", ".bf")) for t in f.types)
    if is_float and g.prog_fmad and f.opcode in ("mul", "add", "sub", "mad", "fma") and \
            not set(f.modifiers) & set(ROUNDING):
        return None, None      # ptxas may contract it: only under --fmad=false
    ops = _Operands(b, g)
    if not _isa_fill(f, ops):
        return None, None
    regs = [b.uses[int(t[2:])] for t in ops.text if t.startswith("$a")]
    if is_float and f.opcode in ("min", "max") and len(regs) >= 2 and regs[0] is regs[1]:
        return None, None      # min(x, x) of a NaN: a payload the manual leaves open
    if f.opcode in ("shl", "shr") and f.types and _bits(f.types[0]) == 64 and ops.text[-1].startswith("$a"):
        # ptxas 13.5 converts a float-written amount of a 64-bit shift with F2I instead of
        # using its bits (tests/test_fuzz.py -k 64bit; seed 8901422: an atom.add.f32 result);
        # op_logic passes register amounts through an integer op, this path takes none
        return None, None
    return f, ops


def _isa_memory(g, ctx, b, f):
    """A load or store of one inventory form, at an address that is in bounds and aligned
    in its state space: the input buffer (loads, data-dependent), the thread's own global
    words (stores), its own shared and local words, the module's constant array, a
    parameter blob."""
    rng = g.rng
    elem = max(_bits(f.types[0]) // 8, 1) if f.types else 4
    size = elem * _vector_count(f)
    space = f.spaces[0] if f.spaces else None
    pre = []
    t_addr = b.tmp("b64")
    store = f.opcode == "st"
    if space in (None, ".global"):
        if store:
            pre.append(f"add.s64 {t_addr}, $priv, 32;")
        else:
            idx = b.tmp("b32")
            pre += [f"and.b32 {idx}, {b.src('b32')}, {MEMORY_LIMIT // size - 1};",
                    f"mul.wide.u32 {t_addr}, {idx}, {size};", f"add.s64 {t_addr}, {t_addr}, $inb;"]
        if space is None:
            pre.append(f"cvta.global.u64 {t_addr}, {t_addr};")
        address = (f"[{t_addr}]", "[%ad]")
    elif space in (".shared", ".shared::cta"):
        t32 = b.tmp("b32")
        pre.append(f"add.u32 {t32}, $sq, {rng.randrange(0, 33 - size, size) if size < 32 else 0};")
        address = (f"[{t32}]", "[%as]")
    elif space == ".local" and ctx.func is None:
        pre.append(f"mov.u64 {t_addr}, $loc0;")
        address = (f"[{t_addr}+{rng.randrange(0, 65 - size, size) if size < 64 else 0}]", "[%ad]")
    elif space == ".const" and not store:
        pre.append(f"mov.u64 {t_addr}, $cst;")
        address = (f"[{t_addr}+{rng.randrange(0, 65 - size, size) if size < 64 else 0}]", "[%ad]")
    elif space in (".param", ".param::entry") and not store and size <= 16 and ctx.func is None:
        off = rng.randrange(0, 33 - size, size) if size < 32 else 0
        address = (f"[$blob+{off}]", f"[pb+{off}]")
    else:
        return None, None
    ops = _Operands(b, g)
    if not _isa_fill(f, ops, address):
        return None, None
    if store and f.types and _bits(f.types[0]) == 8 and _vector_count(f) > 1:
        pre += _mask_byte_sources(b, ops)
    return f, (ops, pre)


def _mask_byte_sources(b, ops) -> list[str]:
    """`st.v2/v4` of bytes: each source register through an `and` with 255 (lines to put
    before the store). ptxas 13.5.37 stores a 16-bit register it takes for an f16 (a cvt
    wrote it) as F2I.U8.F16 of its value, not its low byte, in the vector form only
    (tests/test_fuzz_ptxas_departures.py -k vector_byte_store; campaign 9, seed 20001436:
    `cvt.rp.f16.u64` then `st.v2.s8`); an integer op in between keeps the bits."""
    lines = []
    i = next((i for i, t in enumerate(ops.text) if t.startswith("{")), None)
    if i is None:
        return lines
    masked = []
    for x in ops.text[i].strip("{}").split(", "):
        if x.startswith("$a"):
            kind = b.uses[int(x[2:])].kind
            t = b.tmp(kind)
            lines.append(f"and.{kind} {t}, {x}, 255;")
            x = t
        masked.append(x)
    ops.text[i] = "{" + ", ".join(masked) + "}"
    return lines


def _isa_atomic(g, ctx, b, f):
    rng = g.rng
    space = f.spaces[0] if f.spaces else None
    t_addr = b.tmp("b64")
    pre = []
    word = 8 * rng.randrange(4)
    if space in (None, ".global"):
        pre.append(f"add.s64 {t_addr}, $priv, {word};")
        if space is None:
            pre.append(f"cvta.global.u64 {t_addr}, {t_addr};")
        address = (f"[{t_addr}]", "[%ad]")
    elif space in (".shared", ".shared::cta"):
        t32 = b.tmp("b32")
        pre.append(f"add.u32 {t32}, $sq, {word};")
        address = (f"[{t32}]", "[%as]")
    else:
        return None, None
    ops = _Operands(b, g)
    if not _isa_fill(f, ops, address):
        return None, None
    return f, (ops, pre)


# 2:4 sparsity metadata nibbles (mma.sp): the two kept elements' indices in a group of
# four, first < second; the other values are undefined (PTX ISA, sparse matrix metadata)
SPARSE_NIBBLES = (0x4, 0x8, 0xC, 0x9, 0xD, 0xE)
# .tf32 is sparse 1:2 (a kept element is two 16-bit halves): 0b0100 and 0b1110 are the only
# meaningful index nibbles, the rest undefined (PTX ISA, sparse mma.sp metadata for .tf32)
SPARSE_NIBBLES_TF32 = (0x4, 0xE)


def _isa_mma(g, ctx, b, f):
    """A warp-wide mma.sync / mma.sp.sync of one inventory form (every lane converged, full
    warp). mma.sp's metadata is a word of valid nibbles made just before (the same in every
    lane); its sparsity selector is the form's fixed value."""
    if not (ctx.full and ctx.masked) or ctx.func is not None:
        return None, None
    ops = _Operands(b, g)
    pre = []
    if ".sp" in f.modifiers:
        meta = b.tmp("b32")
        word = 0
        nibbles = SPARSE_NIBBLES_TF32 if ".tf32" in f.spelling else SPARSE_NIBBLES
        for _ in range(8):
            word = word << 4 | g.rng.choice(nibbles)
        pre.append(f"mov.b32 {meta}, {word:#010x};")
        ops.metadata = meta
    if not _isa_fill(f, ops):
        return None, None
    return f, (ops, pre)


def _policy(g, reg: str) -> tuple[str, str]:
    """A cache policy of a random inventory `createpolicy` form, into `reg` (and the same
    for the one-instruction check). Policies are opaque (their bits are the implementation's):
    they only steer caching, so no output depends on them and they are never compared."""
    forms = isa_families()["policy"]
    if not forms:
        return f"createpolicy.fractional.L2::evict_last.b64 {reg}, 1.0;", \
            "createpolicy.fractional.L2::evict_last.b64 %d8, 1.0;\n"
    f = _draw_form(g, "policy")
    if f is None:       # (none on the target)
        return f"createpolicy.fractional.L2::evict_last.b64 {reg}, 1.0;", \
            "createpolicy.fractional.L2::evict_last.b64 %d8, 1.0;\n"
    if ".range" in f.modifiers:             # [base], primary size <= total size
        args = ("[$inb]", "4096", str(g.rng.choice((4096, 8192, 65536))))
        canon = ("[%ad]",) + args[1:]
    else:                                   # the fraction (optional; 1.0 when left out)
        args = canon = (g.rng.choice(("", "", "0.5", "1.0", "0.25")),)
        args = canon = tuple(a for a in args if a)
    return (f"{f.spelling} {', '.join((reg,) + args)};",
            f"{f.spelling} {', '.join(('%d8',) + canon)};\n")


# A campaign sweeps the inventory: each program's draws start at its own place in each
# family's form list (seed * length / SWEEP_SEEDS), so SWEEP_SEEDS consecutive seeds walk
# every form once between them; the rest of the draws stay uniform for variety (they do not
# move the program along its stretch). `top_up` then makes every program walk its whole
# stretch and the next seed's, so a form is missed only where two seeds in a row draw none
# of its family (a program without the `forms` feature) or ptxas rejects it.
SWEEP_SEEDS = 1000
SWEEP_SHARE = 0.9
# sweep draws each program makes at least, per family, beyond two stretches: wmma is drawn
# by the ~12% of programs with the `mma` feature, so they walk further (a form is then
# missed where none of the ~35 seeds before it has the feature); mma.sync, drawn by the
# ~38% with `mma` or `warp`, walks its own one-form stretch only (five of its forms are the
# m8n8k4 shapes ptx2sass refuses: more would make refused programs common)
SWEEP_EXTRA = {"wmma": 2, "mma": -1}


def sweep_pick(g, family: str, forms: list, share: float = SWEEP_SHARE):
    """The next form of `family` for this program: its sweep position (share of draws),
    else a uniform choice; one the program's target lacks (`on_target`) is drawn again
    among those it has (None: none), so the sm_89 lists and draws stay as they were."""
    if g.rng.random() < share:
        n = g.isa_draws.get(family, 0)
        g.isa_draws[family] = n + 1
        start = (g.seed % SWEEP_SEEDS) * len(forms) // SWEEP_SEEDS
        form = forms[(start + n) % len(forms)]
    else:
        form = g.rng.choice(forms)
    if on_target(g, form):
        return form
    kept = [f for f in forms if on_target(g, f)]
    return g.rng.choice(kept) if kept else None


def on_target(g, form) -> bool:
    """Whether an inventory form exists on the program's `.target` (`Generator.sm`; the
    lists are sm_89's): the inventory's minimum target decides."""
    sm = getattr(g, "sm", 89)
    return sm >= 89 or form.valid_on(sm, (8, 5))


def sweep_quota(family: str, length: int) -> int:
    """Sweep draws a program makes of a family whose list has `length` forms: its own
    stretch and the next seed's (plus SWEEP_EXTRA)."""
    return max(1, 2 * -(-length // SWEEP_SEEDS) + SWEEP_EXTRA.get(family, 0))


def _draw_form(g, family: str):
    return sweep_pick(g, family, isa_families()[family])


def top_up(g, ctx) -> list:
    """Statements that bring each inventory family this program draws up to its sweep
    quota (top-level context: every thread, full warps where the launch has them)."""
    fam = isa_families()
    out = []
    families = [f for f in ("alu", "mem", "atom") if fam[f]]
    if g.on("mma") or g.on("warp"):
        families.append("mma")
    for family in families:
        quota = sweep_quota(family, len(fam[family]))
        for _ in range(4 * quota):
            if g.isa_draws.get(family, 0) >= quota:
                break
            made = op_isa(g, ctx, family, sweep=True)
            if made is not None:
                out.append(made)
    if g.on("mma") and wmma_index()["mma"]:
        quota = sweep_quota("wmma", len(wmma_index()["mma"]))
        for _ in range(4 * quota):
            if g.isa_draws.get("wmma", 0) >= quota:
                break
            made = op_wmma(g, ctx, sweep=True)
            if made is not None:
                out.append(made)
    return out


def op_isa(g, ctx, family: str | None = None, sweep: bool = False):
    """One instruction of a random sm_89 form of the PTX ISA inventory (of `family` when
    given; its sweep position when `sweep`), or None."""
    from ptx2sass.fuzz.generator import (Builder, canonical_nan, cvt_nan_unspecified, two_nan_unspecified,
                                         unspecified_nan)
    fam = isa_families()
    rng = g.rng
    chosen = family
    for _attempt in range(6):
        family = chosen or rng.choices(("alu", "mem", "atom", "mma"),
                                       weights=(len(fam["alu"]), len(fam["mem"]) * 1.5, len(fam["atom"]) * 1.5,
                                                len(fam["mma"]) * (g.on("mma") or g.on("warp"))))[0]
        if not fam[family] or (family != "alu" and ctx.func is not None):
            continue
        b = Builder(g, ctx)
        maker = {"alu": _isa_alu, "mem": _isa_memory, "atom": _isa_atomic, "mma": _isa_mma}[family]
        form = sweep_pick(g, family, fam[family], 1.0 if sweep else SWEEP_SHARE)
        if form is None:
            continue
        f, made = maker(g, ctx, b, form)
        if f is None:
            continue
        ops, pre = (made, []) if family == "alu" else made
        canon_pre = ""
        also = ()
        if ops.policy:
            policy, canon_pre = _policy(g, ops.policy)
            pre = [policy] + pre
            also = (policy.split(" ", 1)[0],)
        if not valid(f"{canon_pre}{f.spelling} {', '.join(ops.canon)};", _ISA_DECLS):
            continue
        spaces = tuple(s.lstrip(".").split("::")[0] for s in f.spaces) or (("generic",) if family in ("mem", "atom") else ())
        clamp = clamp_fns_offset(b, f.opcode, ops.text) + mask_szext_width(b, f.opcode, ops.text)
        line = f"{f.spelling} {', '.join(ops.text)};"
        if clamp:
            line = clamp + "@@" + line
        if family == "alu" and f.types and (unspecified_nan(f.opcode, f.modifiers, f.types[0].lstrip("."))
                                            or two_nan_unspecified(f.opcode, f.types[0].lstrip("."), ops.text[1:])
                                            or cvt_nan_unspecified(f.opcode, f.types[0].lstrip("."),
                                                                   f.types[-1].lstrip("."))):
            line = "@@" + line + canonical_nan(b, ops.text[0], f.types[0].lstrip("."))
        if family == "mma":
            return b.build("\n".join(pre + [line]), f.spelling, uniform_ok=False, guard_ok=False, collective=True, full_warp=True)
        return b.build("\n".join(pre + [line]), f.spelling, uniform_ok=(family == "alu"),
                       guard_ok=(family == "alu" and not guard_miscompiled(f)), spaces=spaces, also=also)
    return None


@functools.cache
def late_sparse_forms() -> list:
    """The mma.sp forms of the inventory after DRAW_UNTIL (f16 accumulators, tf32, 4-bit
    integers, fp8, `::ordered_metadata`) that sm_89 has: the `sparse` group of programs for
    sm_90 and newer draws them (fuzz/newarch.py), so the sm_89 draw stays frozen."""
    inv = isa_inventory()
    if inv is None:
        return []
    return [f for f in inv.forms_for(89, (8, 5))
            if f.spelling.startswith(("mma.sp.sync", "mma.sp::ordered_metadata.sync")) and not drawable(f)
            and not getattr(f, "arch_specific", False)
            and {o.kind for o in f.operands} <= {"v1", "v2", "v4", "v8", "r", "x"}]


def op_sparse(g, ctx):
    """One warp-wide mma.sp of `late_sparse_forms` (as the inventory's mma family: every lane
    converged, full warp, metadata of valid nibbles), or None."""
    from ptx2sass.fuzz.generator import Builder
    forms = late_sparse_forms()
    if not forms:
        return None
    for _attempt in range(4):
        b = Builder(g, ctx)
        form = sweep_pick(g, "sparse", forms)
        if form is None:
            return None
        f, made = _isa_mma(g, ctx, b, form)
        if f is None:
            return None
        ops, pre = made
        if not valid(f"{f.spelling} {', '.join(ops.canon)};", _ISA_DECLS):
            continue
        line = f"{f.spelling} {', '.join(ops.text)};"
        return b.build("\n".join(pre + [line]), f.spelling, uniform_ok=False, guard_ok=False, collective=True,
                       full_warp=True)
    return None


# ---- wmma: load a, b and c fragments, multiply-accumulate, store d, as one statement.
# Fragment registers hold elements in an arrangement each compiler chooses, so they are
# never compared: only what wmma.store writes (the warp's own scratch words) is.

WMMA_SCRATCH = 4096          # bytes of global and of shared scratch per warp


@functools.cache
def wmma_index() -> dict:
    out = {"mma": [], "load": {}, "store": {}}
    inv = isa_inventory()
    if inv is None:
        return out
    for f in inv.forms_for(89, (8, 5)):
        if f.opcode != "wmma" or getattr(f, "arch_specific", False):
            continue
        t = f.spelling.split(".")
        if t[1] == "mma":
            out["mma"].append(f)
        elif t[1] == "load":          # wmma.load.a.sync.aligned.row.m16n16k16[.space].f16
            space = t[7] if len(t) > 8 else None
            out["load"].setdefault((t[2], t[5], t[6], t[-1]), []).append((f, space))
        elif t[1] == "store":
            space = t[7] if len(t) > 8 else None
            out["store"].setdefault((t[5], t[6], t[-1]), []).append((f, space))
    return out


def _wmma_types(spelling: str) -> tuple:
    """(A layout, B layout, shape, A, B, C, D types) of a wmma.mma spelling; the b1 forms
    put their operation (`.xor.popc`, `.and.popc`) before `.sync`."""
    t = spelling.split(".")
    i = t.index("aligned")
    al, bl, shape = t[i + 1], t[i + 2], t[i + 3]
    rest = [x for x in t[i + 4:] if x not in ("rn", "rz", "rm", "rp", "satfinite", "xor", "and", "popc")]
    if len(rest) == 2:
        d, c = rest
        a = b = "f16"
    else:
        d, a, b, c = rest[:4]
    return al, bl, shape, a, b, c, d


_STRIDE = {"b1": 128, "s4": 64, "u4": 64}


def _wmma_operands(f, b, address: str, canon_address: str, stride: int, fragment: list[str] | None):
    """(text, canonical) operands of a load/store form; the fragment's temps are made here
    (loads) or given (stores)."""
    text, canon = [], []
    made = []
    for o in f.operands:
        if o.kind.startswith("v"):
            n = int(o.kind[1:])
            kind = _kind_of_type(o.type)
            regs = fragment if fragment is not None else [b.tmp(kind) for _ in range(n)]
            made = regs
            text.append("{" + ", ".join(regs) + "}")
            canon.append("{" + ", ".join(f"{_CANON[kind]}{i}" for i in range(n)) + "}")
        elif o.kind == "m":
            text.append(address)
            canon.append(canon_address)
        elif o.kind == "a":
            text.append(str(stride))
            canon.append(str(stride))
    return text, canon, made


class _MadeOperand(NamedTuple):
    kind: str
    type: str


class _MadeForm(NamedTuple):
    spelling: str
    operands: tuple


@functools.cache
def _wmma_made_forms(what: str, shape: str, t: str, count: int) -> list:
    """`wmma.load.c` / `wmma.store.d` forms the inventory lacks (the manual has them for
    m16n16k8 .f32 and the sub-byte shapes' .s32: the tf32, s4/u4 and b1 multiplies need
    them), as (form, space) pairs like wmma_index's, each layout and space."""
    out = []
    for lay in ("row", "col"):
        for space in (None, "global", "shared"):
            spelling = f"wmma.{what}.sync.aligned.{lay}.{shape}{'.' + space if space else ''}.{t}"
            frag = _MadeOperand(f"v{count}", ".b32" if t == "f16" else "." + t)
            ops = (frag, _MadeOperand("m", "." + t), _MadeOperand("a", ".u32"))
            out.append((_MadeForm(spelling, ops if what.startswith("load") else (ops[1], frag, ops[2])), space))
    return out


def op_wmma(g, ctx, sweep: bool = False):
    """wmma.load a, b, c; wmma.mma; wmma.store d (+ the stored words read back if shared).
    The mma form is the program's next sweep position (always when `sweep`); the loads and
    the store rotate through their spaces and layouts with the draws."""
    from ptx2sass.fuzz.generator import Builder
    idx = wmma_index()
    if not idx["mma"] or not (ctx.full and ctx.masked) or ctx.func is not None:
        return None
    rng = g.rng
    for _attempt in range(4):
        mma = sweep_pick(g, "wmma", idx["mma"], 1.0 if sweep else SWEEP_SHARE)
        if mma is None:
            return None
        al, bl, shape, ta, tb, tc, td = _wmma_types(mma.spelling)
        la = idx["load"].get(("a", al, shape, ta))
        lb = idx["load"].get(("b", bl, shape, tb))
        counts = [int(o.kind[1:]) for o in mma.operands]
        lc = [x for lay in ("row", "col") for x in idx["load"].get(("c", lay, shape, tc), [])] or \
            _wmma_made_forms("load.c", shape, tc, counts[3])
        sd = [x for lay in ("row", "col") for x in idx["store"].get((lay, shape, td), [])] or \
            _wmma_made_forms("store.d", shape, td, counts[0])
        if not (la and lb and lc and sd):
            continue
        b = Builder(g, ctx)
        lines, canon_lines = [], []
        frags = {}
        turn = g.seed // SWEEP_SEEDS + g.isa_draws.get("wmma", 0)
        for k, (name, choices, t) in enumerate((("a", la, ta), ("b", lb, tb), ("c", lc, tc))):
            f, space = choices[(turn + k) % len(choices)] if rng.random() < 0.8 else rng.choice(choices)
            stride = _STRIDE.get(t, 32)
            if space == "shared":
                address, canon_address = "[$mat]", "[%as]"
            else:
                at = b.tmp("b64")
                lines.append(f"add.s64 {at}, $inb, {1024 * rng.randrange(4)};")
                if space is None:
                    lines.append(f"cvta.global.u64 {at}, {at};")
                address, canon_address = f"[{at}]", "[%ad]"
            text, canon, frags[name] = _wmma_operands(f, b, address, canon_address, stride, None)
            lines.append(f"{f.spelling} {', '.join(text)};")
            canon_lines.append(f"{f.spelling} {', '.join(canon)};")
        kd = _kind_of_type(mma.operands[0].type)
        d = [b.tmp(kd) for _ in range(counts[0])]
        lines.append(f"{mma.spelling} {{{', '.join(d)}}}, {{{', '.join(frags['a'])}}}, "
                     f"{{{', '.join(frags['b'])}}}, {{{', '.join(frags['c'])}}};")
        kinds = [_kind_of_type(o.type) for o in mma.operands]
        canon_lines.append(f"{mma.spelling} " + ", ".join(
            "{" + ", ".join(f"{_CANON[k]}{i}" for i in range(n)) + "}" for n, k in zip(counts, kinds)) + ";")
        f, space = sd[(turn + 3) % len(sd)] if rng.random() < 0.8 else rng.choice(sd)
        stride = _STRIDE.get(td, 32)
        read_back = []
        if space == "shared":
            address, canon_address = "[$wss]", "[%as]"
            outs = [b.dst("b32") for _ in range(4)]
            ra = b.tmp("b32")
            read_back = ["bar.warp.sync 0xffffffff;", f"mad.lo.u32 {ra}, $lane, 16, $wss;",
                         f"ld.shared.v4.u32 {{{', '.join(outs)}}}, [{ra}];"]
        else:
            at = b.tmp("b64")
            lines.append(f"mov.u64 {at}, $wsg;")
            if space is None:
                lines.append(f"cvta.global.u64 {at}, {at};")
            address, canon_address = f"[{at}]", "[%ad]"
        text, canon, _ = _wmma_operands(f, b, address, canon_address, stride, d)
        lines.append(f"{f.spelling} {', '.join(text)};")
        canon_lines.append(f"{f.spelling} {', '.join(canon)};")
        if not valid("\n".join(canon_lines), _ISA_DECLS.replace("%r<9>", "%r<9>").replace(
                ".reg .b32 %r<9>;", ".reg .b32 %r<9>;\n.reg .b32 %f<9>;")):
            continue
        return b.build("\n".join(lines + read_back), mma.spelling, collective=True, full_warp=True,
                       guard_ok=False, uniform_ok=False, spaces=("global", "shared"))
    return None
