"""The calling convention of out-of-line functions (recursive `.func`s, see ptx2sass.inline).

ptxas (whole-program mode, sm_8x) keeps a private copy of each callee in the kernel's text
(`$kernel$func`) and reaches it with `CALL.REL.NOINC`; the callee returns with
`RET.REL.NODEC Rra` to the address the caller left in a register pair (`MOV Rra, <offset of
the instruction after the CALL>; MOV Rra+1, 0`, offsets from the kernel's start). Arguments
and results travel in registers from R4 up; the callee moves the stack pointer R1 down by
its frame and saves there, with STL, the registers it writes that its caller may still need.
ptxas chooses some of these registers per call graph; this convention fixes them:

* arguments: R4 up, in declaration order, each value in as many 32-bit registers as its
  type needs (64-bit values in an even-aligned pair); results the same way from R4;
* return address: the pair R2:R3 at the CALL (the callee may keep it anywhere after);
* callee-saved: every R register but R1 (restored by undoing the frame), RZ and the
  function's own result registers, so a caller keeps its values in registers across a call;
* caller-saved: the predicates P0..P6 (saving them costs more than the caller keeping the
  few live across a call in R registers, which the allocator does by itself);
* stack: R1 points at the callee's frame after its prologue; the kernel's frame lies above.
* convergence barriers (ptxas's rule): B6..B15 callee-saved, B0..B5 not; a region with a
  call inside uses B6 up and a function that uses one saves it with `BMOV.32.CLEAR`
  (ptx2sass/reconverge.py);
* structs (`.param .align A .b8 x[K]`): their K bytes in ceil(K/4) consecutive registers,
  little-endian, from an even register when A >= 8 (the odd one skipped), as ptxas passes
  them (ptx2sass/inline.py packs them into `.b32` word parameters); 8- and 16-bit `.param`s
  in a whole register whose upper bits the callee ignores. ptxas refuses `.reg .pred`
  (and 8/16-bit `.reg`) parameters of such functions; we refuse predicates;
* `.reg` vectors: an element per register (32/64-bit elements), or 8/16-bit elements packed
  4 / size to a register, little-endian, each vector from a register of its own
  (`packed_groups`, as ptxas -g passes them).

A function whose arguments or results need more than `MAX_ARGUMENT_REGISTERS` registers,
or registers past the calling function's register limit (ptx2sass.codegen), is refused.
That is the whole-program convention (both sides ours). The link-time one (calls of other
modules' functions with -c, our own link targets, -g's out-of-line functions) is ptxas's,
measured with 13.5.37 -c on sm_80, sm_86, sm_89, sm_90, sm_100 and sm_120 (`link_layout`):
R4..R15 first-fit by alignment, the rest in an outgoing area at the bottom of the caller's
frame (reserved by ptx2sass.variables.kernel_layout before the frame's other slots, stored
with `STL [R1+off]` before the CALL), which the callee reads at [R1 + its frame size + off]
(`INCOMING`, resolved by ptx2sass.codegen once the frame is final). A struct (`.param .b8
x[N]`) travels as a unit (`Struct`: its words from a register aligned to its alignment / 4,
or the whole struct on the stack, never split); ptx2sass.inline passes it as its words,
and a link target's STRUCTS attribute says which of its word parameters make one. A result
that does not fit R4..R15 (a struct over 12 words) comes back through memory
(`RESULT_BUFFER`, `link_stack`).

Function pointers (as ptxas makes them in whole-program mode): the address of the i-th
address-taken function is the small number 8 * (i + 1), the same in every kernel; a kernel
that calls through a pointer has a table in `.nv.constant2.<kernel>` of 64-bit code offsets
(word 0 holds 1, for the null pointer), and calls with `LDC.64 Rt, c[0x2][Rptr]` then
`CALL.REL.NOINC Rt `(kernel)`; its text holds a copy of every address-taken function.
"""
from __future__ import annotations

from ptx2sass.records import dataclass
from ptx2sass.errors import CompileError
from ptx2sass.ir import type_bits

FIRST_ARGUMENT = 4
MAX_ARGUMENT_REGISTERS = 96          # R4..R99
RETURN_ADDRESS = 2                   # R2:R3
STACK_POINTER = 1
CLOBBERED_PREDICATES = tuple(("P", k) for k in range(7))
UNKNOWN_STACK_SIZE = 0xFFFFFFFF      # MIN_STACK_SIZE / CRS_STACK_SIZE of recursive code


def label_of(function: str) -> str:
    """The internal label of an out-of-line function's first instruction (not a PTX name:
    `@` cannot start a PTX identifier)."""
    return "@" + function


ENTRY_LABEL = "@entry"                # the kernel's first instruction: RET offsets count from it


def register_layout(types: list[str], what: str, function: str) -> list[tuple[int, int]]:
    """(first register, width in 32-bit registers) for values of PTX `types`, packed from R4."""
    out, at = [], FIRST_ARGUMENT
    for ty in types:
        if ty == "pred":
            raise CompileError(f"predicate {what} of the out-of-line function `{function}` not supported yet")
        width = max(1, type_bits(ty) // 32)
        at = (at + width - 1) // width * width
        out.append((at, width))
        at += width
    if at - FIRST_ARGUMENT > MAX_ARGUMENT_REGISTERS:
        raise CompileError(f"{what}s of the out-of-line function `{function}` need more than "
                           f"{MAX_ARGUMENT_REGISTERS} registers (passing on the stack) not supported yet")
    return out


# The link-time convention (calls to other modules' functions, our link targets, -g's
# out-of-line functions; measured with ptxas 13.5.37 -c on sm_86, sm_89, sm_90, sm_100 and
# sm_120, the same rule on each): only R4..R15 carry arguments. Each value in declaration
# order takes the lowest free run of registers there aligned to its width (64-bit: an even
# pair), so a later 32-bit value fills the hole an aligned pair left (`b32, b64, b32`: R4,
# R6:R7, R5); one that finds no run goes to the outgoing area at the next offset aligned to
# its size, in declaration order, never back-filled (8/16-bit values take a 4-byte slot). The
# area lies at the bottom of the caller's frame (R1 + 0 at the CALL; its size, rounded to 8,
# is part of the frame); the callee reads it at [R1 + its own frame size + offset].
LINK_LAST_REGISTER = 15
OUTGOING_AREA = "@outgoing"          # the caller's frame slot (a placement name, not PTX)
AREA_ALIGN = 8
# A callee's incoming stack argument is addressed [R1 + INCOMING + offset] until the frame
# is final (ptx2sass.codegen adds the frame size in place of INCOMING): never encodable.
INCOMING = 1 << 40


@dataclass(frozen=True)
class Place:
    """Where one value travels: `register` (its first, `width` 32-bit registers) or, with
    `register` None, at byte `offset` of the outgoing area."""
    register: int | None
    width: int
    offset: int = 0


@dataclass(frozen=True)
class Struct:
    """A `.param .align A .b8 x[size]` value in the link-time convention (measured with
    ptxas 13.5.37 -c): a unit of ceil(size/4) words, from a register aligned to A/4 (A=16:
    R4, R8 or R12; A=8: even; A<=4: any), first-fit among R4..R15 like the scalars, or the
    whole struct on the stack at an offset aligned to max(A, 4), never split; a later
    scalar may still back-fill a hole it left (`b32, b8[12]a8, b8[6]a16, b32, b8[3]a2` ->
    R4, R6..R8, R12:R13, R5, R9)."""
    size: int
    align: int

    @property
    def words(self) -> int:
        return (self.size + 3) // 4


# ir.Function.attributes[STRUCTS] of a link target: {struct parameter or result name:
# (size, align)}; ptx2sass.inline passes it as words `name$w0`, `name$w1`, … (`link_units`)
STRUCTS = "structs"


def link_layout(types: list, what: str, function: str, first: int = FIRST_ARGUMENT) -> tuple[list[Place], int]:
    """The link-time convention's places for values of PTX `types` (see above; a `Struct`
    entry: one place of its words) and the outgoing area's size in bytes (0: everything in
    registers)."""
    places, end, align = _link_places(types, what, function, first)
    return places, (end + align - 1) // align * align


def _link_places(types: list, what: str, function: str, first: int) -> tuple[list[Place], int, int]:
    """`link_layout`'s places, the end of the stack arguments (bytes, not rounded) and the
    alignment the area's size is rounded to."""
    free = [True] * (LINK_LAST_REGISTER + 1)
    out, end, area_align = [], 0, AREA_ALIGN
    for ty in types:
        if ty == "pred":
            raise CompileError(f"predicate {what} of the out-of-line function `{function}` not supported yet")
        if isinstance(ty, Struct):
            width, step, align = ty.words, max(1, ty.align // 4), max(4, ty.align)
        else:
            width = max(1, type_bits(ty) // 32)
            step, align = width, 4 * width
        start = (first + step - 1) // step * step
        at = next((r for r in range(start, LINK_LAST_REGISTER + 2 - width, step)
                   if all(free[r:r + width])), None)
        if at is None:
            offset = (end + align - 1) // align * align
            out.append(Place(None, width, offset))
            end = offset + 4 * width
            area_align = max(area_align, align)     # (a 16-aligned struct there: 0x28 -> 0x30)
        else:
            free[at:at + width] = [False] * width
            out.append(Place(at, width))
    return out, end, area_align


def link_units(params, structs: dict | None = None) -> list:
    """The link-time units of ir.Params: a PTX type per register value (`slot_types`), or a
    `Struct` for a bodiless declaration's `.param` array or for a link target's struct
    words (`name$w0`, `name$w1`, …; `structs` from its STRUCTS attribute)."""
    structs = structs or {}
    groups, types = packed_groups(params), slot_types(params)
    units, g = [], 0
    while g < len(groups):
        p = params[groups[g][0]]
        stem, _, k = p.name.rpartition("$w")
        if p.size * 8 > type_bits(p.type):
            units.append(Struct(p.size, p.align))
            g += 1
        elif stem in structs and k == "0":
            units.append(Struct(*structs[stem]))
            g += units[-1].words
        else:
            units.append(types[g])
            g += 1
    return units


def word_places(units: list, places: list[Place]) -> list[Place]:
    """`places` (of `units`, `link_layout`) with each struct's as a place per word."""
    out = []
    for unit, place in zip(units, places):
        if not isinstance(unit, Struct):
            out.append(place)
            continue
        for k in range(unit.words):
            out.append(Place(place.register + k, 1) if place.register is not None
                       else Place(None, 1, place.offset + 4 * k))
    return out


def word_types(units: list) -> list[str]:
    """The PTX type of each word `word_places` gives a place."""
    return [t for u in units for t in (["b32"] * u.words if isinstance(u, Struct) else [u])]


# A result that does not fit R4..R15 (a struct over 12 words) comes back through memory
# (measured, ptxas 13.5.37 -c, `.param .align 4 .b8 r[52]`): the caller passes the local
# address of a buffer in its frame (R1 + the outgoing area's size: `IMAD.MOV.U32 R4, RZ,
# RZ, R1` with no stack arguments) in R4, the arguments are placed from R5, the callee
# stores the result's words with `STL [R4+4k]` and returns nothing in registers, the caller
# reads them back with `LDL` (`link_stack`: where the buffer lies).
RESULT_BUFFER = FIRST_ARGUMENT


def result_buffer(units: list, function: str) -> int:
    """The bytes of the buffer a link-time result of `units` comes back in (0: registers)."""
    return 4 * len(word_places(units, link_layout(units, "result", function)[0])) \
        if link_layout(units, "result", function)[1] else 0


def link_stack(units: list, result_units: list, function: str) -> tuple[list[Place], int, int | None]:
    """A link-time call's argument places (of `units`), the outgoing area's size in bytes and
    the result buffer's offset in it (None: results in registers, the arguments from R4).
    Measured (5 signatures, sweep seeds 200-259): the buffer right after the stack arguments
    (their unrounded end: R4 = R1 + 0x4c), the area then rounded as without it (to 8, or
    16 with a 16-aligned struct on the stack: 0x4c + 52 -> 0x80); a result aligned to A > 4
    (branch cli29): that end rounded up to A, the area rounded to A as well."""
    buffer = result_buffer(result_units, function)
    places, end, align = _link_places(units, "argument", function, FIRST_ARGUMENT + (buffer > 0))
    if not buffer:
        return places, (end + align - 1) // align * align, None
    # (measured: a result aligned to A > 4 starts at the end rounded to A, and the area is
    # then rounded to A too: `b8[56]a8` after 8 bytes at 0x8, frame 0x40; `b8[64]a16` at 0x10, 0x50)
    result_align = max([4] + [u.align for u in result_units if isinstance(u, Struct)])
    at = (end + result_align - 1) // result_align * result_align
    align = max(align, result_align)
    return places, (at + buffer + align - 1) // align * align, at


def link_area_align(units: list, result_units: list, function: str) -> int:
    """The alignment ptxas gives a link-time call's outgoing area (and so R1 at the CALL):
    8, a 16-aligned struct on the stack's 16, a result buffer's alignment (measured)."""
    buffer = result_buffer(result_units, function)
    align = _link_places(units, "argument", function, FIRST_ARGUMENT + (buffer > 0))[2]
    if buffer:
        align = max([align] + [u.align for u in result_units if isinstance(u, Struct)])
    return align


def vector_runs(offsets: list[int], align: int, alone: tuple = ()) -> list[tuple[int, int]]:
    """(offset, words) of the STL/LDL ptxas makes of 32-bit words at byte `offsets` of an
    area aligned to `align` (measured, 13.5.37 -c): consecutive words merged, whatever
    argument they belong to, into 16 bytes at a multiple of 16 where the area is 16-aligned,
    else 8 bytes at a multiple of 8 (`b32` at 0 and a struct from 4: STL.64 [R1], STL.64
    [R1+0x8], ..., a lone last word STL); `b8[32]a4` in an 8-aligned area: four STL.64.
    64-bit scalars (their first word's offset in `alone`) merge only with each other (two
    at a multiple of 16 in a 16-aligned area: STL.128), never with 32-bit words (sweep
    seeds 212, 214: a struct's tail, then a b64: two STL.64; SEED250: b64, b64 one STL.128):
    ptxas merges stores of the same width."""
    have, out, done = set(offsets), [], set()
    for o in sorted(alone):
        if o in done:
            continue
        pair = align >= 16 and o % 16 == 0 and o + 8 in alone
        out.append((o, 4 if pair else 2))
        done.update(o + 4 * k for k in range(4 if pair else 2))
    for o in sorted(have):
        if o in done:
            continue
        for words in (4, 2, 1):
            if 4 * words <= max(align, 4) and o % (4 * words) == 0 and \
                    all(o + 4 * k in have and o + 4 * k not in done for k in range(words)):
                break
        out.append((o, words))
        done.update(o + 4 * k for k in range(words))
    return sorted(out)


def link_call_layout(params, returns, structs, function: str) -> tuple[list, list[Place], int, int | None]:
    """A link-time call's argument units, their word places (`word_places`), the outgoing
    area's size and the result buffer's offset (`link_stack`)."""
    units = link_units(params, structs)
    places, area, buffer = link_stack(units, link_units(returns, structs), function)
    return units, word_places(units, places), area, buffer


def link_result_registers(function) -> set[int]:
    """The registers a link target's results occupy (none for a result through memory)."""
    units = link_units(function.returns, function.attributes.get(STRUCTS))
    if result_buffer(units, function.name):
        return set()
    return {r + k for r, w in link_registers(units, "result", function.name) for k in range(w)}


def link_registers(types: list, what: str, function: str) -> list[tuple[int, int]]:
    """(first register, width) of values the link-time convention must pass in registers
    (results: ptxas returns what does not fit through memory, not done here)."""
    places, area = link_layout(types, what, function)
    if area:
        raise CompileError(f"{what}s of the out-of-line function `{function}` past R{LINK_LAST_REGISTER} "
                           f"(returned through memory) not supported yet")
    return [(p.register, p.width) for p in word_places(types, places)]


def pointer_call_units(ins, functions: dict) -> tuple[list, list]:
    """The link-time units of a call through a pointer (-g): those of a link target it may
    reach whose words are the call's (its structs as `Struct`s: ptx2sass.inline passes
    them as words), else its argument values' types (less the prototype) and its results'."""
    args = [a.type for a in ins.srcs[1:] if type(a).__name__ != "Symbol"]
    results = [d.type for d in ins.dests]
    for f in functions.values():
        structs = f.attributes.get(STRUCTS)
        if not structs or not f.blocks or not is_linkable(f):
            continue
        units, result_units = link_units(f.params, structs), link_units(f.returns, structs)
        if [type_bits(t) for t in word_types(units)] == [type_bits(t) for t in args] and \
                [type_bits(t) for t in word_types(result_units)] == [type_bits(t) for t in results]:
            return units, result_units
    return args, results


def _pointer_calls(fn) -> list:
    return [ins for b in fn.blocks for ins in b.instrs
            if ins.opcode == "call" and ins.srcs and type(ins.srcs[0]).__name__ == "Value"]


def outgoing_area(fn, functions: dict, pointer_calls: bool = False) -> int:
    """The bytes `fn`'s calls by the link-time convention pass on the stack, at most
    (`functions`: name -> ir.Function of the module's functions and extern declarations):
    calls of bodiless functions and of link targets; with `pointer_calls` (-g, where a call
    through a pointer goes by that convention) those too."""
    area = 0
    for ins in _pointer_calls(fn) if pointer_calls else ():
        units, results = pointer_call_units(ins, functions)
        area = max(area, link_stack(units, results, "function called through a pointer")[1])
    for callee in _link_callees(fn, functions):
        area = max(area, link_call_layout(callee.params, callee.returns,
                                          callee.attributes.get(STRUCTS), callee.name)[2])
    return area


def outgoing_area_align(fn, functions: dict, pointer_calls: bool = False) -> int:
    """The alignment of `fn`'s outgoing area (`outgoing_area`): the largest its calls need."""
    align = AREA_ALIGN
    for ins in _pointer_calls(fn) if pointer_calls else ():
        align = max(align, link_area_align(*pointer_call_units(ins, functions), "function called through a pointer"))
    for callee in _link_callees(fn, functions):
        structs = callee.attributes.get(STRUCTS)
        align = max(align, link_area_align(link_units(callee.params, structs),
                                           link_units(callee.returns, structs), callee.name))
    return align


def _link_callees(fn, functions: dict) -> list:
    """The functions `fn` calls by name that the link-time convention reaches: bodiless
    ones and link targets (once per call)."""
    out = []
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.opcode != "call" or not ins.srcs or type(ins.srcs[0]).__name__ != "Symbol":
                continue
            callee = functions.get(ins.srcs[0].name)
            if callee is None or (callee.blocks and not is_linkable(callee)):
                continue
            out.append(callee)
    return out


def packed_groups(params) -> list[list[int]]:
    """Indices of `params` (ir.Params) by the register value they travel in: the elements
    of a `.reg` vector of 8/16-bit elements (its IR parameters `a.x`, `a.y`, …) pack
    4 / size to a 32-bit register, little-endian, as ptxas -g passes them (`.v4.u16`: x, y in
    R4 and z, w in R5; `.v4.u8` in one register; the next vector starts a register of its
    own); every other parameter is a group of its own."""
    def vector(p):      # the vector a narrow element belongs to, None for any other parameter
        return p.name.rpartition(".")[0] if "." in p.name and p.size < 4 else None

    groups: list[list[int]] = []
    for i, p in enumerate(params):
        last = groups[-1] if groups else None
        if vector(p) is not None and last and vector(params[last[0]]) == vector(p) and len(last) < 4 // p.size:
            last.append(i)
        else:
            groups.append([i])
    return groups


def element_selector(ty: str, size: int, k: int) -> int:
    """The PRMT selector that takes element `k` of `size` bytes out of a packed register,
    zero- or (signed `ty`) sign-extended to 32 bits."""
    fill = (0x8 | (size * k + size - 1)) if ty.startswith("s") else 0x7
    nibbles = [size * k + j if j < size else fill for j in range(4)]
    return sum(n << (4 * j) for j, n in enumerate(nibbles))


def insert_selector(size: int, k: int) -> int:
    """The PRMT selector (a: the register so far, b: the element) that puts element `k` of
    `size` bytes into bytes size*k.. and keeps the bytes below it."""
    nibbles = [4 + j - size * k if size * k <= j < size * (k + 1) else j for j in range(4)]
    return sum(n << (4 * j) for j, n in enumerate(nibbles))


def slot_types(params) -> list[str]:
    """The PTX type of each register value `packed_groups` makes of `params`."""
    return ["b32" if "." in params[g[0]].name and params[g[0]].size < 4 else params[g[0]].type
            for g in packed_groups(params)]


def result_registers(returns, function: str) -> set[int]:
    """The physical registers a function's results (ir.Params) occupy: it need not preserve them."""
    return {r + k for r, w in register_layout(slot_types(returns), "result", function) for k in range(w)}


# System calls (ptxas's `.extern .func`s without a body: `vprintf`, `malloc`, `free`,
# `__assertfail`), as ptxas 13.5 makes them in whole-program mode for sm_8x: the callee's
# 64-bit address sits in a constant-bank-4 slot (`.nv.constant4`, filled by the loader
# through an `R_CUDA_64` relocation against an undefined FUNC symbol; ptxas's slot order,
# seen with one and two kernels: the system functions the last kernel calls (declaration
# order), the variables, then those the other kernels add, last kernel first); the call is `CALL.ABS.NOINC Rf` with the
# arguments in R4.. as above (at most R15), the absolute return address in R20:R21 (ptxas
# computes it from `LEPC`) and the result in R4..; the callee preserves R16..R255 but R20:R21
# (seen: ptxas keeps 40 values across `vprintf` in R16..R57, skipping R20/R21), and clobbers
# R0..R15, the predicates and UR4:UR5 (ptxas reloads the global-memory descriptor after the
# call). The kernel's `.nv.info` lists the callees (EXTERNS) and the CALL offsets
# (SYSCALL_OFFSETS); the call graph has a (kernel, callee) pair for each.
SYSCALL_RETURN_ADDRESS = 20          # R20:R21
SYSCALL_LAST_ARGUMENT = 15
SYSCALL_CLOBBERED = (tuple(("R", k) for k in range(16) if k != STACK_POINTER)
                     + (("R", SYSCALL_RETURN_ADDRESS), ("R", SYSCALL_RETURN_ADDRESS + 1))
                     + CLOBBERED_PREDICATES)

# Calls of a function another module defines (relocatable output, `-c`), as ptxas 13.5
# makes them for sm_8x and as its callees expect them (seen: a ptxas-compiled `.visible
# .func` under register pressure uses R0..R15 and R32 up without saving them, keeps
# R16..R31 but R20/R21 untouched, returns with `RET.ABS.NODEC R20`): arguments and results
# placed by `link_layout` (R4..R15, then the stack), the absolute return address in R20:R21 (`MOV R20, 32@lo((k +
# .L@srel))`, `MOV R21, 32@hi(...)`: relocations against the kernel's symbol with the return
# point's offset as addend), `CALL.ABS.NOINC `(callee)` (a relocation against the undefined FUNC
# symbol: R_CUDA_ABS47_34 on sm_75-89, type 0x4b from sm_90, Target.call_relocation). Values live across the call stay in R16..R31 (not
# R20/R21) or are spilled; predicates and uniform registers do not survive (ptxas's callee
# reads the global-memory descriptor into UR4 itself).
EXTERN_RETURN_ADDRESS = 20
# Our own `.visible .func`s in relocatable output are such link targets (ptxas -c compiles
# each once, in its own `.text.<f>` section, and calls it through the relocation even from
# the same module): arguments by `link_layout`, the return address in R20:R21, `RET.ABS.NODEC R20`,
# saving the registers it writes that `link_target_saves` names, reading the global-memory
# descriptor itself. ir.Function.attributes[LINKABLE] marks them.
LINKABLE = "linkable"
# -g keeps every `.func` out of line as ptxas -g does, in a text section of its own and
# called like a link target; one not `.visible` has a local symbol there.
LOCAL_FUNCTION = "local_function"
WEAK_FUNCTION = "weak_function"  # `.weak .entry`/`.func`: a WEAK symbol (ptxas, plain and -c)
# An `.entry` without `.visible`/`.weak` (nvcc's internal-linkage kernels): ptxas 13.5 binds its
# symbol LOCAL, before its text's section symbol (plain and -c); -c places such kernels first,
# the last declared first, as uncalled local functions (two objects may each have one of a name)
LOCAL_ENTRY = "local_entry"
DECLARED_AT = "declared_at"      # where the function's name first appears (a prototype counts)
# -g: where a function's or kernel's `brx.idx` tables start in the constant bank 2 (bytes).
# ptxas gives every table of the module its own place (the kernels' in PTX order, then the
# functions'), so that a function's tables sit at the same offset in every kernel reaching it.
JUMP_TABLE_BASE = "jump_table_base"
# -c: each `brx.idx` table of a function is an object of its `.nv.constant2.<f>`,
# `<f>.const_opt.<start>.<end>` (its bytes there), which the linker places in each kernel's
# bank 2 (ptxas 13.5.37: the table's load is `IADD3 R, offset, 0x8000` then
# `LDC c[R + table - 0x8000]`, its bank and offset relocated R_CUDA_CONST_FIELD21_38)
JUMP_TABLE_RELOCATED = "jump_table_relocated"
JUMP_TABLE_BIAS = 0x8000


def jump_table_object(function: str, start: int, end: int) -> str:
    """-c: the name of the table at bytes start..end of the function's bank 2 (ptxas's)."""
    return f"{function}.const_opt.{start}.{end}"
JUMP_TABLE_RELOCATION = 0x42         # R_CUDA_CONST_FIELD21_38 (every target, ptxas 13.5.37)
EXTERN_CALLEE_SAVED = tuple(k for k in range(16, 32) if k not in (20, 21))
EXTERN_CLOBBERED = (tuple(("R", k) for k in range(255) if k != STACK_POINTER and k not in EXTERN_CALLEE_SAVED)
                    + CLOBBERED_PREDICATES + tuple(("UR", k) for k in range(63)))


def link_target_saves(r: int) -> bool:
    """Whether our link target must keep register `r` for a ptxas-compiled caller (seen:
    ptxas's caller of an extern function under pressure keeps values across the call in R2,
    R16..R31 and R36..R39, R44..R47, …; ptxas's callee uses R0, R3..R15, R20/R21 and
    R32..R35, R40..R43, … freely). Our callers rely only on EXTERN_CALLEE_SAVED."""
    return r == 2 or (16 <= r < 32 and r not in (20, 21)) or (r >= 32 and r % 8 >= 4)


def is_linkable(function) -> bool:
    return bool(function.attributes.get(LINKABLE))


def call_prototype(ins) -> str:
    """The prototype string (`prototype_string`) of a call through a pointer, from its
    argument and result values: ptxas 13.5.37 -c pairs the calling kernel with it in the
    call graph."""
    from types import SimpleNamespace as Unit
    def units(values) -> list:
        return [Unit(name="", type=v.type, size=type_bits(v.type) // 8) for v in values]
    args = [a for a in ins.srcs[1:] if type(a).__name__ != "Symbol"]
    return prototype_string(Unit(name="", params=units(args), returns=units(ins.dests), attributes={}))


def prototype_string(function) -> str:
    """ptxas's `.nv.prototype` string of a function (`#` + result + parameters; `v` no
    result, `i`/`l` 32/64-bit integers, `f`/`d` f32/f64, `h` b16/f16, `b` b8, `b<N>` an
    N-byte `.param` array, whatever its alignment: `#iib12b6ib3`, measured):
    `#iil` for `(.param .b32 r) f(.param .b32 x, .param .b64 y)`."""
    def code(p) -> str:
        bits = type_bits(p.type)
        if p.size * 8 > bits:
            return f"b{p.size}"
        if bits in (8, 16) and p.type.startswith(("b", "f")):
            return "b" if bits == 8 else "h"        # `.b8`; `.b16`/`.f16` (measured)
        if bits not in (32, 64):
            raise CompileError("In ABI compilation, passing predicate, 8-bit and 16-bit parameters "
                               "to device functions is not supported")
        return {"f32": "f", "f64": "d"}.get(p.type, "i" if bits == 32 else "l")
    structs = function.attributes.get(STRUCTS) or {}

    def codes(params) -> str:       # a link target's struct words: the struct's code once
        out = []
        for p in params:
            stem, _, k = p.name.rpartition("$w")
            if stem in structs:
                out += [f"b{structs[stem][0]}"] if k == "0" else []
            else:
                out.append(code(p))
        return "".join(out)
    text = "#" + (codes(function.returns) or "v") + codes(function.params)
    from ptx2sass.frontend.instructions import SYSTEM_FUNCTIONS
    return text + SYSTEM_PROTOTYPE_SUFFIX if function.name in SYSTEM_FUNCTIONS else text


# What ptxas 13.5 appends to a system function's prototype (vprintf, malloc, free,
# __assertfail alike, measured): its register convention, with a 256-bit register mask.
SYSTEM_PROTOTYPE_SUFFIX = "|12p4r20sRx" + f"{0xFFF9:064x}"


# The symbol a return address's relocation names until the kernel's name is known.
RETURN_SYMBOL = "@kernel"


@dataclass(frozen=True)
class LabelDistance:
    """An immediate filled after layout: the byte distance from label `start` to `end`
    (a system call's return address relative to its LEPC)."""
    end: str
    start: str


def called_externs(module) -> list[list[str]]:
    """Per kernel, in ptxas's compile order (the last kernel first), the bodiless `.func`s
    it calls (directly or through an out-of-line function), each list in declaration order."""
    order = [e.name for e in module.externs]

    def called(fn) -> set[str]:
        return {ins.srcs[0].name for b in fn.blocks for ins in b.instrs
                if ins.opcode == "call" and ins.srcs and type(ins.srcs[0]).__name__ == "Symbol"}
    shared = set().union(*(called(fn) for fn in module.functions if not fn.is_entry))
    return [[n for n in order if n in called(fn) | shared]
            for fn in reversed(module.functions) if fn.is_entry]


POINTER_STRIDE = 8
NULL_POINTER_ENTRY = 1
INDIRECT = "*"          # in MFunction.calls: the function calls through a pointer


def function_pointers(module) -> dict[str, int]:
    """Address-taken out-of-line functions of an IR module -> their pointer value: those
    named other than as a call's target, or in a variable's initialiser, in module order."""
    names = {fn.name for fn in module.functions if not fn.is_entry}
    taken = {name for v in module.variables for _, name, _ in v.relocations if name in names}
    for fn in module.functions:
        for b in fn.blocks:
            for ins in b.instrs:
                srcs = ins.srcs[1:] if ins.opcode == "call" else ins.srcs
                taken.update(s.name for s in srcs if getattr(s, "name", None) in names
                             and type(s).__name__ == "Symbol")
    order = [fn.name for fn in module.functions if fn.name in taken]
    return {name: POINTER_STRIDE * (i + 1) for i, name in enumerate(order)}


def pointer_table(pointers: dict[str, int], offsets: dict[str, int]) -> bytes:
    """A kernel's `.nv.constant2` table: 64-bit code offsets indexed by pointer value."""
    words = [NULL_POINTER_ENTRY] + [0] * len(pointers)
    for name, value in pointers.items():
        words[value // POINTER_STRIDE] = offsets[name]
    return b"".join(w.to_bytes(8, "little") for w in words)


# ptxas 13.5 refuses these types as a compiled `.func`'s parameters or results, `.reg` and
# `.param` alike (`.b8`, `.b16` and `.f16` pass), on every target: "In ABI compilation ...".
NARROW_TYPES = frozenset((".pred", ".u8", ".s8", ".u16", ".s16"))
NARROW_PARAMETERS = ("In ABI compilation, passing predicate, 8-bit and 16-bit parameters to "
                     "device functions is not supported")
NARROW_RESULTS = ("In ABI compilation, returning predicate, 8-bit and 16-bit values from "
                  "device functions is not supported")


def narrow_type_problem(module, whole_program: bool, every_function: bool) -> str | None:
    """ptxas's fatal message where a function it compiles passes or returns a predicate or
    an 8/16-bit integer (not a vector of them), else None; none in a module where a
    function returns several values (ptxas then compiles without the ABI). The functions
    it compiles: with -g (`every_function`) or -c every defined one and those called; else
    those an entry reaches through calls."""
    functions = [f for f in module.functions() if f.kind == ".func"]
    if any(len(f.return_params) > 1 for f in functions):
        return None         # ptxas: "... multiple return values found, disabling ABI"
    if every_function or not whole_program:
        compiled = {f.name for f in functions if f.body is not None}
        roots = [f for f in module.functions() if f.kind == ".entry" and f.body is not None]
    else:
        compiled = set()
        roots = [f for f in module.functions() if f.body is not None and (
            f.kind == ".entry" or (not whole_program and ".visible" in f.linkage))]
    by_name = {}
    for f in module.functions():
        if f.body is not None or f.name not in by_name:
            by_name[f.name] = f
    work = list(roots)
    seen = {f.name for f in roots}
    while work:
        for name in _called_names(work.pop()):
            compiled.add(name)
            callee = by_name.get(name)
            if callee is not None and name not in seen and callee.body is not None:
                seen.add(name)
                work.append(callee)
    if not whole_program:
        compiled |= {f.name for f in roots if f.kind == ".func"}
    for f in functions:
        if f.name in compiled and any(_narrow(p) for p in f.params):
            return NARROW_PARAMETERS
    for f in functions:
        if f.name in compiled and any(_narrow(p) for p in f.return_params):
            return NARROW_RESULTS
    return None


def _narrow(decl) -> bool:
    return decl.type in NARROW_TYPES and decl.vector is None     # `.v4.u16` passes


def _called_names(function) -> list[str]:
    """The functions a body calls directly (`call [(r),] f, ...`)."""
    from ptx2sass.frontend import ast
    out = []
    stack = [function.body]
    while stack:
        for st in stack.pop().statements:
            t = type(st)
            if t is ast.Instruction:
                if st.opcode == "call":
                    ops = [o for o in st.operands if type(o) is not ast.ParenList]
                    if ops and type(ops[0]) is ast.Name:
                        out.append(ops[0].name)
            elif t is ast.Block:
                stack.append(st)
    return out
