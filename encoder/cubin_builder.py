"""Make a `Cubin` from scratch the way ptxas 13.5 would lay out the same kernels.

The code generator knows each kernel's instruction words, register count, parameters,
exit offsets and so on; ptxas's file around them (sections, symbols, `.nv.info` records,
call graph, debug frame, notes) follows fixed rules, which live here. The rules were read
off ptxas's own cubins and are checked by tests/test_cubin.py, which rebuilds every corpus
kernel from those facts alone and compares the result with ptxas's file.

Scope: executables and `-c` relocatable output (`relocatable=True`: ELF type ET_REL, no
bank-4 table or `.nv.rel.action`, code relocations in `Kernel.relocations`, externs the
linker resolves, `.nv.prototype`) for the sm_75..sm_89 family; kernels whose callees were
inlined or are private copies in their text (`Kernel.subfunctions`), calling functions the
loader or linker resolves (`Kernel.externs`); without a stack frame unless the caller
supplies the frame's CFA program. Relocatable output holds kernels only (no `.func` of its own).
"""
from __future__ import annotations

import copy
from dataclasses import replace
import struct

from ptx2sass import __version__

from .arch import UnknownArch, arch_info
from .cubin import (SHN_COMMON, SHT_CUDA_CONSTANT3_REL, SHT_CUDA_SHARED_REL, STO_CUDA_ENTRY, CubinError, Cubin, CudaInfo, GlobalVar, Kernel, Relocation,
                    RelocSection, Section, Symbol, ToolkitInfo)
from .cubin_layout import default_strtab
from .elf_layout import (StringTable, ET_EWP, ET_EXEC, ET_REL, SHT_CUDA_GLOBAL, SHT_CUDA_MERC_SHARED, SHF_ALLOC, SHF_WRITE, SHT_NOBITS, SHT_PROGBITS, STB_GLOBAL,
                         STB_LOCAL, STB_WEAK, STT_FUNC, STT_OBJECT, STT_SECTION, align_up)
from .leb128 import sleb, uleb
from .nvinfo import (ATTRIBUTE_CODES, LANGUAGE_PTX, MULTICAST_BULK_5F, UNNAMED_5F, UNNAMED_35, UNNAMED_67, Fmt, KParam,
                     NvInfoRecord)

R_CUDA_64 = 2
R_CUDA_G64 = 4      # a generic 64-bit address (initialisers naming a variable)
R_CUDA_UNUSED_CLEAR64 = 0x49    # relocatable output: an FDE's address range
SHT_CUDA_RELOCINFO = 0x7000000B
SHT_CUDA_PROTOTYPE = 0x70000002
SHT_CUDA_GLOBAL_INIT = 0x70000008
# Relocatable output (ptxas -c): module variables and `_param` are CUDA objects.
STT_CUDA_OBJECT = 13
# Module texture/sampler/surface handles: undefined global symbols of these types, and the
# relocation that puts the driver's header index into the kernel's constant-bank slot.
HANDLE_SYMBOL_TYPE = {"texref": 10, "samplerref": 11, "surfref": 12}
HANDLE_RELOCATION = {"texref": 6, "samplerref": 7, "surfref": 52}   # R_CUDA_{TEX,SAMP,SURF}_HEADER_INDEX
STO_CUDA_GLOBAL = 0x20
STO_CUDA_SHARED = 0x40         # relocatable output: a `.shared` variable's symbol (ptxas 13.5.37 -c)
STO_CUDA_CONSTANT = 0x80        # relocatable output: a `.const` variable's symbol (ptxas 13.5.37 -c)
STO_CUDA_CONSTANT_INTERNAL = 0x81   # `_param`: STO_CUDA_CONSTANT, STV_INTERNAL

# Where each `.nv.info.<k>` record goes, as ptxas 13.5 orders them, per `Target.cubin_style`
# (attributes ptxas did not write in any corpus kernel are not listed, and supplying one is
# an error).
_MIDDLE = [
    # (NUM_BARRIERS before EXTERNS: ptxas 13.5.37 sm_89, plain and -c, a kernel calling
    # vprintf or an extern function with a `bar.sync` before or after the call)
    "MAXREG_COUNT", "NUM_BARRIERS", "EXTERNS", "BINDLESS_SURFACE_BANK", "BINDLESS_TEXTURE_BANK",
    "TOOLS_PATCH_FUNC",         # --compile-as-tools-patch (ptxas 13.5.37, a `.func` of its own)
    UNNAMED_5F,
    "REG_RECONFIG",             # setmaxnreg kernels (ptxas 13.5, sm_90a/sm_100a/sm_120a)
    "COOP_GROUP_MASK_REGIDS", "COOP_GROUP_INSTR_OFFSETS", "SYSCALL_OFFSETS", "INT_WARP_WIDE_INSTR_OFFSETS",
    "VRC_CTA_INIT_COUNT",       # sm_100+: after the warp-wide lists (ptxas 13.5, shfl.sync/red)
    "EXIT_INSTR_OFFSETS",
    "S2RCTAID_INSTR_OFFSETS",  # position assumed: no 13.5 cubin in the corpora has one
    # Seen only between EXIT_INSTR_OFFSETS and CRS_STACK_SIZE (switch via BRX); its order
    # against CTAIDZ_USED / REQNTID / MAX_THREADS is not observed.
    "INDIRECT_BRANCH_TARGETS",
    "CTAIDZ_USED", "REQNTID", "MAX_THREADS", "CRS_STACK_SIZE",
]
KERNEL_ATTRIBUTE_ORDER = {
    "ampere": ["LANGUAGE", "SW_WAR", "CUDA_API_VERSION", UNNAMED_35, "PARAM_CBANK", "CBANK_PARAM_SIZE",
               "KPARAM_INFO", *_MIDDLE],
    # sm_90 (941 corpus kernels): the parameter bank records and the workaround records last
    # and the bindless banks of module handles after them
    # (GRID_ATTRIBUTES, multimem kernels only: ptx2sass/grid_attributes.py)
    # (the cluster records' place against RESERVED_SMEM_USED is not observed)
    "hopper": ["GRID_ATTRIBUTES", "LANGUAGE", "CUDA_API_VERSION", "KPARAM_INFO", "MAX_CLUSTER_RANK",
               "EXPLICIT_CLUSTER", "CTA_PER_CLUSTER", "AT_ENTRY_FRAGMENTS", "RESERVED_SMEM_USED",
               "TOOLS_PATCH_FUNC",      # (ptxas 13.5.37 sm_90 --compile-as-tools-patch)
               "SPARSE_MMA_MASK",
               "TCGEN05_1CTA_USED", "TCGEN05_2CTA_USED",
               *[a for a in _MIDDLE if a not in ("BINDLESS_SURFACE_BANK", "BINDLESS_TEXTURE_BANK",
                                                 "TOOLS_PATCH_FUNC")],
               "CBANK_PARAM_SIZE", "PARAM_CBANK", "SW_WAR", "NVSAL_SW_WAR", "PREEXIT_USED",
               UNNAMED_67, "BINDLESS_TEXTURE_BANK", "BINDLESS_SURFACE_BANK"],
}
_ORDER_INDEX = {style: {(ATTRIBUTE_CODES[a] if isinstance(a, str) else a): i for i, a in enumerate(order)}
                for style, order in KERNEL_ATTRIBUTE_ORDER.items()}
# Records ptxas 13.5 writes with the same value into every sm_90 kernel's table.
_HOPPER_5F, _HOPPER_NVSAL_SW_WAR = 0x101, 1


# The debug frame ptxas writes: one CIE and one FDE per kernel, in DWARF 64-bit format.
# Registers are numbered `0x5000000 | n` in its DWARF register space (seen as R1 / R255).
def _dwarf_reg(n: int) -> bytes:
    return uleb(0x5000000 | n)


DW_CFA_advance_loc4, DW_CFA_undefined, DW_CFA_same_value, DW_CFA_def_cfa = 0x04, 0x07, 0x08, 0x0C
CODE_ALIGN, DATA_ALIGN = 4, -4
STACK_POINTER = 1   # R1


LINK_RETURN_ADDRESS = 20   # a relocatable `.func`'s return address: R20:R21


# -g's CIE: ptxas 13.5 (sm_75..sm_90 alike) gives every register a rule, after RZ's
# same_value, in this order of (DWARF register class, registers): class 5 is R, 2 the
# predicates, 11 the uniform registers, 9 the uniform predicates, 1 a single register of its
# own (read off ptxas's output, not documented). A kernel's: all undefined but R1. A link
# target's (`-c` `.func`): the registers its callers keep across the call are same_value.
DEBUG_REGISTER_ORDER = ((9, (0, 2, 3, 4, 5, 6)), (11, range(4, 62)), (1, (0,)),
                        (2, (0, 2, 3, 4, 5, 6)), (5, range(0, 255)))


def _kept_across_a_call(cls: int, r: int, function: bool) -> bool:
    """Registers ptxas -g's CIE calls unchanged: R1 (the stack pointer); in a link target
    also R2, R16..R31, R32 up with r % 8 >= 4 and UR36..UR61 (ptx2sass.abi's link-target
    convention, with the return address R20:R21)."""
    if cls == 5 and r == STACK_POINTER:
        return True
    if not function:
        return False
    if cls == 11:
        return r >= 36
    return cls == 5 and (r == 2 or 16 <= r < 32 or (r >= 32 and r % 8 >= 4))


def _debug_rules(function: bool) -> bytes:
    return b"".join(bytes([DW_CFA_same_value if _kept_across_a_call(cls, r, function) else DW_CFA_undefined])
                    + uleb(cls << 24 | r)
                    for cls, registers in DEBUG_REGISTER_ORDER for r in registers)


def _cie(function: bool = False, device_debug: bool = False) -> bytes:
    """The CIE: a kernel has no return address; a link target's is R20 (R20, R21 unchanged).
    With -g, every register has a rule (`_debug_rules`)."""
    ra = [LINK_RETURN_ADDRESS, LINK_RETURN_ADDRESS + 1] if function else []
    head = (struct.pack("<q", -1) + bytes([3]) + b"\0" + uleb(CODE_ALIGN) + sleb(DATA_ALIGN)
            + (uleb(0x5000000 | ra[0]) if ra else uleb(0xFFFFFFFF))
            + bytes([DW_CFA_def_cfa]) + _dwarf_reg(STACK_POINTER) + uleb(0)
            + bytes([DW_CFA_same_value]) + _dwarf_reg(255))
    if device_debug:
        body = head + _debug_rules(function)
    else:
        body = (head + bytes([DW_CFA_same_value]) + _dwarf_reg(STACK_POINTER)
                + b"".join(bytes([DW_CFA_same_value]) + _dwarf_reg(r) for r in ra))
    body += bytes(-(12 + len(body)) % 8)
    return b"\xff\xff\xff\xff" + struct.pack("<Q", len(body)) + body


def _advance(delta_bytes: int) -> bytes:
    return bytes([DW_CFA_advance_loc4]) + struct.pack("<I", (delta_bytes & 0xFFFFFFFF) // CODE_ALIGN)


def default_cfa_program(k: Kernel, style: str = "ampere") -> bytes:
    """ptxas's CFA program for a kernel without a stack frame: rows after the first
    instruction, at the end of the entry basic block (CFA = R1 + frame size), and at the last
    EXIT. The entry block ends at its first branch, EXIT or call, or before the first branch
    target; without `Kernel.entry_block_end` the builder assumes straight-line code (16 bytes
    past the first EXIT). ptxas splits blocks at a few more places (MEMBAR.SC sequences,
    call sequences), where the code generator passes the whole `Kernel.cfa_program`.
    `style` is the target's `cubin_style`."""
    exits = k.exit_offsets or [16]
    first = k.entry_block_end if k.entry_block_end is not None else exits[0] + 16
    last = exits[-1]
    if style == "hopper":
        # sm_90: no row after the first instruction; the rows at the entry block's end and
        # at the last EXIT in address order
        cfa = bytes([DW_CFA_def_cfa]) + _dwarf_reg(STACK_POINTER) + uleb(k.frame_size)
        if last < first:
            return _advance(last) + _advance(first - last) + cfa
        return _advance(first) + cfa + (_advance(last - first) if last > first else b"")
    return (_advance(16) + _advance(first - 16) + bytes([DW_CFA_def_cfa])
            + _dwarf_reg(STACK_POINTER) + uleb(k.frame_size) + _advance(last - first))


def function_cfa_program(frame_size: int, last_return: int, style: str = "ampere") -> bytes:
    """ptxas's CFA program for a relocatable `.func` (seen without a frame): a row at its
    start with CFA = R1 + frame size (sm_90: without the empty advance before it), one at
    its last RET."""
    return ((b"" if style == "hopper" else _advance(0)) + bytes([DW_CFA_def_cfa])
            + _dwarf_reg(STACK_POINTER) + uleb(frame_size) + _advance(last_return))


def frame_cfa_program(frame_size: int, frame_set_end: int) -> bytes:
    """ptxas's CFA program for a kernel that moves the stack pointer down by `frame_size`
    (`.local` variables): a row after the first instruction, one after the instruction that
    sets up the frame (CFA = R1 + frame size, from byte `frame_set_end`), then a row at the
    same place returning to CFA = R1 (as ptxas 13.5 writes it for straight-line kernels)."""
    return (_advance(16) + _advance(frame_set_end - 16) + bytes([DW_CFA_def_cfa])
            + _dwarf_reg(STACK_POINTER) + uleb(frame_size) + _advance(0)
            + bytes([DW_CFA_def_cfa]) + _dwarf_reg(STACK_POINTER) + uleb(0))


def _fde(cie_offset: int, text_size: int, program: bytes, location: int = 0) -> bytes:
    body = struct.pack("<QQQ", cie_offset, location, text_size) + program
    body += bytes(-(12 + len(body)) % 8)
    return b"\xff\xff\xff\xff" + struct.pack("<Q", len(body)) + body


FDE_LOCATION_OFFSET = 4 + 8 + 8   # initial_location inside an FDE (relocated R_CUDA_64)

# `.nv.rel.action`: one relocation action, R_CUDA_CONST_FIELD22_37 (type 0x73) for symbol
# addresses: source bits 0..16 to bit 37, source bits 0..4 to bit 54.
_REL_ACTION = struct.pack("<IIH6B", 0x73, 0, 0, 0, 17, 37, 0, 5, 54)

DEFAULT_CALLGRAPH = [(0, -1), (0, -2), (0, -3), (0, -4)]

# sm_90 (`Target.cubin_style` "hopper"), as ptxas 13.5 writes every corpus cubin: a
# `.nv.compat` table, the driver's reserved shared memory as an empty `.nv.shared.reserved.0`
# with two weak symbols after the first kernel's, debug-frame relocations with addends, and
# no `.nv.rel.action`.
SHT_CUDA_COMPAT_INFO = 0x70000086
RESERVED_SHARED = ".nv.shared.reserved.0"
# sm_90 -c: weak undefined 8-byte objects ptxas declares in every relocatable cubin, after
# the first function's symbol (the linker's unified function and data tables)
UNIFIED_TABLE_SYMBOLS = ("__UDT_OFFSET", "__UFT_OFFSET", "__UFT_CANONICAL", "__UDT_CANONICAL",
                         "__UFT", "__UDT", "__UFT_END", "__UDT_END")
DEBUG_SHARED = ".nv_debug.shared"    # -g: where extern shared variables' symbols point (empty)
RESERVED_CAP = ".nv.reservedSmem.cap"        # cubin_layout keeps the same name
STO_CUDA_RESERVED_SHARED = 0xA0
STV_INTERNAL = 1
CUINFO_NOTE_FLAGS_HOPPER = 0x1000040        # SHF_INFO_LINK: `sh_info` names `.nv.compat`
# `.nv.compat` records (code, format, value): ACCELERATOR_TARGET (1 for `sm_90a`),
# INTERNAL_TARGET, ISA_CLASS (2 when the code converts to/from FP8, else 1), an unnamed
# 0x0d (0x101), INST_TENSORMAP_V1, CAN_FASTPATH_FINALIZE (8 zero bytes), FINALIZER_VERSION.
_COMPAT_ACCELERATOR, _COMPAT_ISA_CLASS = 0x09, 0x02


def compat_section(info, isa_class: int) -> bytes:
    """The `.nv.compat` bytes ptxas 13.5 writes for sm_90+ (NvInfo record format): sm_90's
    records, with the target's additions (`Target.compat_*`). ACCELERATOR_TARGET is 1 for
    the "a" variants only (not "f": `Target.accelerator_target`)."""
    accelerator = info.accelerator_target
    extra_05 = bytes([2, 0x05, info.compat_accelerator_05, 0]) \
        if accelerator and info.compat_accelerator_05 is not None else b""
    extra_07 = bytes([3, 0x07, 1, 1]) if info.compat_record_07 else b""
    value_0b = dict(info.compat_0b_value).get(info.variant, 0)
    return bytes([2, _COMPAT_ACCELERATOR, int(accelerator), 0, 2, 0x0C, 0, 0,
                  2, _COMPAT_ISA_CLASS, isa_class, 0]) + extra_05 + bytes([3, 0x0D]) + info.compat_0d_value.to_bytes(2, "little") \
        + extra_07 + bytes([2, 3, 0, 0, 4, 0x0B, 8, 0]) + value_0b.to_bytes(8, "little") \
        + bytes([3, 0x0E, 0x40, 0x04])


# AT_ENTRY_FRAGMENTS' value for a kernel that allocates tensor memory (cuobjdump:
# AT_ENTRY_FRAGMENT_TMEM_CTA1_V2), and the 32-byte partition of the reserved shared words
# holding the allocation bitmaps (isel/tcgen05.py), after them
AT_ENTRY_FRAGMENT_TMEM_CTA1_V2 = 6
# ... and for a kernel of the CTA pair's (`.cta_group::2`: ptxas 13.5 writes 7; a kernel
# never holds both groups: "uses single CTA ... and CTA pair ... not allowed")
AT_ENTRY_FRAGMENT_TMEM_CTA2 = 7
TMEM_PARTITION = "__nv_reservedSMEM_tcgen05_partition"
TMEM_PARTITION_BYTES = 0x20

# (sm_120a: QMMA.SP and QMMA.SF.SP 0x08, OMMA.SF.SP 0x80, ptxas 13.5.37)
SPARSE_MMA_BITS = {"HMMA": 0x10, "IMMA": 0x20, "QMMA": 0x08, "OMMA": 0x80}


def preexit_used(instructions) -> bool:
    """EIATTR_PREEXIT_USED: the code has PREEXIT (`griddepcontrol.launch_dependents`)."""
    return any(ins.opcode == "PREEXIT" for ins in instructions)


def reg_reconfig(instructions) -> bool:
    """EIATTR_REG_RECONFIG (no value): the code changes its register count (USETMAXREG,
    `setmaxnreg`)."""
    return any(ins.opcode == "USETMAXREG" for ins in instructions)


def sparse_mma_mask(instructions) -> int:
    """EIATTR_SPARSE_MMA_MASK of a kernel's code: a bit per sparse tensor-core opcode."""
    mask = 0
    for ins in instructions:
        if ins.opcode in SPARSE_MMA_BITS and "SP" in ins.modifiers:
            mask |= SPARSE_MMA_BITS[ins.opcode]
    return mask


def kernel_attributes(k: Kernel, const0_symbol: int, arch: str = "sm_89",
                      extern_symbols: list[int] = (), handle_kinds: dict | None = None,
                      relocatable: bool = False) -> list[NvInfoRecord]:
    """The `.nv.info.<k>` records ptxas writes for these facts on `arch`, in its order
    (`extern_symbols`: the symbol indices of `k.externs`; `handle_kinds`: the module's
    handle variables' types, for `k.handle_slots`; `relocatable`: -c output)."""
    handle_kinds = handle_kinds or {}
    info = arch_info(arch)
    hopper = info.cubin_style == "hopper"
    recs = [NvInfoRecord.words("LANGUAGE", LANGUAGE_PTX),
            NvInfoRecord.words("CUDA_API_VERSION", k.cuda_api_version)]
    if k.grid_attributes:
        recs.append(NvInfoRecord.half("GRID_ATTRIBUTES", k.grid_attributes))
    if k.tmem_partition:
        recs.append(NvInfoRecord.words("AT_ENTRY_FRAGMENTS", AT_ENTRY_FRAGMENT_TMEM_CTA2
                                       if 2 in k.tmem_cta_groups else AT_ENTRY_FRAGMENT_TMEM_CTA1_V2))
    if (info.gb10b_war_bytes and k.is_entry) or k.tmem_partition:    # (sm_110: not a `.func`'s, -c or -g)
        recs.append(NvInfoRecord(ATTRIBUTE_CODES["RESERVED_SMEM_USED"], Fmt.NVAL, 0))
    for group in k.tmem_cta_groups:
        recs.append(NvInfoRecord.flag(f"TCGEN05_{group}CTA_USED"))
    if hopper:
        recs += [NvInfoRecord.half("SPARSE_MMA_MASK", k.sparse_mma_mask),
                 NvInfoRecord.half("NVSAL_SW_WAR", _HOPPER_NVSAL_SW_WAR),
                 NvInfoRecord.byte("PREEXIT_USED", int(k.preexit_used))]
    if info.kernel_sw_war is not None:
        recs.append(NvInfoRecord.words("SW_WAR", info.kernel_sw_war))
    if info.kernel_record_67 and not relocatable:       # (ptxas 13.5.37: none under -c)
        recs.append(NvInfoRecord(UNNAMED_67, Fmt.BVAL, 0))
    if info.kernel_nval_35:
        recs.append(NvInfoRecord(UNNAMED_35, Fmt.NVAL, 0))
    if k.params:
        size = k.param_bytes
        recs.append(NvInfoRecord.words("PARAM_CBANK", const0_symbol, size << 16 | k.param_base))
        recs.append(NvInfoRecord.half("CBANK_PARAM_SIZE", size))
        for ordinal, offset, psize in sorted(k.params, reverse=True):
            recs.append(KParam(ordinal, offset, psize).record())
    if k.maxreg_count is not None:
        recs.append(NvInfoRecord.half("MAXREG_COUNT", k.maxreg_count))
    if k.barcount:
        recs.append(NvInfoRecord.byte("NUM_BARRIERS", k.barcount))
    if extern_symbols:
        recs.append(NvInfoRecord.words("EXTERNS", *extern_symbols))
    kinds = {kind for _, names in k.handle_slots for kind in map(handle_kinds.get, names)}
    if "surfref" in kinds:           # the banks the driver's headers live in (bank 0)
        recs.append(NvInfoRecord.byte("BINDLESS_SURFACE_BANK", 0))
    if kinds & {"texref", "samplerref"}:
        recs.append(NvInfoRecord.byte("BINDLESS_TEXTURE_BANK", 0))
    if k.tools_patch:
        recs.append(NvInfoRecord(ATTRIBUTE_CODES["TOOLS_PATCH_FUNC"], Fmt.NVAL, 0))
    recs.append(NvInfoRecord(UNNAMED_5F, Fmt.HVAL, 0 if not hopper
                             else _HOPPER_5F | info.kernel_5f_extra_bits
                             | (MULTICAST_BULK_5F if k.multicast_bulk else 0)))
    if k.reg_reconfig:
        recs.append(NvInfoRecord(ATTRIBUTE_CODES["REG_RECONFIG"], Fmt.NVAL, 0))
    if info.vrc_cta_init_count is not None:
        recs.append(NvInfoRecord.byte("VRC_CTA_INIT_COUNT", info.tmem_vrc_cta_init_count if k.tmem_used
                                      else info.vrc_cta_init_count))
    if k.exit_offsets:
        recs.append(NvInfoRecord.words("EXIT_INSTR_OFFSETS", *k.exit_offsets))
    if k.s2rctaid_offsets:
        recs.append(NvInfoRecord.words("S2RCTAID_INSTR_OFFSETS", *k.s2rctaid_offsets))
    if k.ctaidz_used and not hopper:      # ptxas writes none on sm_90
        recs.append(NvInfoRecord.flag("CTAIDZ_USED"))
    if k.reqntid:
        recs.append(NvInfoRecord.words("REQNTID", *k.reqntid))
    if k.max_threads:
        recs.append(NvInfoRecord.words("MAX_THREADS", *k.max_threads))
    if k.crs_stack_size is not None:
        recs.append(NvInfoRecord.words("CRS_STACK_SIZE", k.crs_stack_size))
    order = _ORDER_INDEX[info.cubin_style]
    for extra in k.extra_attributes:
        if extra.attr not in order:
            raise CubinError(f"kernel {k.name!r}: no known position for attribute {extra.name}")
        recs.append(extra)
    # A stable sort keeps KPARAM_INFO records (and repeated extras) in their given order.
    recs.sort(key=lambda r: order.get(r.attr, len(order)))
    return recs


def _check_kernel_facts(k: Kernel, info) -> None:
    """Facts that cannot describe a kernel are the caller's bug: say which."""
    def bad(msg: str) -> CubinError:
        return CubinError(f"kernel {k.name!r}: {msg}")
    if not k.name or any(c.isspace() or c == "\0" for c in k.name):
        raise bad("a kernel needs a name without spaces or NULs")
    if len(k.text) % 16 or not k.text:
        raise bad(f"text is {len(k.text)} bytes, not a non-empty run of 16-byte words")
    if not 0 <= k.regcount <= info.max_registers + 1:
        raise bad(f"register count {k.regcount} outside 0..{info.max_registers + 1}")
    if k.params and k.param_base != info.param_base:
        raise bad(f"param_base {k.param_base:#x}, but {info.name} puts parameters at "
                  f"{info.param_base:#x}")
    ordinals = [o for o, _, _ in k.params]
    if sorted(ordinals) != list(range(len(ordinals))):
        raise bad(f"parameter ordinals {ordinals} are not 0..{len(ordinals) - 1}")
    for ordinal, offset, size in k.params:
        if offset < 0 or size <= 0:
            raise bad(f"parameter {ordinal} at {offset} of size {size}")
    if k.param_bytes > info.max_param_bytes:
        raise bad(f"{k.param_bytes} bytes of parameters, more than {info.max_param_bytes}")
    for off in k.exit_offsets + (k.s2rctaid_offsets or []):
        if off % 16 or not 0 <= off < len(k.text):
            raise bad(f"instruction offset {off:#x} is not a word inside the text")
    if k.barcount > 16:
        raise bad(f"{k.barcount} barriers; there are 16")


def build_cubin(arch: str, kernels: list[Kernel], *, globals_: list[GlobalVar] = (),
                bank4: list[str] = (), var_relocations: dict | None = None,
                ptx_target: str | None = None,
                toolkit: ToolkitInfo | None = None, toolkit_version: int = 135,
                tool_args: str | None = None, tool_object: str = "",
                relocatable: bool = False, extern_variables: list[tuple[str, int, int, str]] = (),
                visible: set[str] = frozenset(), prototypes: dict[str, str] | None = None,
                debug_sections: list = (), device_debug: bool = False, errbar_at_exit: bool = False,
                debug_shared: tuple[int, int] | None = None, address_taken: list[str] = (),
                isa_class: int = 1, handles: dict[str, str] | None = None,
                descriptor_sizes: list[str] = (), istypep_used: bool = False,
                samplers: list[tuple[str, int, int | None]] = (),
                texmode_independent: bool = False, local_functions: set[str] = frozenset(),
                variable_order: list[str] = (), weak: set[str] = frozenset(),
                weak_functions: set[str] = frozenset(),
                function_aliases: dict[str, str] | None = None,
                module_shared: list[tuple[str, int, int, bool]] = (),
                extensible: bool = False, preserve_relocs: bool = False,
                reserved_alias: bool = True) -> Cubin:
    """A cubin for `kernels`, given in PTX declaration order (ptxas writes them reversed).

    `globals_` are module variables in PTX order; `bank4` names the symbols whose 64-bit
    addresses the code reads from constant bank 4 (`c[0x4][8*i]`), in slot order.
    `var_relocations` gives, per variable name, the addresses its initial bytes hold:
    (byte offset in the variable, symbol name, addend), written as R_CUDA_G64 entries of
    `.rel.<section>` (addend 0) and `.rela.<section>`.
    `ptx_target` is the PTX `.target` recorded in `.note.nv.cuinfo` (default: `arch`).
    `toolkit` identifies the writing tool in `.note.nv.tkinfo` (default: ptx2sass), with
    `tool_args` as its command line (ptxas's form, ptx2sass.tool_arguments) when given
    and `tool_object` the output file's name (ptxas -g records it).
    The given kernels are not modified: the cubin holds copies.
    `relocatable` writes ptxas -c's layout (measured with 13.5 for sm_89 and sm_90; sm_90's
    differences are marked where made): variables as
    CUDA objects (`visible` ones global), `extern_variables` (name, size, alignment, state
    space) as undefined ones (alignment 0) or COMMON ones (value: the alignment), all these symbols in
    declaration order (`variable_order`), `_param` in each constant bank 0, MAX_STACK_SIZE
    for MIN_STACK_SIZE,
    `isa_class` is sm_90's `.nv.compat` ISA class (2: the code converts FP8).
    `.nv.prototype` (each extern or linked function's `prototypes` string, ptxas's
    `#<result><params>`, `prototypes` in the order the PTX first names the functions:
    `#iil`; nvlink refuses to link a call whose string differs from the definition's), and
    debug-frame relocations for the linker.
    `handles`: the module's `.texref`/`.samplerref`/`.surfref` variables (name -> type) in
    declaration order; ptxas writes each as an undefined symbol after the first kernel's,
    that kernel's in the order it names them first, then the others in declaration order;
    a kernel's slots (`Kernel.handle_slots`) are `.rel.nv.constant0.<k>` entries.
    `descriptor_sizes`: where the code queries a texture/surface header field other than
    its dimensions, ptxas declares the loader's `.nv.unified.texrefDescSize` (txq) /
    `.nv.surfrefDescSize` (suq), weak undefined 4-byte objects after the handles.
    `istypep_used`: the code has an `istypep` (as written); ptxas's `.nv.info` then starts
    with ISTYPEP_USED.
    `samplers`: the module's `.samplerref`s (name, sampler word, force_unnormalized_coords
    or None), recorded as SAMPLER_INIT (and SAMPLER_FORCE_UNNORMALIZED) after the first
    REGCOUNT, the last declared first; `texmode_independent` adds TEXMODE_INDEPENDENT
    before the stack sizes.
    `debug_sections` (`-lineinfo`/`-g`, see ptx2sass.debuginfo) come after `.debug_frame`, each
    with a section symbol and its `.rela.<name>` / `.rel.<name>` entries (`relocations`:
    (offset, kernel or section name, type, addend or None)); `device_debug` (-g): every EXIT
    is preceded by an error barrier (EIATTR_GEN_ERRBAR_AT_EXIT) and the CIE says which
    registers a debugger cannot recover. `debug_shared` (-g): the size and alignment of
    `.nv_debug.shared`, the module-wide shared region that extern shared variables' symbols
    and those of the region's variables name (`ptx2sass.variables.debug_shared_layout`);
    `address_taken` (-g): the functions whose address the code takes (the call graph lists them).
    `variable_order` (-g): the module's variables of every space in PTX declaration order;
    ptxas -g lists module `.shared` symbols among the `.global` ones in that order.
    `weak`: those of the `visible` variables bound WEAK (the `.weak` ones).
    `weak_functions`: the `.weak` kernels and functions, whose symbols are WEAK.
    `function_aliases`: `.alias a, b` (a -> b); relocatable output names each alias as a
    global function symbol at its target's start, size 0, after the others (ptxas 13.5).
    `module_shared` (relocatable output): the module's `.shared` variables (name, size,
    alignment, extern) in declaration order; with `Kernel.shared_symbols` naming each
    function's own (value: the alignment) and the extern ones, ptxas -c's CUDA objects the
    linker places (`ptx2sass.variables.relocatable_shared`), `debug_shared` then the size
    and alignment of `.nv_debug.shared`, which holds the module's and the `.func`s' own.
    """
    try:
        info = arch_info(arch)
    except UnknownArch as e:
        raise CubinError(str(e)) from None
    if info.phdr_style != "ampere" and info.cubin_style != "hopper":
        raise CubinError(f"building cubins from scratch supports sm_75..sm_90 so far, not {arch}")
    hopper = info.cubin_style == "hopper"
    kernels = [copy.deepcopy(k) for k in kernels]
    for k in kernels:
        _check_kernel_facts(k, info)
        if not k.params:        # the parameter bank's size still counts from the arch's base
            k.param_base = info.param_base
    names = [k.name for k in kernels]
    if len(set(names)) != len(names):
        raise CubinError(f"duplicate kernel names: {names}")
    gnames = [g.name for g in globals_]
    if len(set(gnames)) != len(gnames) or set(gnames) & set(names):
        raise CubinError("module variables and kernels need distinct names")
    # relocatable: a `.func` of the module (not is_entry) is a link target its kernels call
    # through relocations like an extern, but defined here
    defined_funcs = [k.name for k in kernels if not k.is_entry]
    extern_names = list(dict.fromkeys(e for k in kernels for e in k.externs if e not in defined_funcs))
    if set(extern_names) & (set(gnames) | set(names)):
        raise CubinError(f"extern functions {extern_names} clash with kernels or variables")
    unknown = [b for b in bank4 if b not in gnames and b not in extern_names]
    if unknown:
        raise CubinError(f"bank4 names {unknown}, which are neither module variables nor externs")
    if relocatable and bank4:
        raise CubinError("relocatable output has no bank-4 address table")
    if extern_variables and not relocatable:
        raise CubinError("extern variables need relocatable output")
    file_order = list(reversed(kernels))
    vsm = int((ptx_target or arch).split("_")[1].rstrip("af"))
    c = Cubin(arch=arch, e_type=ET_REL if relocatable else ET_EWP if extensible else ET_EXEC, e_flags=None,
              tkinfo=toolkit or ToolkitInfo("ptx2sass",
                                            f"ptx2sass {__version__} (ptxas 13.5 compatible)",
                                            "ptx2sass", tool_args if tool_args is not None
                                            else f"-arch {arch} " + ("-c " if relocatable else ""),
                                            object_name=tool_object),
              cuinfo=CudaInfo(vsm, toolkit_version))
    # Module data sections, one per kind of variable, in the order first used.
    groups: dict[str, list[GlobalVar]] = {}
    for g in globals_:
        groups.setdefault(g.section, []).append(g)
    data_order = list(groups) + ([".nv.constant4"] if bank4 else [])
    offsets: dict[str, int] = {}
    for sec_name in data_order:
        if sec_name == ".nv.constant4":
            c.sections.append(Section(".nv.constant4", SHT_PROGBITS, SHF_ALLOC, 8,
                                      data=bytes(8 * len(bank4))))
            continue
        blob, align = bytearray(), 1
        for g in groups[sec_name]:   # given offsets are kept; the others follow the last
            at = g.offset if g.offset is not None else align_up(len(blob), g.align)
            blob.extend(bytes(max(0, at + g.size - len(blob))))
            blob[at:at + g.size] = (g.init or b"").ljust(g.size, b"\0")[:g.size]
            offsets[g.name] = at
            align = max(align, g.align)
        if sec_name == ".nv.global":
            c.sections.append(Section(sec_name, SHT_CUDA_GLOBAL if relocatable else SHT_NOBITS,
                                      SHF_ALLOC | SHF_WRITE, align, nobits_size=len(blob)))
        else:
            flags = SHF_ALLOC | (SHF_WRITE if sec_name == ".nv.global.init" else 0)
            linked = relocatable or extensible      # (-ewp types them as -c does)
            kind = (SHT_CUDA_GLOBAL_INIT if linked and sec_name == ".nv.global.init"
                    else SHT_CUDA_CONSTANT3_REL if linked and sec_name == ".nv.constant3" else SHT_PROGBITS)
            c.sections.append(Section(sec_name, kind, flags, align, data=bytes(blob)))

    # Symbols: notes, then per kernel (file order) its sections, module data after the first
    # kernel's text, then the module sections, then the kernels' function symbols.
    syms = c.symbols
    object_kind = ((STT_CUDA_OBJECT, STO_CUDA_GLOBAL) if relocatable else (STT_OBJECT, 0))

    def other_of(g: GlobalVar) -> int:
        return STO_CUDA_CONSTANT if relocatable and g.section == ".nv.constant3" else object_kind[1]

    def section_symbol(name: str) -> int:
        syms.append(Symbol(name, type=STT_SECTION, bind=STB_LOCAL, section=name))
        return len(syms) - 1

    section_symbol(".note.nv.tkinfo")
    section_symbol(".note.nv.cuinfo")
    const0_sym: dict[str, int] = {}
    var_sym: dict[str, int] = {}
    local_sym: dict[str, int] = {}
    by_name = {k.name: k for k in kernels}
    # -g: shared variables' symbols (Kernel.shared_symbols), each from the first kernel in
    # file order whose window holds it: module ones after the first shared section's symbol,
    # a kernel's own after its local functions (and the module's other variables), a
    # function's after its text's symbol, extern ones global in `.nv_debug.shared` after the
    # first kernel's symbol
    # (-c: CUDA objects placed by the linker, value the alignment; extern ones undefined)
    shared_kind = (STT_CUDA_OBJECT, STO_CUDA_SHARED) if relocatable else (STT_OBJECT, 0)
    shared_groups: dict[str, dict[str, Symbol]] = {}
    if relocatable and module_shared:   # (sized ones LOCAL in `.nv_debug.shared`, extern ones
        # undefined GLOBAL: every one, named or not, ptxas 13.5.37 -c)
        for name, size, align, extern in module_shared:
            shared_groups.setdefault("extern" if extern else "module", {})[name] = Symbol(
                name, align, size, shared_kind[0], STB_GLOBAL if extern else STB_LOCAL, shared_kind[1],
                section=None if extern else DEBUG_SHARED)
    for k in file_order:
        for name, at, size, owner, where in k.shared_symbols:
            group = ("extern" if where == "extern" else f"own:{k.name}" if owner == "own"
                     else ("region" if where == "region" else "module") if owner == "module" else owner)
            shared_groups.setdefault(group, {}).setdefault(
                name, Symbol(name, at, size, shared_kind[0], STB_GLOBAL if where == "extern" else STB_LOCAL,
                             shared_kind[1], section=None if relocatable and where == "extern"
                             else DEBUG_SHARED if where != "kernel" else f".nv.shared.{k.name}"))
    if debug_shared is not None:
        c.sections.append(Section(DEBUG_SHARED, SHT_CUDA_SHARED_REL if relocatable else SHT_NOBITS,
                                  SHF_ALLOC | SHF_WRITE, debug_shared[1], nobits_size=debug_shared[0]))

    reserved_symbol = False

    def shared_symbols(group: dict[str, Symbol]) -> None:
        """Add a group's shared variables' symbols (-c: `.nv_debug.shared`'s section symbol
        before the first of them in it, after the reserved words' if that is still to come:
        LOCAL variables' sections follow it, ptxas 13.5.37 sm_110)."""
        nonlocal reserved_symbol
        if relocatable and any(s.section == DEBUG_SHARED for s in group.values()) and not any(
                s.type == STT_SECTION and s.name == DEBUG_SHARED for s in syms):
            if reserved_symbol:
                section_symbol(RESERVED_SHARED)
                reserved_symbol = False
            section_symbol(DEBUG_SHARED)
        syms.extend(group.values())

    def _local_function_symbols(k: Kernel) -> None:
        for name in k.externs:      # -g's out-of-line local functions, after their first caller
            if name in local_functions and name not in local_sym:
                syms.append(Symbol(name, 0, len(by_name[name].text), STT_FUNC, STB_LOCAL,
                                   section=f".text.{name}"))
                local_sym[name] = len(syms) - 1

    def _local_function_symbol(k: Kernel) -> None:
        """A local function reached only through functions (or by none: -c keeps it), or a
        kernel without `.visible`, before its text's section symbol."""
        if k.name in local_functions and k.name not in local_sym:
            syms.append(Symbol(k.name, 0, len(k.text), STT_FUNC, STB_LOCAL, STO_CUDA_ENTRY if k.is_entry else 0,
                               section=f".text.{k.name}"))
            local_sym[k.name] = len(syms) - 1

    def module_variable_symbols() -> None:
        """Variables in the given (PTX declaration) order, each section's symbol before its
        first variable; the bank-4 address table right after the variable in its first
        slot, or before the variables when that slot holds an extern function."""
        nonlocal reserved_symbol
        if bank4 and bank4[0] in extern_names:
            section_symbol(".nv.constant4")
        declared = {name: at for at, name in enumerate(variable_order)}
        module_shared = shared_groups.pop("module", {})
        # (the GLOBAL/WEAK ones' sections first: ptxas walks them before the LOCAL ones)
        for g in sorted(globals_, key=lambda g: g.name not in visible):
            # (-g: the module's shared variables declared before it first)
            # (-c: among the LOCAL ones only: a visible one's section comes first)
            if not (relocatable and g.name in visible):
                shared_symbols({n: module_shared.pop(n) for n in list(module_shared)
                                if declared.get(n, -1) < declared.get(g.name, -1)})
            if reserved_symbol and g.name not in visible:
                section_symbol(RESERVED_SHARED)
                reserved_symbol = False
            if not any(s.type == STT_SECTION and s.name == g.section for s in syms):
                section_symbol(g.section)
            if g.name not in visible:       # (visible ones: after the first kernel's)
                syms.append(Symbol(g.name, offsets[g.name], g.size, object_kind[0], STB_LOCAL,
                                   other_of(g), section=g.section))
                var_sym[g.name] = len(syms) - 1
            if bank4 and g.name == bank4[0]:
                section_symbol(".nv.constant4")
        shared_symbols(module_shared)

    def exported_variable_symbols() -> None:
        """The visible variables and the undefined/COMMON extern ones, in declaration order."""
        exported = [Symbol(g.name, offsets[g.name], g.size, object_kind[0],
                           STB_WEAK if g.name in weak else STB_GLOBAL, other_of(g),
                           section=g.section) for g in globals_ if g.name in visible]
        exported += [Symbol(name, align, size, object_kind[0], STB_GLOBAL,
                            STO_CUDA_CONSTANT if space == "const" else object_kind[1],
                            shndx=SHN_COMMON if align else 0)
                     for name, size, align, space in extern_variables]
        declared = {name: at for at, name in enumerate(variable_order)}
        for sym in sorted(exported, key=lambda s: declared.get(s.name, len(declared))):
            syms.append(sym)
            var_sym[sym.name] = len(syms) - 1

    # -c: a module of functions only names its variables before the leading function's text;
    # where it has kernels too, ptxas names the leading function's text first (then the
    # variables, then the rest), and its symbol before the exported variables'
    has_entry = any(k.is_entry for k in kernels)
    for i, k in enumerate(file_order):
        # (the reserved words' section symbol: see below; -c, before `.nv_debug.shared`'s)
        if i == 0 or not relocatable:
            reserved_symbol = i == 0 and bool(info.gb10b_war_bytes or any(kk.tmem_partition for kk in kernels))
        # (-c -g: the function's text first all the same, then its own shared variables,
        # then the module's: ptxas 13.5.37, a `.func` with its own and a module `.shared`)
        lead_function = i == 0 and not k.is_entry and not (relocatable and (has_entry or device_debug))
        if not lead_function:
            _local_function_symbol(k)
            section_symbol(f".text.{k.name}")
            shared_symbols(shared_groups.get(k.name, {}))
        ends = [at for _, at, _ in k.subfunctions[1:]] + [len(k.text)]
        for (name, at, _), end in zip(k.subfunctions, ends):     # local functions after their section
            syms.append(Symbol(name, at, end - at, STT_FUNC, STB_LOCAL, section=f".text.{k.name}"))
        # (extern shared only: none; -c: the kernel's own variables only, no reserved words)
        shared_symbol = (k.shared_bytes or 0) > (0 if relocatable else info.reserved_shared_bytes)
        # the reserved shared words hold a symbol of their own (sm_110's, the tcgen05
        # partition): whole program, their section's symbol before the module's variables'
        # (-g: right after the first kernel's shared section's); -c, after the exported
        # variables' sections and before the LOCAL ones' (ptxas 13.5 sm_110, 11
        # linkage/initialiser mixes)
        if shared_symbol and k.shared_symbols:
            section_symbol(f".nv.shared.{k.name}")
            if reserved_symbol and not relocatable:
                section_symbol(RESERVED_SHARED)
                reserved_symbol = False
            if debug_shared and debug_shared[0] and "region" in shared_groups:
                section_symbol(DEBUG_SHARED)
            shared_symbols(shared_groups.pop("region", {}))
            if not globals_:     # (else after them, below)
                shared_symbols(shared_groups.pop("module", {}))
        if i:       # (the first kernel's: after the module's variables, below)
            _local_function_symbols(k)
        if shared_symbol and not k.shared_symbols:
            section_symbol(f".nv.shared.{k.name}")
        if reserved_symbol and not relocatable:
            section_symbol(RESERVED_SHARED)
            reserved_symbol = False
        if i == 0:
            module_variable_symbols()
            if reserved_symbol:
                section_symbol(RESERVED_SHARED)
                reserved_symbol = False
            # -g's out-of-line local functions: after their first caller's text and the
            # module's variables
            _local_function_symbols(k)
            if lead_function:
                _local_function_symbol(k)
                section_symbol(f".text.{k.name}")
                if relocatable:     # (-c: its own shared variables' symbols after it)
                    shared_symbols(shared_groups.get(k.name, {}))
        shared_symbols(shared_groups.get(f"own:{k.name}", {}))     # (after the module's variables)
        if k.const2 is not None and not (k.const2_late and not hopper):
            if hopper:      # sm_90 names the literal bank's symbol after ptxas's optimiser
                syms.append(Symbol(f".nv.constant.optimizer.{k.name}", type=STT_SECTION, bind=STB_LOCAL,
                                   section=f".nv.constant2.{k.name}"))
            else:
                section_symbol(f".nv.constant2.{k.name}")
            if relocatable:     # its jump tables, objects the linker places (ptx2sass.abi)
                syms += [Symbol(name, at, size, STT_CUDA_OBJECT, STB_LOCAL, STO_CUDA_CONSTANT_INTERNAL,
                                section=f".nv.constant2.{k.name}") for name, at, size in k.const2_objects]
        # (sm_90 names a parameter bank after the module's sections, unless module handles'
        # relocations point into it: then where sm_8x does)
        if k.is_entry and (not hopper or k.handle_slots):
            const0_sym[k.name] = section_symbol(f".nv.constant0.{k.name}")
        if (relocatable or preserve_relocs) and k.params and not hopper:
            # (-preserve-relocs in a whole program: a plain internal object)
            syms.append(Symbol("_param", k.param_base, k.param_bytes,
                               STT_CUDA_OBJECT if relocatable else STT_OBJECT, STB_LOCAL,
                               STO_CUDA_CONSTANT_INTERNAL if relocatable else STV_INTERNAL,
                               section=f".nv.constant0.{k.name}"))
        elif (relocatable or preserve_relocs) and k.is_entry and not k.params and not hopper:
            # (a kernel without parameters: its bank's driver words, named instead)
            syms.append(Symbol("_SREG", 0, k.param_base, STT_CUDA_OBJECT if relocatable else STT_OBJECT,
                               STB_LOCAL, STO_CUDA_CONSTANT_INTERNAL if relocatable else STV_INTERNAL,
                               section=f".nv.constant0.{k.name}"))
    if not file_order:      # a module of variables only (ptxas: their symbols all the same)
        module_variable_symbols()
    # (no code, no frame: ptxas leaves `.debug_frame` without its section symbol)
    module_sections = [".debug_frame"] * bool(kernels) + [d.name for d in debug_sections] + [".nv.callgraph"]
    module_sections += [f".nv.constant2.{k.name}" for k in kernels
                        if k.const2 is not None and k.const2_late and not hopper]
    if relocatable:
        module_sections += [".nv.prototype"] if [n for n in extern_names + defined_funcs if n not in local_functions
                                                 and n not in address_taken] else []
    elif not hopper and not extensible:
        module_sections.append(".nv.rel.action")
    for name in module_sections:
        section_symbol(name)
    func_sym: dict[str, int] = {}
    cap_symbol = None
    reserved_objects: list[Symbol] = []     # -c: the reserved words' objects (below)
    extern_sym: dict[str, int] = {}
    first_shared = next((k for k in file_order if k.shared_window), None)
    handles = dict(handles or {})
    unknown = [n for k in kernels for _, names in k.handle_slots for n in names if n not in handles]
    if unknown:
        raise CubinError(f"handle slots name {unknown}, which are not module handle variables")
    handle_sym: dict[str, int] = {}
    func_sym.update(local_sym)
    # ptxas -c and -g name the reserved words' offset only (an undefined weak object), with no
    # alias in `.nv.shared.reserved.0`; -g leaves that section out where nothing of its own
    # (sm_110's workaround words, the tcgen05 partition) names it (13.5.37, sm_90/100/110/120)
    # (`reserved_alias` False: -Ofc and --compile-as-tools-patch, none either, 13.5.37 sm_90+)
    reserved_alias = (hopper and not relocatable and not device_debug and reserved_alias
                      and not any(k.tools_patch for k in kernels))
    reserved_owned = bool(info.gb10b_war_bytes or any(k.tmem_partition for k in kernels))
    if hopper and not file_order:         # a module of no code: the reserved words alone
        end = info.reserved_shared_section_bytes
        if relocatable:     # (after the linker's unified function/data tables, as with code)
            syms.extend(Symbol(name, 0, 8, STT_OBJECT, STB_WEAK) for name in UNIFIED_TABLE_SYMBOLS)
        syms.append(Symbol(".nv.reservedSmem.offset0", end, 4, STT_OBJECT, STB_WEAK))
        if reserved_alias:
            syms.append(Symbol("__nv_reservedSMEM_offset_0_alias", 1 if extensible else end, 0,
                               bind=STB_WEAK, other=STO_CUDA_RESERVED_SHARED, section=RESERVED_SHARED))
    def function_symbol(k: Kernel) -> None:
        syms.append(Symbol(k.name, 0, len(k.text), STT_FUNC, STB_WEAK if k.name in weak_functions else STB_GLOBAL,
                           STO_CUDA_ENTRY if k.is_entry else 0, section=f".text.{k.name}"))
        func_sym[k.name] = len(syms) - 1
        if k.is_entry and not ((hopper or relocatable) and k is file_order[0]):
            syms.extend(shared_groups.pop("extern", {}).values())

    by_name = {k.name: k for k in file_order}
    for k in file_order:
        if k.name in local_sym or k.name in func_sym:
            pass
        # (-c -g on sm_90+: a leading function's symbol before the unified tables', 13.5.37)
        elif k is not file_order[0] or k.is_entry or (relocatable and (has_entry or device_debug and hopper)):
            function_symbol(k)
        if k is file_order[0]:
            # (sm_90: the reserved-shared symbols right after the handles the kernel names)
            refs = [n for n in dict.fromkeys(k.handle_refs) if n in handles]
            for name in dict.fromkeys(refs + list(handles)):
                if hopper and name not in refs:
                    break
                syms.append(Symbol(name, 0, 0, HANDLE_SYMBOL_TYPE[handles[name]], STB_GLOBAL))
                handle_sym[name] = len(syms) - 1
        if hopper and k is file_order[0]:
            end = info.reserved_shared_section_bytes        # the reserved words' first free byte
            if relocatable:     # the linker's unified function/data tables, then the offset alone
                syms.extend(Symbol(name, 0, 8, STT_OBJECT, STB_WEAK) for name in UNIFIED_TABLE_SYMBOLS)
            syms.append(Symbol(".nv.reservedSmem.offset0", end, 4, STT_OBJECT, STB_WEAK))
            if reserved_alias:
                # (-ewp: the value is the alignment, as for the objects a linker places)
                syms.append(Symbol("__nv_reservedSMEM_offset_0_alias", 1 if extensible else end, 0,
                                   bind=STB_WEAK, other=STO_CUDA_RESERVED_SHARED, section=RESERVED_SHARED))
            # (-c: CUDA objects the linker places, their value the alignment, after the
            # module's exported variables, ptxas 13.5 sm_110 and sm_100a; whole program:
            # objects at the reserved words' end)
            for name, size, align, wanted in (
                    ("__nv_reservedSMEM_gb10b_war_var", info.gb10b_war_bytes, 16, info.gb10b_war_bytes),
                    (TMEM_PARTITION, TMEM_PARTITION_BYTES, 1, any(kk.tmem_partition for kk in kernels))):
                if wanted and relocatable:
                    reserved_objects.append(Symbol(name, align, size, STT_CUDA_OBJECT, STB_WEAK,
                                                   other=STO_CUDA_RESERVED_SHARED, section=RESERVED_SHARED))
                elif wanted:
                    syms.append(Symbol(name, end, size, STT_OBJECT, STB_WEAK, section=RESERVED_SHARED))
                    end += size                 # (sm_110: the partition after the workaround words)
            if k.is_entry and not relocatable:      # (-g's extern shared variables: sm_90+
                syms.extend(shared_groups.pop("extern", {}).values())   # after the reserved words')
        if k is file_order[0]:
            for name in handles:
                if name not in handle_sym:
                    syms.append(Symbol(name, 0, 0, HANDLE_SYMBOL_TYPE[handles[name]], STB_GLOBAL))
                    handle_sym[name] = len(syms) - 1
            for name in descriptor_sizes:
                syms.append(Symbol(name, 0, 4, STT_OBJECT, STB_WEAK))
        if hopper and k is first_shared and (info.reserved_smem_cap is not None or relocatable):
            # (sm_90 -c names it too: the reserved words' size, ptxas 13.5.37)
            cap = info.reserved_smem_cap if info.reserved_smem_cap is not None else info.reserved_shared_bytes
            cap_symbol = Symbol(RESERVED_CAP, cap, 4, STT_OBJECT, STB_WEAK)
            # (after a leading function's own symbol, which comes below; -c: after the
            # reserved words' objects and the extern shared variables, ptxas 13.5.37 sm_110)
            if not (k is file_order[0] and (relocatable or not k.is_entry and k.name not in local_sym
                                            and k.name not in func_sym)):
                syms.append(cap_symbol)
                cap_symbol = None
        elif hopper and k is first_shared:
            # what is left of the relocation ptxas resolved against the reserved offset
            syms.append(Symbol("", other=STV_INTERNAL))
        if k is file_order[0]:       # relocatable: visible, undefined and COMMON variables
            exported_variable_symbols()
            syms.extend(reserved_objects)
            if not k.is_entry and k.name not in local_sym and k.name not in func_sym:   # a leading function after them (seen with one `.func`)
                syms.append(Symbol(k.name, 0, len(k.text), STT_FUNC,
                                   STB_WEAK if k.name in weak_functions else STB_GLOBAL, 0, section=f".text.{k.name}"))
                func_sym[k.name] = len(syms) - 1
            if relocatable:     # (-c: the extern shared variables after the exported ones)
                syms.extend(shared_groups.pop("extern", {}).values())
            if cap_symbol is not None:
                syms.append(cap_symbol)
                cap_symbol = None
        for name in k.externs:         # undefined, after the first kernel that calls it
            if name not in extern_sym and name not in defined_funcs:
                syms.append(Symbol(name, 0, 0, STT_FUNC, STB_GLOBAL))
                extern_sym[name] = len(syms) - 1
        for name in k.named_kernels:   # (-c: the kernels it names, in that order, ptxas 13.5.37)
            if name not in func_sym and name not in local_sym and name in by_name:
                function_symbol(by_name[name])
    if relocatable:     # (a module of functions only: its extern shared variables last)
        syms.extend(shared_groups.pop("extern", {}).values())
        for alias, target in (function_aliases or {}).items():
            if target in func_sym:
                syms.append(Symbol(alias, 0, 0, STT_FUNC, STB_GLOBAL, section=f".text.{target}"))
    if hopper:
        for k in file_order:
            if k.is_entry and k.name not in const0_sym:
                const0_sym[k.name] = section_symbol(f".nv.constant0.{k.name}")
            if k.shared_window:      # ptxas leaves the text's relocation section, empty
                k.reloc_kinds = tuple(dict.fromkeys((*(k.reloc_kinds or ()), "rela")))
    if not file_order:
        exported_variable_symbols()
    address_sym = {**var_sym, **extern_sym}

    # Relocations the code generator named by symbol get their symbol-table index.
    for k in kernels:
        for r in k.relocations:
            if isinstance(r.symbol, str):
                try:
                    r.symbol = c.symbol_index(r.symbol)
                except KeyError:
                    raise CubinError(f"kernel {k.name!r}: relocation against unknown symbol "
                                     f"{r.symbol!r}") from None

    # Kernels: their own records, constant bank 0, and the module records about them.
    module: list[NvInfoRecord] = []
    for k in kernels:
        if k.attributes is None:
            k.attributes = kernel_attributes(k, const0_sym.get(k.name), arch,
                                             [extern_sym[e] for e in k.externs if e in extern_sym]
                                             + [func_sym[e] for e in k.named_kernels],
                                             handles, relocatable)
        if k.const0 is None and k.is_entry:
            k.const0 = bytes(max([k.param_base + k.param_bytes] + [at + 4 for at, _ in k.handle_slots]))
        module.append(NvInfoRecord.words("REGCOUNT", func_sym[k.name],
                                         k.regcount if k.regcount_attribute is None
                                         else k.regcount_attribute))
        for sym, size in [(c.symbol_index(name), size) for name, _, size in k.subfunctions] + [
                (func_sym[k.name], k.frame_size)]:
            if extensible:      # (ptxas -ewp: as under -c, no MIN_STACK_SIZE below)
                module.append(NvInfoRecord.words("MAX_STACK_SIZE", sym, 0))
            module.append(NvInfoRecord.words("FRAME_SIZE", sym, size))
        if device_debug or errbar_at_exit:
            module.append(NvInfoRecord.flag("GEN_ERRBAR_AT_EXIT"))
    if relocatable:     # ptxas -c: per kernel REGCOUNT, MAX_STACK_SIZE, FRAME_SIZE
        # MAX_STACK_SIZE is 0 in ptxas 13.5's -c output (measured: kernels and functions with
        # frames, leaves, callers of externs, recursion): nvlink works the stack out from the
        # call graph and takes a non-zero value as a limit ("Function 'k' uses 248 bytes
        # stack but limited to 136" for a kernel whose callee has a frame)
        module = []
        for k in kernels:
            module += [NvInfoRecord.words("REGCOUNT", func_sym[k.name], k.regcount),
                       NvInfoRecord.words("MAX_STACK_SIZE", func_sym[k.name], 0),
                       NvInfoRecord.words("FRAME_SIZE", func_sym[k.name], k.frame_size)]
            if device_debug or errbar_at_exit:
                module.append(NvInfoRecord.flag("GEN_ERRBAR_AT_EXIT"))
        if not any(k.is_entry for k in kernels):     # as ptxas -c writes a module of functions only
            # (-c -g: first, measured with 13.5.37 on a lone `.visible .func`)
            module.insert(0 if device_debug else len(module), NvInfoRecord(UNNAMED_5F, Fmt.HVAL, 0))
    if not kernels:         # a module of no code (uncalled functions only): ptxas's one record
        module = [NvInfoRecord(UNNAMED_5F, Fmt.HVAL, _HOPPER_5F if hopper else 0)]
    if samplers and module:
        records = []
        for name, word, force in reversed(samplers):
            if force is not None:
                records.append(NvInfoRecord.words("SAMPLER_FORCE_UNNORMALIZED", handle_sym[name], force))
            records.append(NvInfoRecord.words("SAMPLER_INIT", handle_sym[name], word))
        module[1:1] = records
    if texmode_independent:
        module.append(NvInfoRecord.flag("TEXMODE_INDEPENDENT"))
    # (the kernels without `.visible` first, ptxas 13.5: as their LOCAL symbols come first)
    for k in sorted(file_order, key=lambda k: k.name not in local_functions) if not (relocatable or extensible) else ():
        if not k.is_entry:       # (-g's out-of-line functions: ptxas writes none)
            continue
        module.append(NvInfoRecord.words("MIN_STACK_SIZE", func_sym[k.name], k.min_stack_size))
        if k.max_stack_size is not None:
            module.append(NvInfoRecord.words("MAX_STACK_SIZE", func_sym[k.name], k.max_stack_size))
    if istypep_used:
        module.insert(0, NvInfoRecord.flag("ISTYPEP_USED"))
    c.module_attributes = module
    linked_funcs = [n for n in defined_funcs if n not in local_functions]    # (-g's local ones: none)
    # `.nv.prototype`: (symbol, its string) per extern or linked function, in symbol table
    # order, as ptxas 13.5 writes it; an address-taken one's string is in `.strtab` too but
    # the call graph names it, not `.nv.prototype` (13.5.37, -c and -c -g)
    proto_names = extern_names + linked_funcs
    strtab = None
    if relocatable and proto_names:
        proto_sym = {**extern_sym, **{n: func_sym[n] for n in linked_funcs}}
        missing = [e for e in proto_names if e not in (prototypes or {})]
        if missing:
            raise CubinError(f"extern functions {missing} need a prototype string")
        # the strings in `.strtab`, each once (the symbols are all made by now): sm_8x
        # first, the function named last in the PTX (`prototypes`' order) first; sm_90+
        # after the symbols' names, in `.nv.prototype`'s (symbol) order
        listed = set(proto_names)
        c.prototype_strings = list(dict.fromkeys(
            ([prototypes[e] for e in sorted(proto_names, key=proto_sym.__getitem__)] if hopper
             else [prototypes[e] for e in reversed(prototypes) if e in listed])
            + [k.pointer_prototype for k in file_order if k.pointer_prototype]))
        strtab = StringTable(default_strtab(c, []) if hopper else ["", *c.prototype_strings])
        in_section = [e for e in proto_names if e not in address_taken]
        if in_section:
            c.sections.append(Section(".nv.prototype", SHT_CUDA_PROTOTYPE, 0, 4, 8,
                                      b"".join(struct.pack("<Ii", proto_sym[e], strtab.offset(prototypes[e]))
                                               for e in sorted(in_section, key=proto_sym.__getitem__)),
                                      link=".symtab"))
    # The call graph: (caller, callee) symbol pairs after the first default entry.
    callee_sym = {**extern_sym, **{n: func_sym[n] for n in defined_funcs}}
    # (-g, as ptxas -g writes it: the address-taken functions after the second marker, the
    # kernels calling through pointers after the third, what those calls reach after the last;
    # -c: a kernel whose descriptor the code names after the second marker with 0, and the
    # kernels naming it after the last, as ptxas 13.5.37 writes them)
    named_kernels = list(dict.fromkeys(n for k in file_order for n in k.named_kernels))
    c.callgraph = (DEFAULT_CALLGRAPH[:1] + [(func_sym[k.name], callee_sym[e]) for k in file_order
                                            for e in (k.externs if k.call_order is None else k.call_order)
                                            if e not in k.indirect_callees]
                   + DEFAULT_CALLGRAPH[1:2] + [(callee_sym[f], strtab.offset(prototypes[f]) if strtab else 1)
                                               for f in address_taken]
                   + [(func_sym[n], 0) for n in named_kernels]
                   + DEFAULT_CALLGRAPH[2:3] + [(func_sym[k.name], strtab.offset(k.pointer_prototype)
                                                if strtab and k.pointer_prototype else 1)
                                               for k in file_order if k.indirect_callees]
                   + DEFAULT_CALLGRAPH[3:] + [(func_sym[k.name], callee_sym[f]) for k in file_order
                                              for f in dict.fromkeys(k.indirect_callees + k.named_functions)]
                   + [(func_sym[k.name], func_sym[n]) for k in file_order for n in k.named_kernels])
    c.kernels = file_order

    # Debug frame: a CIE and an FDE per kernel; the FDEs' start addresses are relocations.
    frame, frame_relocs, frame_relas = bytearray(), [], []
    resolved = []       # -preserve-relocs (before sm_90): the FDEs' CIE pointers, as resolved
    keep_resolved = preserve_relocs and not relocatable and not hopper
    fdes_before = 0
    for k in file_order:
        cie_at = len(frame)
        frame += _cie(function=not k.is_entry, device_debug=device_debug)
        if relocatable:     # the FDE's CIE pointer (an addend past the first) and address range
            if cie_at:
                # (sm_90+: ptxas's addend is 8 bytes past the CIE per FDE before it, kernel's
                # or `.func`'s: 112, 224 for CIEs at 104, 208; measured)
                frame_relas.append(Relocation(len(frame) + 12, c.symbol_index(".debug_frame"), R_CUDA_64,
                                              cie_at + (8 * fdes_before if hopper else 0)))
            else:
                frame_relocs.append(Relocation(len(frame) + 12, c.symbol_index(".debug_frame"), R_CUDA_64))
            fdes_before += 1
            frame_relas.append(Relocation(len(frame) + FDE_LOCATION_OFFSET + 8, func_sym[k.name],
                                          R_CUDA_UNUSED_CLEAR64, 0))
        elif keep_resolved:
            resolved.append(Relocation(len(frame) + 12, c.symbol_index(".debug_frame"), R_CUDA_64, cie_at))
        frame_relocs.append(Relocation(len(frame) + FDE_LOCATION_OFFSET, func_sym[k.name], R_CUDA_64,
                                       0 if hopper else None))
        kernel_end = k.subfunctions[0][1] if k.subfunctions else len(k.text)
        frame += _fde(cie_at, kernel_end,
                      k.cfa_program if k.cfa_program is not None else default_cfa_program(k, info.cubin_style))
        for i, (_, at, size) in enumerate(k.subfunctions):
            # ptxas: a CIE and FDE per local function, its start relocated against the
            # kernel's symbol with the offset in place
            end = k.subfunctions[i + 1][1] if i + 1 < len(k.subfunctions) else len(k.text)
            cie_at = len(frame)
            frame += _cie(device_debug=device_debug)
            if keep_resolved:
                resolved.append(Relocation(len(frame) + 12, c.symbol_index(".debug_frame"), R_CUDA_64, cie_at))
            frame_relocs.append(Relocation(len(frame) + FDE_LOCATION_OFFSET, func_sym[k.name], R_CUDA_64))
            frame += _fde(cie_at, end - at, _advance(4) + bytes([DW_CFA_def_cfa])
                          + _dwarf_reg(STACK_POINTER) + uleb(size), location=at)
    c.sections.insert(0, Section(".debug_frame", SHT_PROGBITS, 0, 1, data=bytes(frame)))
    for i, d in enumerate(debug_sections, 1):
        c.sections.insert(i, Section(d.name, SHT_PROGBITS, 0, 1, data=d.data))
        relocs = [Relocation(at, func_sym[name] if name in func_sym else c.symbol_index(name), kind,
                             0 if addend is None and hopper else addend)    # sm_90: RELA only
                  for at, name, kind, addend in reversed(d.relocations)]
        for kind in ("rela", "rel"):     # ptxas: RELA first
            chosen = [r for r in relocs if (r.addend is not None) == (kind == "rela")]
            if chosen:
                c.reloc_sections.append(RelocSection(f".{kind}{d.name}", d.name, chosen))
    after_debug = 1 + len(debug_sections)
    if hopper:
        c.sections.insert(after_debug, Section(".nv.compat", SHT_CUDA_COMPAT_INFO, 0, 4,
                                               data=compat_section(info, isa_class)))
        tmem_bytes = TMEM_PARTITION_BYTES if any(k.tmem_partition for k in kernels) else 0
        if not relocatable and (reserved_alias or reserved_owned):
            c.sections.insert(after_debug + 1, Section(     # (-ewp: -c's CUDA shared type)
                RESERVED_SHARED, SHT_CUDA_MERC_SHARED if extensible else SHT_NOBITS, SHF_ALLOC | SHF_WRITE, 16 if info.gb10b_war_bytes else 1,
                nobits_size=(0 if extensible else info.reserved_shared_section_bytes)
                + info.gb10b_war_bytes + tmem_bytes))
        elif info.gb10b_war_bytes or tmem_bytes:
            # -c (ptxas 13.5 sm_110, sm_100a tcgen05): only the objects the linker places in it,
            # with the CUDA shared type its Mercury copy has too, not NOBITS
            c.sections.insert(after_debug + 1, Section(
                RESERVED_SHARED, SHT_CUDA_MERC_SHARED, SHF_ALLOC | SHF_WRITE, 16 if info.gb10b_war_bytes else 1,
                nobits_size=info.gb10b_war_bytes + tmem_bytes))
        c.note_headers[".note.nv.cuinfo"] = (CUINFO_NOTE_FLAGS_HOPPER, ".note.nv.tkinfo", ".nv.compat")
    elif not relocatable and not extensible:
        c.sections.insert(after_debug, Section(".nv.rel.action", SHT_CUDA_RELOCINFO, 0, 8, 8, _REL_ACTION))
    if bank4:
        c.reloc_sections.append(RelocSection(
            ".rela.nv.constant4" if hopper else ".rel.nv.constant4", ".nv.constant4",
            [Relocation(8 * i, address_sym[name], R_CUDA_64, 0 if hopper else None)
             for i, name in reversed(list(enumerate(bank4)))]))
    # Addresses inside variables' initial bytes: per section, REL entries (no addend) then
    # RELA ones, each in reverse order as ptxas lists them.
    # (sm_90+: all RELA, a zero addend too, as ptxas 13.5.37 writes them plain, -g and -c)
    by_section: dict[str, list[Relocation]] = {}
    for g in globals_:
        for at, name, addend in (var_relocations or {}).get(g.name, []):
            # a variable's address: generic; a function's (-g): its code address
            if name not in var_sym and name not in func_sym:
                raise CubinError(f"variable {g.name!r}: relocation against unknown symbol {name!r}")
            addend = (addend or 0) if hopper else (addend or None)
            by_section.setdefault(g.section, []).append(
                Relocation(offsets[g.name] + at, var_sym[name], R_CUDA_G64, addend) if name in var_sym
                else Relocation(offsets[g.name] + at, func_sym[name], R_CUDA_64, addend))
    for sec_name in (".nv.constant3", ".nv.global.init"):
        relocs = sorted(by_section.get(sec_name, []), key=lambda r: r.offset, reverse=True)
        for kind, chosen in (("rel", [r for r in relocs if r.addend is None]),
                             ("rela", [r for r in relocs if r.addend is not None])):
            if chosen:
                c.reloc_sections.append(RelocSection(f".{kind}{sec_name}", sec_name, chosen))
    for k in file_order:    # handle slots: one entry per variable, listed from the last slot
        relocs = [Relocation(at, handle_sym[n], HANDLE_RELOCATION[handles[n]], 0 if hopper else None)
                  for at, names in reversed(k.handle_slots) for n in reversed(names)]
        if relocs:
            name = f".rel{'a' if hopper else ''}.nv.constant0.{k.name}"
            c.reloc_sections.append(RelocSection(name, f".nv.constant0.{k.name}", relocs))
    if hopper:          # ptxas leaves each literal bank's relocation section, empty
        c.reloc_sections += [RelocSection(f".rela.nv.constant2.{k.name}", f".nv.constant2.{k.name}", [])
                             for k in file_order if k.const2 is not None]
    if hopper and frame_relas:      # sm_90 -c: every entry with its addend, from the last
        frame_relocs = sorted([replace(r, addend=r.addend or 0) for r in frame_relocs + frame_relas],
                              key=lambda r: r.offset)
        frame_relas = []
    if kernels:
        c.reloc_sections.append(RelocSection(".rela.debug_frame" if hopper else ".rel.debug_frame", ".debug_frame",
                                             list(reversed(frame_relocs))))
    if frame_relas:
        c.reloc_sections.append(RelocSection(".rela.debug_frame", ".debug_frame",
                                             list(reversed(frame_relas))))
    if resolved:
        c.reloc_sections.append(RelocSection(".nv.resolvedrela.debug_frame", ".debug_frame",
                                             list(reversed(resolved))))
    return c


def cfa_programs_of(cubin: Cubin) -> dict[str, bytes]:
    """Each function's CFA program from a ptxas-style `.debug_frame` (64-bit CIE/FDE pairs,
    FDE start addresses given by `.rel.debug_frame`), keyed by symbol name."""
    try:
        frame = cubin.section(".debug_frame").data
    except KeyError:
        return {}
    at_offset = {}
    for rs in cubin.reloc_sections:
        if rs.target == ".debug_frame":
            for r in rs.relocations:
                at_offset[r.offset] = cubin.symbols[r.symbol].name
    out, pos = {}, 0
    while pos + 12 <= len(frame):
        if frame[pos:pos + 4] != b"\xff\xff\xff\xff":
            raise CubinError(f".debug_frame entry at {pos:#x} is not 64-bit DWARF")
        length = struct.unpack_from("<Q", frame, pos + 4)[0]
        body = frame[pos + 12:pos + 12 + length]
        cie_id = struct.unpack_from("<q", body)[0]
        if cie_id != -1 and pos + FDE_LOCATION_OFFSET in at_offset:
            out[at_offset[pos + FDE_LOCATION_OFFSET]] = bytes(body[24:])
        pos += 12 + length
    return out
