"""From cubin bytes to a `KernelProgram`: the instructions (decoded by our own codec, or
supplied by a caller), the kernel's metadata, and the module's global data and constant
banks with their relocations.

The kernel's text is placed at code address 0 and every separately compiled function of the
module (`-G` builds) after it, so that absolute code addresses (CALL.ABS targets, return
addresses in registers, function pointers in globals) resolve; relocations of code words are
applied to the decoded instructions, those naming globals once a launch has placed them."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from ptx2sass.encoder.arch import arch_info
from ptx2sass.encoder.cubin import CubinError, read_cubin
from ptx2sass.encoder.model import Control, Imm, Instruction, Label, Reloc

from . import externs
from .errors import EmuFault
from .program import DataAddress, KernelProgram
from .textures import DESCRIPTOR_BYTES

# Relocation types the loader applies to constant banks: R_CUDA_64 (2) writes the symbol's
# 64-bit address; 0x38/0x39 (ABS32_LO/HI-style pairs tinygrad also accepts) its halves.
_RELOC_WIDTH = {2: (8, 0), 4: (8, 0), 0x38: (4, 0), 0x39: (4, 32), 1: (4, 0)}   # 4: R_CUDA_G64
# Relocations the driver fills with a texture, sampler or surface header index rather than
# an address (R_CUDA_TEX/SAMP/SURF_HEADER_INDEX): the launch writes the handle of the object
# bound to the symbol's name (emu.textures).
HEADER_INDEX_RELOCATIONS = {6: "texref", 7: "samplerref", 0x34: "surfref"}
_TEXT_ALIGN = 128

Decoder = Callable[[bytes, str, str], list[tuple[int, Instruction]]]


def codec_decoder(text: bytes, arch: str, kernel: str) -> list[tuple[int, Instruction]]:
    """Decode a `.text` section with our own codec; a word it cannot decode is a fault."""
    from ptx2sass.encoder import codec
    out = []
    for off in range(0, len(text) - 15, 16):
        word = int.from_bytes(text[off:off + 16], "little")
        try:
            ins = codec.decode(word, arch, off)
        except Exception as e:  # the codec's DecodeError, or a gap in its tables
            raise EmuFault(f"cannot decode instruction word 0x{word:032x} ({e})",
                           kernel=kernel, offset=off) from None
        out.append((off, ins))
    return out


# The control field ptxas gives every instruction it leaves unscheduled: no stall, no
# scoreboard, no wait (the "yield" bit clear).
UNSCHEDULED = Control(stall=0, yield_=False, wr_sb=7, rd_sb=7, wait=0, reuse=0)


def unscheduled(instructions) -> bool:
    """Whether code carries no schedule, as ptxas writes it under -g or for PTX compiled
    for debugging (`.target ..., debug`): every instruction has `UNSCHEDULED`'s control
    field. The code itself says so; a `.debug_info` section does not (ptxas -g on PTX
    without DWARF writes none, and our -g code is scheduled)."""
    controls = {ins.control for ins in instructions}
    return controls == {UNSCHEDULED}


def load_program(cubin_bytes: bytes, kernel: str | None = None,
                 decoder: Decoder | None = None) -> KernelProgram:
    try:
        cubin = read_cubin(cubin_bytes)
    except (CubinError, ValueError) as e:
        raise EmuFault(f"not a loadable cubin: {e}") from None
    names = [k.name for k in cubin.kernels if k.is_entry]
    if kernel is None:
        if len(names) != 1:
            raise EmuFault(f"cubin has kernels {', '.join(names)}: say which one to run")
        kernel = names[0]
    try:
        k = cubin.kernel(kernel)
    except KeyError:
        raise EmuFault(f"no kernel {kernel!r} in the cubin (it has {', '.join(names) or 'none'})") from None
    arch = cubin.arch
    info = arch_info(arch)
    decode = decoder or codec_decoder
    layout = _code_layout(cubin, k)
    symbols = _code_symbols(cubin, layout)
    instructions = []
    for fn in layout:
        base = layout[fn].base
        relocs = {r.offset: r for r in layout[fn].kernel.relocations}
        for off, ins in decode(layout[fn].kernel.text, arch, fn):
            ins = _resolve(ins, base, fn, symbols)
            if off in relocs:
                ins = _relocate_code(ins, relocs[off], cubin, symbols, kernel)
            instructions.append((base + off, ins))
    text = b"".join(layout[fn].kernel.text.ljust(layout[fn].size, b"\0") for fn in layout)

    program = KernelProgram(
        name=kernel, arch=arch, instructions=instructions, symbols=symbols,
        # nvlink raises the REGCOUNT record to cover the callees it linked in (the text
        # section's count stays the kernel's own); the driver launches with the record's
        regcount=max(k.regcount, getattr(k, "regcount_attribute", None) or 0) or 255, shared_bytes=k.shared_bytes or 0,
        local_bytes=(k.frame_size or 0) + _known_stack(k.max_stack_size or k.min_stack_size),
        stack_need=max(k.frame_size or 0, _known_stack(k.max_stack_size or k.min_stack_size)),
        param_base=k.param_base or info.param_base, param_bytes=k.param_bytes,
        const0_template=k.const0 or b"",
        words={off: int.from_bytes(text[off:off + 16], "little") for off in range(0, len(text) - 15, 16)},
    )
    program.params = list(k.params)
    _cluster_records(k, program)
    program.debug_build = unscheduled(ins for _, ins in instructions)
    program.code_bases = {f".text.{fn}": place.base for fn, place in layout.items()}
    program.warp_sync_offsets = _warp_sync_offsets(layout)
    _module_data(cubin, program)
    if k.const2:
        # `.nv.constant2.<kernel>`: literals and jump/call tables the code reads as c[0x2].
        program.const_banks[2] = bytes(k.const2)
    return program


def _cluster_records(k, program: KernelProgram) -> None:
    """The kernel's cluster shape (`.reqnctapercluster`: EIATTR_CTA_PER_CLUSTER, three
    words) and `.explicitcluster` (EIATTR_EXPLICIT_CLUSTER), which the driver launches with,
    and the driver code it runs first (EIATTR_AT_ENTRY_FRAGMENTS: emu.ops_tmem's pair)."""
    for r in getattr(k, "extra_attributes", None) or ():
        if r.name == "CTA_PER_CLUSTER" and len(r.payload) >= 12:
            dims = tuple(r.u32s()[:3])
            if all(d >= 1 for d in dims):
                program.cluster_dims = dims
        elif r.name == "EXPLICIT_CLUSTER":
            program.explicit_cluster = True
        elif r.name == "AT_ENTRY_FRAGMENTS":
            program.at_entry_fragments = tuple(r.u32s())


# ptxas writes 0xFFFFFFFF as the stack size of recursive code (not knowable); the driver then
# gives each thread its default stack limit (cudaLimitStackSize, 1 KiB), which the launch adds.
_UNKNOWN_STACK = 0xFFFFFFFF


def _known_stack(size: int | None) -> int:
    return 0 if not size or size == _UNKNOWN_STACK else size


@dataclass
class _Placed:
    kernel: object          # the cubin's Kernel record of this function
    base: int               # where its first instruction sits in the emulated code space
    size: int


def _code_layout(cubin, k) -> dict[str, _Placed]:
    """The kernel's text at address 0, then every separately compiled function of the module
    (`.text.<func>` sections of non-entry functions, as `-G` builds make them), each at the
    next 128-byte boundary: one code space in which the module's absolute code addresses
    (CALL.ABS targets, return addresses, function pointers) mean something."""
    placed: dict[str, _Placed] = {}
    at = 0
    for fn in [k] + [f for f in cubin.kernels if not f.is_entry]:
        size = -(-len(fn.text) // _TEXT_ALIGN) * _TEXT_ALIGN
        placed[fn.name] = _Placed(fn, at, size)
        at += size
    return placed


def _warp_sync_offsets(layout: dict[str, _Placed]) -> set[int] | None:
    """COOP_GROUP_INSTR_OFFSETS of every placed function, as code addresses."""
    out: set[int] | None = None
    for place in layout.values():
        for rec in getattr(place.kernel, "extra_attributes", None) or ():
            if rec.name == "COOP_GROUP_INSTR_OFFSETS":
                out = (out or set()) | {place.base + off for off in rec.u32s()}
    return out


def _code_symbols(cubin, layout: dict[str, _Placed]) -> dict[str, int]:
    """Every symbol in a placed text section → its code address."""
    bases = {f".text.{fn}": p.base for fn, p in layout.items()}
    return {s.name: bases[s.section] + s.value for s in cubin.symbols
            if s.name and s.section in bases}


def _resolve(ins: Instruction, base: int, fn: str, symbols: dict[str, int]) -> Instruction:
    """Labels to code addresses: a function's name to where it was placed, a label the
    decoder resolved within its section shifted by the section's base."""
    if not any(isinstance(op, Label) for op in ins.operands):
        return ins
    ops = []
    for op in ins.operands:
        if isinstance(op, Label):
            if op.name in symbols and not op.name.startswith(".L"):
                op = Label(op.name, symbols[op.name])
            elif op.offset is not None:
                op = Label(op.name, op.offset + base)
            else:
                op = Label(op.name, symbols.get(op.name))
        ops.append(op)
    return replace(ins, operands=tuple(ops))


# Relocations of code words: the low/high halves of a 32-bit immediate (MOV R20, 32@lo(sym))
# and the absolute target of CALL.ABS (R_CUDA_ABS47_34 before sm_90, R_CUDA_ABS55_16_34 on sm_90).
_CODE_RELOC_LO, _CODE_RELOC_HI, _CODE_RELOC_CALLS = 0x38, 0x39, (0x3a, 0x4b)
# R_CUDA_ABS32_32: the whole value of a symbol the loader defines (the descriptor sizes of
# txq/suq's header reads, emu/textures.py DESCRIPTOR_BYTES)
_CODE_RELOC_ABS = 0x37


def _relocate_code(ins: Instruction, r, cubin, symbols: dict[str, int], kernel: str) -> Instruction:
    """Apply one relocation to a decoded instruction. A code symbol is resolved now; a data
    symbol (a global's address) gets a `Reloc` operand that the launch resolves once it has
    placed the module's globals."""
    sym = cubin.symbols[r.symbol]
    addend = r.addend or 0
    if r.type in _CODE_RELOC_CALLS:
        if sym.name in symbols:
            target = symbols[sym.name] + addend
        elif not sym.section:          # linked by the driver: emu/externs.py runs it
            target = externs.address(sym.name) + addend
        else:
            raise EmuFault(f"CALL.ABS to {sym.name!r}, which is not code of this module", kernel=kernel)
        ops = [o for o in ins.operands if not isinstance(o, (Label, Imm))]
        return replace(ins, operands=tuple(ops) + (Label(sym.name, target),))
    if r.type == _CODE_RELOC_ABS:
        if sym.name not in DESCRIPTOR_BYTES:
            raise EmuFault(f"relocation {r.type:#x} against {sym.name!r}: not a symbol the loader defines",
                           kernel=kernel)
        slot = next((i for i, o in enumerate(ins.operands) if isinstance(o, (Imm, Reloc))), None)
        if slot is None:
            raise EmuFault(f"relocation {r.type:#x} on an instruction without an immediate", kernel=kernel)
        ops = list(ins.operands)
        ops[slot] = Imm(DESCRIPTOR_BYTES[sym.name] + addend)
        return replace(ins, operands=tuple(ops))
    if r.type not in (_CODE_RELOC_LO, _CODE_RELOC_HI):
        raise EmuFault(f"unsupported relocation type {r.type:#x} in the text of {sym.name!r}", kernel=kernel)
    half = "lo" if r.type == _CODE_RELOC_LO else "hi"
    slot = next((i for i, o in enumerate(ins.operands) if isinstance(o, (Imm, Reloc))), None)
    if slot is None:
        raise EmuFault(f"relocation {r.type:#x} on an instruction without an immediate", kernel=kernel)
    if sym.name in symbols:
        value = symbols[sym.name] + addend
        new = Imm((value >> (32 if half == "hi" else 0)) & 0xFFFFFFFF)
    else:
        new = DataAddress(half, _symbol_section(sym), sym.value + addend)
    ops = list(ins.operands)
    ops[slot] = new
    return replace(ins, operands=tuple(ops))


EXTERN_PREFIX = "extern:"


def _symbol_section(sym) -> str:
    """The section a relocation's symbol lives in; `extern:NAME` for an undefined one."""
    return sym.section or EXTERN_PREFIX + sym.name


def _module_data(cubin, program: KernelProgram) -> None:
    """Global variables (`.nv.global[.init]`), user constant banks (`.nv.constantN`) and the
    relocations that put global addresses into constant banks."""
    for sec in cubin.sections:
        if sec.name in (".nv.global", ".nv.global.init"):
            size = max(sec.nobits_size, len(sec.data))
            program.globals[sec.name] = (size, bytes(sec.data))
        elif sec.name.startswith(".nv.constant") and not sec.name.startswith(".nv.constant0"):
            bank = int(sec.name[len(".nv.constant"):].split(".")[0])
            program.const_banks[bank] = bytes(sec.data)
    for rs in cubin.reloc_sections:
        if rs.target in (".nv.global", ".nv.global.init"):
            for r in rs.relocations:
                sym = cubin.symbols[r.symbol]
                if r.type not in _RELOC_WIDTH:
                    raise EmuFault(f"unsupported relocation type {r.type:#x} in {rs.name}", kernel=program.name)
                program.global_relocations.append((rs.target, r.offset, _symbol_section(sym),
                                                   sym.value + (r.addend or 0), r.type))
            continue
        if not rs.target.startswith(".nv.constant"):
            continue
        bank = int(rs.target[len(".nv.constant"):].split(".")[0])
        for r in rs.relocations:
            sym = cubin.symbols[r.symbol]
            if r.type in HEADER_INDEX_RELOCATIONS:
                program.handle_relocations.append((bank, r.offset, sym.name, HEADER_INDEX_RELOCATIONS[r.type]))
                continue
            if r.type not in _RELOC_WIDTH:
                raise EmuFault(f"unsupported relocation type {r.type:#x} in {rs.name}", kernel=program.name)
            program.const_relocations.append((bank, r.offset, _symbol_section(sym), sym.value + (r.addend or 0),
                                              r.type))
