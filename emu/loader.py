"""From cubin bytes to a `KernelProgram`: the instructions (decoded by our own codec, or
supplied by a caller), the kernel's metadata, and the module's global data and constant
banks with their relocations."""
from __future__ import annotations

from typing import Callable

from ptx2sass.encoder.arch import arch_info
from ptx2sass.encoder.cubin import CubinError, read_cubin
from ptx2sass.encoder.model import Instruction, Label

from .errors import EmuFault
from .program import KernelProgram

# Relocation types the loader applies to constant banks: R_CUDA_64 (2) writes the symbol's
# 64-bit address; 0x38/0x39 (ABS32_LO/HI-style pairs tinygrad also accepts) its halves.
_RELOC_WIDTH = {2: (8, 0), 0x38: (4, 0), 0x39: (4, 32), 1: (4, 0)}

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
    instructions = (decoder or codec_decoder)(k.text, arch, kernel)
    symbols = {s.name: s.value for s in cubin.symbols if s.section == f".text.{kernel}" and s.name}
    instructions = [(off, _resolve(ins, off, symbols)) for off, ins in instructions]

    program = KernelProgram(
        name=kernel, arch=arch, instructions=instructions, symbols=symbols,
        regcount=k.regcount or 255, shared_bytes=k.shared_bytes or 0,
        local_bytes=(k.frame_size or 0) + (k.max_stack_size or k.min_stack_size or 0),
        param_base=k.param_base or info.param_base, param_bytes=k.param_bytes,
        const0_template=k.const0 or b"",
        words={off: int.from_bytes(k.text[off:off + 16], "little") for off in range(0, len(k.text) - 15, 16)},
    )
    program.params = list(k.params)
    _module_data(cubin, program)
    return program


def _resolve(ins: Instruction, offset: int, symbols: dict[str, int]) -> Instruction:
    """Fill label offsets the decoder left symbolic (calls to `$kernel$func`)."""
    if not any(isinstance(op, Label) and op.offset is None for op in ins.operands):
        return ins
    from dataclasses import replace
    ops = tuple(Label(op.name, symbols.get(op.name)) if isinstance(op, Label) and op.offset is None else op
                for op in ins.operands)
    return replace(ins, operands=ops)


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
        if not rs.target.startswith(".nv.constant"):
            if rs.target.startswith(".text.") and rs.target == f".text.{program.name}" and rs.relocations:
                raise EmuFault(f"relocations against the kernel text are not supported "
                               f"({len(rs.relocations)} in {rs.name})", kernel=program.name)
            continue
        bank = int(rs.target[len(".nv.constant"):].split(".")[0])
        for r in rs.relocations:
            sym = cubin.symbols[r.symbol]
            if r.type not in _RELOC_WIDTH:
                raise EmuFault(f"unsupported relocation type {r.type:#x} in {rs.name}", kernel=program.name)
            program.const_relocations.append((bank, r.offset, sym.section or "", sym.value + (r.addend or 0), r.type))
