"""Instruction latencies for sm_80/86/89 as data: the scheduler and the emulator's hazard
checker share this one table.

Two kinds of producer (ISA-NOTES, "Latencies"):
- fixed latency: the result may be read `fixed_latency(...)` cycles after issue; the
  compiler guarantees that with stall counts alone;
- variable latency ("decoupled"): the result is tracked by a scoreboard (write barrier) that
  a consumer must wait on; `VARIABLE` gives a typical completion time for the cycle model
  (not a correctness bound).

Which opcodes are variable was read from ptxas 13.5 output for sm_89 (every one of them
sets a write scoreboard when its result is used). The fixed values are the smallest
producer→consumer distances ptxas relies on over the project's corpora (the hazard checker
of `ptx2sass.emu.hazards` must find zero hazards in ptxas's cubins; where it does not, this
table is wrong and gets corrected, never the other way round).
"""
from __future__ import annotations

from functools import lru_cache

# Variable-latency (scoreboarded) opcodes → typical cycles until the result is written
# (for the cycle estimate). Memory figures follow ISA-NOTES: shared ~25, L1 hit ~35
# (global loads are modelled as L1 hits), constant ~30, DRAM would be ~500.
VARIABLE: dict[str, int] = {
    "LDG": 35, "LD": 35, "LDL": 35, "LDS": 25, "LDSM": 25, "LDC": 30,
    "ATOMG": 100, "ATOM": 100, "ATOMS": 40, "RED": 100,
    "S2R": 20, "S2UR": 20, "B2R": 20,
    "SHFL": 25, "MATCH": 25, "REDUX": 25,
    "MUFU": 16, "F2F": 16, "F2I": 16, "I2F": 16, "FRND": 16, "FCHK": 16,
    "POPC": 16, "FLO": 16, "BREV": 16,
    "DADD": 40, "DMUL": 40, "DFMA": 40, "DSETP": 40, "DMNMX": 40,
    "LDGDEPBAR": 35, "LDGSTS": 35, "R2UR": 12,
    "BMOV": 20,      # BMOV R, B: ptxas sets a write scoreboard on every one (latency audit)
    "QSPC": 20,      # generic address space query: ptxas sets a write scoreboard (generic atomics)
}

# Variable-latency units whose results come back in issue order: waiting on the scoreboard
# of one instruction also covers earlier ones of the same queue (ptxas relies on this: of
# two back-to-back LDS, POPC or DFMA only the later one sets a scoreboard). Shared memory
# and shuffles go through one queue, MIO: ptxas waits on a SHFL's scoreboard to cover an
# LDSM before it that set none (Triton's flash attention, tests/corpus/triton).
QUEUE: dict[str, str] = {
    "LDS": "mio", "LDSM": "mio", "ATOMS": "mio", "SHFL": "mio", "MATCH": "mio", "REDUX": "mio",
    "LDG": "global", "LD": "global", "LDL": "global", "ATOMG": "global", "ATOM": "global",
    "RED": "global", "LDGSTS": "global", "LDGDEPBAR": "global",
    "LDC": "constant",
    "S2R": "s2r", "S2UR": "s2r", "B2R": "s2r",
    "MUFU": "xu", "F2F": "xu", "F2I": "xu", "I2F": "xu", "FRND": "xu", "FCHK": "xu",
    "POPC": "xu", "FLO": "xu", "BREV": "xu",
    "DADD": "fp64", "DMUL": "fp64", "DFMA": "fp64", "DSETP": "fp64", "DMNMX": "fp64",
    "R2UR": "r2ur", "BMOV": "bmov", "QSPC": "qspc",
}

# Cycles a variable-latency instruction may still be reading its source registers (the
# read scoreboard covers this window).
SOURCE_READ_CYCLES = 4

# The same in-order units read their source registers in issue order, so a later
# instruction of the unit cannot write a register before an earlier one has read it (ptxas
# relies on this: a DADD overwrites a source of the DADD before it, an LDS the address
# register of an STS before it, without waiting on their read scoreboards). Stores, which
# have no result and so no entry in QUEUE, go with the loads of their memory space.
STORE_QUEUE: dict[str, str] = {"STS": "mio", "STG": "global", "ST": "global", "STL": "global"}

# Units that also read their source registers only after the earlier instructions of the
# unit have written their results: a later one may read such a result without waiting (ptxas
# gives an LDS no scoreboard and feeds its result straight to a SHFL: Triton's cross-warp
# reductions, tests/corpus/triton welford_rows).
READS_IN_ORDER = {"mio"}


def source_unit(opcode: str) -> str | None:
    """The in-order unit whose instructions read their sources in issue order, if any."""
    return QUEUE.get(opcode) or STORE_QUEUE.get(opcode)

# Fixed-latency producers: cycles from issue until a dependent instruction may read the
# result. Keys are opcodes (or "OPCODE.MOD" for a modifier-specific value); anything not
# listed and not VARIABLE uses DEFAULT_FIXED. `read_latency` adds what depends on the
# reader (pipe crossings, readers that fetch operands early, guards).
#
# The figures below are the smallest issue distances ptxas leaves on sm_89, measured over
# every launch of the three corpora by `.venv/bin/python -m tools.latency_audit` (the
# audit prints, per producer and reader, ptxas's minimum stall-count distance beside what
# this module says; tests/test_latency_audit.py fails when this module is below ptxas on
# well-sampled pairs). None may exceed ptxas's minimum: the hazard checker would then flag
# ptxas's own cubins.
DEFAULT_FIXED = 4
FIXED: dict[str, int] = {
    # Tensor cores: 24 to other instructions (HMMA→HMMA, →F2FP, →PRMT), 23 to a store
    # (MMA_TO_MEMORY); ptxas never goes lower on 1,000+ pairs. QMMA (fp8, sm_89) as ptxas
    # schedules it in tests/test_codegen_qmma.py's kernels: no scoreboard, 23 to a store.
    "HMMA": 24, "IMMA": 24, "QMMA": 24,
    # CS2R R, SRZ / SR_CLOCK: 6 to IADD3 and IMAD.
    "CS2R": 6,
    # F2IP (pack two floats to 8/16-bit integers): 8 to its only readers seen (LOP3).
    "F2IP": 8,
}
# Producer/pipe pairs slower than the rules below give: (producer key as in FIXED, result
# file, reader's pipe) → cycles. IMAD.HI's carry-out predicate reaches IADD3.X's carry-in
# 9 cycles after issue (21 static sites), IMAD's own carry-in 4.
PAIR_FIXED: dict[tuple[str, str, str], int] = {
    ("IMAD.HI", "P", "alu"): 9,
}
MMA_TO_MEMORY = 23
# Predicate results read as a predicate source (SEL, FSEL, ISETP's combine, PLOP3 ...).
PREDICATE_FIXED = 4
# A predicate read as an instruction's guard (any instruction, not only branches), or as a
# source by the instructions in PREDICATE_AT_ISSUE, is needed 13 cycles after a
# fixed-latency producer issued: ptxas never leaves less after ISETP/FSETP/HSETP2/LOP3/
# PLOP3 (75,000+ guarded reads), where a predicate source gets 4.
GUARD_FIXED = 13
# Also BRA's and EXIT's predicate operand (`@!P1 BRA !P2`, `@P0 EXIT P1`): FSETP → BRA's
# operand 15 at the least over 15 sites (tools/latency_audit.py on tools/operand_kinds.py).
PREDICATE_AT_ISSUE = {"VOTE", "BAR", "BRA", "EXIT"}
# A uniform predicate guarding a uniform instruction: 11 (UISETP → `@UP0 UIADD3`, ptxas's
# vabsdiff with parameters: tests/test_emu_hazards.py).
UNIFORM_GUARD_FIXED = 11

# Pipes of the fixed-latency instructions: a result crossing between the integer/logic
# pipe ("alu"), the FMA pipe ("fma", IMAD included) and the packed-half pipe ("fp16")
# needs CROSS_PIPE cycles (IADD3→IMAD, IMAD→IADD3, FADD→FSETP, PRMT→HMUL2: 5, where
# IADD3→SHF and IMAD→IMAD take 4). Opcodes not listed are "alu".
PIPE: dict[str, str] = {
    "IMAD": "fma", "FFMA": "fma", "FADD": "fma", "FMUL": "fma", "IDP": "fma",
    "HADD2": "fp16", "HMUL2": "fp16", "HFMA2": "fp16", "HSETP2": "fp16", "HSET2": "fp16",
    "HMNMX2": "fp16",
}
CROSS_PIPE = 5
# Readers outside the three pipes (no crossing cost): control flow (IMAD.MOV→RET: 4).
NO_PIPE_READERS = {"RET", "BRA", "BRX", "JMP", "JMX", "CALL", "EXIT"}
# Readers that fetch their register operands early, whoever produced them: memory
# instructions (address and data; also SHFL), FP64 (DADD/DMUL/DFMA/DSETP), tensor cores,
# and HADD2/HSETP2 (HMUL2→HADD2 is 5 where HMUL2→HMUL2 is 4).
MEMORY_READERS = {"LD", "LDG", "LDS", "LDL", "LDC", "LDSM", "LDGSTS", "ST", "STG", "STS", "STL",
                  "ATOM", "ATOMG", "ATOMS", "RED", "SHFL"}
READER_FIXED: dict[str, int] = {
    **{op: 5 for op in MEMORY_READERS},
    "DADD": 6, "DMUL": 6, "DFMA": 6, "DSETP": 6, "DMNMX": 6,
    "HMMA": 7, "IMMA": 7, "QMMA": 7,
    "HADD2": 5, "HSETP2": 5,
}
# Producer/reader pairs that ptxas schedules closer than the producer's and the reader's
# rules give: the pair's own latency (ptxas's distance), which overrides both. HADD2 reads
# another HADD2's result, and an HFMA2's, 4 cycles after it issued (tests/corpus/llvm/half.ptx:
# HADD2 R7 → MUFU → HADD2 R8, R7.H1_H1; `fma.rn.f16x2` then `add.f16x2`); STG stores a CS2R
# result (SR_CLOCKLO) 5 cycles after; UIMAD reads UIADD3's 4 after (UIADD3.X →
# UIMAD.WIDE.U32, where ULEA → UIMAD takes 6), and USEL's and ULOP3's (random chains of
# tools/operand_kinds.py; ULOP3's found by the held-back chains 1000..1199). Reproducers:
# tests/test_emu_hazards.py PTXAS_SCHEDULES.
READER_PAIR_FIXED: dict[tuple[str, str], int] = {
    ("HADD2", "HADD2"): 4, ("HFMA2", "HADD2"): 4, ("CS2R", "STG"): 5, ("UIADD3", "UIMAD"): 4,
    ("USEL", "UIMAD"): 4, ("ULOP3", "UIMAD"): 4,
}

# Results of the uniform datapath (UR/UP writes by fixed-latency instructions): 4 to
# another uniform instruction (UIADD3→USHF, UISETP→USEL), 6 to UIMAD and to a
# non-uniform reader (UIADD3→IMAD/MOV/ISETP). Uniform moves are faster: UMOV, ULDC and
# VOTEU results are read 2 cycles later by anyone (UMOV→IADD3, ULDC.64→UIMAD).
UNIFORM_FIXED = 4
UNIFORM_TO_VECTOR = 6
UNIFORM_READER_FIXED: dict[str, int] = {"UIMAD": 6}
# ... except from UIMAD itself (the same uniform multiplier): 4, as ptxas leaves between
# UIMAD.WIDE.U32 and the UIMAD adding its high half (Triton's int64 row offsets,
# tests/corpus/triton int64_rows).
UNIFORM_SAME_UNIT = {"UIMAD"}
UNIFORM_MOVES = {"UMOV", "ULDC", "VOTEU"}
UNIFORM_MOVE_FIXED = 2

# Instructions that stall issue until every scoreboard is clear are modelled through their
# wait masks; these merely end a warp (or wait elsewhere) and need no table entry.
NO_RESULT = {"EXIT", "BRA", "BSSY", "BSYNC", "WARPSYNC", "BAR", "NOP", "CALL", "RET"}


def is_variable(opcode: str) -> bool:
    return opcode in VARIABLE


def fixed_latency(opcode: str, modifiers: tuple[str, ...] = (), predicate: bool = False,
                  uniform: bool = False) -> int:
    """Cycles until a fixed-latency result can be read by an instruction of its own pipe
    (the producer's side alone; `read_latency` is what a given reader needs)."""
    if uniform:
        return UNIFORM_MOVE_FIXED if opcode in UNIFORM_MOVES else UNIFORM_FIXED
    for m in modifiers:
        key = f"{opcode}.{m}"
        if key in FIXED:
            return FIXED[key]
    if predicate and opcode not in FIXED:
        return PREDICATE_FIXED
    return FIXED.get(opcode, DEFAULT_FIXED)


def pipe(opcode: str) -> str:
    return PIPE.get(opcode, "alu")


@lru_cache(maxsize=None)
def read_latency(opcode: str, modifiers: tuple[str, ...], file: str, reader: str,
                 guard: bool = False) -> int:
    """Cycles from the issue of a fixed-latency `opcode` writing a register of `file` until
    `reader` may read it (`guard`: as its guard predicate)."""
    base = fixed_latency(opcode, modifiers, predicate=file in ("P", "UP"),
                         uniform=file in ("UR", "UP"))
    if file in ("P", "UP") and (guard or reader in PREDICATE_AT_ISSUE):
        if file == "UP" and guard and reader.startswith("U"):
            return max(base, UNIFORM_GUARD_FIXED)
        return max(base, GUARD_FIXED)
    pair = READER_PAIR_FIXED.get((opcode, reader))
    if pair is not None:
        return pair
    if file in ("UR", "UP"):
        if opcode in UNIFORM_MOVES:
            return base
        if not reader.startswith("U"):
            return max(base, UNIFORM_TO_VECTOR)
        if opcode == reader and opcode in UNIFORM_SAME_UNIT:
            return base
        return max(base, UNIFORM_READER_FIXED.get(reader, 0))
    if opcode in ("HMMA", "IMMA", "QMMA") and reader in MEMORY_READERS:
        return MMA_TO_MEMORY
    need = max(base, READER_FIXED.get(reader, 0))
    if reader not in READER_FIXED and reader not in NO_PIPE_READERS and not is_variable(reader):
        if pipe(opcode) != pipe(reader):
            need = max(need, CROSS_PIPE)
        for key in (opcode, *(f"{opcode}.{m}" for m in modifiers)):
            need = max(need, PAIR_FIXED.get((key, file, pipe(reader)), 0))
    return need


def queue_of(opcode: str) -> str:
    return QUEUE.get(opcode, opcode)


def variable_latency(opcode: str) -> int:
    return VARIABLE.get(opcode, 20)
