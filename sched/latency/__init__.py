"""Instruction latencies per encoding family, as data: the scheduler, the control-code pass
and the emulator's hazard checker share one `LatencyModel` per target.

The figures live in `sched/latency/<family>.json` (the target's `Target.latency`); this
module only applies them. Two kinds of producer (ISA-NOTES, "Latencies"):
- fixed latency: the result may be read `fixed_latency(...)` cycles after issue; the
  compiler guarantees that with stall counts alone;
- variable latency ("decoupled"): the result is tracked by a scoreboard (write barrier) that
  a consumer must wait on; `variable` gives a typical completion time for the cycle model
  (not a correctness bound).

Which opcodes are variable was read from ptxas 13.5's output for the family (every one of
them sets a write scoreboard when its result is read). The fixed values are the smallest
producer→consumer distances ptxas relies on over the project's corpora, measured by
`python -m tools.latency_audit --arch ...` (each file's "measured" and "evidence" say
where each number came from): the hazard checker of `ptx2sass.emu.hazards` must find zero
hazards in ptxas's cubins; where it does not, the table is wrong and gets corrected, never
the other way round.

Rules, with the data fields they read:
- a fixed producer's own latency: `fixed` (opcode or "OPCODE.MOD"), else `default_fixed`;
  predicates written for a predicate source: `predicate_fixed`; uniform results:
  `uniform_fixed`, `uniform_move_fixed` for `uniform_moves`;
- what the reader adds: a guard (or a `predicate_at_issue` reader) needs `guard_fixed`;
  readers that fetch operands early need `reader_fixed` (`memory_readers`:
  `memory_reader_fixed`), except `reader_pair_fixed` pairs (producer "OPCODE" or
  "OPCODE.MOD"); a result crossing between the
  `pipe`s of fixed-latency instructions needs `cross_pipe` (`no_pipe_readers` and
  variable-latency readers cross nothing); `pair_fixed` (producer, file, reader pipe) pairs
  slower than all that; tensor-core results read by memory: `mma_to_memory`; uniform
  results read by a non-uniform instruction: `uniform_to_vector`, by `uniform_reader_fixed`
  readers their value (`uniform_same_unit` readers of their own unit: the producer's);
- an instruction holds issue for at least `issue_cycles` (by opcode), whatever its stall;
  one of `drains_fixed_results` (ERRBAR) also holds it until every earlier fixed-latency
  result has landed;
- a variable-latency reader that is no memory reader (R2UR, FLO ...), or one of
  `mma_to_decoupled_readers` (the surface stores and reductions), may read an MMA result
  `mma_to_decoupled_early` cycles before the MMA's fixed latency.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent


# a pseudo-modifier: the producer multiplies by an immediate (`LatencyModel.latency_modifiers`)
IMMEDIATE_FACTOR = "#IMM"

class LatencyModel:
    """One family's latency table (see the module docstring for the rules)."""

    def __init__(self, data: dict):
        self.family = data["family"]
        self.VARIABLE: dict[str, int] = dict(data["variable"])
        self.QUEUE: dict[str, str] = dict(data["queue"])
        self.SOURCE_READ_CYCLES: int = data["source_read_cycles"]
        self.STORE_QUEUE: dict[str, str] = dict(data["store_queue"])
        self.READS_IN_ORDER = frozenset(data["reads_in_order"])
        # kinds of late memory effects (`ptx2sass.fences.memory_effect`) this family's code
        # waits for on a scoreboard, as ptxas's does
        self.LATE_MEMORY_EFFECTS = frozenset(data.get("late_memory_effects", ()))
        self.DEFAULT_FIXED: int = data["default_fixed"]
        self.FIXED: dict[str, int] = dict(data["fixed"])
        self.PAIR_FIXED = {(p, f, r): c for p, f, r, c in data["pair_fixed"]}
        # the same pairs when the producer's second factor (the operand before the addend) is
        # an immediate: `latency_modifiers` then adds IMMEDIATE_FACTOR to its modifiers
        self.PAIR_FIXED_IMMEDIATE = {(p, f, r): c for p, f, r, c in data.get("pair_fixed_immediate_factor", [])}
        self._IMMEDIATE_KEYS = frozenset(p for p, _, _ in self.PAIR_FIXED_IMMEDIATE)
        self.MMA = frozenset(data["mma"])
        self.MMA_TO_MEMORY: int = data["mma_to_memory"]
        self.PREDICATE_FIXED: int = data["predicate_fixed"]
        self.GUARD_FIXED: int = data["guard_fixed"]
        self.PREDICATE_AT_ISSUE = frozenset(data["predicate_at_issue"])
        # producer -> {register file: cycles}: the least distance of any reader of that part
        # of its result (sm_90 R2UR, found on silicon; see the file's evidence)
        self.RESULT_FLOOR: dict[str, dict[str, int]] = {k: dict(v) for k, v in data.get("result_floor", {}).items()}
        self.PIPE: dict[str, str] = dict(data["pipe"])
        # pipe -> cycles one warp instruction keeps its unit busy (a list-scheduling
        # resource, see sched.list_schedule.issue_order)
        self.UNIT_OCCUPANCY: dict[str, int] = dict(data.get("unit_occupancy", {}))
        self.CROSS_PIPE: int = data["cross_pipe"]
        self.NO_PIPE_READERS = frozenset(data["no_pipe_readers"])
        self.MEMORY_READERS = frozenset(data["memory_readers"])
        # readers that take an MMA's result as soon as a memory instruction does, without the
        # memory readers' other rules (MOVM: a shared-memory-unit transpose, sm_8x)
        self.MMA_TO_MEMORY_READERS = self.MEMORY_READERS | frozenset(data.get("mma_to_memory_readers", []))
        self.READER_FIXED: dict[str, int] = {**{op: data["memory_reader_fixed"] for op in self.MEMORY_READERS},
                                             **data["reader_fixed"]}
        self.READER_PAIR_FIXED = {(p, r): c for p, r, c in data["reader_pair_fixed"]}
        self.UNIFORM_FIXED: int = data["uniform_fixed"]
        self.UNIFORM_TO_VECTOR: int = data["uniform_to_vector"]
        self.UNIFORM_READER_FIXED: dict[str, int] = dict(data["uniform_reader_fixed"])
        # reader -> the least distance the hazard check accepts where the reader's own rule
        # sets the need (ptxas feeds an LDC's index 4 cycles after an ALU result; we keep 5)
        # opcode -> cycles after issue during which a fixed-latency instruction may not
        # overwrite its source registers (sm_90 HMMA/IMMA read A/B/C late)
        self.LATE_FIXED_READS: dict[str, int] = dict(data.get("late_fixed_reads", {}))
        # writer -> cycles before the end of an MMA's late-read window that it may overwrite a
        # source (its result lands later than the ALU writers the window was read off: sm_90 DFMA)
        self.LATE_FIXED_WRITE_EARLY: dict[str, int] = dict(data.get("late_fixed_reads_write_early", {}))
        # MMAs of one pass (k x input bits <= k_bits) read every source at issue: no window
        # (sm_8x IMMA.16816, HMMA.1688; ptxas overwrites their sources the next cycle)
        single = data.get("mma_single_pass", {})
        self.MMA_SINGLE_PASS_BITS: int = single.get("k_bits", 0)
        self.MMA_INPUT_BITS: dict[str, int] = dict(single.get("input_bits", {}))
        self.MMA_DEFAULT_BITS: dict[str, int] = dict(single.get("default_bits", {}))
        # their results: cycles until an ALU/MMA reader and a memory reader may read them
        self.MMA_SINGLE_PASS_FIXED: int | None = single.get("fixed")
        self.MMA_SINGLE_PASS_M8_FIXED: int | None = single.get("fixed_m8")     # shapes m8nNkK
        self.MMA_SINGLE_PASS_TO_MEMORY: int | None = single.get("to_memory")
        self.MMA_SINGLE_PASS_M8_TO_MEMORY: int | None = single.get("to_memory_m8")
        # 2:4 sparse shapes (.SP) pass over the k/2 elements A stores (sm_8x evidence only)
        self.MMA_SPARSE_HALF_K: bool = bool(single.get("sparse_half_k"))
        # MMAs that read their accumulator C at issue even in shapes of two passes (sm_8x IMMA)
        self.MMA_ACCUMULATOR_AT_ISSUE = frozenset(data.get("mma_accumulator_at_issue", []))
        # (dummies, opcodes): predicated-off LDS placed before the first LDGSTS after the
        # kernel's entry or one of these opcodes (sm_90; sched/ldgsts_pad.py)
        pad = data.get("ldgsts_padding", {})
        self.LDGSTS_PADDING: tuple[int, frozenset] = (pad.get("dummies", 0), frozenset(pad.get("after", [])))
        # where the compiler pads beyond what the checker counts: the first LDGSTS after these
        # opcodes, and (flag) the first of each basic block
        self.LDGSTS_REARM: tuple[frozenset, bool] = (frozenset(pad.get("also_after", [])),
                                                     bool(pad.get("at_block_starts", False)))
        self.CHECKER_READER_FIXED: dict[str, int] = dict(data.get("checker_reader_fixed", {}))
        self.UNIFORM_SAME_UNIT = frozenset(data["uniform_same_unit"])
        self.UNIFORM_MOVES = frozenset(data["uniform_moves"])
        self.UNIFORM_MOVE_FIXED: int = data["uniform_move_fixed"]
        self.NO_RESULT = frozenset(data["no_result"])
        # (producer key, file, result part, reader pipe) -> cycles: a part of a multi-register
        # result that arrives sooner than the rest (sm_90: IMAD.WIDE's low half)
        self.PART_FIXED = {(p, f, n, r): c for p, f, n, r, c in data.get("part_fixed", [])}
        # producer key -> cycles until an IMAD.WIDE may read the result as the high half of
        # its addend, which it reads later than its other operands (sm_90)
        self.ADDEND_FIXED: dict[str, int] = dict(data.get("addend_fixed", {}))
        # opcodes ptxas sometimes gives a write scoreboard although they are fixed-latency
        self.SCOREBOARD_OPTIONAL = frozenset(data.get("scoreboard_optional", []))
        # (uniform producer, reader opcode) -> cycles, beyond the uniform rules (sm_90)
        self.UNIFORM_PAIR_FIXED = {(p, r): c for p, r, c in data.get("uniform_pair_fixed", [])}
        # producer -> cycles until its predicate may guard an instruction, beyond guard_fixed
        self.GUARD_PAIR_FIXED: dict[str, int] = dict(data.get("guard_pair_fixed", {}))
        # (producer, reader) -> ptxas's distance where it is below the producer's own rule
        # (HFMA2 -> HADD2, CS2R -> STG on sm_8x): the pair's latency, overriding the rest
        self.READER_PAIR_EXACT = {(p, r): c for p, r, c in data.get("reader_pair_exact", [])}
        # a uniform predicate guarding a uniform instruction, where below guard_fixed (sm_8x)
        self.UNIFORM_GUARD_FIXED: int | None = data.get("uniform_guard_fixed")
        # producer -> cycles where its uniform predicate guards a uniform instruction sooner
        self.UNIFORM_GUARD_PAIR_FIXED: dict[str, int] = dict(data.get("uniform_guard_pair_fixed", {}))
        # uniform-datapath instructions not spelled U* whose uniform guard follows the two
        # rules above (sm_120's LDCU)
        self.UNIFORM_GUARD_READERS = frozenset(data.get("uniform_guard_readers", []))
        # vector-datapath readers guarded by a uniform predicate sooner than guard_fixed
        # (sm_90's SYNCS: 11 after the VOTEU)
        self.UNIFORM_GUARD_READER_FIXED: dict[str, int] = dict(data.get("uniform_guard_reader_fixed", {}))
        # loads that read their address registers after issue (sm_90: ptxas protects an
        # LDG's address with a read scoreboard before overwriting it; the H200 returned
        # wrong data and illegal addresses where we did not)
        self.LATE_SOURCE_READS = frozenset(data.get("late_source_reads", []))
        self.LATE_READ_CYCLES: int = data.get("late_read_cycles", 0)
        # unit -> a shorter window for that unit's late readers (sm_90 LDS: ptxas overwrites
        # the address of an LDS with no scoreboard 34 cycles after it)
        self.LATE_READ_CYCLES_BY_UNIT: dict[str, int] = dict(data.get("late_read_cycles_by_unit", {}))
        # late readers that may still read after a later instruction of their own unit has
        # (sm_90 LDC with a register index: a divergent index replays, re-reading it)
        self.UNORDERED_LATE_READS = frozenset(data.get("unordered_late_reads", []))
        # variable-latency instructions whose predicate result is there once their read
        # scoreboard clears (sm_90 generic ATOM's "done" predicate: the address space is known
        # when the sources are read)
        self.PREDICATE_WITH_READS = frozenset(data.get("predicate_with_reads", []))
        # unit -> the group of units that take instructions from one queue and so read their
        # sources in issue order (a variable-latency result of a later one cannot land before
        # an earlier one of the group read the register)
        self.READ_ORDER: dict[str, str] = {u: "+".join(g) for g in data.get("source_read_order", []) for u in g}
        # instructions read their uniform-register sources at issue: a read scoreboard covers
        # only their vector registers (sm_90: ptxas overwrites the UR4 of STS/LDS [R+UR4] the
        # next cycles without waiting on the read scoreboard)
        self.UNIFORM_READ_AT_ISSUE: bool = data.get("uniform_read_at_issue", False)
        # instructions that read their uniform registers after issue all the same, behind a
        # read scoreboard (sm_100's UTC*MMA / UTCBAR: ptxas overwrites their URs only after
        # waiting on it); an entry is an opcode or `OPCODE.FIRSTMODIFIER` (SYNCS.EXCH)
        self.UNIFORM_LATE_READERS = frozenset(data.get("uniform_late_readers", []))
        # opcode -> (group, cycles): the least issue distance between two instructions of a
        # group (sm_90's FP64 unit takes a warp instruction every 2 cycles, without interlock)
        # memory opcodes that may issue only `cycles` after a BAR (sm_90)
        after = data.get("after_barrier", {})
        self.AFTER_BARRIER: tuple[frozenset, int] = (frozenset(after.get("opcodes", [])), after.get("cycles", 0))
        self.ISSUE_INTERVAL: dict[str, tuple[int, int]] = {
            op: (i, c) for i, (ops, c) in enumerate(data.get("issue_interval", [])) for op in ops}
        # opcode -> the least cycles it holds issue whatever its stall count says (ERRBAR
        # waits for the memory system; ptxas gives it stall 0-1 and counts on more)
        self.ISSUE_CYCLES: dict[str, int] = dict(data.get("issue_cycles", {}))
        # opcodes that hold issue until every earlier fixed-latency result is in its register
        # (ERRBAR: ptxas overwrites and reads an IMMA's result 7 and 13 cycles after it when an
        # ERRBAR comes between, the IMMA issued 1 cycle before it)
        self.DRAINS_FIXED = frozenset(data.get("drains_fixed_results", []))
        # a variable-latency (decoupled) reader other than memory reads a tensor-core result
        # this many cycles before the MMA's fixed latency (it takes its operands after issue)
        self.MMA_TO_DECOUPLED: int = data.get("mma_to_decoupled_early", 0)
        # an MMA's result lands in its registers this many cycles before its fixed latency
        self.MMA_WRITE_EARLY: int = data.get("mma_result_write_early", 0)
        # readers without a result that take an MMA result as those decoupled readers do
        self.MMA_DECOUPLED_READERS = frozenset(data.get("mma_to_decoupled_readers", []))
        self.read_latency = functools.lru_cache(maxsize=None)(self._read_latency)

    def late_fixed_window(self, opcode: str, modifiers: tuple[str, ...] = ()) -> int:
        """Cycles after issue during which an MMA may still read its source registers (0: it
        reads them at issue). The shape modifier (`16816`: m16 n8 k16) and the input type
        give the bits of k each pass covers."""
        window = self.LATE_FIXED_READS.get(opcode, 0)
        return 0 if window and self.mma_single_pass(opcode, modifiers) else window

    def mma_single_pass(self, opcode: str, modifiers: tuple[str, ...]) -> bool:
        """An MMA whose k covers at most `mma_single_pass.k_bits` bits of input (k x the
        input type's bits; the shape modifier `16816` is m16 n8 k16)."""
        if not self.MMA_SINGLE_PASS_BITS or opcode not in self.MMA or not modifiers:
            return False
        sparse = modifiers[0] == "SP"
        shape = modifiers[1] if sparse and len(modifiers) > 1 else modifiers[0]
        if not shape.isdigit() or len(shape) < 3:
            return False
        k = int(shape[3:] if shape.startswith("16") else shape[2:])
        if sparse and self.MMA_SPARSE_HALF_K:     # the unit multiplies the k/2 stored elements
            k //= 2
        bits = next((self.MMA_INPUT_BITS[m] for m in modifiers[1:] if m in self.MMA_INPUT_BITS),
                    self.MMA_DEFAULT_BITS.get(opcode, 0))
        return bool(bits) and k * bits <= self.MMA_SINGLE_PASS_BITS

    def uniform_late_reader(self, ins) -> bool:
        """Whether `ins` reads its uniform registers after issue (`UNIFORM_LATE_READERS`)."""
        if ins.opcode in self.UNIFORM_LATE_READERS:
            return True
        mods = tuple(ins.modifiers)
        return bool(mods) and f"{ins.opcode}.{mods[0]}" in self.UNIFORM_LATE_READERS

    def read_at_issue(self, ins, reg: tuple) -> bool:
        """Whether an MMA with a late-read window still reads `reg` at issue: a register of
        its accumulator operand C (the third source) where `mma_accumulator_at_issue` says so.
        A register belongs to the source whose first register is the nearest at or below it
        (fragments do not overlap)."""
        if ins.opcode not in self.MMA_ACCUMULATOR_AT_ISSUE or reg[0] != "R":
            return False
        owner = None
        for k, op in enumerate(ins.operands[1:4]):
            base = getattr(op, "index", None)
            if getattr(op, "file", None) == "R" and base is not None and base != 255 and base <= reg[1]:
                if owner is None or base > owner[0]:
                    owner = (base, k)
        return owner is not None and owner[1] == 2

    def late_read_window(self, unit: str | None) -> int:
        """Cycles a late source reader of `unit` with no read scoreboard may still read."""
        return self.LATE_READ_CYCLES_BY_UNIT.get(unit, self.LATE_READ_CYCLES)

    def is_variable(self, opcode: str) -> bool:
        return opcode in self.VARIABLE

    def source_unit(self, opcode: str) -> str | None:
        """The in-order unit whose instructions read their sources in issue order, if any."""
        return self.QUEUE.get(opcode) or self.STORE_QUEUE.get(opcode)

    def fixed_latency(self, opcode: str, modifiers: tuple[str, ...] = (), predicate: bool = False,
                      uniform: bool = False) -> int:
        """Cycles until a fixed-latency result can be read by an instruction of its own pipe
        (the producer's side alone; `read_latency` is what a given reader needs)."""
        if uniform:
            return self.UNIFORM_MOVE_FIXED if opcode in self.UNIFORM_MOVES else self.UNIFORM_FIXED
        for m in modifiers:
            key = f"{opcode}.{m}"
            if key in self.FIXED:
                return self.FIXED[key]
        if self.MMA_SINGLE_PASS_FIXED is not None and self.mma_single_pass(opcode, modifiers):
            if self.MMA_SINGLE_PASS_M8_FIXED is not None and modifiers[0].startswith("88"):
                return self.MMA_SINGLE_PASS_M8_FIXED
            return self.MMA_SINGLE_PASS_FIXED
        if predicate and opcode not in self.FIXED:
            return self.PREDICATE_FIXED
        return self.FIXED.get(opcode, self.DEFAULT_FIXED)

    def result_lands(self, opcode: str, modifiers: tuple[str, ...] = (), file: str = "R") -> int:
        """Cycles from the issue of a fixed-latency `opcode` until its result is in the
        register (a later write of the register must land after it: WAW). A two-pass MMA's
        lands `mma_result_write_early` before its fixed latency; a single-pass one's at it
        (GPU run 24: 9400186's HMMA.1684 result landed over a write that the early figure
        allowed)."""
        predicate, uniform = file in ("P", "UP"), file in ("UR", "UP")
        lands = self.fixed_latency(opcode, modifiers, predicate, uniform)
        if opcode in self.MMA and not self.mma_single_pass(opcode, modifiers):
            lands = max(1, lands - self.MMA_WRITE_EARLY)
        return lands

    def pipe(self, opcode: str) -> str:
        return self.PIPE.get(opcode, "alu")

    def _read_latency(self, opcode: str, modifiers: tuple[str, ...], file: str, reader: str,
                      guard: bool = False, part: int = 0, addend: bool = False) -> int:
        """Cycles from the issue of a fixed-latency `opcode` writing a register of `file` until
        `reader` may read it (`guard`: as its guard predicate; `part`: which register of the
        producer's result of that file, 0 the first; `addend`: read as the high half of an
        IMAD.WIDE's addend)."""
        floor = self.RESULT_FLOOR.get(opcode, {}).get(file, 0)
        return max(floor, self._rule_latency(opcode, modifiers, file, reader, guard, part, addend))

    def _rule_latency(self, opcode: str, modifiers: tuple[str, ...], file: str, reader: str,
                      guard: bool, part: int, addend: bool) -> int:
        keys = (opcode, *(f"{opcode}.{m}" for m in modifiers))
        if addend and reader == "IMAD":
            for key in reversed(keys):
                if key in self.ADDEND_FIXED:
                    return self.ADDEND_FIXED[key]
        for key in reversed(keys):
            value = self.PART_FIXED.get((key, file, part, self.pipe(reader)))
            if value is not None and reader not in self.READER_FIXED and not self.is_variable(reader):
                return value
        base = self.fixed_latency(opcode, modifiers, predicate=file in ("P", "UP"),
                                  uniform=file in ("UR", "UP"))
        if file in ("P", "UP") and (guard or reader in self.PREDICATE_AT_ISSUE):
            if file == "UP" and guard and self.UNIFORM_GUARD_FIXED is not None and (
                    reader.startswith("U") or reader in self.UNIFORM_GUARD_READERS):
                return max(base, self.UNIFORM_GUARD_PAIR_FIXED.get(opcode, self.UNIFORM_GUARD_FIXED))
            if file == "UP" and guard and reader in self.UNIFORM_GUARD_READER_FIXED:
                return max(base, self.UNIFORM_GUARD_READER_FIXED[reader])
            return max(base, self.GUARD_FIXED, self.GUARD_PAIR_FIXED.get(opcode, 0))
        exact = next((self.READER_PAIR_EXACT[(k, reader)] for k in reversed(keys)
                      if (k, reader) in self.READER_PAIR_EXACT), None)
        if exact is not None:
            return exact
        if file in ("UR", "UP"):
            if (opcode, reader) in self.UNIFORM_PAIR_FIXED:
                return max(base, self.UNIFORM_PAIR_FIXED[(opcode, reader)])
            if opcode in self.UNIFORM_MOVES:
                return base
            if not reader.startswith("U"):
                return max(base, self.UNIFORM_TO_VECTOR)
            if opcode == reader and opcode in self.UNIFORM_SAME_UNIT:
                return base
            return max(base, self.UNIFORM_READER_FIXED.get(reader, 0))
        if opcode in self.MMA and reader in self.MMA_TO_MEMORY_READERS:
            if self.MMA_SINGLE_PASS_TO_MEMORY is not None and self.mma_single_pass(opcode, modifiers):
                if self.MMA_SINGLE_PASS_M8_TO_MEMORY is not None and modifiers and modifiers[0].startswith("88"):
                    return self.MMA_SINGLE_PASS_M8_TO_MEMORY
                return self.MMA_SINGLE_PASS_TO_MEMORY
            return self.MMA_TO_MEMORY
        if opcode in self.MMA and self.MMA_TO_DECOUPLED \
                and (self.is_variable(reader) or reader in self.MMA_DECOUPLED_READERS) \
                and reader not in self.READER_FIXED:
            return max(base - self.MMA_TO_DECOUPLED, 1)
        pair = [self.READER_PAIR_FIXED[(k, reader)] for k in keys if (k, reader) in self.READER_PAIR_FIXED]
        need = max(base, max(pair) if pair else self.READER_FIXED.get(reader, 0))
        if reader not in self.READER_FIXED and reader not in self.NO_PIPE_READERS and not self.is_variable(reader):
            if self.pipe(opcode) != self.pipe(reader):
                need = max(need, self.CROSS_PIPE)
            immediate = IMMEDIATE_FACTOR in modifiers
            for key in (opcode, *(f"{opcode}.{m}" for m in modifiers)):
                pair = (key, file, self.pipe(reader))
                value = self.PAIR_FIXED_IMMEDIATE.get(pair) if immediate else None
                need = max(need, value if value is not None else self.PAIR_FIXED.get(pair, 0))
        return need

    def latency_modifiers(self, ins) -> tuple:
        """`ins`'s modifiers as the latency rules key a producer: with IMMEDIATE_FACTOR added
        where a `pair_fixed_immediate_factor` entry names it and its second factor is an
        immediate (ptxas reads `IMAD.HI.U32 R12, P1, R3, 0x4, R12`'s carry-out sooner than a
        register factor's)."""
        mods = tuple(ins.modifiers)
        if self._IMMEDIATE_KEYS and len(ins.operands) >= 2 and \
                any(f"{ins.opcode}.{m}" in self._IMMEDIATE_KEYS for m in mods) and \
                type(ins.operands[-2]).__name__ == "Imm":
            return mods + (IMMEDIATE_FACTOR,)
        return mods

    def addend_registers(self, ins) -> set:
        """The register an IMAD.WIDE or IMAD.HI reads as the high half of its 64-bit addend
        (the last R operand before trailing predicates, plus one), when the model says
        anything about it."""
        if ins.opcode != "IMAD" or not ("WIDE" in ins.modifiers or "HI" in ins.modifiers) or not self.ADDEND_FIXED:
            return set()
        ops = list(ins.operands)
        while ops and getattr(ops[-1], "file", None) == "P":
            ops.pop()
        c = ops[-1] if len(ops) >= 4 else None
        if getattr(c, "file", None) != "R" or c.index == 255:
            return set()
        return {("R", c.index + 1)}

    def read_order(self, unit: str | None) -> str | None:
        """The in-order group a source unit reads in (`source_read_order`; itself if none)."""
        return None if unit is None else self.READ_ORDER.get(unit, unit)

    def queue_of(self, opcode: str) -> str:
        return self.QUEUE.get(opcode, opcode)

    def variable_latency(self, opcode: str) -> int:
        return self.VARIABLE.get(opcode, 20)


@functools.cache
def model(family: str) -> LatencyModel:
    """The latency model in `sched/latency/<family>.json`."""
    return LatencyModel(json.loads((DATA / f"{family}.json").read_text()))


def model_for(arch) -> LatencyModel:
    """The latency model of a target (an `encoder.arch.Target` or an arch name)."""
    from ptx2sass.encoder.arch import target
    return model(target(arch).latency)
