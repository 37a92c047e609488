"""Where each PTX variable lives, as ptxas 13.5 lays them out for sm_8x executables.

* module (and function-scope) `.global` variables: their own bytes in `.nv.global`
  (zero-filled) or `.nv.global.init` (largest alignment first, then smallest size); the
  `.visible`/`.common` ones' symbols GLOBAL, the `.weak` ones' WEAK (`-c` too); code
  reads a variable's 64-bit address from the constant-bank-4 table (`c[0x4][8*slot]`),
  whose entries the loader fills through `R_CUDA_64` relocations; addresses inside
  initial bytes are `R_CUDA_G64` relocations (a `.const` variable's is its bank-3 offset);
* module `.const` variables: byte offsets in constant bank 3 (`.nv.constant3`), in
  declaration order;
* `.shared` variables, the kernel's own and the module's it names, in declaration order:
  byte offsets in the kernel's shared window (`.nv.shared.<kernel>`); extern (unsized)
  arrays start after the static part padded to 16 bytes, and make the section exist even
  when it is empty;
* `.local` variables: slots of the kernel's stack frame (`ptx2sass.frame`);
* kernel parameters: offsets in constant bank 0, aligned as ptxas aligns them
  (`place_kernel_params`: in bank addresses up to sm_90, in offsets from sm_100);
* module `.texref`/`.surfref`/`.samplerref` variables (opaque handles): no storage; each
  kernel that names one gets a 4-byte slot in its constant bank 0 after the parameters,
  which the driver fills with the header index (`R_CUDA_TEX_HEADER_INDEX` and kin);
  textures' slots first, then samplers', then surfaces', each in the order the PTX first
  names them (ptxas 13.5, sm_8x; `handle_slots`).

A `Placement` is what instruction selection needs: the state space and the number (table
slot or byte offset) that addresses the variable.
"""
from __future__ import annotations

from dataclasses import field, replace

from ptx2sass import abi, ir
from ptx2sass.records import dataclass
from ptx2sass.abi import called_externs
from ptx2sass.encoder.cubin import GlobalVar
from ptx2sass.errors import CompileError
from ptx2sass.frame import Frame, align_up

EXTERN_SHARED_ALIGN = 16


@dataclass(frozen=True)
class Placement:
    space: str     # "global" (value: bank-4 slot); "const", "shared", "local", "param": byte offset
    #              "kernel" (relocatable output: an entry's address, value its name)
    value: int     # relocatable output: a "global"'s value is its symbol name (a str)
    symbol: str | None = None   # relocatable output: a "const"'s symbol, whose reads the linker places


@dataclass
class ModuleLayout:
    placements: dict[str, Placement] = field(default_factory=dict)
    globals_: list[GlobalVar] = field(default_factory=list)   # for the cubin, in PTX order
    bank4: list[str] = field(default_factory=list)            # address-table slot order
    # Addresses in initial bytes: cubin name -> [(offset, symbol, addend)].
    relocations: dict[str, list] = field(default_factory=dict)
    # Function-scope .global/.const variables: function name -> PTX name -> placement.
    function_placements: dict[str, dict[str, Placement]] = field(default_factory=dict)
    # Relocatable output: `.extern .global/.const` variables another module defines and the
    # uninitialised `.common` ones the linker allocates: (name, size, alignment; 0: extern,
    # state space),
    # and the names of module variables other modules may name (`.visible`; in executables
    # also `.common` and `.weak`, whose symbols ptxas binds GLOBAL / WEAK).
    extern_variables: list[tuple[str, int, int, str]] = field(default_factory=list)
    visible: set[str] = field(default_factory=set)
    weak: set[str] = field(default_factory=set)         # (executables) those bound WEAK
    # Opaque handle variables in declaration order: name -> type (texref/samplerref/surfref).
    handles: dict[str, str] = field(default_factory=dict)


@dataclass
class KernelLayout:
    placements: dict[str, Placement]
    shared_bytes: int | None       # static size of `.nv.shared.<k>`; None: no such section
    shared_align: int
    frame: Frame
    # Handle slots after the parameters: (byte offset from the parameters' start, name, type)
    handle_slots: list[tuple[int, str, str]] = field(default_factory=list)
    # relocatable output: the symbols of the shared variables the function names, as
    # `Kernel.shared_symbols` takes them (`relocatable_shared`)
    shared_symbols: list[tuple[str, int, int, str, str]] = field(default_factory=list)


OPAQUE_TYPES = ("texref", "samplerref", "surfref")      # also their slot order


def handle_references(fn: ir.Function, handles) -> list[str]:
    """The opaque handle variables `fn` names, in first-use order (taken before the
    optimiser runs: ptxas keeps a slot for a texture whose fetch it deletes). A texture
    fetched with a sampler (`[tex, smp, {...}]`, independent mode) is the pair's key
    `"tex,smp"`: the pair has a slot of its own."""
    names: dict[str, None] = {}
    if not handles:
        return []
    for b in fn.blocks:
        for ins in b.instrs:
            for k, src in enumerate(ins.srcs):
                if isinstance(src, ir.Symbol) and src.name in handles:
                    sampler = ins.attrs.get("sampler") if k == 0 else None
                    names[handle_key(src.name, sampler)] = None
    return list(names)


def handle_key(name: str, sampler: str | None = None) -> str:
    """A handle slot's key: the variable, or a texture and its sampler."""
    return f"{name},{sampler}" if sampler else name


def place_kernel_params(params: list[ir.Param], param_base: int, in_bank: bool) -> None:
    """Lay a kernel's parameters out in constant bank 0 as ptxas 13.5 does: in order, each
    at the first offset that is a multiple of its alignment, counted in bank addresses
    (`param_base` + offset) where `in_bank` (`Target.params_aligned_in_bank`), else from
    `param_base`. The frontend's offsets count from 0, which differs where the bank's first
    parameter byte is less aligned than a parameter. The driver copies arguments to the
    offsets the cubin's KPARAM_INFO records give, so either layout is self-consistent, but
    callers that pack the bank by ptxas's layout would see other bytes."""
    origin = param_base if in_bank else 0
    end = origin
    for p in params:
        p.offset = align_up(end, p.align) - origin
        end = origin + p.offset + p.size


def handle_slots(fn: ir.Function, handles: dict[str, str], used: list[str],
                 textures_before: int = 0) -> list[tuple[int, str, str]]:
    """(offset from the parameters' start, key, type) of each slot of `fn`'s handles.
    `textures_before`: texture slots left unused before the kernel's own (sm_90's ptxas
    numbers texture slots across the module's kernels, `Target.module_texture_slots`)."""
    at = align_up(max((p.offset + p.size for p in fn.params), default=0), 4)
    out = []
    for kind in OPAQUE_TYPES:
        if kind == "texref":
            at += 4 * textures_before
        for key in used:
            if handles.get(key.split(",")[0]) == kind:
                out.append((at, key, kind))
                at += 4
    return out


# txq/suq queries answered from the header's dimensions word; the others make ptxas read the
# descriptor from memory, sized by a weak symbol the loader defines (per opcode)
DIMENSION_QUERIES = frozenset({"width", "height", "depth"})
DESCRIPTOR_SIZE_SYMBOLS = {"txq": ".nv.unified.texrefDescSize", "suq": ".nv.surfrefDescSize"}


def descriptor_size_symbols(fn: ir.Function) -> list[str]:
    """The descriptor-size symbols `fn` (as written) needs, in first-use order: a txq/suq of
    a header field other than the dimensions (ptxas declares the symbol even when the
    query's result is unread)."""
    return list(dict.fromkeys(
        DESCRIPTOR_SIZE_SYMBOLS[ins.opcode] for b in fn.blocks for ins in b.instrs
        if ins.opcode in DESCRIPTOR_SIZE_SYMBOLS and not DIMENSION_QUERIES & set(ins.modifiers)))


def alternating_merge_sort(items: list, key) -> list:
    """ptxas 13.5.37's order of `.nv.global(.init)`'s variables: a list merge sort that deals
    the items alternately onto the fronts of two lists, sorts each, and merges them taking
    the second list's head only when its key is smaller (found on 3..40 variables of one
    size, and on mixed sizes, alignments and linkages: it is what breaks ties; -g's kernel
    order goes through it too, `codegen`)."""
    if len(items) <= 1:
        return list(items)
    first, second = items[0::2][::-1], items[1::2][::-1]
    first, second = alternating_merge_sort(first, key), alternating_merge_sort(second, key)
    out, i, j = [], 0, 0
    while i < len(first) and j < len(second):
        if key(second[j]) < key(first[i]):
            out.append(second[j])
            j += 1
        else:
            out.append(first[i])
            i += 1
    return out + first[i:] + second[j:]


def _global_offsets(variables) -> dict[str, int]:
    """ptxas's order inside `.nv.global(.init)`: largest alignment first, then smallest
    size, ties as ptxas's merge sort leaves them. `variables`: (variable, cubin name) pairs
    in bank-4 slot order (the exported ones first)."""
    at, out = 0, {}
    for v, name in alternating_merge_sort(variables, lambda p: (-p[0].align, p[0].size)):
        out[name] = align_up(at, v.align)
        at = out[name] + v.size
    return out


def _defined_here(v: ir.Variable) -> ir.Variable:
    """An `.extern` variable no input defines, as ptxas's whole-program mode keeps it ("ignoring
    extern qualifier"): a zero-initialised `.visible` definition."""
    return replace(v, extern=False, linkage="visible")


def module_layout(module: ir.Module, filename: str | None = None,
                  relocatable: bool = False, debug: bool = False) -> ModuleLayout:
    """Module-scope `.global`/`.const` variables, and function-scope ones (static storage:
    ptxas names them `$__<name>__<n>` in the cubin), in declaration order.

    Relocatable output (`-c`, as ptxas 13.5 writes it): no bank-4 table; the code builds a
    `.global`'s address from `32@lo(sym)`/`32@hi(sym)` relocations (placement value: the
    symbol's name), `.extern .global`s included, and every bodiless function is an extern
    the code calls with `CALL.ABS.NOINC` relocated against its symbol.

    `debug` (-g, as ptxas 13.5.37 -g writes it): the code builds `.global` addresses from
    `32@lo/hi(sym)` relocations too (no bank-4 table), and a function's address in an
    initialiser is an R_CUDA_64 relocation against the function (its own text section)."""
    out = ModuleLayout()
    if relocatable:
        for e in module.externs:
            out.placements[e.name] = Placement("global", e.name)
    per_kernel = [] if relocatable else called_externs(module)   # system calls' bank-4 slots
    for name in per_kernel[0] if per_kernel else []:
        out.placements[name] = Placement("global", len(out.bank4))
        out.bank4.append(name)
    data: list[tuple[ir.Variable, str, str | None]] = []     # (variable, cubin name, function)
    for v in module.variables:
        if v.type in OPAQUE_TYPES:
            out.handles[v.name] = v.type
            continue
        if v.space not in ("global", "const", "shared"):
            raise CompileError(f"module-level .{v.space} variable `{v.name}` not supported yet", filename)
        if v.space != "shared":                               # shared: laid out per kernel
            data.append((v, v.name, None))
    for fn in module.functions:
        for v in fn.locals:
            if v.space in ("global", "const"):
                data.append((v, f"$__{v.name}__{len(data)}", fn.name))
    # relocatable output: `.extern .global/.const` variables, and the uninitialised `.common`
    # `.global`s, which ptxas -c (13.5.37) writes as COMMON symbols (value: the alignment) the
    # linker allocates, take no storage here; an extern `.const`'s reads are relocated against
    # its symbol as a defined one's are
    kept = []
    for v, name, fn_name in data:
        if relocatable and fn_name is None and v.space == "global" and (
                v.extern or v.linkage == "common" and v.init is None):
            out.extern_variables.append((name, v.size, 0 if v.extern else v.align, "global"))
            out.placements[v.name] = Placement("global", name)
        elif relocatable and fn_name is None and v.space == "const" and v.extern:
            out.extern_variables.append((name, v.size, 0, "const"))
            out.placements[v.name] = Placement("const", 0, name)
        else:
            kept.append((v, name, fn_name))
    data = kept
    if not relocatable:     # whole program: ptxas defines an unresolved extern itself, as a
        data = [(_defined_here(v) if v.extern and fn_name is None else v, name, fn_name)   # GLOBAL
                for v, name, fn_name in data]                                   # symbol (its warning: cli)
    # ptxas's order of a module's `.global`s (bank-4 slots, and the ties of the layout's
    # sort): those with a GLOBAL/WEAK symbol first, then the LOCAL ones, each in declaration
    # order (ptxas 13.5.37, sm_89; whatever order the code names them in)
    exported = lambda v, fn_name: (not relocatable and fn_name is None
                                   and v.linkage in ("visible", "common", "weak"))
    ranked = [(v, name) for v, name, fn_name in data if v.space == "global" and exported(v, fn_name)]
    globals_ = ranked + [(v, name) for v, name, fn_name in data
                         if v.space == "global" and not exported(v, fn_name)]
    slots = {name: len(out.bank4) + i for i, (_, name) in enumerate(globals_)}
    offsets = {**_global_offsets([(v, n) for v, n in globals_ if v.init is not None]),
               **_global_offsets([(v, n) for v, n in globals_ if v.init is None])}
    # bank 3 too: the variables with a GLOBAL/WEAK symbol first (ptxas 13.5.37, plain and -c)
    bound = lambda v, fn_name: fn_name is None and v.linkage in (
        ("visible", "weak") if relocatable else ("visible", "common", "weak"))
    consts = [(v, name) for v, name, fn_name in sorted(data, key=lambda d: not bound(d[0], d[2]))
              if v.space == "const"]
    if relocatable:     # (-c: sorted as `.nv.global` is, measured with 13.5.37)
        const_offsets = _global_offsets(consts)
    else:               # (else in that order)
        const_offsets, const_end = {}, 0
        for v, name in consts:
            const_offsets[name] = align_up(const_end, v.align)
            const_end = const_offsets[name] + v.size
    for v, name, fn_name in data:
        if v.extern:
            raise CompileError(f"extern .{v.space} variable `{v.name}` not supported yet", filename)
        if relocatable and v.linkage in ("visible", "weak", "common") and fn_name is None:
            out.visible.add(name)                 # (`-c` too: `.weak` ones WEAK, as ptxas 13.5.37)
            if v.linkage == "weak":
                out.weak.add(name)
        elif exported(v, fn_name):
            # (ptxas 13.5.37, with or without -g: GLOBAL symbols, WEAK for `.weak`, after
            # the first kernel's)
            out.visible.add(name)
            if v.linkage == "weak":
                out.weak.add(name)
        init = v.init
        if v.relocations:
            init, relocs = _initial_addresses(v, module, const_offsets, filename, debug)
            if relocs:
                out.relocations[name] = relocs
        if v.space == "global" and (relocatable or debug):
            where = Placement("global", name)
            out.globals_.append(GlobalVar(name, v.size, v.align, init, "global", offsets[name]))
        elif v.space == "global":
            where = Placement("global", slots[name])
            out.globals_.append(GlobalVar(name, v.size, v.align, init, "global", offsets[name]))
        else:
            where = Placement("const", const_offsets[name], name if relocatable else None)
            out.globals_.append(GlobalVar(name, v.size, v.align, init or bytes(v.size), "const",
                                          const_offsets[name]))
        if fn_name is None:
            out.placements[v.name] = where
        else:
            out.function_placements.setdefault(fn_name, {})[v.name] = where
    if not (relocatable or debug):
        out.bank4 += [name for _, name in globals_]
    for name in (n for names in per_kernel[1:] for n in names):
        if name not in out.placements:
            out.placements[name] = Placement("global", len(out.bank4))
            out.bank4.append(name)
    return out


def _initial_addresses(v: ir.Variable, module: ir.Module, const_offsets: dict, filename,
                       debug: bool = False):
    """(initial bytes, relocations) of an initialiser holding addresses. A `.const`
    variable's address is its offset in bank 3, written into the bytes (as ptxas); a
    `.global` one's is left to the loader (R_CUDA_G64). A function's address is its
    pointer value (call support), or under -g a relocation against the function."""
    from ptx2sass.abi import function_pointers
    spaces = {m.name: m.space for m in module.variables}
    pointers = function_pointers(module) if any(f.name == n for f in module.functions
                                                for _, n, _ in v.relocations) else {}
    data, relocs = bytearray(v.init or bytes(v.size)), []
    width = max(1, ir.type_bits(v.type) // 8)
    for at, name, addend in v.relocations:
        if spaces.get(name) == "const" and name in const_offsets:
            value = const_offsets[name] + addend
            data[at:at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
        elif spaces.get(name) == "global" or (debug and name in pointers):
            relocs.append((at, name, addend))
        elif name in pointers:            # a function's address: its pointer value (abi)
            value = pointers[name] + addend
            data[at:at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
        else:
            raise CompileError(f"variable `{v.name}` initialised with the address of `{name}` "
                               "not supported yet", filename)
    return bytes(data), relocs


def referenced_symbols(fn: ir.Function) -> list[str]:
    """Names of the variables the function's code mentions, in first-use order."""
    names: dict[str, None] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            for s in ins.srcs:
                if isinstance(s, ir.Address):
                    s = s.base
                if isinstance(s, ir.Symbol):
                    names[s.name] = None
    return list(names)


# ir.Function.attributes[DEBUG_SHARED_NAMES] under -c -g: {own shared variable: its symbol}
DEBUG_SHARED_NAMES = "debug_shared_names"


def shared_symbol_name(fn: ir.Function, v: ir.Variable) -> str:
    """ptxas -c's symbol of a function's own `.shared` variable: `$__<name>__<line>`; with
    -g its own name, made unique in the module (`debug_shared_names`)."""
    names = fn.attributes.get(DEBUG_SHARED_NAMES)
    if names is not None and v.name in names:
        return names[v.name]
    return f"$__{v.name}__{v.line}"


def debug_shared_names(module: ir.Module) -> None:
    """-c -g (ptxas 13.5.37): the functions' own `.shared` variables keep their names, a
    repeated one numbered in declaration order (two kernels' `x`: `x`, `x.1`); sets each
    function's DEBUG_SHARED_NAMES. (The module's own names are taken first: not measured.)"""
    seen = {v.name: 0 for v in module.variables if v.space == "shared"}
    for fn in module.functions:
        names = {}
        for v in fn.locals:
            if v.space != "shared" or v.extern or v.size == 0:
                continue
            n = seen.get(v.name)
            names[v.name] = v.name if n is None else f"{v.name}.{n + 1}"
            seen[v.name] = 0 if n is None else n + 1
        fn.attributes[DEBUG_SHARED_NAMES] = names


def module_shared_variables(module: ir.Module) -> list[ir.Variable]:
    """The module's sized `.shared` variables: ptxas -c gives every one a LOCAL symbol in
    `.nv_debug.shared` (named or not), the linker places them in each window that needs them."""
    return [v for v in module.variables if v.space == "shared" and not (v.extern or v.size == 0)]


def relocatable_shared(fn: ir.Function, module: ir.Module, reserved_shared: int,
                       placements: dict[str, Placement]) -> tuple[int | None, int, list]:
    """Relocatable output (ptxas 13.5.37 -c): every `.shared` variable is a symbol the linker
    places (value: its alignment) and the code reads its address from a relocation
    (R_CUDA_ABS32_32); the window's reserved words come before what the linker places, so
    the code adds `reserved_shared` itself. `.nv.shared.<k>` holds a kernel's own variables
    (its alignment also the module's variables'); a `.func`'s own ones and the module's go
    to `.nv_debug.shared`; an extern one is an undefined GLOBAL symbol. Sets the
    placements; returns the section's size (None: none), alignment and the symbols as
    `Kernel.shared_symbols` takes them: own ones in the order the code names them, then the
    others, then the extern ones."""
    named = referenced_symbols(fn)
    own = sorted((v for v in fn.locals if v.space == "shared"),
                 key=lambda v: named.index(v.name) if v.name in named else len(named))
    if not fn.is_entry and fn.attributes.get(DEBUG_SHARED_NAMES) is not None:
        own = [v for v in fn.locals if v.space == "shared"]     # (-c -g: a function's in declaration order)
    module_vars = {v.name: v for v in module.variables if v.space == "shared"}
    # (the section's alignment: `.nv_debug.shared`'s too, which holds the module's and every
    # function's own variables: k1 4 -> 8 beside a `.func`'s `.align 8` own one, ptxas 13.5.37
    # -c and -c -g, generated modules 303/304/310; no floor: `.align 1`/`2` ones alone give 1/2, shared29)
    symbols, size, align = [], 0, max([1] + [v.align for v in module_shared_variables(module)]
                                      + [v.align for f in module.functions if not f.is_entry
                                         for v in f.locals if v.space == "shared" and not (v.extern or v.size == 0)])
    for v in own:
        extern = v.extern or v.size == 0
        name = v.name if extern else shared_symbol_name(fn, v)
        placements[v.name] = Placement("shared", reserved_shared, name)
        where = "extern" if extern else "kernel" if fn.is_entry else "function"
        symbols.append((name, 16 if extern else v.align, 0 if extern else v.size,
                        "own" if fn.is_entry else fn.name, where))
        if not extern:
            size += v.size
            align = max(align, v.align)
    for n in named:
        v = module_vars.get(n)
        if v is not None and n not in placements:
            placements[n] = Placement("shared", reserved_shared, n)
            if v.extern or v.size == 0:
                symbols.append((n, max(v.align, EXTERN_SHARED_ALIGN), 0, "module", "extern"))
    has_section = fn.is_entry and any(w == "kernel" for *_, w in symbols)
    return (linked_section_size(size, align) if has_section else None), align, symbols


def linked_section_size(total: int, align: int) -> int:
    """The size ptxas 13.5.37 -c (and -c -g) gives a shared section the linker lays out
    (`.nv.shared.<k>`, `.nv_debug.shared`): its variables' sizes summed, without padding
    between them, plus the section's alignment where that sum is at most the alignment
    (one `.align 16` 16-byte variable: 32; `.align 4` 4 + `.align 16` 4: 24; 20 + 4, both
    `.align 16`: 24). Measured on sm_80..120 (branch shared29, `tools.layout_sweeps
    sharedsize`); the linker places the symbols itself, so only the size changes."""
    return total + align if total <= align else total


def kernel_layout(fn: ir.Function, module: ir.Module, mod: ModuleLayout,
                  filename: str | None = None, reserved_shared: int = 0,
                  handle_refs: list[str] | None = None, textures_before: int = 0,
                  relocatable: bool = False, pointer_calls: bool = False) -> KernelLayout:
    """Where `fn`'s variables live. `reserved_shared`: bytes the driver reserves at the start
    of the shared window (`Target.reserved_shared_bytes`), which the variables follow and
    the section covers. `handle_refs`: the handle variables the kernel names
    (`handle_references` before optimisation; default: those its code names now).
    `relocatable`: the shared variables are the linker's (`relocatable_shared`).
    `pointer_calls` (-g): calls through pointers go by the link-time convention too."""
    placements = {**mod.placements, **mod.function_placements.get(fn.name, {})}
    if handle_refs is None:
        handle_refs = handle_references(fn, mod.handles)
    slots = handle_slots(fn, mod.handles, handle_refs, textures_before) if fn.is_entry else []
    for at, name, kind in slots:
        placements[name] = Placement(kind, at)
    used = set(referenced_symbols(fn))
    shared = [v for v in fn.locals if v.space == "shared"]
    shared += [v for v in module.variables if v.space == "shared" and v.name in used]
    local = [v for v in fn.locals if v.space == "local"]
    for v in fn.locals:
        if v.space not in ("shared", "local", "global", "const"):
            raise CompileError(f"kernel `{fn.name}`: .{v.space} variable `{v.name}` not supported yet",
                               filename)
    size, align, externs, symbols = (reserved_shared if shared else 0), 4, [], []
    if relocatable:
        section, align, symbols = relocatable_shared(fn, module, reserved_shared, placements)
        shared = []
    for v in shared:
        if v.extern or v.size == 0:
            externs.append(v)
            continue
        at = align_up(size, v.align)
        placements[v.name] = Placement("shared", at)
        size = at + v.size
        align = max(align, v.align)
    if externs:         # they start where the static part, padded to 16 bytes, ends
        align = max(align, EXTERN_SHARED_ALIGN)
        size = align_up(size, EXTERN_SHARED_ALIGN)
        for v in externs:
            placements[v.name] = Placement("shared", size)
    frame = Frame()
    # the outgoing area of calls by the link-time convention: the frame's bottom (ptx2sass.abi)
    functions = {f.name: f for f in [*module.externs, *module.functions]}
    area = abi.outgoing_area(fn, functions, pointer_calls)
    if area:
        align = abi.outgoing_area_align(fn, functions, pointer_calls)
        placements[abi.OUTGOING_AREA] = Placement("local", frame.allocate(area, align, abi.OUTGOING_AREA))
    for name, at in frame.place_variables(local).items():
        placements[name] = Placement("local", at)
    if not relocatable:
        section = size if (size or externs) else None
    else:       # a kernel's address: its function descriptor, which the linker fills
        for f in module.functions:
            if f.is_entry and f.name not in placements:
                placements[f.name] = Placement("kernel", f.name)
    return KernelLayout(placements, section, align, frame, slots, symbols)


def own_shared_alignments(fn: ir.Function, reserved_shared: int, cap: int = 16) -> dict[str, int]:
    """The alignment (a power of two up to `cap`) of each static `.shared` variable a kernel
    declares, as `kernel_layout` places it: its own variables come first, in order, from
    `reserved_shared`, so their offsets are known before the module's variables (placed
    after them) are. At least the declared `.align`; the optimiser vectorises by it."""
    out, size = {}, reserved_shared
    for v in fn.locals:
        if v.space != "shared" or v.extern or v.size == 0:
            continue
        at = align_up(size, v.align)
        size = at + v.size
        known = cap
        while known > 1 and at % known:
            known //= 2
        out[v.name] = max(v.align, known)
    return out


@dataclass
class DebugShared:
    """-g: one kernel's shared window as ptxas -g lays it out (`debug_shared_layout`)."""
    offsets: dict[tuple[str | None, str], int]   # (owning function or None, name) -> byte offset
    size: int | None                             # `.nv.shared.<k>`'s size; None: no section
    align: int
    # (name, offset, size, declared by: "module", "own" (the kernel) or a function's name,
    # where: "kernel" (its window), "region" (the module-wide one) or "extern")
    symbols: list[tuple[str, int, int, str, str]] = field(default_factory=list)


@dataclass
class DebugSharedModule:
    """-g: every kernel's window (`DebugShared`), the module-wide region's size and
    alignment (`.nv_debug.shared`; None: no such section), and where each out-of-line
    function finds the shared variables it names (function -> name -> byte offset)."""
    windows: dict[str, DebugShared] = field(default_factory=dict)
    region: tuple[int, int] | None = None
    reads: dict[str, dict[str, int]] = field(default_factory=dict)


def debug_shared_layout(module: ir.Module, reserved_shared: int = 0) -> DebugSharedModule:
    """ptxas -g's shared windows. Under -g the `.func`s stay out of line and read the shared
    variables they name at fixed offsets. Measured (ptxas 13.5.37, sm_89): the variables
    the functions reached from two or more kernels name form a module-wide region (section
    `.nv_debug.shared`; by decreasing size, module variables first) at the start of the
    window of every kernel reaching one of them; the kernel's other variables (its own, the
    module's it names, those of the functions only it reaches) follow, by decreasing
    alignment, then increasing size, then the order the code first names them (the
    kernel's code, its callees' at each call); the kernel's own that nothing names too
    (symbols: by offset, those last); the extern ones after the static part padded to 16 (after the largest such part
    among the kernels reaching a function that names one). A function whose variables still
    land at different offsets in two kernels: `CompileError` ("not supported yet")."""
    functions = {f.name: f for f in module.functions}
    module_shared = {v.name: v for v in module.variables if v.space == "shared"}
    kernels = [f for f in module.functions if f.is_entry]

    def shared_names(fn: ir.Function) -> list[tuple[tuple[str | None, str], ir.Variable]]:
        own = {v.name: v for v in fn.locals if v.space == "shared"}
        return [((fn.name, n), own[n]) if n in own else ((None, n), module_shared[n])
                for n in referenced_symbols(fn) if n in own or n in module_shared]

    def reached(kernel: ir.Function) -> list[ir.Function]:      # depth first, in call order
        out, seen = [], set()

        def walk(fn: ir.Function) -> None:
            seen.add(fn.name)
            out.append(fn)
            for n in referenced_symbols(fn):
                if n in functions and n not in seen and not functions[n].is_entry:
                    walk(functions[n])

        walk(kernel)
        return out

    declared = {v.name: i for i, v in enumerate(module.variables)}

    def place(keys: list, variables: dict, start: int, region: bool = False) -> tuple[dict, int, int]:
        if region:      # the module-wide region: by decreasing size, then module ones first
            order = sorted(keys, key=lambda k: (-variables[k].size, k[0] is not None,
                                                declared.get(k[1], 0), keys.index(k)))
        else:
            order = sorted(keys, key=lambda k: (-variables[k].align, variables[k].size, keys.index(k)))
        offsets, end, align = {}, start, 4
        for k in order:
            offsets[k] = align_up(end, variables[k].align)
            end = offsets[k] + variables[k].size
            align = max(align, variables[k].align)
        return offsets, end, align

    reach = {k.name: reached(k) for k in kernels}
    count: dict[str, int] = {}
    for fns in reach.values():
        for fn in fns[1:]:
            count[fn.name] = count.get(fn.name, 0) + 1
    region_vars: dict = {}
    for k in kernels:
        for fn in reach[k.name][1:]:
            if count[fn.name] > 1:
                region_vars.update((key, v) for key, v in shared_names(fn)
                                   if not (v.extern or v.size == 0))
    base = reserved_shared if region_vars else 0
    region, region_end, region_align = place(list(region_vars), region_vars, base, region=True)
    out = DebugSharedModule()
    reads: dict[str, dict[str, tuple[str, int]]] = {}
    statics = {}                 # kernel -> (variables, externs, offsets, static end, alignment)
    unnamed = set()              # (kernel, variable): a kernel's own that nothing names
    for kernel in kernels:
        variables: dict = {}
        for fn in reach[kernel.name]:
            for key, v in shared_names(fn):
                variables.setdefault(key, v)
        # the kernel's own declarations all have a place, named or not (ptxas -g keeps one
        # whose only load was deleted, or that nothing names), after those named
        for v in kernel.locals:
            if v.space == "shared" and not (v.extern or v.size == 0) and (kernel.name, v.name) not in variables:
                variables[(kernel.name, v.name)] = v
                unnamed.add((kernel.name, v.name))
        externs = [k for k, v in variables.items() if v.extern or v.size == 0]
        # the region is in the windows of the kernels that reach one of its variables, up to
        # the last of those, the kernel's other variables after it (measured: a kernel
        # reaching only a shared function without variables has none)
        reached_region = [k for k in variables if k in region]
        with_region = bool(reached_region)
        rest = [k for k in variables if k not in externs and not (with_region and k in region)]
        region_part_end = max((region[k] + variables[k].size for k in reached_region), default=0)
        start = region_part_end if with_region else (reserved_shared if variables else 0)
        offsets, end, align = place(rest, variables, start)
        if with_region:
            offsets.update((k, region[k]) for k in reached_region)
        if region_vars:         # (measured: a kernel without the region aligns to it too)
            align = max(align, region_align)
        statics[kernel.name] = (variables, externs, offsets, end, align, with_region)
    # extern variables a function reached from several kernels names: after the largest
    # static part of those kernels, in each of them (measured: the smaller windows grow to it)
    extern_users = [k.name for k in kernels
                    if any(count[fn.name] > 1 and any(v.extern or v.size == 0 for _, v in shared_names(fn))
                           for fn in reach[k.name][1:])]
    common = max((align_up(statics[k][3], EXTERN_SHARED_ALIGN) for k in extern_users), default=0)
    for kernel in kernels:
        variables, externs, offsets, end, align, with_region = statics[kernel.name]
        if externs:
            align = max(align, EXTERN_SHARED_ALIGN)
            end = common if kernel.name in extern_users else align_up(end, EXTERN_SHARED_ALIGN)
            offsets.update((k, end) for k in externs)
        symbols = [(k[1], at, variables[k].size,
                    "module" if k[0] is None else "own" if k[0] == kernel.name else k[0],
                    "extern" if k in externs else "region" if with_region and k in region else "kernel")
                   for k, at in sorted(offsets.items(), key=lambda ka: (ka[0] in unnamed, ka[1]))]
        out.windows[kernel.name] = DebugShared(offsets, end if variables else None, align, symbols)
        for fn in reach[kernel.name][1:]:
            for key, _ in shared_names(fn):
                at = offsets[key]
                earlier = reads.setdefault(fn.name, {}).setdefault(key[1], (kernel.name, at))
                if earlier[1] != at:
                    raise CompileError(f"function {fn.name}: .shared variable `{key[1]}` at different "
                                       f"offsets in kernels {earlier[0]} and {kernel.name} not supported yet")
    # extern variables no kernel names: a symbol at the window's start all the same (after
    # the others; sm_90+: past the reserved words)
    named = {name for w in out.windows.values() for name, *_, where in w.symbols if where == "extern"}
    unnamed = [(v.name, reserved_shared, 0, "module", "extern") for v in module.variables
               if v.space == "shared" and (v.extern or v.size == 0) and v.name not in named]
    if unnamed and kernels:
        out.windows[kernels[0].name].symbols.extend(unnamed)
    any_extern = bool(named or unnamed)
    if region_vars or any_extern:
        # (sm_90+: the region starts after the reserved words, and holds them at least)
        out.region = (region_end if region_vars else reserved_shared,
                      max(region_align if region_vars else 1, EXTERN_SHARED_ALIGN if any_extern else 1))
    out.reads = {fn: {name: at for name, (_, at) in names.items()} for fn, names in reads.items()}
    return out
