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
}

# Variable-latency units whose results come back in issue order: waiting on the scoreboard
# of one instruction also covers earlier ones of the same queue (ptxas relies on this: of
# two back-to-back LDS, POPC or DFMA only the later one sets a scoreboard).
QUEUE: dict[str, str] = {
    "LDS": "shared", "LDSM": "shared", "ATOMS": "shared",
    "LDG": "global", "LD": "global", "LDL": "global", "ATOMG": "global", "ATOM": "global",
    "RED": "global", "LDGSTS": "global", "LDGDEPBAR": "global",
    "LDC": "constant",
    "S2R": "s2r", "S2UR": "s2r", "B2R": "s2r",
    "SHFL": "shuffle", "MATCH": "shuffle", "REDUX": "shuffle",
    "MUFU": "xu", "F2F": "xu", "F2I": "xu", "I2F": "xu", "FRND": "xu", "FCHK": "xu",
    "POPC": "xu", "FLO": "xu", "BREV": "xu",
    "DADD": "fp64", "DMUL": "fp64", "DFMA": "fp64", "DSETP": "fp64", "DMNMX": "fp64",
    "R2UR": "r2ur",
}

# Cycles a variable-latency instruction may still be reading its source registers (the
# read scoreboard covers this window).
SOURCE_READ_CYCLES = 4

# The same in-order units read their source registers in issue order, so a later
# instruction of the unit cannot write a register before an earlier one has read it (ptxas
# relies on this: a DADD overwrites a source of the DADD before it, an LDS the address
# register of an STS before it, without waiting on their read scoreboards). Stores, which
# have no result and so no entry in QUEUE, go with the loads of their memory space.
STORE_QUEUE: dict[str, str] = {"STS": "shared", "STG": "global", "ST": "global", "STL": "global"}


def source_unit(opcode: str) -> str | None:
    """The in-order unit whose instructions read their sources in issue order, if any."""
    return QUEUE.get(opcode) or STORE_QUEUE.get(opcode)

# Fixed-latency producers: cycles from issue until a dependent instruction may read the
# result. Keys are opcodes (or "OPCODE.MOD" for a modifier-specific value); anything not
# listed and not VARIABLE uses DEFAULT_FIXED.
DEFAULT_FIXED = 4
FIXED: dict[str, int] = {
    "HMMA": 16, "IMMA": 16,
}
# Predicate results read as a guard or as a predicate source.
PREDICATE_FIXED = 4
# Results of the uniform datapath (UR/UP writes by fixed-latency instructions).
UNIFORM_FIXED = 2

# Instructions that stall issue until every scoreboard is clear are modelled through their
# wait masks; these merely end a warp (or wait elsewhere) and need no table entry.
NO_RESULT = {"EXIT", "BRA", "BSSY", "BSYNC", "WARPSYNC", "BAR", "NOP", "CALL", "RET"}


def is_variable(opcode: str) -> bool:
    return opcode in VARIABLE


def fixed_latency(opcode: str, modifiers: tuple[str, ...] = (), predicate: bool = False,
                  uniform: bool = False) -> int:
    """Cycles until a fixed-latency result can be read."""
    if uniform:
        return UNIFORM_FIXED
    for m in modifiers:
        key = f"{opcode}.{m}"
        if key in FIXED:
            return FIXED[key]
    if predicate and opcode not in FIXED:
        return PREDICATE_FIXED
    return FIXED.get(opcode, DEFAULT_FIXED)


def queue_of(opcode: str) -> str:
    return QUEUE.get(opcode, opcode)


def variable_latency(opcode: str) -> int:
    return VARIABLE.get(opcode, 20)
