"""The compilation target: every per-architecture fact the stages need, as one table.

A `Target` is built once from `-arch` (`target("sm_90a")`) and passed explicitly to the
stages: encoding family, parameter bank, register limits, the opcode choices ptxas makes
per arch, the latency table, cubin facts. Every value here was read from cubins that ptxas
13.5.37 writes (tests/test_cubin.py checks the cubin facts against the oracle), or from
NVIDIA's public PTX/CUDA documentation. Nothing outside this module tests `arch == ...`.
"""
from __future__ import annotations

import functools
from dataclasses import replace

from ptx2sass.records import dataclass


class UnknownArch(ValueError):
    """An architecture name this project has no facts for."""


@dataclass(frozen=True)
class Target:
    name: str                     # "sm_89" (an "a"/"f" suffix is in `variant`)
    sm: int                       # 89
    family: str                   # encoding family: "turing", "ampere", "hopper", "blackwell"
    e_flags: int                  # ELF header flags ptxas writes (OSABI 0x41, ABI version 8)
    param_base: int               # first kernel-parameter byte in constant bank 0
    global_desc_offset: int | None  # c[0x0][...] holding the default global-memory descriptor
    stack_pointer_offset: int     # c[0x0][...] holding the initial stack pointer
    max_registers: int            # per thread, RZ excluded
    max_param_bytes: int          # kernel parameter space (CUDA 12.1+, Volta and later)
    regcount_in_text_info: bool   # `.text.<k>` sh_info carries `regcount << 24` (before sm_90)
    shared_reserved: bool         # ptxas emits `.nv.shared.reserved.0` / Mercury sections (sm_100+)
    phdr_style: str               # program-header scheme (elf_layout.default_segments)
    shoff_align: int              # alignment of the section header table's file offset
    kernel_sw_war: int | None     # SW_WAR value ptxas writes into every `.nv.info.<k>`
    kernel_nval_35: bool          # ptxas writes attribute 0x35 (NVAL, unnamed) per kernel
    # Launch facts the driver places in constant bank 0 (read by special registers), by
    # name -> c[0x0][offset]: dynamic_smem (%dynamic_smem_size), nsmid, gridid (64-bit),
    # envreg (%envreg0, then 4 bytes each), reserved_smem (the reserved shared bytes that
    # %total_smem_size leaves out), reserved_smem_end, reserved_smem_1, graph_exec (64-bit),
    # param_window / const_window (64-bit generic bases of those windows, for cvta),
    # aggr_smem_limit (what %aggr_smem_size caps SR_SMEMSZ at, sm_90); as
    # (name, offset) pairs, so that a Target stays hashable (read it with dict())
    driver_cbank: tuple[tuple[str, int], ...] | None
    max_warps_per_sm: int | None  # %nwarpid, an immediate in ptxas's code
    # Registers per thread a warp's allocation grows by (a warp takes registers in units of
    # 256: CUDA C++ Programming Guide, occupancy calculator): counts within one unit give
    # the same occupancy.
    register_unit_per_thread: int = 8
    # (threads, CTAs) an SM holds at once, as ptxas 13.5 checks `.maxntid` (in whole warps)
    # times `.minnctapersm` against them: past either it warns and ignores .minnctapersm
    # (probed: sm_75 and sm_107 1024/16, sm_80/90/100/103 2048/32, sm_86/87 1536/16, sm_89/110/120/121
    # 1536/24; the CUDA C++ Programming Guide's per-compute-capability limits)
    resident_limits: tuple[int, int] = (2048, 32)
    # The encoding table the codec reads this arch's words with (None: none probed yet).
    encoding_table: str | None = None
    # URZ's number in those words (encoder/fields.py Numbering): 63 where uniform-register
    # fields are 6 bits, 255 in the blackwell table's 8-bit fields (every Target reading one
    # table agrees: `table_uniform_zero`)
    uniform_zero_register: int = 63
    # The code generator supports the arch (its isel choices below are known).
    codegen: bool = False
    # ALU instructions read `c[bank][offset]` operands in place. ptxas for sm_90 never writes
    # one (constants come through LDC into R or ULDC into UR), and the hopper table holds
    # only forms ptxas writes: there the selector loads every constant with LDC first.
    alu_constants: bool = True
    # The largest branch body (PTX instructions that become SASS ones) ptxas predicates
    # rather than branches around (opt/if_convert.py): its limit is 20 SASS instructions on
    # every arch; sm_90's ptxas also reloads a kernel parameter inside the body (`@!P0 LDC.64`),
    # so it branches around a body one PTX instruction smaller (probed sm_75-sm_120).
    predicated_body_limit: int = 19
    # Opcodes the selector's sm_8x choice is spelled differently on this target, with the
    # same operands: (sm_8x opcode, target opcode) pairs. sm_90: integer min/max is VIMNMX
    # (no IMNMX form), a global reduction REDG (no RED form).
    renamed_opcodes: tuple[tuple[str, str], ...] = ()
    # Global/generic memory operands print their descriptor (`desc[UR4][R2.64]`): nvdisasm
    # shows it on sm_90, so the word's field is an operand the code generator writes
    memory_descriptor_operand: bool = False
    # The relocation of a CALL.ABS target (type, whether in .rela with addend 0), as ptxas
    # writes it: R_CUDA_ABS47_34 in .rel on sm_75-89, type 0x4b in .rela from sm_90 (the
    # sm_8x type patches other bits there: the H200 faulted on -g calls, GPU run 14)
    call_relocation: tuple[int, bool] = (0x3A, False)
    # The relocations of the halves of a `.func`'s address (`32@lo(f)` / `32@hi(f)`) under
    # -c, with or without -g (ptxas 13.5.37): R_CUDA_ABS32_LO/HI_32 on sm_75-89; from sm_90
    # 0x70/0x71 (the unified function table's entry, `__UFT`); a whole program's (-g) are
    # R_CUDA_ABS32_LO/HI_32 on every target
    function_address_relocation: tuple[int, int] = (0x38, 0x39)
    # Relocatable output: a call through a pointer (`CALL.ABS.NOINC R`), whose value is an
    # entry of the unified function table from sm_90, is relocated (symbol, type, addend 0):
    # `CALL.ABS.NOINC R2 `(__UFT_OFFSET)`, type 0x72 (ptxas 13.5.37); None: no relocation
    pointer_call_relocation: tuple[str, int] | None = None
    # The relocation of a read of a module `.const` variable in relocatable output (-c), as
    # ptxas 13.5.37 writes it: (type for ULDC/LDCU, type for the others, whether the word
    # keeps bank 3 (the relocated field is then the offset alone), whether always `.rela`).
    # sm_75-89: R_CUDA_CONST_FIELD19_40 (0x40) over bank and offset, in `.rel` where the
    # offset into the variable is 0 and `.rela` with it as addend otherwise; sm_90:
    # R_CUDA_CONST_FIELD21_38 (0x42), `.rela`; sm_100/120: ULDC's LDCU takes
    # R_CUDA_CONST_FIELD22_37 (0x73)
    const_relocation: tuple[int, int, bool, bool] = (0x40, 0x40, False, False)
    # The e_flags bit (bits 0-7) by which ptxas 13.5 says a cubin carries the Mercury form of
    # its code (`.nv.merc.*` copies of the tables, `.nv.capmerc.text.<f>`): 0x2 on sm_100
    # and later, where ptxas writes them into every cubin; 0 before. We write no Mercury
    # sections, so our relocatable output (-c) has SASS_ONLY_E_FLAG (0x4, sm_75..sm_90's
    # value and the one nvlink 13.5 writes when it links objects without Mercury) in its
    # place: nvlink crashes on an object with 0x2 and no Mercury sections, and links one
    # with 0x4 alone or with ptxas's objects (docs/STATUS.md, branch merc27)
    mercury_e_flag: int = 0
    # Which loops whose only divergence is their own exit get a YIELD (ptx2sass/loop_yield.py,
    # read off ptxas 13.5): "divergent" (sm_75-89) every such loop with an atomic or a
    # strong access; "waits" (sm_90 and later) only one with a strong store, or whose
    # divergent exit depends on what its atomics or strong loads read (and an enclosing
    # loop's divergent exit is no divergent region for the loops inside it)
    loop_yield_own_exit: str = "divergent"
    # WARPSYNC takes an immediate mask (sm_8x); sm_90's table has only `WARPSYNC R` and
    # `WARPSYNC.ALL`, what ptxas writes there
    warpsync_immediate: bool = True
    # barrier[.cta].sync without .aligned (diverged threads may reach it): ptxas 13.5 writes
    # BAR.SYNC on sm_7x/8x, BAR.SYNC.DEFER_BLOCKING on sm_90 and later
    nonaligned_barrier_defers: bool = False
    # the same barriers (and barrier.arrive) where the warp may be diverged: ptxas 13.5 calls
    # a routine that makes the warp meet on sm_7x/8x, and on sm_90 and later runs the BAR in
    # a WARPSYNC.COLLECTIVE section of its own (ptx2sass/barrier_routine.py)
    nonaligned_barrier_collective: bool = False
    # how ptxas tests for a diverged warp before such a routine: "conv" (sm_8x: `BRA.CONV
    # ~URZ` to the plain instruction) or "div" (sm_75, whose BRA takes no uniform register:
    # `BRA.DIV` to the call, placed after the function's code)
    diverged_warp_test: str = "conv"
    # Shared-window addresses are cluster addresses (sm_90): a variable's address carries the
    # CTA's rank in its cluster from bit 24 (SR_CgaCtaId << 24, as ptxas computes every
    # one) and the generic form of a shared address is SR_SWINHI:address; sm_8x's generic
    # form adds the window base in c[0x0][0x18]
    cluster_shared_addresses: bool = False
    # a fence beyond the CTA (MEMBAR.*.GPU/SYS; ERRBAR) also drains the cluster's error
    # barrier: ptxas writes CGAERRBAR after each ERRBAR of a fence from sm_90 on
    cga_errbar: bool = False
    # fp8 mma.sync has a tensor-core instruction (QMMA: sm_89, sm_120); sm_90/sm_100 have none
    # (ptxas widens the fp8 fragments to f16 and uses HMMA)
    fp8_mma: bool = True
    # QMMA's A and B carry .ROW/.COL (sm_89; sm_120's QMMA has no layout suffixes)
    qmma_layout_suffixes: bool = True
    # kind::f8f6f4 mma.sync with fp6/fp4 operands (QMMA .E3M2/.E2M3/.E2M1) and the block-scaled
    # kinds (QMMA.SF for kind::mxf8f6f4, OMMA.SF for kind::mxf4/mxf4nvf4): sm_120/sm_121 (ptxas
    # 13.5 takes them on the a/f targets only, which the frontend checks)
    narrow_float_mma: bool = False
    # our encoding tables hold HMMA.1684.F32.TF32 (what ptxas writes for wmma m16n16k8 tf32;
    # sm_90's probed from tools/isa_seeds/tf32_sm90.ptx, sm_120's from tf32_sm120.ptx)
    tf32_k4_mma: bool = True
    # the sub-byte tensor-core shapes of sm_75/8x: IMMA.8832 (s4/u4 m8n8k32), IMMA.16832/16864
    # .S4/.U4 (sm_8x), BMMA.88128/168128/168256 (b1 .xor/.and.popc; sm_75 .xor only); sm_90+
    # computes s4/u4 on unpacked nibbles and b1 .xor as two .and (ptx2sass/mma_forms.py)
    mma_8x8_tiles: bool = True
    # b1 mma operations with a BMMA of their own (sm_8x: .xor and .and .popc; sm_90's ptxas
    # writes BMMA .AND.POPC, and .xor as other code, not generated)
    binary_mma_ops: tuple[str, ...] = ("xor", "and")
    # IMMA.8816 (s8/u8 mma.m8n8k16) is in the table; sm_100/120's ptxas writes the m16n8k16
    # IMMA with the upper rows' C zero instead (ptx2sass/mma_forms.py)
    integer_mma_8x8: bool = True
    # texture/surface instructions name a bound handle by its constant-bank slot
    # (`TEX.SCR.LL ..., 0x0, slot, 2D`) or take it in a register (`.B`: sm_75..sm_89);
    # sm_90+'s ptxas loads the handle's low word into a uniform register (`ULDC UR4, c[0x0]
    # [slot]`, a texture's UR pair with URZ above it) and names that: `UR4, 0x0` (sm_90) or
    # `UR4` alone (`texture_handle_bank` False: sm_100+, but for TXQ); a handle that differs
    # per lane goes through an R2UR loop over the lanes' values, and the sources are never
    # split `.SCR` (isel/texture.py)
    texture_slot_handles: bool = True
    texture_handle_bank: bool = True
    # the encoding table holds ptxas's texture/surface forms for the target (every target
    # since the blackwell table gained TEX.LL in each geometry: ptxas 13.5 writes the same
    # texture/surface instructions for sm_100, sm_103 and sm_110)
    texture_unit: bool = True
    # mma.m8n8k4 with f16 inputs has no tensor-core tile (sm_80+): ptx2sass/mma_quadpair.py
    # computes it from fragments gathered with SHFL, as ptxas does; sm_75 has the tile
    # (`quadpair_mma_steps`)
    quadpair_mma_shuffled: bool = True
    # mma.m8n8k4 with f16 inputs is HMMA.884.<D>.<C>.STEP0..n on the tensor cores (sm_75)
    quadpair_mma_steps: bool = False
    # txq/suq descriptor reads index the driver's table by the handle's low 20 bits
    # (sm_75..sm_89's ptxas masks them; sm_90's takes the word whole)
    descriptor_index_mask: int | None = 0xFFFFF
    # a kernel parameter's alignment counts in bank addresses (param_base + offset: sm_75..
    # sm_90's ptxas puts an `.align 64` parameter after a u64 at 0x30 on sm_90, bank 0x240)
    # or in offsets from param_base (sm_100+: its `.align 256` parameter after a u64 is at
    # 0x100, bank 0x480); ptx2sass/variables.py place_kernel_params
    params_aligned_in_bank: bool = True
    # prefetch[.const|.param].tensormap selects UTMACCTL.PF (sm_90+; ptxas 13.5 writes the
    # same word for sm_90 and every blackwell arch)
    tensormap_prefetch: bool = False
    # module `.texref` slots are numbered across the kernels (sm_90's ptxas: a kernel's
    # texture slots follow unused ones for the textures of the kernels before it)
    module_texture_slots: bool = False
    # a `tex` without `.level` is TEX.LL at level -32.0 (sm_75..sm_100); sm_120's ptxas
    # writes a TEX without a level operand
    texture_explicit_lod: bool = True
    # add.sat/sub.sat.s32 as one `VIADD.S32.ISAT d, a, [-]b` (sm_120's ptxas); elsewhere the
    # wrapped sum, two PLOP3 on the sign bits and two SEL
    saturating_viadd: bool = False
    # match.all with known members is one MATCH.ALL (sm_80+); sm_75's ptxas writes MATCH.ANY
    # and compares the equal lanes with the member mask (the turing table has no MATCH.ALL)
    match_all_instruction: bool = True
    # sad's |a - b| + c is one VABSDIFF (sm_75..sm_110); sm_120's ptxas (no video unit) writes
    # max - min + c with IMNMX/VIMNMX and IADD3
    absdiff_instruction: bool = True
    # the DMMA shape token of f64 mma.m8n8k4 ("884" on sm_8x, "8x8x4" on sm_90; "" none)
    f64_mma: str = "884"
    # sparse mma (`mma.sp`: HMMA.SP/IMMA.SP with a metadata register and selector; sm_90's
    # cubins also record them in EIATTR_SPARSE_MMA_MASK); not in the sm_75/sm_120 tables
    sparse_mma: bool = True
    # sparse s4/u4 mma as one IMMA.SP.16864/168128 (sm_8x); ptxas 13.5 calls a routine
    # (`__cuda_sm_9x_mma_sub_byte_internal_sparse_*`) on sm_90+, where ptx2sass/mma_forms.py
    # writes two s8/u8 IMMA.SP of the even and odd nibbles instead
    sparse_4bit_mma: bool = True
    # LEPC names its target (`LEPC R20, `(.L_x_0)`: the 64-bit address of the label, as ptxas
    # writes a system call's return address on sm_90); sm_8x's LEPC reads its own address
    lepc_label: bool = False
    # mbarrier objects are shared-memory words updated by atomics (ATOMS.ARRIVE.64,
    # ARRIVES.LDGSTSBAR.64: sm_8x, isel/mbarrier.py)
    mbarrier_atomics: bool = True
    # mbarrier objects live in the SYNCS unit (sm_90: SYNCS.EXCH/ARRIVE.TRANS64/PHASECHK,
    # ARRIVES.LDGSTSBAR.64.TRANSCNT/ARVCNT; isel/mbarrier_syncs.py), with transaction counts
    mbarrier_syncs: bool = False
    # mbarrier.init with a count that may differ between lanes is a plain STS.64 of the two
    # words, then FENCE.VIEW.ASYNC.S and SYNCS.CCTL.IVALL (sm_100/sm_120); sm_90 loops over
    # the lanes' distinct counts with SYNCS.EXCH.64
    mbarrier_init_store: bool = False
    # cp.async.bulk / cp.reduce.async.bulk / the L2 bulk prefetch on the bulk-copy unit
    # (UBLKCP/UBLKRED/UBLKPF in ELECT or R2UR loops, isel/bulk_copy.py; forms probed from
    # tools/isa_seeds/bulk_copy_sm90.ptx and bulk_copy_sm120.ptx: the same on sm_90..120)
    bulk_copy_unit: bool = False
    # clusterlaunchcontrol.try_cancel as UGETNEXTWORKID.SELFCAST in the bulk copies' ELECT
    # loop (sm_100+, isel/cluster_launch_control.py)
    cluster_launch_control: bool = False
    # cp.async.bulk.tensor's .multicast::cluster as UTMALDG.MULTICAST (sm_90, sm_100..110;
    # sm_120's ptxas writes the plain UTMALDG and a call checking the CTA mask instead:
    # refused there, isel/tensor_copy.py)
    tensor_multicast: bool = False
    # ... and its `.cta_group::2` and `im2col::w::128` (UTMALDG/UTMAPF .2CTA, .W128: the
    # blackwell table's sm_100 forms; sm_107a's ptxas takes them, our sm_107 reads sm_120's
    # forms and refuses them)
    tensor_copy_sm100_modes: bool = False
    # wgmma.* (sm_90a): WARPGROUP.ARRIVE / HGMMA, QGMMA, IGMMA, BGMMA on gdesc[UR8] /
    # WARPGROUP.DEPBAR.LE gsb0 (isel/wgmma.py; forms from tools/wgmma_forms.py's kernels)
    warpgroup_mma: bool = False
    # st.bulk (sm_100+): UMEMSETS.64 [URa], URZ, URn of n = size / 8 words at a shared::cta
    # address (a generic one's low word), once per distinct (address, size) of the lanes
    # (isel/bulk_copy.py; forms from tools/isa_seeds/st_bulk_blackwell.ptx)
    shared_memset: bool = False
    # 128-bit atom.cas/exch (`.b128`): ATOMG/ATOM/ATOMS .CAS/.EXCH.128 on a register quad
    # (sm_90+, forms probed from tools/isa_seeds/issue15_sm90_forms.ptx / _sm120_forms.ptx)
    atomics_128: bool = False
    # atom/red `.v2/.v4/.v8` of f32/f16/bf16(x2): one ATOMG/ATOM/REDG typed F32x2/x4,
    # F16x2..x8, BF16x2..x8 (sm_90+, forms in the hopper/blackwell tables; ptxas 13.5)
    vector_atomics: bool = False
    # a shared-memory atomic with .acquire/.acq_rel beyond the CTA is followed by CCTL.IVALL
    # (ptxas 13.5 on sm_90; on sm_8x it writes no fence after ATOMS)
    shared_acquire_invalidates: bool = False
    # bf16 -> integer cvt is one F2I with a .BF16 source (`F2I.S16.BF16.TRUNC.NTZ`, sm_90:
    # PTX allows it from sm_90 on; probed from tools/isa_seeds/cvt_bf16_int_sm90.ptx; the
    # blackwell table also from tools/isa_seeds/cvt_int_bf16_blackwell.ptx)
    bf16_integer_converts: bool = False
    # shared-window accesses scale their base register (`LDS R0, [R2.X4+0x10]` for a
    # `shl.b32 i, 2` added to a variable's address: sm_75..sm_89); ptxas for sm_90 and sm_120
    # computes such addresses with LEA/shifts instead
    scaled_shared_index: bool = True
    # `atom.shared.add.u32` of 1 whose result is unused is ATOMS.POPC.INC.32 (the shared
    # unit adds the number of lanes naming each word; sm_80+); sm_75 has no such form
    shared_popc_increment: bool = True
    # an atomic add/min/max/and/or/xor on an address the same in every lane, its result
    # unread, is done once by the warp's lowest active lane (VOTEU.ANY + UFLO picks it):
    # with the value × the lane count (POPC) for a uniform add, else the lanes' values
    # combined by REDUX (`warp_reduce_atomics`, sm_80+; sm_75 has no REDUX)
    warp_aggregated_atomics: bool = True
    warp_reduce_atomics: bool = True
    # the driver's param window base (driver_cbank "param_window") is the address of the
    # first parameter (sm_90: `cvta.param` adds it alone); sm_8x's is the bank's, so cvta
    # adds the parameters' offset in the bank (param_base) too
    param_window_at_params: bool = False
    # I2FP.F32.S32/U32 and F2IP.U8.F32 (packed int <-> float converts, sm_86+); sm_80's
    # ptxas writes I2F / F2I.U8
    packed_converts: bool = True
    # cvt.{rn,rz}.{f16,bf16}.f32 is the packing convert F2FP into the low half (sm_80+; a NaN
    # becomes the canonical one); sm_75's ptxas writes F2F.F16.F32
    packed_half_converts: bool = True
    # nvdisasm spells F2FP's types (`F2FP.F16.F32.PACK_AB`, `F2FP.BF16.F32…`) from sm_89;
    # sm_80/86/87's reads `F2FP.PACK_AB` / `F2FP.BF16.PACK_AB` for the same words
    f2fp_type_names: bool = True
    # HADD2.F32 reads a register's high half in place (`HADD2.F32 d, -RZ, w.H1_H1`: cvt.f32.f16
    # of a word's high half, isel/high_halves.py, as ptxas writes it); every family's table
    # encodes the form (tests/test_high_halves_target.py asks each arch's table)
    f32_from_high_half: bool = True
    # sched/latency/<latency>.json: fixed latencies and variable-latency opcodes
    latency: str = "ampere"
    # `.nv.info.<k>` layout: "ampere" (sm_7x/8x) or "hopper" (sm_90: SPARSE_MMA_MASK,
    # 0x5f = 0x101, CBANK/PARAM records last, SW_WAR 8, NVSAL_SW_WAR, PREEXIT_USED;
    # no CTAIDZ_USED) -- see cubin_builder.KERNEL_ATTRIBUTE_ORDER
    cubin_style: str = "ampere"
    # Shared memory the driver reserves at the start of every block's window (sm_90: 1 KiB,
    # `.nv.shared.reserved.0`): a kernel's `.shared` variables start after it and its
    # `.nv.shared.<k>` section covers it
    reserved_shared_bytes: int = 0
    # %nwarpid is bits 8..15 of SR_VIRTCFG (sm_90, as ptxas reads it), not an immediate
    nwarpid_virtcfg: bool = False
    # `ptxas -v` reports the constant banks' sizes (`556 bytes cmem[0]`); not for sm_90
    verbose_cmem: bool = True
    # --- sm_75 (Turing) spellings (isel/target_forms.py's `apply_spelling`) ---
    # a 64-bit address prints `.64` on its base register (`[R2.64]`, sm_80+); sm_75's `.E`
    # modifier alone says the address is 64-bit (`LDG.E.SYS R0, [R2]`)
    address_width_suffix: bool = True
    # the scope a global/generic access without one is spelt with (sm_75: `LDG.E.SYS`,
    # `ST.E.SYS`; sm_8x prints none)
    default_memory_scope: str = ""
    # (opcode or "*", sm_8x modifier, the target's; "" drops it): sm_75 spells the CTA
    # scope `.CTA` (sm_8x `.SM`) and has no `BAR.SYNC.DEFER_BLOCKING`
    renamed_modifiers: tuple[tuple[str, str, str], ...] = ()
    # (opcode, modifier the target writes first): sm_75's shared load is `LDS.U`
    leading_modifiers: tuple[tuple[str, str], ...] = ()
    # the tensor cores take k = 16 in one instruction (HMMA.16816/IMMA.16816, sm_80+); sm_75's
    # largest are HMMA.1688/IMMA.8816, which ptxas chains for wmma (ptx2sass/mma_forms.py)
    mma_k16: bool = True
    # a generic/global access whose address is a kernel parameter's pointer (+ an offset)
    # reads it from a uniform pair, `ULDC.64 URx, c[0x0][p]` then `LD.E.SYS R0, [URx+0x4]`
    # (sm_75's ptxas: Turing's memory forms take a uniform base and it has no memory
    # descriptor); no vector pair holds the pointer
    uniform_param_addresses: bool = False
    # --- end sm_75 ---
    # `-arch=sm_90a`: the arch-specific ("accelerated") variant; same code, `.nv.compat`
    # records ACCELERATOR_TARGET 1
    variant: str = ""
    # --- sm_120 / sm_100 (issue 18 phase 2) ---
    # c[0x0][...] of %ntid.x and %nctaid.x (y and z follow, 4 bytes apart): sm_7x..sm_90 keep
    # the launch dimensions first in bank 0; sm_120 at 0x360 and 0x370 (ptxas 13.5)
    block_dims_cbank: tuple[int, int] = (0x0, 0xC)
    # c[0x0][...] of the local window's 64-bit generic base (cvta.local; the emulator
    # writes it there)
    local_window_offset: int = 0x20
    # spellings of nvdisasm for sm_120 (encoder/target_spelling.py): IADD3 shows both carry
    # outputs; VIMNMX shows .S32
    iadd3_carry_outputs: bool = False
    # a sum of two is the two-input IADD (sm_120); sm_100 has no IADD and keeps IADD3
    two_input_iadd: bool = False
    # `cvt.s64.s32` + `add.s64` as IADD3 + `LEA.HI.X.SX32` (the sign word added by the LEA):
    # ptxas's choice up to sm_110; sm_120 has no LEA.HI.X.SX32 form in ptxas 13.5's code
    # (it writes SHF.R.S32.HI for the sign word and IADD.64)
    sign_extended_lea: bool = True
    # two zeroed halves of an aligned register pair as one `CS2R Rd, SRZ` (ptxas 13.5 on
    # sm_75, 80, 86, 89, 90, 120: Triton accumulators, 64-bit zeros; sched.zero_pairs)
    cs2r_zero_pairs: bool = True
    # ATOMS.CAST.SPIN says whether it stored in a predicate (`ATOMS.CAST.SPIN P0, [R], b, c`,
    # ptxas's form from sm_100), not in a register compared with 1
    cas_spin_predicate: bool = False
    # BRA.U branches on a uniform predicate (`BRA.U !UP0, L`: ptxas's setmaxnreg.inc retry,
    # sm_100 and later); sm_90 copies it into P0 with PLOP3 and branches on that
    uniform_predicate_branch: bool = False
    # integer values uniform by ptxas's rule (every source a parameter, %ctaid, an immediate
    # or another such value) computed on the uniform datapath: UIADD3/UIMAD/ULEA/USHF/ULOP3/
    # UISETP/USEL/UMOV into URs and UPs (ptx2sass/isel/uniform_datapath.py)
    uniform_datapath: bool = False
    # ... and the pass on without `--uniform-datapath=true` (ptxas 13.5 computes a row base
    # from %ctaid and parameters with S2UR/UIMAD.WIDE/USHF/UIADD3 on sm_89 as on sm_90/100/120;
    # on by default only where it was measured: branch q100_28, triton on sm_90/100/120)
    uniform_datapath_default: bool = False
    # a shared-memory access adds a uniform register to its address (`LDS.U8 R49,
    # [R32+UR8+0x660]`, `[UR8+0x10]`): ptxas 13.5 keeps the CTA's shared window base
    # (S2UR SR_CgaCtaId; ULEA) in a UR on sm_90/100/120 and each lane's offset in an R
    # (isel/shared_addresses.py `fold_uniform_shared_terms`; branch q100_30)
    shared_uniform_address_term: bool = False
    # SR_CgaCtaId read by S2UR when the value it feeds is uniform (the shared window base above)
    uniform_cga_rank: bool = False
    # operand fields (opcode, the field's lowest bit) that name a handle or descriptor, not a
    # value: the texture/surface unit's uniform-register slots on sm_90+. Table forms are matched
    # by operand shape, so a uniform register where a coordinate was could take such a slot;
    # the uniform datapath never moves a value there (`codec.slots_taken`)
    handle_fields: tuple[tuple[str, int], ...] = ()
    # LDGMC's operation for multimem.ld_reduce.add.acc::f32 of half types (ptxas 13.5's
    # spelling: `LDGMC.E.F32ADD.BF16x2` on sm_90, `.HPADD.` on sm_100)
    multimem_f32_accumulate: str = "F32ADD"
    # ... and for multimem.ld_reduce.add.acc::f16 of fp8 types (sm_100+ a/f targets only:
    # ptxas 13.5 writes `LDGMC.E.HPADD.E4M3x16.RN` on sm_100a/sm_120a)
    multimem_f16_accumulate: str = "HPADD"
    minmax_type_shown: bool = False
    # VIMNMX names two predicate outputs (`VIMNMX R0, PT, PT, R0, R4, PT`: sm_100)
    minmax_predicate_outputs: bool = False
    uniform_move_is_mov: bool = False
    # the size of `.nv.shared.reserved.0` (sm_120: 64 bytes, `.nv.reservedSmem.offset0` after
    # them; sm_90: empty) and the VRC_CTA_INIT_COUNT record's value in every `.nv.info.<k>`
    # (sm_120: 0; None: no record)
    reserved_shared_section_bytes: int = 0
    vrc_cta_init_count: int | None = None
    # the uniform warp reduction CREDUX (`redux.sync.min/max{.abs}{.NaN}.f32`, sm_100a/sm_103a:
    # the blackwell table's sm_100 forms); the frontend refuses the f32 forms elsewhere
    credux: bool = False
    # tcgen05's tensor memory (sm_100a/f, sm_103a/f, sm_110a/f): LDTM/STTM, the UTCATOMSWS
    # allocator and its bitmaps in the reserved shared words (isel/tcgen05.py)
    tensor_memory: bool = False
    # VRC_CTA_INIT_COUNT of a kernel using tcgen05 (ptxas 13.5 sm_100a: 0x80, the
    # UVIRTCOUNT.DEALLOC.SMPOOL count of relinquish_alloc_permit)
    tmem_vrc_cta_init_count: int = 0x80
    # the arch whose own forms (the `"arch"` of a form in the family's table) this one reads
    # and writes: ptxas 13.5 writes the same words for sm_103 as for sm_100 (but for its own
    # MUFU.EX2.F16x2), for sm_121 as for sm_120 (None: its own name)
    own_forms: str | tuple[str, ...] | None = None
    # one MUFU.EX2.F16x2 / MUFU.EX2.BF16x2 for `ex2.approx.f16x2` / `ex2.approx.ftz.bf16x2`
    # (ptxas 13.5 on sm_103 only; elsewhere two half MUFUs joined by PRMT, and tanh stays so
    # on sm_103 too)
    packed_ex2: bool = False
    # (opcode, modifier) of the table's own/primary forms that this arch's nvdisasm names not
    # (it prints the bits as `.???<n>`) and ptxas never writes for it: the codec refuses a word
    # that reads so and the text (sm_110: F2FP `.RS`, bit 81, printed `.???4`; `cvt.rs` is
    # sm_100a/sm_103a only)
    unnamed_modifiers: tuple[tuple[str, str], ...] = ()
    # `.nv.compat` records ptxas 13.5 adds to sm_90's on this arch (sm_100, sm_120; sm_103,
    # sm_110 and sm_121 write sm_90's): record 0x07 = 0x0101, record 0x0b's 8-byte value per
    # variant suffix ("", "a", "f"), and for "a" a record 0x05 after ISA_CLASS (sm_100a: 5)
    compat_record_07: bool = False
    # sm_110 (Thor): ptxas reserves `gb10b_war_bytes` more shared bytes after the reserved
    # words, as the weak object `__nv_reservedSMEM_gb10b_war_var` (`.nv.shared.reserved.0`
    # 16-byte aligned), and writes EIATTR_RESERVED_SMEM_USED (0) in every kernel's `.nv.info`
    gb10b_war_bytes: int = 0
    compat_0b_value: tuple[tuple[str, int], ...] = ()
    compat_accelerator_05: int | None = None
    # `.nv.compat` record 0x0d's value (0x101; sm_107: 0x103) and the unnamed 0x5f record's
    # bits of every kernel's `.nv.info` beyond sm_90's 0x101 (sm_107: 0x2, ptxas 13.5.37)
    compat_0d_value: int = 0x101
    kernel_5f_extra_bits: int = 0
    # every function's `.nv.info` ends with the unnamed record 0x67 (BVAL 0) but in -c
    # output (sm_107; -g, -Ofc, -ewp and executables alike)
    kernel_record_67: bool = False
    # a kernel using shared memory: ptxas 13.5 names the reserved-shared cap symbol
    # `.nv.reservedSmem.cap` (a weak object of this value: sm_100+); sm_90 leaves a nameless
    # internal symbol there (None)
    reserved_smem_cap: int | None = None
    # Driver words kept once per cluster-size entry (sm_100+): name (as `driver_cbank`'s;
    # "envreg" for %envreg0..15) -> c[0x0][offset] of entry 0, each next entry
    # `cluster_size_stride` bytes on; ptxas 13.5 reads them as CS2R.32 R, SR_CgaSize;
    # IMAD R, R, stride, RZ; LDC c[0x0][R+offset]
    cluster_size_cbank: tuple[tuple[str, int], ...] = ()
    cluster_size_stride: int = 0

    @property
    def tmem_partition_offset(self) -> int:
        """Where ptxas 13.5 places tcgen05's partition (`__nv_reservedSMEM_tcgen05_partition`)
        in the shared window: after the reserved words and sm_110's workaround words (0x40 on
        sm_100/103, 0xc0 on sm_110)."""
        return self.reserved_shared_section_bytes + self.gb10b_war_bytes

    @property
    def full_name(self) -> str:
        """The name as `-arch` spells it ("sm_90a")."""
        return self.name + self.variant

    @property
    def accelerator_target(self) -> bool:
        """The arch-specific "a" variant (`sm_90a`: `.nv.compat` ACCELERATOR_TARGET 1), not
        the family-portable "f" one."""
        return self.variant == "a"


ArchInfo = Target       # the table's former name (callers not yet moved)


ELF_OSABI = 0x41          # "CUDA" OS ABI of CUDA 12.9+ toolkits
ELF_ABI_VERSION = 8
EM_CUDA = 190
# e_flags bit of a cubin whose code is SASS alone (no Mercury form): sm_75..sm_90 cubins,
# nvlink 13.5's output from objects without Mercury sections, our sm_100+ `-c` objects
SASS_ONLY_E_FLAG = 0x4


# Read off ptxas 13.5's code for `mov` of each special register on sm_80/86/87/89.
_AMPERE_DRIVER_CBANK = {"dynamic_smem": 0x2C, "gridid": 0x30, "envreg": 0x88, "nsmid": 0x10C,
                        "reserved_smem": 0x114, "reserved_smem_end": 0x120,
                        "reserved_smem_1": 0x124, "graph_exec": 0x130,
                        "param_window": 0x40, "const_window": 0x50,
                        # the driver's texture/surface descriptor tables (txq/suq fields
                        # other than the dimensions: isel/texture.py descriptor_query)
                        "texture_descriptors": 0x70, "surface_descriptors": 0x80,
                        # the parameter window's last byte, as an offset from param_window
                        # (isspacep.param's upper bound in ptxas's code)
                        "param_window_end": 0x12C}


def _info(sm: int, family: str, e_flags: int, param_base: int, gdesc: int | None,
          regcount_in_info: bool, reserved: bool, sw_war: int | None = None,
          nval_35: bool = False, driver_cbank: dict | None = None, max_warps: int | None = None,
          table: str | None = None, **choices) -> Target:
    return Target(name=f"sm_{sm}", sm=sm, family=family, e_flags=e_flags,
                  param_base=param_base, global_desc_offset=gdesc,
                  stack_pointer_offset=choices.pop("stack_pointer_offset", 0x28), max_registers=255, max_param_bytes=32764,
                  regcount_in_text_info=regcount_in_info, shared_reserved=reserved,
                  phdr_style="ampere" if sm < 90 else "hopper", shoff_align=8 if sm < 90 else 1,
                  kernel_sw_war=sw_war, kernel_nval_35=nval_35,
                  driver_cbank=tuple(sorted(driver_cbank.items())) if driver_cbank else None,
                  max_warps_per_sm=max_warps, encoding_table=table, **choices)


# Read off ptxas 13.5's code for `mov` of each special register, `cvta.const` and
# `cvta.param` on sm_90 (its param window base already points at the parameters: ptxas adds
# c[0x0][0x198] alone, see `param_window_at_params`).
_HOPPER_DRIVER_CBANK = {"dynamic_smem": 0x2C, "gridid": 0x30, "envreg": 0x40, "nsmid": 0x10C,
                        "reserved_smem": 0x114, "reserved_smem_end": 0x68,
                        "reserved_smem_1": 0x6C, "graph_exec": 0x190, "const_window": 0xD0,
                        "param_window": 0x198, "param_window_end": 0x1A0, "aggr_smem_limit": 0x13C,
                        "texture_descriptors": 0xF0, "surface_descriptors": 0x100,
                        # 1 in a cluster launch (ptxas's barrier.cluster tests it)
                        "cluster_launch": 0x140,
                        # the launch's cluster shape (x, y, z words), its float reciprocals,
                        # the grid in clusters, CTAs per cluster
                        "cluster_nctaid": 0x144, "cluster_rcp": 0x150, "nclusterid": 0x15C,
                        "cluster_nctarank": 0x188}


# What the code generator does differently on sm_90 (each read off ptxas's sm_90 output).
_HOPPER_CODEGEN = dict(codegen=True, predicated_body_limit=18, warpgroup_mma=True, tensormap_prefetch=True, tensor_multicast=True, mbarrier_atomics=False, mbarrier_syncs=True, bulk_copy_unit=True, atomics_128=True, vector_atomics=True, shared_acquire_invalidates=True, bf16_integer_converts=True, scaled_shared_index=False, nwarpid_virtcfg=True, alu_constants=False, renamed_opcodes=(("IMNMX", "VIMNMX"), ("RED", "REDG")),
                       memory_descriptor_operand=True, warpsync_immediate=False, nonaligned_barrier_defers=True, nonaligned_barrier_collective=True, lepc_label=True, fp8_mma=False,
                       loop_yield_own_exit="waits", call_relocation=(0x4B, True), function_address_relocation=(0x70, 0x71),
                       pointer_call_relocation=("__UFT_OFFSET", 0x72), const_relocation=(0x42, 0x42, True, True), mma_8x8_tiles=False, sparse_4bit_mma=False, f64_mma="8x8x4", binary_mma_ops=("and",), texture_slot_handles=False,
                       module_texture_slots=True, descriptor_index_mask=None,
                       cluster_shared_addresses=True, param_window_at_params=True, cga_errbar=True,
                       latency="hopper", uniform_datapath=True, uniform_datapath_default=True,
                       shared_uniform_address_term=True, uniform_cga_rank=True,
                       cubin_style="hopper", reserved_shared_bytes=0x400, verbose_cmem=False)


# the texture/surface unit's handle: a uniform register at bit 40 (sm_90, sm_100, sm_120), and the
# blackwell table's second, optional one at bit 48 (`TEX.LL R4, R6, R4, R18, UR4, 2D`)
_TEXTURE_UNIT = ("TEX", "TLD", "TLD4", "TXD", "TXQ", "SULD", "SUST", "SURED", "SUATOM")
_HOPPER_CODEGEN["handle_fields"] = tuple((op, 40) for op in _TEXTURE_UNIT)


# --- sm_120 (issue 18 phase 2): read off ptxas 13.5's sm_120 code for `mov` of each special
# register and cvta (tests/test_codegen_blackwell.py). %dynamic_smem_size, %envreg<n>,
# %aggr_smem_size and %reserved_smem_offset_end are read per cluster size there
# (`CS2R.32 SR_CgaSize; IMAD -0xa0; LDC c[0x0][R+0x2ac]`: `_BLACKWELL_PER_CLUSTER_SIZE`);
# %envreg16..31 are fixed words from 0xd0. %total_smem_size is SR_SMEMSZ - c[0x0][0x16c].
_BLACKWELL_PER_CLUSTER_SIZE = (("dynamic_smem", 0x2AC), ("aggr_smem_limit", 0x2BC), ("envreg", 0x250),
                               ("reserved_smem_end", 0x278), ("reserved_smem_1", 0x27C),
                               ("cluster_nctaid", 0x2A0), ("cluster_rcp", 0x2B0),
                               ("nclusterid", 0x2C0), ("cluster_nctarank", 0x2CC))
_BLACKWELL_DRIVER_CBANK = {"nsmid": 0x2D0, "gridid": 0x140, "reserved_smem": 0x16C, "envreg_16": 0xD0,
                           # txq/suq descriptor tables (ptxas 13.5 sm_100/sm_120: LDC.64 c[0x0][0x150])
                           "texture_descriptors": 0x150, "surface_descriptors": 0x160,
                           "graph_exec": 0x2E8, "const_window": 0x120,
                           "cluster_launch": 0x36C,   # 1 in a cluster launch (ptxas 13.5: LDCU + UISETP)
                           # the parameter window's base (at the parameters, as sm_90's) and
                           # last byte: ptxas 13.5's cvta.param/isspacep.param/prefetch.param
                           # on sm_100/sm_103/sm_110/sm_120
                           "param_window": 0x348, "param_window_end": 0x350}
# What the code generator does differently on sm_120: sm_90's choices, with the uniform
# constant load spelled LDCU (the blackwell table has no ULDC), the launch dimensions,
# stack pointer and local window at their sm_120 offsets, and sm_120's own latency table.
_BLACKWELL_CODEGEN = dict(_HOPPER_CODEGEN, predicated_body_limit=19, cluster_launch_control=True, handle_fields=tuple((op, bit) for op in _TEXTURE_UNIT for bit in (40, 48)),
                          warpgroup_mma=False, tensor_multicast=False, shared_memset=True, params_aligned_in_bank=False, texture_handle_bank=False, texture_explicit_lod=False, mbarrier_init_store=True, binary_mma_ops=(), sparse_mma=True,
                          integer_mma_8x8=False, saturating_viadd=True, fp8_mma=True, absdiff_instruction=False,
                          qmma_layout_suffixes=False, narrow_float_mma=True,
                          renamed_opcodes=(("IMNMX", "VIMNMX"), ("RED", "REDG"), ("ULDC", "LDCU")),
                          const_relocation=(0x73, 0x42, True, True), mercury_e_flag=0x2,
                          block_dims_cbank=(0x360, 0x370), local_window_offset=0x2F8,
                          stack_pointer_offset=0x37C, latency="blackwell",
                          iadd3_carry_outputs=True, two_input_iadd=True, sign_extended_lea=False, minmax_type_shown=True, uniform_move_is_mov=True,
                          cas_spin_predicate=True, uniform_predicate_branch=True, multimem_f32_accumulate="HPADD",
                          cluster_size_cbank=_BLACKWELL_PER_CLUSTER_SIZE, cluster_size_stride=-0xA0,
                          reserved_shared_section_bytes=0x40, vrc_cta_init_count=0, reserved_smem_cap=0x400,
                          uniform_zero_register=255)

# sm_100's: sm_120's but for its spellings, its own latency table and CREDUX
_SM100_CODEGEN = dict(_BLACKWELL_CODEGEN, tensor_multicast=True, tensor_copy_sm100_modes=True, texture_explicit_lod=True, two_input_iadd=False, sign_extended_lea=True, minmax_type_shown=False,
                      saturating_viadd=False, fp8_mma=False, narrow_float_mma=False, absdiff_instruction=True,
                      minmax_predicate_outputs=True, latency="blackwell_sm100", credux=True, tensor_memory=True,
                      compat_0b_value=(("", 0x09), ("a", 0x09), ("f", 0x09)), compat_accelerator_05=5)

# --- sm_75 (Turing) -----------------------------------------------------------------
# What the code generator does differently on sm_75 (each read off ptxas 13.5's sm_75 output).
# Read off ptxas 13.5's code for `mov` of each special register and cvta.const/param on
# sm_75: no reserved shared memory (%total_smem_size is SR_SMEMSZ itself; the
# %reserved_smem_offset_* registers are refused below sm_80), %current_graph_exec at 0x120.
_TURING_DRIVER_CBANK = {"dynamic_smem": 0x2C, "gridid": 0x30, "envreg": 0x88, "nsmid": 0x10C,
                        "graph_exec": 0x120, "param_window": 0x40, "const_window": 0x50,
                        "texture_descriptors": 0x70, "surface_descriptors": 0x80,
                        # isspacep.param's upper bound (ptxas: base + c[0x0][0x114])
                        "param_window_end": 0x114}
_TURING_CODEGEN = dict(diverged_warp_test="div", codegen=True, driver_cbank=_TURING_DRIVER_CBANK, max_warps=32, mma_k16=False,
                       tf32_k4_mma=False, sparse_mma=False, f64_mma="", binary_mma_ops=("xor",), latency="turing", address_width_suffix=False,
                       default_memory_scope="SYS",
                       renamed_modifiers=(("*", "SM", "CTA"), ("BAR", "DEFER_BLOCKING", "")),
                       leading_modifiers=(("LDS", "U"),), shared_popc_increment=False, match_all_instruction=False,
                       warp_reduce_atomics=False, quadpair_mma_shuffled=False,
                       quadpair_mma_steps=True, uniform_param_addresses=True)
# --- end sm_75 -----------------------------------------------------------------------


_TABLE = [
    #     sm  family       e_flags     param  gdesc  regcount-in-info  mercury  kernel WARs
    _info(75, "turing",    0x6004B04, 0x160, None,  True,  False, sw_war=1, table="turing", **_TURING_CODEGEN,
          resident_limits=(1024, 16), packed_converts=False, packed_half_converts=False, f2fp_type_names=False),
    _info(80, "ampere",    0x6005004, 0x160, 0x118, True,  False, nval_35=True, table="ampere", codegen=True,
          driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=64, packed_converts=False, f2fp_type_names=False,
          uniform_datapath=True),
    _info(86, "ampere",    0x6005604, 0x160, 0x118, True,  False, nval_35=True, table="ampere", codegen=True,
          driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=48, f2fp_type_names=False, uniform_datapath=True,
          resident_limits=(1536, 16)),
    _info(87, "ampere",    0x6005704, 0x160, 0x118, True,  False, sw_war=2, nval_35=True, table="ampere",
          codegen=True, driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=48, f2fp_type_names=False, uniform_datapath=True,
          resident_limits=(1536, 16)),
    _info(89, "ampere",    0x6005904, 0x160, 0x118, True,  False, table="ampere", codegen=True,
          driver_cbank=_AMPERE_DRIVER_CBANK, max_warps=48, uniform_datapath=True, resident_limits=(1536, 24)),
    _info(90, "hopper",    0x6005A04, 0x210, 0x208, False, False, sw_war=8, table="hopper",
          driver_cbank=_HOPPER_DRIVER_CBANK, **_HOPPER_CODEGEN),
    # sm_100 (B200): sm_120's cubin facts, constant-bank words and section layout (ptxas
    # 13.5's sm_100 and sm_120 cubins of the same kernel match there, but for SW_WAR: 8 on
    # sm_100, as on sm_90); sm_100's own forms
    # are the blackwell table's `"arch": "sm_100"` ones; no two-input IADD
    _info(100, "blackwell", 0x6006402, 0x380, 0x358, False, True, table="blackwell", sw_war=8,
          driver_cbank=_BLACKWELL_DRIVER_CBANK, **_SM100_CODEGEN, compat_record_07=True),
    # sm_103 (B300): sm_100's code, cubin facts and `.nv.info` records (ptxas 13.5); its
    # nvdisasm prints UTCOMMA's 16-element scale blocks (scale_vec::4X / block16) `.BLOCK16`
    # where sm_100's prints the same bits `.4X`
    _info(103, "blackwell", 0x6006702, 0x380, 0x358, False, True, table="blackwell", sw_war=8,
          driver_cbank=_BLACKWELL_DRIVER_CBANK, **dict(_SM100_CODEGEN, compat_0b_value=(), compat_accelerator_05=None,
                                                       renamed_modifiers=(("UTCOMMA", "4X", "BLOCK16"),),
                                                       packed_ex2=True),
          own_forms=("sm_103", "sm_100")),
    # sm_110 (Thor): sm_100's constant-bank words and code (ptxas 13.5 writes IADD3 where it
    # writes VIADD for sm_100; nvdisasm reads sm_100's forms alike) but integer min/max, which
    # is sm_8x's IMNMX (sm_110's nvdisasm rejects VIMNMX), sm_90's `.nv.compat`,
    # and the GB10B workaround's reserved shared bytes
    _info(110, "blackwell", 0x6006E02, 0x380, 0x358, False, True, table="blackwell", sw_war=8,
          driver_cbank=_BLACKWELL_DRIVER_CBANK, **dict(_SM100_CODEGEN, compat_0b_value=(), compat_accelerator_05=None,
                                                       renamed_opcodes=(("RED", "REDG"), ("ULDC", "LDCU")),
                                                       minmax_predicate_outputs=False, credux=False,
                                                       latency="blackwell_sm110"),
          own_forms=("sm_110", "sm_100"), gb10b_war_bytes=0x80, resident_limits=(1536, 24),
          unnamed_modifiers=(("F2FP", "RS"),)),
    _info(120, "blackwell", 0x6007802, 0x380, 0x358, False, True, table="blackwell", sw_war=0,
          driver_cbank=_BLACKWELL_DRIVER_CBANK, **_BLACKWELL_CODEGEN, compat_record_07=True, resident_limits=(1536, 24),
          compat_0b_value=(("", 0x50), ("a", 0x10), ("f", 0x50))),
    # sm_107: sm_120's instructions and words (ptxas 13.5.37 writes the same opcodes and
    # encodings; its schedule differs: blackwell_sm107.json), its own e_flags, `.nv.compat` (sm_90's
    # records but 0x0d = 0x103) and kernel records (0x5f = 0x103, a last record 0x67); and
    # sm_100a's CREDUX and F2FP `.RS` (`redux.sync` min/max `.f32` on sm_107a/f, `cvt.rs` on
    # sm_107a), which sm_120's nvdisasm rejects or names not: its own `"sm_107"` forms
    _info(107, "blackwell", 0x6006B02, 0x380, 0x358, False, True, table="blackwell", sw_war=0,
          driver_cbank=_BLACKWELL_DRIVER_CBANK, **dict(_BLACKWELL_CODEGEN, latency="blackwell_sm107", credux=True),
          own_forms=("sm_107", "sm_120"), resident_limits=(1024, 16), compat_0d_value=0x103, kernel_5f_extra_bits=0x2,
          kernel_record_67=True),
    # sm_121 (GB10): sm_120's code, cubin facts and `.nv.info` records (ptxas 13.5)
    _info(121, "blackwell", 0x6007902, 0x380, 0x358, False, True, table="blackwell", sw_war=0,
          driver_cbank=_BLACKWELL_DRIVER_CBANK, **_BLACKWELL_CODEGEN, own_forms="sm_120",
          resident_limits=(1536, 24)),
]
ARCHS: dict[str, Target] = {a.name: a for a in _TABLE}


@functools.cache
def target(arch: "str | Target") -> Target:
    """The target for `arch` ("sm_89", "sm_90a": a suffixed variant shares its base's facts
    and keeps its suffix in `variant`); a Target is returned as it is."""
    if isinstance(arch, Target):
        return arch
    base = arch.rstrip("af") if arch.startswith("sm_") else arch
    try:
        info = ARCHS[base]
    except KeyError:
        raise UnknownArch(f"unknown architecture {arch!r}; known: {', '.join(ARCHS)}") from None
    return info if base == arch else replace(info, variant=arch[len(base):])


arch_info = target      # the former name


# `-arch` names of virtual architectures: `compute_89` and `lto_89` (link-time code) only
# check the PTX, as sm_89 would; code is for `sm_` names alone
VIRTUAL_ARCH_PREFIXES = ("compute_", "lto_")
REAL_ARCH_PREFIX = "sm_"


def real_arch(name: str) -> str:
    """The `sm_` arch a virtual one checks PTX as (`compute_89`, `lto_89` -> `sm_89`); an
    `sm_` name as it is."""
    for prefix in VIRTUAL_ARCH_PREFIXES:
        if name.startswith(prefix):
            return REAL_ARCH_PREFIX + name[len(prefix):]
    return name


def is_virtual_arch(name: str) -> bool:
    """Whether `-arch name` only checks the PTX (anything but an `sm_` name)."""
    return not name.startswith(REAL_ARCH_PREFIX)


@functools.cache
def table_uniform_zero(table: str) -> int:
    """URZ's number in the words of encoding table `table`: the `uniform_zero_register` of
    the Targets reading it, which must agree (63 for a table no Target reads)."""
    values = {t.uniform_zero_register for t in _TABLE if t.encoding_table == table}
    if len(values) > 1:
        raise ValueError(f"the Targets reading the {table} table disagree on URZ: {sorted(values)}")
    return values.pop() if values else 63


def arch_from_e_flags(e_flags: int) -> Target:
    """The architecture a cubin's ELF header names (bits 8..15 hold the SM number)."""
    sm = (e_flags >> 8) & 0xFF
    for info in _TABLE:
        if info.sm == sm:
            return info
    raise UnknownArch(f"cubin for unknown SM {sm} (e_flags {e_flags:#x})")
