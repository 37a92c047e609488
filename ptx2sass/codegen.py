"""The code-generation pipeline: SSA IR module → cubin bytes.

Per kernel: instruction selection (`ptx2sass.isel`), convergence barriers around divergent
regions (`ptx2sass.reconverge`), register allocation
(`ptx2sass.regalloc.allocate`), rewriting to physical SASS with exact register footprints,
block layout with fall-through branches, control codes (`ptx2sass.sched.control`),
encoding (`encoder.codec`), then the cubin through `encoder.cubin_builder`, with the line
tables and, for -g, the DWARF sections of `ptx2sass.debuginfo` when debug information is
wanted (each instruction carries its PTX line through the pipeline).
"""
from __future__ import annotations

import time
from dataclasses import replace

from ptx2sass import abi, cache_operators, grid_attributes, ir, slow_paths
from ptx2sass.encoder.arch import ARCHS, UnknownArch, arch_info, is_virtual_arch
from ptx2sass.encoder.cubin_builder import (frame_cfa_program, function_cfa_program, preexit_used, reg_reconfig,
                                            sparse_mma_mask)
from ptx2sass.encoder.model import ConstRef, Imm, Instruction, Label, Mem, Reg, Reloc
from ptx2sass.errors import CompileError
from ptx2sass.frontend.instructions import real_target
from ptx2sass.isel import select_function
from ptx2sass.jumptables import fill_jump_tables
from ptx2sass.mir import COPY, IMPLICIT_DEF, MFunction, MInstr, VMem, VOp, forget_register_operands
from ptx2sass.opt import optimise
from ptx2sass.reconverge import insert_reconvergence
from ptx2sass.loop_yield import insert_loop_yields
from ptx2sass.loop_nest import forget_ir_loops
from ptx2sass.frame import Frame, align_up
from ptx2sass.regalloc.allocate import allocate_with_spilling
from ptx2sass.sched.control import Slot, assign_controls
from ptx2sass.sched.latency import model as latency_model
from ptx2sass.sched.list_schedule import schedule as list_schedule
from ptx2sass.sched.pre_schedule import pre_schedule
from ptx2sass.isel.dead_parts import remove_dead_parts
from ptx2sass.isel.forward_moves import forward_moves
from ptx2sass.isel.remat_invariants import remat_invariants
from ptx2sass.sched.ldgsts_pad import pad_ldgsts
from ptx2sass.sched.zero_pairs import merge_zero_pairs
from ptx2sass.isel.combine_adds import combine_adds
from ptx2sass.isel.shared_addresses import fold_shared_addresses, fold_uniform_shared_terms
from ptx2sass.isel.warp_aggregated_atomics import aggregate_warp_atomics
from ptx2sass.isel.sign_extended_adds import fold_sign_extended_adds
from ptx2sass.isel.shifted_adds import fold_shifted_adds
from ptx2sass.isel.shift_adds import fold_shift_adds
from ptx2sass.isel.high_halves import read_high_halves
from ptx2sass.regalloc.split_parts import split_parts
from ptx2sass.isel.fold_float_signs import fold_float_signs
from ptx2sass.isel.lop3_chains import fold_lop3_chains
from ptx2sass.isel.lop3_copies import lop3_copies
from ptx2sass.isel.narrow_products import narrow_unread_high_products
from ptx2sass.isel.lop3_predicates import fold_lop3_predicates
from ptx2sass.isel.compare_chains import fold_compare_chains
from ptx2sass.isel.sink_to_successor import sink_to_successor
from ptx2sass.isel.errbar_at_exit import ERRBAR_AT_EXIT, errbar_at_exit
from ptx2sass.isel.operand_slots import legalise_operand_slots
from ptx2sass.isel.uniform_datapath import UNIFORM_DATAPATH, select_uniform_datapath, uniform_pools
from ptx2sass.isel.target_forms import apply_target_forms
from ptx2sass.isel.invariant_uniform_runs import hoist_uniform_runs
from ptx2sass.f32x2 import lower_f32x2
from ptx2sass.mma_forms import SPARSE_MMA_SOURCE_BITS, lower_mma_forms
from ptx2sass.mma_quadpair import lower_quadpair_mma
from ptx2sass.wmma import lower_wmma
from ptx2sass.opt.dce import remove_dead_code
from ptx2sass.opt.inline_marks import KEPT as INLINED_CALLS, take_inline_marks
from ptx2sass.inline import call_postorder, call_preorder
from ptx2sass.variables import (EXTERN_SHARED_ALIGN, KernelLayout, own_shared_alignments, Placement, debug_shared_layout, debug_shared_names,
                                handle_references, linked_section_size,
                                module_shared_variables,
                                kernel_layout, module_layout,
                                place_kernel_params, descriptor_size_symbols, DESCRIPTOR_SIZE_SYMBOLS)

RZ = Reg("R", 255)
PT = Reg("P", 7)
UPT = Reg("UP", 7)
STACK_POINTER = 1
DESCRIPTOR_UR = 4
TEXT_ALIGN = 128
MIN_TRAILING_NOPS = 8
SKIP_KNOWN_MOVES = True    # switch for A/B runs: _known_moves
REGISTERS_RESERVED = 2    # ptxas's register count is the highest register + 1 + 2
# registers above the full-occupancy count at which pre_schedule's orders for it are kept
# (`_allocate_full_occupancy`): spmv_csr's copied loops take 41 on sm_89 (ptxas 40, 50 without)
FULL_OCCUPANCY_MISS = 1
ASYNC_COPY_SCOREBOARD = 0
# the FP8, FP6 and FP4 element formats (sm_90's `.nv.compat` ISA class 2 where the code has
# them: ptxas 13.5.37, the fp6/fp4 conversions on sm_100a/sm_107a/sm_120a too)
FP8_FORMATS = {"E4M3", "E5M2", "E2M3", "E3M2", "E2M1"}
# the texture unit's instructions (ISA class 2, with FP8 converts)
TEXTURE_UNIT_OPCODES = {"TEX", "TLD", "TLD4", "TXD", "TXQ", "SULD", "SUST", "SURED", "SUATOM"}
# ... and, as (opcode, modifier): the saturating integer add (`add.sat.s32`/`sub.sat.s32` as
# VIADD.S32.ISAT: ptxas 13.5.37 writes ISA class 2 for it on sm_107 and sm_120), the ue8m0
# conversions (F2FP `.E8`) and the float warp reduction (`redux.sync` .f32: CREDUX .F32);
# class 3: stochastic rounding (`cvt.rs`: F2FP `.RS`, sm_100a/sm_103a/sm_107a)
ISA_CLASS_2_FORMS = {("VIADD", "ISAT"), ("F2FP", "E8"), ("CREDUX", "F32")}
ISA_CLASS_3_FORMS = {("F2FP", "RS")}


def isa_class(codes) -> int:
    """sm_90's `.nv.compat` ISA class of the module's code (1, 2 or 3), as ptxas records it."""
    out = 1
    for c in codes:
        for ins in c.instructions:
            for m in (*ins.modifiers, None):
                if (ins.opcode, m) in ISA_CLASS_3_FORMS:
                    return 3
                if m in FP8_FORMATS or ins.opcode in TEXTURE_UNIT_OPCODES or (ins.opcode, m) in ISA_CLASS_2_FORMS:
                    out = 2
    return out


class KernelCode:
    """What code generation knows about one kernel once its text is final."""

    def __init__(self, name: str, instructions: list[Instruction], labels: dict[str, int],
                 regcount: int, exit_offsets: list[int], entry_block_end: int | None, text: bytes,
                 frame_size: int = 0, num_barriers: int = 0, cfa_program: bytes | None = None):
        self.name = name
        self.instructions = instructions
        self.labels = labels
        self.regcount = regcount
        self.exit_offsets = exit_offsets
        self.entry_block_end = entry_block_end
        self.text = text
        self.frame_size = frame_size      # bytes of local memory below the caller's stack pointer
        self.num_barriers = num_barriers
        self.cfa_program = cfa_program    # the debug frame's program; None: the builder's default
        self.warp_sync_offsets: list[int] = []    # COOP_GROUP_INSTR_OFFSETS


# (file, index, neg, abs, inv, suffix) -> its Reg: a Reg is immutable, so one serves every
# operand that names that register so (a kernel's code made one per operand: 12,000 of
# lineops:4000's 31 MB traced at its peak)
_PHYSICAL: dict[tuple, Reg] = {}


def _physical(op, colors, mf: MFunction):
    if isinstance(op, ConstRef) and isinstance(op.ureg, VOp):
        return replace(op, ureg=_physical(op.ureg, colors, mf))
    if isinstance(op, VOp):
        base = colors[op.reg.id] + (op.part or 0)
        key = (op.reg.cls, base, op.neg, op.abs, op.inv, op.suffix)
        reg = _PHYSICAL.get(key)
        if reg is None:
            reg = _PHYSICAL[key] = Reg(op.reg.cls, base, neg=op.neg, abs=op.abs, inv=op.inv,
                                       suffix=op.suffix)
        return reg
    if isinstance(op, VMem):
        base = None
        if op.base is not None:
            base = _physical(op.base, colors, mf)
            if op.wide and op.suffix64:
                base = replace(base, suffix=("64",))
        # a 64-bit address reads the global-memory descriptor; sm_90 prints it (not on
        # compare-and-swap, whose base prints without `.64`)
        desc = (Reg("UR", DESCRIPTOR_UR) if op.wide and op.suffix64 and op.described
                and mf.target.memory_descriptor_operand else None)
        if op.uniform_zero:
            return Mem(base=None if base is None or base.is_zero else base, ubase=Reg("UR", 255),
                       offset=op.offset)
        if op.ubase is not None:
            return Mem(base=None if base is None or base.is_zero else base,
                       ubase=_physical(op.ubase, colors, mf), offset=op.offset)
        return Mem(base=base, offset=op.offset, desc=desc)
    return op


# (file, index) -> that tuple: one per register for every instruction's reads and writes
# (they live until the schedule is written: 3 new tuples a statement of lineops:40000)
_PAIRS: dict[tuple, tuple] = {}


def _footprint(mi: MInstr, colors, mf: MFunction):
    reads, writes = [], []
    for i, op in enumerate(mi.operands):
        if isinstance(op, VOp):
            base, cls = colors[op.reg.id] + (op.part or 0), op.reg.cls
            into = writes if i < mi.ndefs else reads
            for k in range(max(op.width, mi.widths.get(i, 1))):
                pair = (cls, base + k)
                into.append(_PAIRS.setdefault(pair, pair))
        elif isinstance(op, ConstRef) and isinstance(op.ureg, VOp):
            reads.append(("R", colors[op.ureg.reg.id] + (op.ureg.part or 0)))
        elif isinstance(op, Reg) and op.gdesc:        # wgmma's descriptors: A's pair, B's pair
            reads.extend(("UR", op.index + k) for k in range(4))
        elif isinstance(op, Reg) and not op.is_zero and op.file in ("R", "UR", "P", "UP"):
            # a fixed uniform group (tcgen05.mma's disable-output-lane quad) where `widths` says so
            width = mi.widths.get(i, 1) if op.file == "UR" else 1
            (writes if i < mi.ndefs else reads).extend((op.file, op.index + k) for k in range(width))
        elif isinstance(op, VMem):
            if isinstance(op.base, Reg):        # the stack pointer, or RZ
                if not op.base.is_zero:
                    reads.append(("R", op.base.index))
            elif op.base is not None:
                base = colors[op.base.reg.id] + (op.base.part or 0)
                reads.extend(("R", base + k) for k in range(op.base.width if op.wide else 1))
            if op.wide:
                reads.extend([("UR", DESCRIPTOR_UR), ("UR", DESCRIPTOR_UR + 1)])
            if op.ubase is not None:
                reads.append(("UR", colors[op.ubase.reg.id] + (op.ubase.part or 0)))
        elif isinstance(op, Mem):
            if op.ubase is not None and not op.ubase.is_zero:
                # a fixed uniform address register (a pair where `widths` says so)
                reads.extend(("UR", op.ubase.index + k) for k in range(mi.widths.get(i, 1)))
            if op.desc is not None and not op.desc.is_zero:
                reads.extend([("UR", op.desc.index), ("UR", op.desc.index + 1)])
    if isinstance(mi.guard, VOp):
        reads.append(("P", colors[mi.guard.reg.id]))
    return reads, writes


def _is_self_move(opcode: str, modifiers, ops) -> bool:
    """`MOV R0, R0` (or its IMAD form): a move the allocator made redundant."""
    if opcode in ("MOV", "UMOV") and not modifiers and len(ops) == 2:
        src = ops[1]
    elif opcode == "IMAD" and modifiers == ("MOV", "U32") and len(ops) == 4 and ops[1] == ops[2] == RZ:
        src = ops[3]
    else:
        return False
    return isinstance(src, Reg) and isinstance(ops[0], Reg) and src == ops[0]


def _lower_copy(mi: MInstr, colors, mf: MFunction) -> list[Slot]:
    """A COPY as moves, guarded as the COPY is (a guarded copy writes only where its
    predicate holds)."""
    d, s = mi.operands[0], mi.operands[1]
    guard = _physical(mi.guard, colors, mf) if mi.guard is not None else None
    guard_reads = [("P", guard.index)] if guard is not None else []
    if d.reg.cls in ("P", "UP"):
        ds, ss = colors[d.reg.id], colors[s.reg.id]
        if d.reg.cls == "UP" or s.reg.cls == "UP":       # (isel/uniform_datapath.py)
            src, df, sf = Reg(s.reg.cls, ss, inv=s.inv), d.reg.cls, s.reg.cls
            if df == "UP":          # UP <- UP
                if ds == ss and not s.inv:
                    return []
                ins = Instruction("UPLOP3", ("LUT",), (Reg("UP", ds), UPT, UPT, UPT, src, Imm(0x80), Imm(0)),
                                  guard)
            else:                   # P <- UP: PLOP3's third predicate source takes a UP
                ins = Instruction("PLOP3", ("LUT",), (Reg("P", ds), PT, PT, PT, src, Imm(0x80), Imm(0)), guard)
            return [Slot(ins, [(sf, ss)] + guard_reads, [(df, ds)])]

        if ds == ss and not s.inv:
            return []
        ins = Instruction("PLOP3", ("LUT",), (Reg("P", ds), PT, Reg("P", ss, inv=s.inv), PT, PT,
                                              Imm(0x80), Imm(0)), guard)
        return [Slot(ins, [("P", ss)] + guard_reads, [("P", ds)])]
    out = []
    width = d.width
    dbase = colors[d.reg.id] + (d.part or 0)
    df = d.reg.cls               # "R", or "UR" (isel/uniform_datapath.py)
    move = "UMOV" if df == "UR" else "MOV"
    if isinstance(s, VOp):
        sbase = colors[s.reg.id] + (s.part or 0)
        sf = s.reg.cls
        for k in range(width):
            if dbase + k != sbase + k or df != sf:
                out.append(Slot(Instruction(move, (), (Reg(df, dbase + k), Reg(sf, sbase + k)), guard),
                                [(sf, sbase + k)] + guard_reads, [(df, dbase + k)]))
    else:
        out.append(Slot(Instruction(move, (), (Reg(df, dbase), s), guard), list(guard_reads), [(df, dbase)]))
    return out


def _prologue(mf: MFunction, arch, frame_size: int = 0) -> list[Slot]:
    """What ptxas puts first in every kernel: the stack pointer (moved down by the frame's
    size when there is one), and the global-memory descriptor that `desc[UR4]` memory
    instructions read. The stack pointer comes through an ALU move of the constant where
    the target has one (sm_8x), else through LDC (sm_90)."""
    sp = Reg("R", STACK_POINTER)
    stack = ConstRef(0, arch.stack_pointer_offset)
    load = (Instruction("IMAD", ("MOV", "U32"), (sp, RZ, RZ, stack)) if arch.alu_constants
            else Instruction("LDC", (), (sp, stack)))
    out = [Slot(load, [], [("R", STACK_POINTER)])]
    if frame_size:
        out.append(Slot(Instruction("IADD3", (), (sp, sp, Imm(-frame_size & 0xFFFFFFFF), RZ)),
                        [("R", STACK_POINTER)], [("R", STACK_POINTER)]))
    if mf.uses_global_descriptor and arch.global_desc_offset is not None:
        out.append(_descriptor_slot(ConstRef(0, arch.global_desc_offset), arch))
    return out


def _uniform_constant_load(arch) -> str:
    """ULDC, as the target spells it (sm_120: LDCU)."""
    return dict(arch.renamed_opcodes).get("ULDC", "ULDC")


def _descriptor_slot(where: ConstRef, arch) -> Slot:
    return Slot(Instruction(_uniform_constant_load(arch), ("64",), (Reg("UR", DESCRIPTOR_UR), where)),
                [], [("UR", DESCRIPTOR_UR), ("UR", DESCRIPTOR_UR + 1)])


def _signed_immediates(ins: Instruction) -> Instruction:
    ops = tuple(Imm(op.value - (1 << 32)) if isinstance(op, Imm) and op.text is None
                and op.value >= 1 << 31 else op for op in ins.operands)
    return replace(ins, operands=ops)


# Relocations of code words: the low and high halves of a 32-bit immediate (every arch); a
# CALL.ABS target's type is the target's (`Target.call_relocation`).
R_CUDA_ABS32_LO_32, R_CUDA_ABS32_HI_32 = 0x38, 0x39
R_CUDA_ABS32_32 = 0x37      # a symbol's whole 32-bit value (the descriptor sizes)
R_CUDA_CONST_ADDRESS = 0x3B  # a `.const` variable's address in its bank (ptxas -c's `UMOV UR, (var)`)
CODE_RELOCATION = {"lo": R_CUDA_ABS32_LO_32, "hi": R_CUDA_ABS32_HI_32, "abs": R_CUDA_ABS32_32,
                   "const": R_CUDA_CONST_ADDRESS}
# the halves of a kernel's function descriptor (`32@lo(fun@fdesc(kernel))`, ptxas 13.5.37 -c:
# a kernel's address, as a device-side launch takes it)
R_CUDA_FUNC_DESC32_LO_32, R_CUDA_FUNC_DESC32_HI_32 = 0x3E, 0x3F
DESCRIPTOR_RELOCATION = {"lo": R_CUDA_FUNC_DESC32_LO_32, "hi": R_CUDA_FUNC_DESC32_HI_32}


def _text_relocations(ins: Instruction, pc: int, labels: dict[str, int], call_relocation,
                      const_relocation, function_relocation=(R_CUDA_ABS32_LO_32, R_CUDA_ABS32_HI_32)) -> list:
    """The relocations of the word at `pc`: (offset, symbol name, type, addend or None)."""
    from ptx2sass.encoder.codec import without_relocations
    out = []
    for _, op in without_relocations(ins)[1]:
        if isinstance(op, ConstRef):        # a module `.const` variable read in relocatable output
            uniform_type, other_type, _, always_rela = const_relocation
            symbol, addend, *own_kind = op.reloc       # (a jump table's: its own type, `.rela`)
            kind = own_kind[0] if own_kind else uniform_type if ins.opcode in ("ULDC", "LDCU") else other_type
            out.append((pc, symbol, kind, addend if addend or always_rela or own_kind else None))
        elif isinstance(op, Reloc):
            kind = (DESCRIPTOR_RELOCATION if op.function_descriptor else CODE_RELOCATION)[op.half]
            if op.function:
                kind = function_relocation[op.half == "hi"]
            addend = labels[op.label] if op.label is not None else None
            if addend is None and call_relocation[1]:
                addend = 0      # sm_90+: the text's relocations carry addends (`.rela`)
            out.append((pc, op.symbol, kind, addend))
        else:
            kind, with_addend = call_relocation
            out.append((pc, op.name, kind, 0 if with_addend else None))
    return out


def _jump_table_objects(fn: ir.Function, tables: list[list[str]]) -> tuple:
    """-c: (name, offset, size) of each `brx.idx` table of the function in its bank 2, the
    objects its table loads are relocated against (ptx2sass.abi.jump_table_object)."""
    if not fn.attributes.get(abi.JUMP_TABLE_RELOCATED):
        return ()
    out, at = [], fn.attributes.get(abi.JUMP_TABLE_BASE, 0)
    for targets in tables:
        out.append((abi.jump_table_object(fn.name, at, at + 4 * len(targets)), at, 4 * len(targets)))
        at += 4 * len(targets)
    return tuple(out)


def _encode(ins: Instruction, arch: str, pc: int, kernel: str,
            filename: str | None) -> tuple[int, Instruction]:
    """The instruction's word. 32-bit immediates are unsigned for logic ops (LOP3, SEL, MOV)
    and signed for arithmetic ones (IADD3, IMAD, ISETP): the selector writes them unsigned
    and the signed spelling is tried when the unsigned one has no encoding."""
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.arch import target
    from ptx2sass.encoder.target_spelling import respell
    ins = respell(ins, target(arch))
    try:
        return codec.encode(ins, arch, pc, []), ins
    except codec.EncodeError as first:
        signed = _signed_immediates(ins)
        if signed != ins:
            try:
                return codec.encode(signed, arch, pc, []), signed
            except codec.EncodeError:
                pass
        # An absolute window address `[0x8]` is the base-register form with RZ (nvdisasm
        # prints both alike; the tables know some stores only as `[RZ+0x8]`).
        based = replace(ins, operands=tuple(replace(op, base=RZ) if isinstance(op, Mem) and op.base is None
                                           and op.ubase is None else op for op in ins.operands))
        if based != ins:
            try:
                return codec.encode(based, arch, pc, []), ins
            except codec.EncodeError:
                pass
        raise CompileError(f"kernel {kernel}: internal error: cannot encode `{first}`", filename) from None


class _Compiled:
    """One function after instruction selection and register allocation. For an
    out-of-line function also the registers its prologue saves: (register, frame offset)."""

    def __init__(self, fn: ir.Function, mf: MFunction, alloc, frame: Frame):
        self.fn, self.mf, self.alloc, self.frame = fn, mf, alloc, frame
        self.saves: list[tuple[int, int]] = []


def _compile_function(fn: ir.Function, info, filename: str | None, layout: KernelLayout | None,
                      max_registers: int | None, callees: dict | None = None,
                      pointers: dict | None = None, keep_order: bool = False,
                      release_ir: bool = False) -> _Compiled:
    """`keep_order` (-g): no scheduling, so the code follows the PTX line by line.
    `release_ir`: the caller reads no more of `fn`'s code, which goes once selected."""
    take_inline_marks(fn)       # (optimise takes them earlier; -O0, -g and IR built elsewhere here)
    mf = select_function(fn, info, filename, layout, callees, pointers, keep_order=keep_order)
    if not keep_order:
        mf.value_names.clear()         # only -g maps PTX registers to SASS ones
        if fn.attributes.get(ERRBAR_AT_EXIT):
            errbar_at_exit(mf, info.cga_errbar, membar=fn.attributes[ERRBAR_AT_EXIT] == "membar")
    else:
        errbar_at_exit(mf, info.cga_errbar)
    insert_reconvergence(mf, function=not fn.is_entry)
    insert_loop_yields(mf, fn)
    aggregate_warp_atomics(mf)
    apply_target_forms(mf, info)
    hoist_uniform_runs(mf)
    fold_shared_addresses(mf)
    fold_sign_extended_adds(mf, info)
    fold_shifted_adds(mf)
    uniform = info.uniform_datapath and not keep_order and fn.attributes.get(UNIFORM_DATAPATH, False)
    if not uniform:
        fold_shift_adds(mf)
    fold_float_signs(mf)
    fold_lop3_chains(mf)
    lop3_copies(mf)
    fold_lop3_predicates(mf)
    fold_compare_chains(mf)
    combine_adds(mf)
    legalise_operand_slots(mf, info.name)
    read_high_halves(mf)
    remove_dead_parts(mf)
    narrow_unread_high_products(mf)
    forward_moves(mf)
    if uniform:
        select_uniform_datapath(mf, info.name)
        fold_uniform_shared_terms(mf)
        # after the uniform choice: a LEA reads its shifted operand in a vector slot, so
        # fused first it kept a uniform chain (a pipelined stage index) off the datapath
        fold_shift_adds(mf)
    if not mf.uniform_registers and any(v.cls == "UR" for v in mf.vregs):
        mf.uniform_registers = uniform_pools(mf)    # isel/target_forms.py's ULDC loads
    limit = _register_limit(fn, max_registers, info)
    _check_fixed_registers(mf, limit, fn.name, filename)
    if release_ir:
        # nothing below reads the function's IR code (its attributes, parameters and
        # results stay): freed before register allocation, the compile's peak
        fn.blocks = []
        forget_ir_loops(fn)
    plain: dict = {}           # pre_schedule's orders without the full-occupancy goal
    if not keep_order:
        split_parts(mf)
        solved: dict = {}          # remat_invariants' liveness, while the code stays as it left it
        remat_invariants(mf, solved=solved)
        if sink_to_successor(mf):
            solved = {}
        dims = _launch_dims(fn, "maxntid") or _launch_dims(fn, "reqntid")
        pre_schedule(mf, limit, solved, bounded=limit is not None or bool(dims),
                     threads=dims[0] * dims[1] * dims[2] if dims else None, plain=plain)
        del solved          # (not held through register allocation, the compile's peak)
    frame = layout.frame if layout is not None else Frame()
    must_save = abi.link_target_saves if not fn.is_entry and abi.is_linkable(fn) else None
    if plain:
        mf, alloc, frame = _allocate_full_occupancy(mf, frame, limit, must_save, plain)
    else:
        alloc, frame = allocate_with_spilling(mf, frame, limit, must_save)
    compiled = _Compiled(fn, mf, alloc, frame)
    if not fn.is_entry:
        if mf.jump_tables and not abi.is_linkable(fn):    # a copy in each kernel's text
            raise CompileError(f"function {fn.name}: `brx.idx` in an out-of-line function not supported yet",
                               filename)
        if layout is not None and layout.shared_bytes is not None:
            raise CompileError(f"function {fn.name}: .shared variables in an out-of-line function "
                               f"not supported yet", filename)
        body, _ = _body_slots(compiled, "")
        keep = (abi.link_result_registers(fn) if abi.is_linkable(fn)
                else abi.result_registers(fn.returns, fn.name)) | {STACK_POINTER, RZ.index}
        # (a slow-path subroutine saves nothing: what its calls clobber is written here too;
        # a recursive call into this function itself keeps what the convention asks, as here)
        clobbered = {i for b in mf.blocks for mi in b.instrs if mi.opcode == "CALL" and "REL" in mi.modifiers
                     and not any(isinstance(o, Label) and o.name == abi.ENTRY_LABEL for o in mi.operands)
                     for f, i in mi.clobbers if f == "R"}
        written = sorted(({i for s in body for f, i in s.writes if f == "R"} | clobbered) - keep)
        if abi.is_linkable(fn):        # a link target keeps only what the link convention asks
            written = [r for r in written if abi.link_target_saves(r)]
        if fn.attributes.get(slow_paths.SLOW_PATH) is None:    # (its callers keep nothing in those)
            compiled.saves = [(r, frame.allocate(4, 4, f"save.R{r}")) for r in written]
    return compiled


def _allocate_full_occupancy(mf: MFunction, frame: Frame, limit: int | None, must_save, plain: dict):
    """Allocate `mf`, whose blocks in `plain` pre_schedule kept within the full-occupancy
    pressure; where the registers still come out above `launch_bounds.
    full_occupancy_registers` + FULL_OCCUPANCY_MISS, allocate instead a copy with `plain`'s
    orders (the blocks' orders without that goal): the orders cost cycles for an occupancy
    the kernel does not reach (realworld bits_hash rank_select on sm_89: its 128 loads' block
    fits 37 live, the allocator's quads for STS.128 then take 50 registers, and the order
    that waits for each cache line's first load cost 21% SM cycles). Returns (mf, allocation,
    frame)."""
    import copy
    from ptx2sass.launch_bounds import full_occupancy_registers
    from ptx2sass.mir import copy_function
    other, copies = copy_function(mf)
    for bi, order in plain.items():
        other.blocks[bi].instrs = [copies[id(mi)] for mi in order]
    spare = copy.deepcopy(frame)
    alloc, got = allocate_with_spilling(mf, frame, limit, must_save)
    if alloc.max_r + 1 + REGISTERS_RESERVED <= full_occupancy_registers(mf.target) + FULL_OCCUPANCY_MISS:
        return mf, alloc, got
    alloc, got = allocate_with_spilling(other, spare, limit, must_save)
    return other, alloc, got


def _body_slots(c: _Compiled, prefix: str) -> tuple[list[Slot], list[Slot]]:
    """The function's blocks as slots in layout order (fall-through branches added), block
    labels renamed with `prefix`; and the slots of its warp-synchronous instructions. An
    out-of-line function's RETs get the epilogue in front (restores, frame popped)."""
    mf, colors = c.mf, c.alloc.color
    blocks = {b.name for b in mf.blocks}

    def label(op):
        if isinstance(op, Mem) and op.offset >= abi.INCOMING:     # an incoming stack argument
            return replace(op, offset=op.offset - abi.INCOMING + c.frame.size)
        if isinstance(op, abi.LabelDistance):
            return abi.LabelDistance(prefix + op.end, prefix + op.start)
        if isinstance(op, Reloc) and op.label in blocks:
            return replace(op, label=prefix + op.label)
        return Label(prefix + op.name, op.offset) if isinstance(op, Label) and op.name in blocks else op
    slots: list[Slot] = []
    label_pending: list[str] = []
    warp_sync_slots: list[Slot] = []
    block_start = False
    known: dict[tuple, object] = {}      # registers known to hold an immediate (_known_moves)
    for i, b in enumerate(mf.blocks):
        aliases: list[tuple] = []        # named values a coalesced copy put in a register
        label_pending.append(prefix + b.name)
        block_start = block_start or i > 0
        emitted: list[Slot] = []
        if not (i and b.preds == [mf.blocks[i - 1]] and mf.blocks[i - 1].fallthrough is b):
            known = {}
        for mi in b.instrs:
            if mi.opcode == IMPLICIT_DEF:
                continue
            if mi.opcode == COPY:
                moves = _with_values(_with_line(_lower_copy(mi, colors, mf), mi.line), mi, colors, mf)
                moves = _known_moves(moves, known)
                if not moves and mf.value_names:    # coalesced: the register now holds it too
                    aliases += [v + (True,) for v in _named_parts(mi, colors, mf)]
                emitted.extend(moves)
                continue
            if mi.opcode == "RET":
                emitted.extend(_with_line(_epilogue(c), mi.line))
            if mi.opcode == _uniform_constant_load(c.mf.target) and mi.operands[0] == Reg("UR", DESCRIPTOR_UR):
                # the descriptor again after a system call: only if some code reads it
                if mf.uses_global_descriptor:
                    emitted.extend(_with_line([_descriptor_slot(mi.operands[1], c.mf.target)], mi.line))
                continue
            shown = mi.operands if mi.shown is None else [mi.operands[k] for k in mi.shown]
            ops = tuple(label(_physical(op, colors, mf)) for op in shown)
            guard = _physical(mi.guard, colors, mf) if mi.guard is not None else None
            if guard is None and _is_self_move(mi.opcode, mi.modifiers, ops):
                if mf.value_names:          # the register now holds the move's value too
                    aliases += [v + (True,) for v in _named_parts(mi, colors, mf)]
                continue
            reads, writes = _footprint(mi, colors, mf)
            if mi.opcode.startswith("CALL") or mi.opcode in ("RET", "BRX", "JMX", "JMP"):
                known.clear()
            slot = Slot(Instruction(mi.opcode, mi.modifiers, ops, guard), reads, writes, line=mi.line,
                        system_call=mi.opcode == "CALL" and mi.clobbers == abi.SYSCALL_CLOBBERED)
            if not _known_moves([slot], known):
                continue
            emitted.append(slot)
            _with_values(emitted[-1:], mi, colors, mf)
            if aliases:
                emitted[-1].values = tuple(aliases) + emitted[-1].values
                aliases = []
            if mi.opcode == "LEPC" and mi.shown == (0,):   # a system call's return address counts from here
                emitted[-1].labels.append(prefix + mi.operands[1].name)
            if any(mi is w for w in mf.warp_sync):
                warp_sync_slots.append(emitted[-1])
            if mi.opcode == "LDGDEPBAR":      # cp.async groups count on SB0 (DEPBAR.LE SB0, n)
                emitted[-1].wr_sb = ASYNC_COPY_SCOREBOARD
            elif mi.opcode == "UTMACMDFLUSH":  # bulk groups: its read scoreboard, as ptxas
                emitted[-1].rd_sb = ASYNC_COPY_SCOREBOARD
        nxt = mf.blocks[i + 1] if i + 1 < len(mf.blocks) else None
        if b.fallthrough is not None and b.fallthrough is not nxt:
            emitted.append(Slot(Instruction("BRA", (), (Label(prefix + b.fallthrough.name),))))
        if emitted:
            emitted[0].labels.extend(label_pending)
            emitted[0].block_start = block_start
            label_pending, block_start = [], False
        slots.extend(emitted)
    if label_pending:
        raise CompileError(f"function {c.fn.name}: a block at the end has no instructions")
    return slots, warp_sync_slots


def _known_moves(moves: list[Slot], known: dict[tuple, object]) -> list[Slot]:
    """A phi copy's moves less those of an immediate into a register that already holds it
    (`known`, kept across a block entered only by falling through from the one before):
    the constants that a loop and the remainder after it both start from are moved once,
    before the branch between them (one `CS2R R4, SRZ`, as ptxas's)."""
    if not SKIP_KNOWN_MOVES:
        return moves
    out = []
    for m in moves:
        ins, value = m.ins, None
        ops = ins.operands
        if ins.opcode == "MOV" and not ins.modifiers and len(ops) == 2:
            src = ops[1]
        elif ins.opcode == "IMAD" and ins.modifiers == ("MOV", "U32") and len(ops) == 4 and ops[1] == ops[2] == RZ:
            src = ops[3]
        else:
            src = None
        if src is not None and ins.guard is None and isinstance(ops[0], Reg) and ops[0].file == "R" and ops[0] != RZ:
            if src == RZ:
                value = 0
            elif isinstance(src, Imm) and not src.neg and not src.abs and isinstance(src.value, int):
                value = src.value & 0xFFFFFFFF
        key = ("R", ops[0].index) if value is not None else None
        if value is not None and known.get(key) == value:
            continue
        for w in m.writes:
            known.pop(w, None)
        if value is not None:
            known[key] = value
        out.append(m)
    return out


def _named_parts(mi: MInstr, colors, mf: MFunction) -> list[tuple]:
    """(name, PTX type, part, file, index) of each named PTX register part `mi` defines."""
    named = []
    for op in mi.defs:
        if isinstance(op, VOp) and op.reg.id in mf.value_names:
            base = colors[op.reg.id] + (op.part or 0)
            named += [(name, ptx_type, (op.part or 0) + j, op.reg.cls, base + j)
                      for name, ptx_type in mf.value_names[op.reg.id] for j in range(op.width)]
    return named


def _with_values(slots: list[Slot], mi: MInstr, colors, mf: MFunction) -> list[Slot]:
    """Record which parts of named PTX registers each slot writes (-g's register maps)."""
    if not mf.value_names:
        return slots
    named = _named_parts(mi, colors, mf)
    for s in slots:
        s.values = tuple(v + (False,) for v in named if (v[3], v[4]) in s.writes)
    return slots


def _with_line(slots: list[Slot], line: int | None) -> list[Slot]:
    for s in slots:
        s.line = line
    return slots


def _frame_move(size: int) -> Slot:
    sp = Reg("R", STACK_POINTER)
    return Slot(Instruction("IADD3", (), (sp, sp, Imm(size & 0xFFFFFFFF), RZ)),
                [("R", STACK_POINTER)], [("R", STACK_POINTER)])


def _callee_prologue(c: _Compiled) -> list[Slot]:
    """An out-of-line function's first instructions: its frame, then the saves."""
    out = [_frame_move(-c.frame.size)] if c.frame.size else []
    sp = Reg("R", STACK_POINTER)
    for r, at in c.saves:
        out.append(Slot(Instruction("STL", (), (Mem(base=sp, offset=at), Reg("R", r))),
                        [("R", STACK_POINTER), ("R", r)], []))
    return out


def _epilogue(c: _Compiled) -> list[Slot]:
    sp = Reg("R", STACK_POINTER)
    out = [Slot(Instruction("LDL", (), (Reg("R", r), Mem(base=sp, offset=at))),
                [("R", STACK_POINTER)], [("R", r)]) for r, at in c.saves]
    if c.frame.size:
        out.append(_frame_move(c.frame.size))
    return out


def _reachable_callees(mf: MFunction, compiled: dict[str, _Compiled], pointers: dict[str, int]) -> list[str]:
    """The out-of-line functions a kernel reaches, in the order first called (a call
    through a pointer reaches every address-taken function)."""
    order, work = [], list(mf.calls)
    while work:
        name = work.pop(0)
        if name == abi.INDIRECT:
            work.extend(pointers)
        elif name not in order:
            order.append(name)
            work.extend(compiled[name].mf.calls)
    return order


def _callee_stack(mf: MFunction, compiled: dict[str, _Compiled], pointers: dict[str, int]) -> int | None:
    """The stack the deepest chain of calls from a kernel takes below its frame (each
    function's frame, saved registers included), or None where a chain comes back to a
    function it passed (recursion: not knowable; ptxas's MIN_STACK_SIZE 0xffffffff and its
    warning). A call through a pointer may reach any address-taken function; another
    unit's function (-c) or a link target (-g) is not followed here."""
    def targets(name: str | None):
        for callee in (mf if name is None else compiled[name].mf).calls:
            for t in (pointers if callee == abi.INDIRECT else (callee,)):
                if t in compiled:
                    yield t
    return deepest_chain(targets(None), lambda n: compiled[n].frame.size, targets)


def deepest_chain(roots, frame, calls) -> int | None:
    """The largest sum of `frame(f)` along a chain of calls from one of `roots` (`calls(f)`:
    what f calls), or None where a chain comes back to a function on it. Iterative: chains
    may be long."""
    depth: dict[str, int] = {}
    on_chain: set[str] = set()
    deepest = 0
    for root in dict.fromkeys(roots):
        if root not in depth:
            stack = [(root, iter(list(calls(root))), 0)]
            on_chain.add(root)
            while stack:
                at, rest, below = stack[-1]
                nxt = next(rest, None)
                if nxt is None:
                    stack.pop()
                    on_chain.discard(at)
                    depth[at] = frame(at) + below
                    if stack:
                        up, r, d = stack[-1]
                        stack[-1] = (up, r, max(d, depth[at]))
                elif nxt in on_chain:
                    return None
                elif nxt in depth:
                    stack[-1] = (at, rest, max(below, depth[nxt]))
                else:
                    on_chain.add(nxt)
                    stack.append((nxt, iter(list(calls(nxt))), 0))
        deepest = max(deepest, depth[root])
    return deepest


def generate_kernel(fn: ir.Function, arch: str, filename: str | None = None,
                    layout: KernelLayout | None = None,
                    max_registers: int | None = None,
                    functions: dict[str, _Compiled] | None = None,
                    pointers: dict[str, int] | None = None,
                    externs: dict[str, ir.Function] | None = None,
                    body_lines: dict[str, int] | None = None, keep_order: bool = False,
                    relocatable: bool = False, release_ir: bool = False) -> KernelCode:
    """One kernel's code; `functions` holds the module's out-of-line functions, compiled,
    of which the kernel's text gets a private copy of those it reaches (as ptxas does).
    `body_lines` gives each function's opening-brace line, the PTX line ptxas gives its
    prologue in line tables (absent: the prologue has no line). `keep_order` (-g): no
    scheduling. `release_ir`: `fn`'s IR code is freed once selected (`_compile_function`)."""
    info = arch_info(arch)
    functions, pointers, externs = functions or {}, pointers or {}, externs or {}
    if fn.is_entry:
        kernel = _compile_function(fn, info, filename, layout, max_registers,
                                   {**externs, **{name: c.fn for name, c in functions.items()}}, pointers,
                                   keep_order, release_ir)
    else:                          # a link target of relocatable output, compiled already
        kernel = functions[fn.name]
    mf, alloc, frame = kernel.mf, kernel.alloc, kernel.frame
    functions = {**slow_paths.compiled(info.name), **functions}     # (isel/ieee.py's subroutines)
    callees = [functions[name] for name in _reachable_callees(mf, functions, pointers)]
    frame_size = frame.size
    uses_descriptor = mf.uses_global_descriptor or any(c.mf.uses_global_descriptor for c in callees)
    mf.uses_global_descriptor = uses_descriptor
    for c in callees:          # a system call in one of them must restore the kernel's descriptor
        if c.fn.attributes.get(slow_paths.SLOW_PATH) is None:    # (shared by every kernel; no calls)
            c.mf.uses_global_descriptor |= uses_descriptor
    if fn.is_entry:
        slots: list[Slot] = _prologue(mf, info, frame_size)
    else:        # a link target reads the descriptor itself, then opens its frame and saves
        slots = ([_descriptor_slot(ConstRef(0, info.global_desc_offset), info)]
                 if mf.uses_global_descriptor and info.global_desc_offset is not None else [])
        slots += _callee_prologue(kernel)
    body_lines = body_lines or {}
    _with_line(slots, body_lines.get(fn.name))
    for c in (kernel, *callees):
        forget_register_operands(c.mf)
    body, warp_sync_slots = _body_slots(kernel, "")
    slots.extend(body)
    slots[0].labels.insert(0, abi.ENTRY_LABEL)
    subfunctions = []
    for c in callees:
        code, sync = _body_slots(c, abi.label_of(c.fn.name) + "/")
        code = _with_line(_callee_prologue(c), body_lines.get(c.fn.name)) + code
        code[0].labels.insert(0, abi.label_of(c.fn.name))
        code[0].block_start = True
        subfunctions.append(c)
        slots.extend(code)
        warp_sync_slots.extend(sync)
    latency = latency_model(info.latency)
    # scheduled and timed as encoded: the target's spelling may change the opcode whose
    # latencies apply (sm_100/sm_120's `MOV R, UR` for IMAD.MOV.U32: MOV's result is read later)
    from ptx2sass.encoder.target_spelling import respell
    for s in slots:
        s.ins = respell(s.ins, info)
    if not keep_order:
        slots = list_schedule(merge_zero_pairs(slots, info.cs2r_zero_pairs), latency)
    slots = assign_controls(pad_ldgsts(slots, latency), latency, entry_waits=keep_order and not fn.is_entry)
    warp_sync_offsets = sorted(16 * k for k, s in enumerate(slots) if any(s is w for w in warp_sync_slots))
    labels: dict[str, int] = {}
    for k, s in enumerate(slots):
        for name in s.labels:
            labels[name] = 16 * k
    instructions = []
    for s in slots:
        ins = s.ins
        if any(isinstance(op, abi.LabelDistance) for op in ins.operands):
            ins = replace(ins, operands=tuple(Imm(labels[op.end] - labels[op.start])
                                              if isinstance(op, abi.LabelDistance) else op
                                              for op in ins.operands))
        if any(isinstance(op, Label) for op in ins.operands):
            # a branch names its target; a MOV of a label is a return address (an offset);
            # CALL.ABS names another module's function (a relocation)
            code_address = ins.opcode in ("MOV", "IMAD")
            ins = replace(ins, operands=tuple(
                (Imm(labels[op.name]) if code_address else Label(op.name, labels[op.name]))
                if isinstance(op, Label) and op.name in labels else op for op in ins.operands))
        if any(isinstance(op, Reloc) and op.symbol == abi.RETURN_SYMBOL for op in ins.operands):
            ins = replace(ins, operands=tuple(replace(op, symbol=fn.name)
                                              if isinstance(op, Reloc) and op.symbol == abi.RETURN_SYMBOL
                                              else op for op in ins.operands))
        instructions.append(ins)
    instructions, const2, jump_records = fill_jump_tables(instructions, labels, mf.jump_tables,
                                                          fn.attributes.get(abi.JUMP_TABLE_BASE, 0))
    if (abi.INDIRECT in mf.calls or any(abi.INDIRECT in c.mf.calls for c in callees)) \
            and None not in pointers.values():
        if const2:
            raise CompileError(f"kernel {fn.name}: `brx.idx` and calls through pointers together "
                               f"not supported yet", filename)
        const2 = abi.pointer_table(pointers, {name: labels[abi.label_of(name)] for name in pointers})
    # ptxas ends every function with a branch to itself, then at least 8 NOPs (13.5.37:
    # min 8 over every corpus kernel), to a multiple of 128 bytes.
    end = 16 * len(instructions)
    instructions.append(Instruction("BRA", (), (Label(".L_x_end", end),)))
    for _ in range(MIN_TRAILING_NOPS):
        instructions.append(Instruction("NOP"))
    while (16 * len(instructions)) % TEXT_ALIGN:
        instructions.append(Instruction("NOP"))
    words = bytearray()
    text_relocations = []
    for pc, ins in enumerate(instructions):
        word, instructions[pc] = _encode(ins, info.name, 16 * pc, fn.name, filename)
        words += word.to_bytes(16, "little")
        text_relocations += _text_relocations(instructions[pc], 16 * pc, labels, info.call_relocation,
                                              info.const_relocation, _function_relocation(info, relocatable))
    exits = [16 * k for k, ins in enumerate(instructions) if ins.opcode == "EXIT"]
    # (not the calls of the module's own functions kept out of line nor those through
    # pointers: -g, -Ofc; ptxas 13.5.37 lists neither)
    syscalls = [16 * k for k, s in enumerate(slots) if s.system_call]
    entry_end = None
    first_block = next((16 * k for k, s in enumerate(slots) if s.block_start), None)
    first_branch = next((16 * k + 16 for k, ins in enumerate(instructions)
                         if ins.opcode in ("EXIT", "BRA")), None)
    # ptxas starts a block at a system call's LEPC (its debug frame has a row there)
    first_lepc = next((16 * k for k, ins in enumerate(instructions) if ins.opcode == "LEPC"), None)
    candidates = [x for x in (first_block, first_branch, first_lepc) if x is not None]
    entry_end = min(candidates) if candidates else None
    max_r = max([alloc.max_r] + [c.alloc.max_r for c in callees]
                + [r for c in callees for r, _ in c.saves])
    regcount = max(max_r, STACK_POINTER) + 1 + REGISTERS_RESERVED
    if fn.is_entry and reg_reconfig(instructions):
        # setmaxnreg trades registers between the CTA's warps from what each got at launch:
        # ptxas launches such a kernel with its `.maxnreg` (a smaller count would leave an
        # inc's retry loop waiting for registers no dec gave back)
        regcount = max(regcount, int(fn.attributes["maxnreg"][0]))
    cfa = None
    if frame_size:
        sp_set = next(k for k, ins in enumerate(instructions) if ins.opcode in ("IADD3", "IADD")
                      and ins.operands[0] == Reg("R", STACK_POINTER))     # IADD: sm_120's spelling
        cfa = frame_cfa_program(frame_size, 16 * sp_set + 16)
    if not fn.is_entry:
        rets = [16 * k for k, ins in enumerate(instructions) if ins.opcode == "RET"]
        cfa = function_cfa_program(frame_size, rets[-1] if rets else 0, info.cubin_style)
    code = KernelCode(fn.name, instructions, labels, regcount, exits, entry_end, bytes(words),
                      frame_size, mf.num_barriers, cfa)
    code.warp_sync_offsets = warp_sync_offsets
    code.shared_addresses = mf.shared_addresses or any(c.mf.shared_addresses for c in callees)
    code.multicast_bulk = mf.multicast_bulk or any(c.mf.multicast_bulk for c in callees)
    # a `brx.idx` on a lane-varying index (BSSY around its BRX): ptxas 13.5.37 writes a
    # CRS_STACK_SIZE of 0 for the function, in every mode (none for a uniform index)
    code.divergent_switch = any(mi.opcode == "BRX" and not mi.uniform
                                for m in (mf, *(c.mf for c in callees)) for b in m.blocks for mi in b.instrs)
    code.tmem_used = mf.tmem_used or any(c.mf.tmem_used for c in callees)
    code.tmem_cta_groups = set(mf.tmem_cta_groups).union(*(c.mf.tmem_cta_groups for c in callees))
    code.tmem_alloc = mf.tmem_alloc or any(c.mf.tmem_alloc for c in callees)
    code.setmaxnreg_diverged = mf.setmaxnreg_diverged
    code.spill_store_bytes, code.spill_load_bytes = alloc.spills.store_bytes, alloc.spills.load_bytes
    code.const2, code.jump_records = const2, jump_records
    code.const2_objects = _jump_table_objects(fn, mf.jump_tables) if const2 and mf.jump_tables else ()
    # Out-of-line functions: (symbol, offset, frame size) each, and the stack the kernel
    # needs below its frame (recursion: not knowable, as ptxas writes it)
    code.subfunctions = [(f"${fn.name}${c.fn.name}", labels[abi.label_of(c.fn.name)], c.frame.size)
                         for c in subfunctions]
    # alloca: the stack below the frame grows at run time (ptxas writes the same records)
    code.dynamic_stack = any(f.attributes.get(ir.DYNAMIC_STACK) for f in [fn] + [c.fn for c in callees])
    below = _callee_stack(mf, functions, pointers) if fn.is_entry else (0 if not callees else None)
    code.stack_size = abi.UNKNOWN_STACK_SIZE if below is None or code.dynamic_stack else frame_size + below
    code.recursive = below is None
    # ptxas's FRAME_SIZE record of a kernel counts the deepest chain of calls below it too
    code.frame_record = frame_size + (below or 0) if fn.is_entry else frame_size
    if not fn.is_entry:
        max_r = max([max_r] + [r for r, _ in kernel.saves])
        regcount = max(max_r, STACK_POINTER) + 1 + REGISTERS_RESERVED
        code.regcount = regcount
    called = set(mf.externs) | {e for c in callees for e in c.mf.externs}
    code.externs = [name for name in externs if name in called]     # declaration order
    code.call_order = [name for name in dict.fromkeys(mf.externs + [e for c in callees for e in c.mf.externs])
                       if name in externs]
    # -g: what a call through a pointer may reach (every address-taken function)
    code.indirect_callees = [name for name in pointers if mf.pointer_calls]
    code.pointer_prototype = mf.pointer_prototype
    code.syscall_offsets = syscalls
    code.relocations = text_relocations
    code.ptx_lines = _block_filled_lines(slots)
    code.registers = []
    if keep_order:         # -g: where each PTX register lives
        from ptx2sass.debuginfo.registers import register_records
        code.registers = register_records(slots)
    return code


def _block_filled_lines(slots: list[Slot]) -> list[int | None]:
    """Each slot's PTX line; a slot without one (a copy, a NOP, a convergence barrier) takes
    its predecessor's in the same block, or at a block's top its successor's."""
    lines = [s.line for s in slots]
    starts = [k for k, s in enumerate(slots) if k == 0 or s.block_start or s.labels] + [len(slots)]
    for a, b in zip(starts, starts[1:]):
        known = [lines[k] for k in range(a, b) if lines[k] is not None]
        previous = known[0] if known else None
        for k in range(a, b):
            if lines[k] is None:
                lines[k] = previous
            previous = lines[k]
    return lines


def compile_module(module: ir.Module, arch: str = "sm_89", options: dict | None = None,
                   filename: str | None = None) -> bytes:
    """The cubin for every kernel of an SSA IR module."""
    return generate_module(module, arch, options, filename)[0]


def generate_module(module: ir.Module, arch: str = "sm_89", options: dict | None = None,
                    filename: str | None = None) -> tuple[bytes, list[KernelCode]]:
    """The cubin and, per kernel, the code that went into it (for tests and listings)."""
    from ptx2sass.encoder.cubin import Kernel, Relocation, write_cubin
    from ptx2sass.encoder.cubin_builder import build_cubin
    try:
        info = arch_info(arch)
    except UnknownArch:
        info = None
    if info is None or not info.codegen:
        supported = ", ".join(a.name for a in ARCHS.values() if a.codegen)
        raise CompileError(f"code generation for {arch} not supported yet ({supported} only)")
    relocatable = _flag((options or {}).get("compile_only"))
    source = _debug_source(module, options or {}, filename)
    body_lines = source.body_line if source is not None else None
    full_debug = _full_debug(module, options or {})
    # -Ofc min/mid/max (whole program, ptxas 13.5.37): -g's variable layout (`.global`
    # addresses from relocations in the code, the shared windows of `debug_shared_layout`)
    fast_layout = not relocatable and (options or {}).get("fast_compile") in FAST_COMPILE_OUT_OF_LINE
    mod_layout = module_layout(module, filename, relocatable, full_debug or fast_layout)
    kernels, codes = [], []
    # the opcodes each function has (as written): the rewrites and scans below that only
    # concern a few opcodes skip a function without them (one walk instead of one each)
    opcodes = {fn.name: {ins.opcode for b in fn.blocks for ins in b.instrs}
               for fn in module.functions}
    uniform = (options or {}).get("uniform_datapath")
    if uniform is None:
        uniform = info.uniform_datapath_default      # (sm_90+: docs/STATUS.md, branch q100_28)
    if str(uniform).lower() in ("true", "1"):
        for fn in module.functions:
            fn.attributes[UNIFORM_DATAPATH] = True
    for fn in module.functions:
        if any(ins.type == "f32x2" for b in fn.blocks for ins in b.instrs):
            lower_f32x2(fn, filename)
        if "wmma" in opcodes[fn.name]:
            lower_wmma(fn, info)
        if not opcodes[fn.name].isdisjoint(("mma", "wmma")):     # wmma's lowering writes mma
            lower_mma_forms(fn, info)
            lower_quadpair_mma(fn, info)
    if mod_layout.handles and not info.texture_unit:
        # (sm_100/sm_120: the records ptxas writes there are not measured yet)
        raise CompileError(f"module .texref/.samplerref/.surfref variables on {arch} not supported yet",
                           filename)
    # the handle variables each function names as written (ptxas keeps their slots when it
    # deletes the code that reads them)
    handle_refs = {fn.name: handle_references(fn, mod_layout.handles) for fn in module.functions}
    # (declared as ptxas meets them: the kernels in the cubin's order, the last PTX one first)
    descriptor_sizes = list(dict.fromkeys(s for fn in reversed(module.functions)
                                          if not opcodes[fn.name].isdisjoint(DESCRIPTOR_SIZE_SYMBOLS)
                                          for s in descriptor_size_symbols(fn)))
    istypep_used = any("istypep" in found for found in opcodes.values())
    cache_operators.apply(module, options or {})
    errbar_exits = _flag((options or {}).get("errbar_at_exit"))
    if errbar_exits:
        for fn in module.functions:
            fn.attributes[ERRBAR_AT_EXIT] = "membar" if relocatable else "errbar"
    unoptimised = (int((options or {}).get("opt_level", 3)) == 0
                   or (options or {}).get("fast_compile") == "max")      # (-Ofc max: -O0's code)
    if not unoptimised and not full_debug:     # -g: as written
        contract = str((options or {}).get("fmad", True)).lower() not in ("false", "0")
        verify = _flag((options or {}).get("verify_ir"))
        for fn in module.functions:
            # a kernel's own shared variables sit where kernel_layout puts them (not under -c:
            # there the linker places them)
            aligns = (own_shared_alignments(fn, info.reserved_shared_bytes)
                      if fn.is_entry and not relocatable else None)
            optimise(fn, contract, aligns, info.predicated_body_limit)
            if verify:     # (the fuzzer's runner: a pass that breaks SSA is a crash, not a guess)
                _verified(fn, filename)
    elif full_debug:
        # ptxas -g's code is its unoptimised code less what nothing reads (measured: unread
        # loads of any space, volatile ones aside, and unread arithmetic go), so a shared
        # variable only a dead load names has no place in the window either
        for fn in module.functions:
            remove_dead_code(fn)
    # Out-of-line functions (recursive ones; the inliner removed the others) first: every
    # kernel that reaches one gets a copy of its code.
    out_of_line = {fn.name: fn for fn in module.functions if not fn.is_entry}
    # -Ofc: every function out of line in a whole program, as under -g
    fast_out_of_line = not relocatable and any(abi.is_linkable(fn) for fn in module.functions)
    if full_debug or fast_out_of_line:
        _place_jump_tables(module)
    if relocatable:
        for fn in module.functions:
            fn.attributes[abi.JUMP_TABLE_RELOCATED] = True
    pointers = abi.function_pointers(module)
    pointer_calls = full_debug or relocatable or fast_out_of_line
    if pointer_calls:
        pointers = debug_pointers(module, pointers)
    externs = {e.name: e for e in module.externs}
    reserved = info.reserved_shared_bytes
    # -g: each kernel's shared window holds the variables of the functions it reaches too
    # -c (with or without -g): shared variables are the linker's, named by relocations
    linked_shared = relocatable
    shared_plan = (debug_shared_layout(module, reserved) if (full_debug or fast_layout) and not linked_shared
                   else None)
    if linked_shared and full_debug:        # (-c -g: the variables' own names)
        debug_shared_names(module)
    windows, shared_reads = (shared_plan.windows, shared_plan.reads) if shared_plan else ({}, {})
    functions = {name: _compile_function(fn, info, filename,
                                         _debug_window(kernel_layout(fn, module, mod_layout, filename, reserved,
                                                                     relocatable=linked_shared, pointer_calls=pointer_calls),
                                                       fn, windows, shared_reads),
                                         (options or {}).get("maxrregcount"), {**externs, **out_of_line},
                                         pointers, full_debug)
                 for name, fn in out_of_line.items()}
    linkable = {fn.name: fn for fn in module.functions if abi.is_linkable(fn)}
    externs.update(linkable)
    order = {fn.name: fn for fn in _compile_order(module.functions, linkable, relocatable,
                                                  pointers if relocatable and not full_debug
                                                  or options and options.get("fast_compile") else {},
                                                  "tools_patch" if _flag((options or {}).get("tools_patch"))
                                                  else (options or {}).get("fast_compile") if not relocatable
                                                  else None,
                                                  module.variables)}
    time_report = (options or {}).get("time_report")
    textures_before = 0         # texture slots of the kernels before (module_texture_slots)
    for fn in order.values():
        started = time.perf_counter()
        if fn.is_entry:
            place_kernel_params(fn.params, info.param_base, info.params_aligned_in_bank)
        layout = _debug_window(kernel_layout(fn, module, mod_layout, filename, reserved, handle_refs[fn.name],
                                             textures_before if info.module_texture_slots else 0,
                                             relocatable=linked_shared, pointer_calls=pointer_calls),
                               fn, windows, shared_reads)
        if fn.is_entry:
            textures_before += sum(1 for n in handle_refs[fn.name]
                                   if mod_layout.handles.get(n.split(",")[0]) == "texref")
        # a kernel's IR code is read after its selection only by the -c, function address
        # and -g checks below (`_calls_and_diverges`, `_uses_pointers`,
        # `_names_shared_first`): freed otherwise
        code = generate_kernel(fn, arch, filename, layout, (options or {}).get("maxrregcount"), functions,
                               pointers, externs, body_lines, full_debug, relocatable,
                               release_ir=fn.is_entry and not (relocatable or pointers or full_debug or fast_out_of_line))
        codes.append(code)
        spill_report = (options or {}).get("spill_report")
        if spill_report is not None:      # the command's -v and --warn-on-spills read it
            spill_report[fn.name] = (code.spill_store_bytes, code.spill_load_bytes)
        frame_report = (options or {}).get("frame_report")
        if frame_report is not None:      # the command's -v "bytes stack frame"
            frame_report[fn.name] = code.frame_size
            frame_report.update({name.rsplit("$", 1)[1]: size for name, _, size in code.subfunctions})
        if time_report is not None:       # the command's -v "Compile time" per function
            time_report[fn.name] = (time.perf_counter() - started) * 1000
        params = [(i, p.offset, p.size) for i, p in enumerate(fn.params)] if fn.is_entry else []
        kernels.append(Kernel(name=fn.name, text=code.text, regcount=code.regcount,
                              param_base=info.param_base, params=params,
                              shared_bytes=layout.shared_bytes, shared_align=layout.shared_align,
                              frame_size=code.frame_record, min_stack_size=code.stack_size,
                              crs_stack_size=(abi.UNKNOWN_STACK_SIZE if code.recursive or code.dynamic_stack
                                              else 0 if code.subfunctions or fn.attributes.get(INLINED_CALLS)
                                                   or code.setmaxnreg_diverged or code.divergent_switch
                                              else 0 if full_debug and _branches_conditionally(code)
                                              else 0 if (relocatable or fast_out_of_line) and code.externs
                                                   and _calls_and_diverges(fn, code)
                                              else None),
                              subfunctions=code.subfunctions,
                              barcount=code.num_barriers, cfa_program=code.cfa_program,
                              max_threads=_launch_dims(fn, "maxntid"), reqntid=_launch_dims(fn, "reqntid"),
                              extra_attributes=((_cluster_records(fn) if fn.is_entry else [])
                                                + _warp_sync_records(code.warp_sync_offsets) + code.jump_records
                                                + ([] if relocatable else _syscall_records(code.syscall_offsets))),
                              externs=code.externs, call_order=code.call_order if relocatable else None,
                              indirect_callees=code.indirect_callees,
                              pointer_prototype=code.pointer_prototype if relocatable else None,
                              named_kernels=list(dict.fromkeys(r[1] for r in code.relocations
                                                               if r[2] in DESCRIPTOR_RELOCATION.values())),
                              named_functions=list(dict.fromkeys(
                                  r[1] for r in code.relocations if r[2] in _function_relocation(info, relocatable)
                                  and pointers.get(r[1], 0) is None)),
                              relocations=[Relocation(*r) for r in reversed(
                                  _with_pointer_calls(code, info) if relocatable else code.relocations)],
                              reloc_kinds=_reloc_kinds(code.relocations,
                                                       full_debug and _names_shared_first(fn, windows)),
                              const2=code.const2, const2_objects=code.const2_objects,
                              exit_offsets=code.exit_offsets, entry_block_end=code.entry_block_end,
                              is_entry=fn.is_entry,
                              maxreg_count=_maxreg_record(fn, (options or {}).get("maxrregcount"), info)
                              if fn.is_entry else None,
                              shared_window=code.shared_addresses,
                              sparse_mma_mask=sparse_mma_mask(code.instructions)
                              | fn.attributes.get(SPARSE_MMA_SOURCE_BITS, 0),
                              preexit_used=preexit_used(code.instructions),
                              reg_reconfig=reg_reconfig(code.instructions),
                              grid_attributes=fn.attributes.get(grid_attributes.KEY, 0),
                              multicast_bulk=code.multicast_bulk,
                              tmem_used=code.tmem_used, tmem_partition=code.tmem_alloc,
                              tmem_cta_groups=tuple(sorted(code.tmem_cta_groups)),
                              handle_slots=[(info.param_base + at, tuple(key.split(",")))
                                            for at, key, _ in layout.handle_slots],
                              handle_refs=[n for key in handle_refs[fn.name] for n in key.split(",")],
                              shared_symbols=windows[fn.name].symbols if fn.name in windows
                              else layout.shared_symbols))
    if not relocatable and any(not k.is_entry for k in kernels):
        _link_target_stacks(kernels, codes)
        _link_target_tables(kernels, codes)
    if full_debug or relocatable and unoptimised:
        # ptxas -g writes the `.visible .func`s, then the kernels (each group in PTX order),
        # then the other functions in declaration order (the builder reverses) (the kernels
        # without `.visible` after the kernels); -c -O0 and -c -Ofc max (ptxas 13.5.37): the
        # `.visible`/`.weak` functions and `.visible` kernels in PTX order, then the others
        position = {fn.name: (0, i) if not fn.attributes.get(abi.LOCAL_FUNCTION) and not fn.is_entry
                    else (2, fn.attributes.get(abi.DECLARED_AT, i))
                    if not full_debug and fn.attributes.get(abi.LOCAL_ENTRY)
                    else (0, i) if not full_debug and fn.is_entry
                    else (1, bool(fn.attributes.get(abi.LOCAL_ENTRY)), i) if fn.is_entry
                    else (2, fn.attributes.get(abi.DECLARED_AT, i))
                    for i, fn in enumerate(module.functions)}
        pairs = sorted(zip(kernels, codes), key=lambda kc: position[kc[0].name], reverse=True)
        through_pointers = {k.name for k, c in pairs if k.is_entry and c.indirect_callees}
        if through_pointers:
            # (ptxas 13.5.37 -g, a kernel calling through a pointer: that order, reversed, put
            # through `variables.alternating_merge_sort` with those kernels last, reversed again)
            from ptx2sass.variables import alternating_merge_sort
            listed = sorted((k.name for k, _ in pairs), key=position.__getitem__)
            written = alternating_merge_sort(listed[::-1], lambda n: n in through_pointers)[::-1]
            at = {n: i for i, n in enumerate(written)}
            pairs.sort(key=lambda kc: at[kc[0].name], reverse=True)
        kernels, codes = [k for k, _ in pairs], [c for _, c in pairs]
    elif pointers and not relocatable and not fast_out_of_line:
        # a module that takes a function's address: ptxas 13.5.37 puts its kernels (PTX
        # order) through `variables.alternating_merge_sort`, those that take an address or
        # call through a pointer as the larger key; the builder writes the result reversed
        from ptx2sass.variables import alternating_merge_sort
        by_name = {fn.name: fn for fn in module.functions}
        special = {k.name for k in kernels if _uses_pointers(by_name[k.name], pointers)}
        at = {n: i for i, n in enumerate(alternating_merge_sort([k.name for k in kernels],
                                                                lambda n: n in special))}
        pairs = sorted(zip(kernels, codes), key=lambda kc: at[kc[0].name])
        kernels, codes = [k for k, _ in pairs], [c for _, c in pairs]
    if _flag((options or {}).get("tools_patch")):
        for k in kernels:
            k.tools_patch = True
    target = real_target(module.target.split(",")[0].strip()) if module.target else arch
    debug_sections = []
    if source is not None:
        from ptx2sass.debuginfo.sections import (KernelLines, dwarf_sections, lineinfo_sections,
                                                 register_sections)
        lines = [KernelLines(k.name, len(k.text), c.ptx_lines,
                             [(at, body_lines.get(name[len(k.name) + 2:])) for name, at, _ in c.subfunctions],
                             c.registers, body_lines.get(k.name), k.is_entry)
                 for k, c in reversed(list(zip(kernels, codes)))]
        debug_sections = lineinfo_sections(lines, source, (options or {}).get("ptx_text") or "", relocatable)
        if full_debug:
            debug_sections += register_sections(lines)
            debug_sections += dwarf_sections(lines, source, {g.name for g in mod_layout.globals_}
                                             | set(mod_layout.bank4))
    cubin = write_cubin(build_cubin(arch, kernels, globals_=mod_layout.globals_, bank4=mod_layout.bank4,
                                    tool_args=(options or {}).get("tool_args"),
                                    tool_object=(options or {}).get("tool_object") or "",
                                    var_relocations=mod_layout.relocations,
                                    relocatable=relocatable, extern_variables=mod_layout.extern_variables,
                                    extensible=not relocatable and _flag((options or {}).get("extensible")),
                                    preserve_relocs=_flag((options or {}).get("preserve_relocs")),
                                    reserved_alias=not fast_layout,
                                    visible=mod_layout.visible, weak=mod_layout.weak,
                                    local_functions={fn.name for fn in module.functions
                                                     if fn.attributes.get(abi.LOCAL_FUNCTION)
                                                     or fn.attributes.get(abi.LOCAL_ENTRY)},
                                    weak_functions={fn.name for fn in module.functions
                                                    if fn.attributes.get(abi.WEAK_FUNCTION)},
                                    function_aliases=module.function_aliases,
                                    prototypes={e.name: abi.prototype_string(e) for e in
                                                sorted(externs.values(), key=_declared_at)
                                                if relocatable and (not e.attributes.get(abi.LOCAL_FUNCTION)
                                                                    # (an address-taken local one: its
                                                                    # string for the call graph, -c)
                                                                    or pointers.get(e.name, 0) is None)
                                                and (e.name in linkable or
                                                                    any(e.name in c.externs for c in codes))},
                                    ptx_target=arch if is_virtual_arch(target) else target,
                                    debug_sections=debug_sections, device_debug=full_debug,
                                    errbar_at_exit=errbar_exits,
                                    debug_shared=shared_plan.region if shared_plan
                                    else _linked_shared_region(module, kernels) if linked_shared else None,
                                    module_shared=[(v.name, v.size, v.align, False)
                                                   for v in module_shared_variables(module)]
                                    + [(v.name, 0, max(v.align, EXTERN_SHARED_ALIGN), True) for v in module.variables
                                       if v.space == "shared" and (v.extern or v.size == 0)]
                                    if linked_shared else (),
                                    address_taken=[fn.name for fn in module.functions
                                                   if pointers.get(fn.name, 0) is None],
                                    isa_class=isa_class(codes), handles=mod_layout.handles,
                                    descriptor_sizes=descriptor_sizes, istypep_used=istypep_used,
                                    samplers=[(v.name, *v.sampler) for v in module.variables
                                              if v.sampler is not None],
                                    texmode_independent=module.texmode_independent,
                                    variable_order=[v.name for v in module.variables]))
    return cubin, codes


def debug_pointers(module: ir.Module, pointers: dict[str, int]) -> dict[str, int | None]:
    """-g: ptxas -g keeps an address-taken function in its own text section too, its address
    the relocated halves `MOV R, 32@lo(f)` / `32@hi(f)` and a call through a pointer
    `CALL.ABS.NOINC R` (measured, ptxas 13.5.37): such functions map to None (no pointer
    table); an initialiser's are relocated against the function (`module_layout`). Where
    they are not link targets (the module fell back to inlining), the pointers stay small
    numbers."""
    linkable = {fn.name for fn in module.functions if abi.is_linkable(fn)}
    if not pointers or not set(pointers) <= linkable:
        return pointers
    # in the order the code first names them (ptxas -g lists a pointer call's targets so)
    named = [s.name for fn in module.functions for b in fn.blocks for ins in b.instrs
             for s in (ins.srcs[1:] if ins.opcode == "call" else ins.srcs)
             if type(s) is ir.Symbol and s.name in pointers]
    return {name: None for name in dict.fromkeys(named + list(pointers))}


def _reloc_kinds(relocations: list, rel_first: bool) -> tuple[str, ...] | None:
    """The order of a text's relocation sections: ptxas creates the section of the first
    relocated word first; under -g a shared variable named before any call creates the
    REL one (measured: it then comes first though it ends up holding only the CALL's
    entry, the shared offsets being resolved)."""
    kinds = tuple(dict.fromkeys("rel" if r[3] is None else "rela" for r in relocations))
    if rel_first and "rel" in kinds:
        kinds = ("rel",) + tuple(k for k in kinds if k != "rel")
    return kinds or None


def _names_shared_first(fn: ir.Function, windows: dict) -> bool:
    """Whether `fn` names a shared variable of a -g window before its first call."""
    shared = {name for w in windows.values() for (_, name) in w.offsets}
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.opcode == "call":
                return False
            for s in ins.srcs:
                s = s.base if isinstance(s, ir.Address) else s
                if isinstance(s, ir.Symbol) and s.name in shared:
                    return True
    return False


def _linked_shared_region(module: ir.Module, kernels: list) -> tuple[int, int] | None:
    """-c: `.nv_debug.shared`'s size and alignment (the module's sized `.shared` variables,
    then the `.func`s' own: `variables.linked_section_size`), or None
    where there are none."""
    sized = [(v.size, v.align) for v in module_shared_variables(module)]
    sized += [(size, align) for k in kernels if not k.is_entry
              for _, align, size, _, where in k.shared_symbols if where == "function"]
    if not sized:
        return None
    align = max(align for _, align in sized)
    return linked_section_size(sum(size for size, _ in sized), align), align


def _debug_window(layout: KernelLayout, fn: ir.Function, windows: dict, reads: dict) -> KernelLayout:
    """-g: the layout with ptxas -g's shared offsets (`debug_shared_layout`): a kernel's
    window, or the fixed offsets an out-of-line function reads (it has no window itself)."""
    if fn.is_entry and fn.name in windows:
        w = windows[fn.name]
        placements = dict(layout.placements)
        placements.update((name, Placement("shared", at)) for (owner, name), at in w.offsets.items()
                          if owner in (None, fn.name))
        return replace(layout, placements=placements, shared_bytes=w.size,
                       shared_align=w.align if w.size is not None else layout.shared_align)
    if not fn.is_entry and fn.name in reads:
        placements = dict(layout.placements)
        placements.update((name, Placement("shared", at)) for name, at in reads[fn.name].items())
        return replace(layout, placements=placements, shared_bytes=None)
    return layout


def _link_target_stacks(kernels: list, codes: list[KernelCode]) -> None:
    """-g keeps `.func`s out of line as functions of their own (link targets): a kernel's
    MIN_STACK_SIZE also counts the deepest chain of them it calls (its FRAME_SIZE record
    stays its own, as ptxas -g writes it), and a chain that comes back on itself makes it
    unknowable (CRS_STACK_SIZE too); its register count covers every function it reaches."""
    targets = {k.name: c for k, c in zip(kernels, codes) if not k.is_entry}

    def own(name: str) -> int | None:       # its frame and its in-text callees' chain
        c = targets[name]
        return None if c.stack_size == abi.UNKNOWN_STACK_SIZE else c.stack_size

    for k, c in zip(kernels, codes):
        reached = [e for e in c.externs if e in targets]
        if not k.is_entry or not reached:
            continue
        below_all = _reached(reached, targets)
        # the callees run in the kernel's registers: it allocates as many as any of them uses
        # (ours allocated 24 where its out-of-line fib_rec used 25: the H200 faulted, run 18)
        k.regcount = c.regcount = max([c.regcount, *(targets[n].regcount for n in below_all)])
        if c.stack_size == abi.UNKNOWN_STACK_SIZE:
            continue
        below = deepest_chain(reached, lambda n: own(n) or 0,
                              lambda n: [e for e in targets[n].externs if e in targets])
        if below is None or any(own(n) is None for n in below_all):
            k.min_stack_size = k.crs_stack_size = abi.UNKNOWN_STACK_SIZE
            c.stack_size, c.recursive = abi.UNKNOWN_STACK_SIZE, True
        else:
            k.min_stack_size = c.stack_size = c.stack_size + below


def _place_jump_tables(module: ir.Module) -> None:
    """-g: each `brx.idx` table of the module gets a place of its own in the constant bank 2,
    the kernels' in PTX order first, then the functions' (as ptxas -g lays them out), so
    that a function's tables read the same in every kernel that calls it."""
    at = 0
    for fn in sorted(module.functions, key=lambda f: not f.is_entry):
        fn.attributes[abi.JUMP_TABLE_BASE] = at
        at += 4 * sum(len(ins.srcs) - 1 for b in fn.blocks for ins in b.instrs
                      if ins.opcode == "brx" and not isinstance(ins.srcs[0], ir.Const))


def _link_target_tables(kernels: list, codes: list[KernelCode]) -> None:
    """-g: a function's jump tables live in the constant bank 2 of each kernel that reaches
    it (ptxas -g: the function has none of its own)."""
    from ptx2sass.jumptables import merge_tables
    targets = {k.name: c for k, c in zip(kernels, codes) if not k.is_entry}
    if not any(c.const2 for c in targets.values()):
        return
    for k, c in zip(kernels, codes):
        if k.is_entry:
            reached = _reached([e for e in c.externs if e in targets], targets)
            late = c.const2 is None
            k.const2 = c.const2 = merge_tables(c.const2, *(targets[n].const2 for n in sorted(reached)))
            k.const2_late = late and k.const2 is not None
    for k, c in zip(kernels, codes):
        if not k.is_entry:
            k.const2 = c.const2 = None


def _reached(roots: list[str], targets: dict[str, KernelCode]) -> set[str]:
    seen, work = set(), list(roots)
    while work:
        n = work.pop()
        if n not in seen:
            seen.add(n)
            work.extend(e for e in targets[n].externs if e in targets)
    return seen


def _branches_conditionally(code: KernelCode) -> bool:
    """A guarded BRA: ptxas -g then writes a CRS_STACK_SIZE of 0."""
    return any(ins.opcode == "BRA" and ins.guard is not None for ins in code.instructions)


def _function_relocation(info, relocatable: bool) -> tuple[int, int]:
    """The relocations of a `.func` address's halves: the target's under -c (sm_90+: the
    unified function table's), R_CUDA_ABS32_LO/HI_32 in a whole program (-g: ptxas 13.5.37
    writes those on sm_90 too)."""
    return info.function_address_relocation if relocatable else (R_CUDA_ABS32_LO_32, R_CUDA_ABS32_HI_32)


def _with_pointer_calls(code: KernelCode, info) -> list:
    """The text's relocations with those of its calls through pointers where the target
    relocates them (`Target.pointer_call_relocation`), in offset order."""
    if info.pointer_call_relocation is None:
        return code.relocations
    symbol, kind = info.pointer_call_relocation
    calls = [(16 * pc, symbol, kind, 0) for pc, ins in enumerate(code.instructions)
             if ins.opcode == "CALL" and "ABS" in ins.modifiers and ins.operands
             and isinstance(ins.operands[0], Reg)]
    return sorted(code.relocations + calls, key=lambda r: r[0])


def _calls_and_diverges(fn: ir.Function, code: KernelCode) -> bool:
    """-c, a kernel calling link targets: ptxas 13.5.37 writes a CRS_STACK_SIZE of 0 where
    its code also splits the warp, a guarded BRA or EXIT on a lane-varying condition (before
    or after the call), and none where the branch is uniform or became predicated code."""
    from ptx2sass.divergence import divergent_values
    if not any(ins.opcode in ("BRA", "EXIT") and ins.guard is not None for ins in code.instructions):
        return False
    divergent = divergent_values(fn)
    return any(b.instrs and b.instrs[-1].guard is not None and b.instrs[-1].guard.id in divergent
               for b in fn.blocks)


def _full_debug(module: ir.Module, options: dict) -> bool:
    """-g, or `.target debug` (which ptxas treats as -g: the tree knows it)."""
    tree = options.get("ptx_ast")
    target = getattr(tree, "target", None)
    return _flag(options.get("debug")) or (target is not None and "debug" in target.names)


def _debug_source(module: ir.Module, options: dict, filename: str | None):
    """The PTX's source map when the cubin gets line tables (None otherwise): with
    -lineinfo, -g or `.target debug`, or when the PTX has any `.loc` (ptxas then writes
    them unasked); never with --suppress-debug-info."""
    if _flag(options.get("suppress_debug_info")):
        return None
    wanted = _flag(options.get("lineinfo")) or _full_debug(module, options)
    text = options.get("ptx_text")
    if not wanted and not (text and ".loc" in text):
        return None
    tree = options.get("ptx_ast")
    if tree is None:
        if text is None:
            return None
        from ptx2sass.frontend import parse
        tree = parse(text, filename or "<input>")
    from ptx2sass.debuginfo.source_map import SourceMap
    source = SourceMap(tree)
    return source if wanted or source.has_loc else None


def _uses_pointers(fn: ir.Function, pointers: dict[str, int]) -> bool:
    """Does `fn` call through a pointer, or name an address-taken function other than as a
    call's target?"""
    for b in fn.blocks:
        for ins in b.instrs:
            if ins.opcode == "call" and ins.srcs and not isinstance(ins.srcs[0], ir.Symbol):
                return True
            if any(isinstance(s, ir.Symbol) and s.name in pointers
                   for s in (ins.srcs[1:] if ins.opcode == "call" else ins.srcs)):
                return True
    return False


def _declared_at(fn: ir.Function) -> int:
    """Where `fn`'s name first appears in the module (a prototype counts)."""
    return fn.attributes.get(abi.DECLARED_AT, 1 << 30)


def _compile_order(functions: list[ir.Function], linkable: dict[str, ir.Function],
                   relocatable: bool = False, taken: dict | None = None,
                   fast: str | None = None, variables: list = ()) -> list[ir.Function]:
    """ptxas's compile order of the kernels and link targets (the cubin lists them the other
    way round). Measured on ptxas 13.5.37 -c: the cubin's order is a depth-first postorder
    of the call graph that starts from the functions in reverse order of where their names
    first appear (a prototype counts) and follows each one's callees in reverse order of
    their first call; uncalled ones are roots like the kernels. Local functions nothing
    calls (-c keeps them) and, under -c, kernels without `.visible` come before all of them
    in the cubin, the last declared first. `taken` (-c without -g): address-taken functions,
    which ptxas orders as callees of the functions naming them, where first named."""
    compiled = [fn for fn in functions if fn.is_entry or fn.name in linkable]

    def is_local(fn: ir.Function) -> bool:
        return bool(fn.attributes.get(abi.LOCAL_FUNCTION) or relocatable and fn.attributes.get(abi.LOCAL_ENTRY))
    local = [fn for fn in compiled if is_local(fn)]
    first = sorted((fn for fn in compiled if not is_local(fn)), key=_declared_at)
    by_name = {fn.name: fn for fn in (*first, *linkable.values())}
    named = set(linkable) | ({v.name for v in variables} if fast else set())
    graph = {name: [n for n in _called_names(fn, taken or {}, named if fast else None) if n in named]
             for name, fn in by_name.items()}
    if fast in FAST_COMPILE_OUT_OF_LINE and not relocatable:
        # -Ofc (measured on ptxas 13.5.37): the kernels in PTX order, min and mid each
        # after a postorder of its calls (the last-called first), max each before its calls
        # (a preorder, the first-called first); functions no kernel reaches are left out
        roots = [fn.name for fn in first if fn.is_entry]
        # (a function naming a variable whose initialiser holds function addresses reaches
        # them, in the initialiser's order, where it names the variable)
        held = {v.name: [name for _, name, _ in v.relocations if name in linkable] for v in variables}
        for name in graph:
            graph[name] = [c for n in graph[name] for c in ([n] if n in linkable else held.get(n, []))]
        taken_roots = [fn.name for fn in sorted(linkable.values(), key=_declared_at) if fn.name in (taken or {})]
        cubin = (call_preorder(roots + taken_roots, graph, set(linkable)) if fast == "max"
                 else call_postorder(taken_roots[::-1] + roots[::-1], graph, set(linkable)))
        return [by_name[n] for n in reversed(cubin)]
    if (relocatable or fast == "tools_patch") and local:
        # -c (and --compile-as-tools-patch): the local functions and kernels first, each group a postorder of the calls
        # within it (-v reports them in this order too: cli.function_report_order)
        own = {fn.name for fn in local}
        by_name.update((fn.name, fn) for fn in local)
        graph.update((fn.name, [n for n in _called_names(fn, taken or {}) if n in linkable])
                     for fn in local)
        locals_ = call_postorder([fn.name for fn in sorted(local, key=_declared_at)], graph, own)
        if fast == "tools_patch":
            # (--compile-as-tools-patch, 13.5.37: the link targets first, from the first
            # declared, then the local functions)
            cubin = call_postorder([fn.name for fn in first][::-1], graph, set(linkable) - own) + locals_
        else:
            cubin = locals_ + call_postorder([fn.name for fn in first], graph, set(linkable) - own)
        return [by_name[n] for n in reversed(cubin)]
    postorder = call_postorder([fn.name for fn in first], graph, set(linkable))
    reached = set(postorder)
    return [by_name[n] for n in reversed(postorder)] + [fn for fn in sorted(local, key=_declared_at)
                                                         if fn.name not in reached]


def _called_names(fn: ir.Function, taken: dict | None = None, named: set | None = None) -> list[str]:
    """The functions `fn` calls by name, in the order first called; with `taken`, those of
    them whose address it names too, where first named; with `named`, also these names
    (variables) where first named."""
    wanted = set(taken or ()) | (named or set())
    out = [s.name for b in fn.blocks for ins in b.instrs
           for s in ([ins.srcs[0]] if ins.opcode == "call" and ins.srcs else ins.srcs if wanted else [])
           if isinstance(s, ir.Symbol) and (ins.opcode == "call" or s.name in wanted)]
    return list(dict.fromkeys(out))


def _warp_sync_records(offsets: list[int]) -> list:
    """ptxas lists every warp-synchronous instruction (`.sync` shuffles, votes, matches,
    reductions, `bar.warp.sync`, unaligned `barrier.sync`) with the register holding its
    member mask (0xffffffff: an immediate mask)."""
    from ptx2sass.encoder.nvinfo import NvInfoRecord
    if not offsets:
        return []
    return [NvInfoRecord.words("COOP_GROUP_MASK_REGIDS", *[0xFFFFFFFF] * len(offsets)),
            NvInfoRecord.words("COOP_GROUP_INSTR_OFFSETS", *offsets)]


def _syscall_records(offsets: list[int]) -> list:
    """ptxas lists the offset of every system call's CALL.ABS (EIATTR_SYSCALL_OFFSETS)."""
    from ptx2sass.encoder.nvinfo import NvInfoRecord
    return [NvInfoRecord.words("SYSCALL_OFFSETS", *offsets)] if offsets else []


def _maxreg_record(fn: ir.Function, maxrregcount: int | None, target) -> int:
    """EIATTR_MAXREG_COUNT as ptxas 13.5 writes it (probed, sm_80/89/90): `.maxnreg` (raised
    to 24; above 255 ignored), else the limit `.maxntid`/`.reqntid` set (`.maxntid 1024`: 64),
    else -maxrregcount, else 0xff."""
    from ptx2sass.options import MIN_REGISTERS
    maxnreg = fn.attributes.get("maxnreg")
    if maxnreg and int(maxnreg[0]) <= 0xFF:
        return max(int(maxnreg[0]), MIN_REGISTERS)
    if _launch_dims(fn, "maxntid") or _launch_dims(fn, "reqntid"):
        return _threads_register_limit(fn, target) or 0xFF
    if maxrregcount:
        return int(maxrregcount)
    return 0xFF


def _check_fixed_registers(mf, limit: int | None, name: str, filename: str | None) -> None:
    """Out-of-line calls pass their arguments in fixed registers from R4 (ptx2sass.abi);
    where they reach past the function's register limit, the call is refused rather than
    the limit exceeded (ptxas passes what does not fit on the stack: not done here)."""
    if limit is None:
        return
    top = max((index + mf.vregs[v].width for v, index in mf.precolored.items()
               if mf.vregs[v].cls == "R" and index != RZ.index), default=0)
    if top > limit:
        raise CompileError(f"function {name}: call arguments in registers up to R{top - 1} past the "
                           f"register limit {limit} (passing on the stack) not supported yet", filename)


def _register_limit(fn: ir.Function, maxrregcount: int | None, target) -> int | None:
    """The register count the kernel must fit, as ptxas decides it (measured with 13.5):
    `.maxnreg` wins over -maxrregcount; a `.maxntid`/`.reqntid` kernel ignores
    -maxrregcount and gets what lets that many threads (times `.minnctapersm` blocks) share
    an SM's register file, in steps of 8 (1024 threads: 64; 768: 80); otherwise
    -maxrregcount."""
    maxnreg = fn.attributes.get("maxnreg")
    if maxnreg:
        # after `setmaxnreg.dec n` the code may hold only n registers: the whole kernel fits
        # the smallest (a conservative cap; ptxas allots per region)
        return min([int(maxnreg[0])] + ir.setmaxnreg_counts(fn, "dec"))
    if _launch_dims(fn, "maxntid") or _launch_dims(fn, "reqntid"):
        return _threads_register_limit(fn, target)
    return int(maxrregcount) if maxrregcount else None


def _threads_register_limit(fn: ir.Function, target) -> int | None:
    """What `.maxntid`/`.reqntid` threads times the `.minnctapersm` blocks ptxas honours
    leave per thread (launch_bounds.py); None from 255 up."""
    from ptx2sass.launch_bounds import register_limit
    dims = _launch_dims(fn, "maxntid") or _launch_dims(fn, "reqntid")
    blocks = int((fn.attributes.get("minnctapersm") or [1])[0]) or 1
    return register_limit(dims[0] * dims[1] * dims[2], blocks, target)


def _launch_dims(fn: ir.Function, name: str) -> tuple[int, int, int] | None:
    """`.maxntid` / `.reqntid` as the three dimensions the cubin records (missing ones 1)."""
    dims = fn.attributes.get(name)
    if not dims:
        return None
    dims = [int(d) for d in dims][:3]
    return tuple(dims + [1] * (3 - len(dims)))


def _cluster_records(fn: ir.Function) -> list:
    """A kernel's cluster launch directives (sm_90+) as ptxas 13.5 records them for the
    driver: MAX_CLUSTER_RANK (`.maxclusterrank n`), EXPLICIT_CLUSTER (`.explicitcluster`),
    CTA_PER_CLUSTER (`.reqnctapercluster`, missing dimensions 1)."""
    from ptx2sass.encoder.nvinfo import NvInfoRecord
    out = []
    rank = fn.attributes.get("maxclusterrank")
    if rank:
        out.append(NvInfoRecord.words("MAX_CLUSTER_RANK", int(rank[0])))
    if "explicitcluster" in fn.attributes:
        out.append(NvInfoRecord.flag("EXPLICIT_CLUSTER"))
    dims = _launch_dims(fn, "reqnctapercluster")
    if dims:
        out.append(NvInfoRecord.words("CTA_PER_CLUSTER", *dims))
    return out


def is_debug(tree, options: dict) -> bool:
    """-g, or `.target debug`."""
    target = getattr(tree, "target", None)
    return _flag(options.get("debug")) or (target is not None and "debug" in target.names)


FAST_COMPILE_OUT_OF_LINE = ("min", "mid", "max")


def keeps_functions(tree, options: dict) -> bool | str:
    """Where ptxas 13.5.37 keeps every `.func` with a body out of line (its own text
    section, called through the link-time convention): -g, -c and -Ofc min/mid/max (in
    whole-program builds without them it inlines or calls a copy inside the kernel's text)."""
    if (is_debug(tree, options) or options.get("fast_compile") in FAST_COMPILE_OUT_OF_LINE
            or _flag(options.get("tools_patch"))):
        return True
    if not _flag(options.get("compile_only")):
        return False
    # -c --enable-func-clone-sc: ptxas copies into the kernels the local functions only
    # kernels reach, keeping out of line those a link target reaches
    return "clone" if _flag(options.get("clone_functions")) else True


def _flag(value) -> bool:
    return bool(value) and str(value).lower() not in ("false", "0")


def lower_ptx(ptx: str, arch: str = "sm_89", filename: str = "<input>",
              whole_program: bool = True) -> ir.Module:
    """PTX text → checked SSA IR (the frontend); `whole_program=False` (ptxas -c) lets
    calls of bodiless `.extern .func`s and `.extern .global`s through."""
    return _lower(ptx, arch, filename, whole_program)[0]


def _lower(ptx: str, arch: str, filename: str, whole_program: bool):
    """`lower_ptx`'s SSA IR and the checked syntax tree it came from."""
    from ptx2sass.frontend import check, parse
    tree = module = parse(ptx, filename)
    check(module, arch, whole_program=whole_program)
    return lower_checked(module, whole_program), tree


def lower_checked(module, whole_program: bool = True, keep_functions: bool | str = False) -> ir.Module:
    """A parsed and checked module → SSA IR: calls inlined but, under separate compilation,
    the `.visible .func`s other units may call, which stay functions of their own; with
    `keep_functions` (`keeps_functions`: -g, -c, -Ofc) every `.func` with a body stays one,
    called through the link-time convention and given a text section of its own ("clone":
    those a link target reaches, the others inlined)."""
    from ptx2sass.aliases import function_aliases, resolve_aliases
    from ptx2sass.frontend.to_ssa import lower_module
    from ptx2sass.guard_branches import branch_around_expanded_guards
    from ptx2sass.inline import call_graph, inline_calls, linkable_functions, unreferenced_local_functions
    aliases = function_aliases(module)
    module = resolve_aliases(module)
    local = set()
    declared: dict[str, int] = {}
    weak, local_entries = set(), set()
    for i, f in enumerate(module.functions()):
        declared.setdefault(f.name, i)
        if f.body is not None and ".weak" in f.linkage:
            weak.add(f.name)
        if f.kind == ".entry" and f.body is not None and not {".visible", ".weak", ".extern"} & set(f.linkage):
            local_entries.add(f.name)
    if keep_functions == "clone":
        linkable = linkable_functions(module)
        graph = call_graph(module)
        work = list(linkable)
        while work:
            for callee in graph.get(work.pop(), ()):
                if callee in graph and callee not in linkable:
                    linkable.add(callee)
                    work.append(callee)
        local = {f.name for f in module.functions() if f.name in linkable
                 and not {".visible", ".weak"} & set(f.linkage)} | unreferenced_local_functions(module)
        linkable |= local
    elif keep_functions:
        # (address-taken ones too, their addresses from relocations: `debug_pointers`, and
        # in initialisers `module_layout`)
        linkable = {f.name for f in module.functions() if f.kind == ".func" and f.body is not None}
        local = {f.name for f in module.functions() if f.name in linkable
                 and not {".visible", ".weak"} & set(f.linkage)}
    elif whole_program:
        linkable = set()
    else:
        local = unreferenced_local_functions(module)
        linkable = linkable_functions(module) | local
    grid_bits = grid_attributes.function_bits(module, set() if whole_program else linkable)
    structs = {f.name: _struct_params(f) for f in module.functions()
               if f.name in linkable and f.body is not None}
    if module.has_calls() or linkable:
        module = inline_calls(module, linkable=linkable)
    out = lower_module(branch_around_expanded_guards(module))
    out.function_aliases = aliases
    for fn in out.externs:
        fn.attributes[abi.DECLARED_AT] = declared[fn.name]
    for fn in out.functions:
        if grid_bits.get(fn.name):
            fn.attributes[grid_attributes.KEY] = grid_bits[fn.name]
        if fn.name in linkable:
            fn.attributes[abi.LINKABLE] = True
            if structs.get(fn.name):
                fn.attributes[abi.STRUCTS] = structs[fn.name]
        if fn.name in local:
            fn.attributes[abi.LOCAL_FUNCTION] = True
        if fn.name in declared:
            fn.attributes[abi.DECLARED_AT] = declared[fn.name]
        if fn.name in weak:
            fn.attributes[abi.WEAK_FUNCTION] = True
        if fn.name in local_entries:
            fn.attributes[abi.LOCAL_ENTRY] = True
    return out


def _struct_params(f) -> dict[str, tuple[int, int]]:
    """A function's `.param` arrays (structs), parameters and results: name -> (size in
    bytes, alignment), as ptx2sass.abi.STRUCTS records them."""
    from ptx2sass.frontend.instructions import TYPE_BITS
    return {d.name: ((d.dims[0] or 0) * TYPE_BITS.get(decl.type, 8) // 8, decl.align or 1)
            for decl in (*f.params, *f.return_params) if any(x.dims for x in decl.declarators)
            for d in decl.declarators}


def _verified(fn: ir.Function, filename: str | None) -> None:
    """`ir.verify` after the SSA optimisations, as an internal error: a pass that leaves a
    use its definition does not dominate miscompiles silently (fuzz 33000385)."""
    try:
        ir.verify(fn)
    except ir.IRError as e:
        raise CompileError(f"internal error: IR check after optimise: {e}", filename) from None


def compile_ptx(ptx: str, arch: str = "sm_89", filename: str = "<input>", **options) -> bytes:
    """PTX text → cubin: the frontend, then `compile_module`."""
    whole_program = not _flag(options.get("compile_only"))
    from ptx2sass.frontend import check, parse
    tree = parse(ptx, filename)
    check(tree, arch, whole_program=whole_program)
    options.setdefault("ptx_text", ptx)
    options.setdefault("ptx_ast", tree)
    return compile_checked(tree, arch, options, filename, whole_program)


REPORTS = ("spill_report", "time_report", "frame_report")     # what the back end fills in `options`


def compile_checked(tree, arch: str, options: dict, filename: str | None, whole_program: bool = True) -> bytes:
    """A parsed and checked module's cubin. Under -g the `.func`s stay out of line; where
    that meets something the out-of-line convention does not support yet, the module is
    compiled as without -g's functions (inlined), as before, rather than refused."""
    keep = keeps_functions(tree, options)
    problem = abi.narrow_type_problem(tree, whole_program, keep)
    if problem:
        raise CompileError(problem, severity="fatal")
    try:
        return compile_module(lower_checked(tree, whole_program, keep), arch, options, filename)
    except CompileError as err:
        if not keep or "not supported yet" not in str(err):
            raise
        first = err
    for name in REPORTS:
        if isinstance(options.get(name), dict):
            options[name].clear()
    try:
        return compile_module(lower_checked(tree, whole_program, False), arch, options, filename)
    except CompileError as err:
        if "not supported yet" in str(err):
            raise first from None      # what the -g compile met first, not the fallback's own gap
        raise
