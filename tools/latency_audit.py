"""Audit `sched.latency` against the distances ptxas itself leaves between a fixed-latency
producer and the instructions that read (RAW) or overwrite (WAW) its result.

    .venv/bin/python -m tools.latency_audit [--arch sm_90] [--corpus zluda --corpus cuda
        --corpus tinygrad --corpus triton --corpus llvm] [--limit N] [--detail] [--json FILE]
    .venv/bin/python -m tools.latency_audit --arch sm_100 --corpus fuzz --fuzz-seeds A:B
        [--fuzz-opcodes HMMA,IDP]     (the fuzzer's programs, as a campaign for the arch makes them)

ptxas's cubins are decoded with our codec (nvdisasm's listing only where the codec has a
gap) and run in the emulator on the corpora's launches; the emulator records the exact
register footprint of every executed instruction (pairs, quads, predicates, uniform
registers), which a static reading of operands cannot give. For each warp the audit keeps a
*stall clock*: the sum of the stall counts ptxas wrote (`max(stall, 1)`: the timing model's
issue rule; it models no dual issue and no yield effect), i.e. the issue distance ptxas
guarantees with stall counts alone, whatever the scoreboards do. A sample is a pair
(producer, consumer) on the executed path with the consumer's lanes overlapping the
producer's; it is *covered* when, between the two, some instruction waited on a scoreboard
set after the producer issued (then the variable-latency wait may be what ptxas counted on,
and the stall distance proves nothing).

Per (producer opcode + key modifiers, result file, register of the result) the minimum
uncovered RAW distance is compared with the arch's latency model (`sched/latency/<family>.json`,
the values the scheduler and the hazard checker use; default arch sm_89):

- our table LOWER than ptxas's minimum: suspect (ptxas may know the hardware needs more);
- our table HIGHER: impossible while the hazard checker passes ptxas's cubins, since it
  would flag them (listed all the same);
- per consumer class too (branch guards, memory addresses, store data ...), since ptxas's
  distance can depend on who reads.

It also checks scoreboard use: opcodes our table calls variable-latency that ptxas runs
without a write scoreboard although a result is read, and opcodes ptxas gives a write
scoreboard that our table calls fixed.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptx2sass.emu.errors import EmuFault  # noqa: E402
from ptx2sass.emu.hazards import TimingModel  # noqa: E402
from ptx2sass.encoder.model import ConstRef, Mem, Reg  # noqa: E402
from ptx2sass.sched.latency import DATA, LatencyModel, model_for  # noqa: E402

NO_SB = 7
BRANCHES = {"BRA", "EXIT", "RET", "CALL", "BRX", "JMP", "JMX", "BREAK", "KILL"}
MEMORY = {"LD", "LDG", "LDS", "LDL", "LDC", "LDSM", "ST", "STG", "STS", "STL", "ATOM", "ATOMG",
          "ATOMS", "RED", "LDGSTS", "ULDC"}
# Modifiers that name a different operation (or a different width of result) and so may
# change the latency; the others (types, comparisons, rounding, LUTs, shift directions)
# are folded into the opcode's row.
KEY_MODIFIERS = {"WIDE", "HI", "MOV", "IADD", "SHL", "X", "64", "128", "U16", "16816", "1688",
                 "8816", "8832", "16832", "16864", "F32", "F16", "BF16", "PACK_AB", "MERGE_C",
                 "MMA", "RELU", "SX32"}


def _mma_table_modifiers() -> set:
    """The modifiers some family's table keys a tensor-core rule by ("HMMA.1684", "BMMA.88128")
    or that change an MMA's passes from its opcode's default (TF32, U4, a sparse shape): a row folding them would be
    judged against another form's latency (HMMA.1684 against HMMA's 24 on sm_100). Other keyed
    rules (F2IP.U8, CS2R.32) stay folded: keyed, F2IP.U8 -> LOP3 reads as padded to 8 in
    tinygrad's cast_float32_to_uint8 where the stalls are back-to-back F2IPs' issue (2 each)."""
    mods = {"SP"}
    for path in DATA.glob("*.json"):
        d = json.loads(path.read_text())
        keys = [*d["fixed"], *(r[0] for r in d["reader_pair_fixed"] + d["pair_fixed"] + d.get("reader_pair_exact", []))]
        mods |= {m for k in keys if k.split(".")[0] in d["mma"] for m in k.split(".")[1:]}
        single = d.get("mma_single_pass", {})
        defaults = set(single.get("default_bits", {}).values())     # U8 is IMMA's: no change
        mods |= {t for t, bits in single.get("input_bits", {}).items() if bits not in defaults}
    return mods


KEY_MODIFIERS |= _mma_table_modifiers()


def producer_key(ins) -> str:
    mods = [m for m in ins.modifiers if m in KEY_MODIFIERS]
    return ".".join([ins.opcode, *mods])


def consumer_class(ins, reg: tuple, lat: LatencyModel | None = None) -> str:
    """Who reads: `guard` (and `branch-guard` for control flow), `addr` (a memory address),
    `data` (a store's value), `pred` (a predicate source), `addend` (IMAD's addend, where
    the model reads it later), or the pipe-agnostic `alu`."""
    file, index = reg
    g = ins.guard
    if isinstance(g, Reg) and g.file == file and g.index == index:
        return "branch-guard" if ins.opcode in BRANCHES else "guard"
    if file in ("P", "UP"):
        return "pred"
    for op in ins.operands:
        if isinstance(op, Mem):
            for r in (op.base, op.ubase, op.desc):
                if isinstance(r, Reg) and r.file == file and r.index <= index <= r.index + 1:
                    return "addr"
        if isinstance(op, ConstRef) and isinstance(op.ureg, Reg) and op.ureg.file == file \
                and op.ureg.index == index:
            return "addr"
    if ins.opcode in MEMORY:
        return "data"
    if lat is not None and reg in lat.addend_registers(ins):
        return "addend"
    return "alu"


def result_part(ins, reg: tuple) -> int:
    """Which register of a multi-register result `reg` is (0: the named one, 1: the next…)."""
    file, index = reg
    best = None
    for op in ins.operands:
        if isinstance(op, Reg) and op.file == file and op.index <= index and not op.is_zero:
            if best is None or op.index > best:
                best = op.index
    return 0 if best is None else min(index - best, 3)


@dataclass
class Stat:
    """Distances seen for one key: minimum, samples, samples at the minimum, an example."""
    min: int = 10 ** 9
    n: int = 0
    at_min: int = 0
    tight: int = 0          # samples at the minimum whose last step stalled more than 1
    example: str = ""
    sites: set = field(default_factory=set)    # distinct static (kernel, producer, consumer) at the minimum

    def add(self, d: int, tight: bool, where: str) -> None:
        self.n += 1
        if d < self.min:
            self.min, self.at_min, self.tight, self.example = d, 0, 0, where
            self.sites = set()
        if d == self.min:
            self.at_min += 1
            self.tight += tight
            if tight:
                self.sites.add(where)


@dataclass
class Audit:
    raw: dict = field(default_factory=lambda: defaultdict(Stat))         # (prod, file, part, cons) →
    raw_covered: dict = field(default_factory=lambda: defaultdict(Stat))
    waw: dict = field(default_factory=lambda: defaultdict(Stat))
    # Scoreboard use, per opcode: [instances with a write scoreboard, without one] among
    # executed instructions that wrote a register.
    wr_sb: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    # Variable-latency results read with no write scoreboard on the producer and no later
    # same-queue scoreboard covering it: opcode → count.
    unguarded_reads: dict = field(default_factory=lambda: defaultdict(int))
    kernels: int = 0
    hazards: list = field(default_factory=list)     # what the hazard checker flagged in ptxas's cubins
    skipped: list = field(default_factory=list)
    listing_fallback: int = 0
    arch: str = "sm_89"

    @property
    def lat(self) -> LatencyModel:
        """The latency model audited: the arch's."""
        return model_for(self.arch)


class _WarpAudit:
    __slots__ = ("s", "last", "sb_set", "waited_set", "last_stall", "pending_var")

    def __init__(self):
        self.s = 0                          # stall clock
        self.last: dict = {}                # reg → (s, offset, ins, lanes)
        self.sb_set = [None] * 6            # stall clock when each scoreboard was last set
        self.waited_set = -1                # latest set time of any scoreboard waited on
        self.last_stall = 1
        self.pending_var: dict = {}         # reg → (offset, opcode, wr_sb, seq) of variable producers


def audit_model(audit: Audit):
    """A TimingModel that also feeds `audit` (one class per audit; hazards are still judged)."""

    class AuditModel(TimingModel):
        # the audit state lives on each clock (warps share one until they diverge, and a
        # clock's copy takes a copy of it)
        def new_clock(self):
            clock = super().new_clock()
            clock.audit = _WarpAudit()
            return clock

        def end(self, clock, step, lanes, reads, writes) -> None:
            if not self.serialised:
                self._record(clock, step, lanes, reads, writes)
            super().end(clock, step, lanes, reads, writes)

        def _record(self, clock, step, lanes, reads, writes) -> None:
            a = clock.audit
            ins = step.ins
            ctl = ins.control
            wait = ctl.wait
            if ins.opcode == "DEPBAR":
                for o in ins.operands:
                    if isinstance(o, Reg) and o.file == "SB":
                        wait |= 1 << o.index
            for sb in range(6):
                if wait >> sb & 1:
                    if a.sb_set[sb] is not None:
                        a.waited_set = max(a.waited_set, a.sb_set[sb])
                    for reg in [r for r, p in a.pending_var.items() if p[2] == sb]:
                        del a.pending_var[reg]
            where = f"{self.kernel}@0x{step.offset:04x}"
            tight = a.last_stall > 1
            # ptxas's padding before a reader is the wait for its most recent producer: an
            # older producer's read is no padded site (zluda's bf16 mma: FMUL R4 -> FADDs ->
            # F2FP R8 -> HMMA R8, R8, R8, R4 24 after the FMUL, waiting for the F2FP)
            issued = [p[0] for r in dict.fromkeys(reads) if (p := a.last.get(r)) is not None]
            latest = max(issued, default=None)
            for reg in dict.fromkeys(reads):
                p = a.last.get(reg)
                mine = lanes if reg[0] in ("R", "P") else _ALL
                if p is not None and p[3] & mine:
                    s0, off, pins, _ = p
                    key = (producer_key(pins), reg[0], result_part(pins, reg),
                           consumer_class(ins, reg, audit.lat), ins.opcode)
                    table = audit.raw_covered if a.waited_set > s0 else audit.raw
                    table[key].add(a.s - s0, tight and s0 == latest, f"{where} <- 0x{off:04x} {pins.opcode}")
                q = a.pending_var.get(reg)
                if q is not None and q[2] == NO_SB:
                    audit.unguarded_reads[q[1]] += 1
            variable = audit.lat.is_variable(ins.opcode)
            writes = list(dict.fromkeys(writes))
            for reg in writes:
                p = a.last.get(reg)
                mine = lanes if reg[0] in ("R", "P") else _ALL
                if p is not None and p[3] & mine:
                    s0, off, pins, _ = p
                    key = (producer_key(pins), reg[0], result_part(pins, reg),
                           "var" if variable else "fixed")
                    audit.waw[key].add(a.s - s0, tight, f"{where} <- 0x{off:04x} {pins.opcode}")
                if variable:
                    a.last.pop(reg, None)
                    a.pending_var[reg] = (step.offset, ins.opcode, ctl.wr_sb, 0)
                else:
                    a.last[reg] = (a.s, step.offset, ins, lanes)
                    a.pending_var.pop(reg, None)
            if writes and any(r[0] in ("R", "UR", "P", "UP") for r in writes):
                audit.wr_sb[ins.opcode][0 if ctl.wr_sb != NO_SB else 1] += 1
            if ctl.wr_sb != NO_SB:
                a.sb_set[ctl.wr_sb] = a.s
                # A later same-queue scoreboard covers earlier unguarded results of its unit.
                q = audit.lat.queue_of(ins.opcode)
                for reg, p in list(a.pending_var.items()):
                    if p[2] == NO_SB and audit.lat.queue_of(p[1]) == q:
                        a.pending_var[reg] = (p[0], p[1], ctl.wr_sb, 0)
            if ctl.rd_sb != NO_SB:
                a.sb_set[ctl.rd_sb] = a.s
            a.last_stall = max(ctl.stall, 1)
            a.s += a.last_stall

    return AuditModel


_ALL = (1 << 32) - 1


# --------------------------------------------------------------------------- corpora

def _decoder(cubin: bytes, audit: Audit):
    """Our codec when it reads the whole text, else nvdisasm's listing (counted)."""
    from ptx2sass.emu.loader import codec_decoder
    from tools.emu_testing import cubin_listing_decoder
    listing = None

    def decode(text, arch, kernel):
        nonlocal listing
        try:
            return codec_decoder(text, arch, kernel)
        except EmuFault:
            audit.listing_fallback += 1
            listing = listing or cubin_listing_decoder(cubin)
            return listing(text, arch, kernel)
    return decode


def _spread(items: list, limit: int | None) -> list:
    if not limit or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def launches(corpus: str, limit: int | None = None, max_threads: int = 4096, names=None,
             arch: str = "sm_89", fuzz: tuple = ()):
    """(name, runner) for each launch of a corpus, ptxas compiling for `arch`;
    runner(timing, decoder_for) → outcome. `names`: only these launches (zluda/cuda test
    names, tinygrad file names); `fuzz`: (seeds, opcodes) of the `fuzz` corpus."""
    if corpus == "fuzz":
        yield from _fuzz_launches(*fuzz, arch=arch)
        return
    for name, run in _launches(corpus, limit, max_threads, arch):
        if names is None or name.split("/", 1)[1].removesuffix(".ptx") in names:
            yield name, run


def _launches(corpus: str, limit: int | None, max_threads: int, arch: str):
    from tools import emu_testing as t
    if corpus == "zluda":
        entries = [e for e in t.zluda_manifest() if "ptxas_error" not in e]
        for e in _spread(entries, limit):
            def run(timing, decoder_for, e=e):
                cubin = t.zluda_cubin(e, arch)
                if cubin is None:
                    return None
                return t.run_zluda(e, hazard_check=True, cubin=cubin, decoder=decoder_for(cubin),
                                   timing=timing)
            yield f"zluda/{e['name']}", run
    elif corpus == "cuda":
        from ptx2sass import oracle
        ref = t.cuda_reference_module()
        entries = [e for e in ref.load_manifest() if not e["name"].endswith(".G")]
        for e in _spread(entries, limit):
            def run(timing, decoder_for, e=e):
                build = oracle.ptxas((t.CUDA_DIR / e["ptx"]).read_text(), arch, name=e["ptx"])
                if not build.ok:
                    return None
                return t.run_cuda_launch(e, ref, decoder=decoder_for(build.output), timing=timing)
            yield f"cuda/{e['name']}", run
    elif corpus == "tinygrad":
        entries = [e for e in t.tinygrad_manifest()
                   if math.prod(e["grid"]) * math.prod(e["block"]) <= max_threads]
        entries.sort(key=lambda e: e["sha256"])
        for e in _spread(entries, limit):
            def run(timing, decoder_for, e=e):
                cubin = t.tinygrad_cubin(e, arch)
                if cubin is None:
                    return None
                return t.run_tinygrad(e, cubin=cubin, decoder=decoder_for(cubin), timing=timing)
            yield f"tinygrad/{e['file']}", run
    elif corpus == "operand_kinds":      # tools/operand_kinds.py: every operand kind, random chains
        from types import SimpleNamespace

        from ptx2sass import oracle
        from tools import operand_kinds as ok
        for op in _spread(ok.OPS, limit):
            def run(timing, decoder_for, op=op):
                cubin = oracle.ptxas(ok.op_module(op), "sm_89").output
                data, params = ok.inputs(op)
                results = [ok.launch(cubin, op, combo, data, params, decoder=decoder_for(cubin),
                                     timing=timing)[1] for combo in ok.kind_combos(op)]
                return SimpleNamespace(passed=True, reason="",
                                       result=SimpleNamespace(hazards=[h for r in results for h in r.hazards]))
            yield f"operand_kinds/{op.name}", run
        chains = oracle.ptxas(ok.chain_module(range(ok.SEED_CHAINS)), "sm_89").output
        for seed in range(limit or ok.SEED_CHAINS):
            def run(timing, decoder_for, seed=seed):
                res = ok.launch_chain(chains, seed, decoder=decoder_for(chains), timing=timing)[1]
                return SimpleNamespace(passed=True, reason="", result=res)
            yield f"operand_kinds/chain_{seed}", run
    elif corpus in ("triton", "llvm"):   # tests/<corpus>_corpus.py: launches and inputs
        from types import SimpleNamespace

        from ptx2sass import oracle
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        mod = __import__(f"{corpus}_corpus")
        ptx_dir = mod.TRITON_DIR if corpus == "triton" else mod.LLVM_DIR
        for e in _spread(mod.manifest(), limit):
            def run(timing, decoder_for, e=e):
                build = oracle.ptxas((ptx_dir / e["file"]).read_text(), arch, name=e["file"])
                if not build.ok:
                    return None
                result, _ = mod.launch(e, build.output, decoder=decoder_for(build.output), timing=timing)
                return SimpleNamespace(passed=True, reason="", result=result)
            yield f"{corpus}/{e['file']}", run
    else:
        raise ValueError(f"unknown corpus {corpus!r}")


def _fuzz_launches(seeds, opcodes=(), program_arch: str | None = None, arch: str = "sm_89"):
    """The fuzzer's programs of `seeds` as a campaign for `arch` makes them (statements
    ptxas refuses for the arch's `.target` peeled off), ptxas's cubin of each; with
    `opcodes`, only the programs whose cubin holds every one of them (the others are not run:
    running is what costs). `program_arch`: generate the programs a campaign for that arch
    made (an sm_89 program compiled for sm_100, as campaigns did before sm_90+ programs got
    their own `.target`)."""
    from types import SimpleNamespace

    from ptx2sass.emu.loader import load_program
    from ptx2sass.fuzz.campaign import Options, _only_newer_target, make_program, peel
    from ptx2sass.fuzz.runner import compile_ptxas, execute, load_from_listing

    def refusal(case):
        cubin, detail = compile_ptxas(case)
        return detail if cubin is None and _only_newer_target(detail) else None
    for seed in seeds:
        def run(timing, decoder_for, seed=seed):
            case = peel(make_program(seed, Options(arch=program_arch or arch)), arch, refusal, Options().peel)
            cubin, _ = compile_ptxas(case)
            if cubin is None:
                return None
            program = load_program(cubin, case.kernel, decoder_for(cubin))
            if opcodes and not set(opcodes) <= {i.opcode for _, i in program.instructions}:
                return SimpleNamespace(passed=False, reason="not run: lacks the opcodes asked for", result=None)
            return SimpleNamespace(passed=True, reason="", result=execute(program, case, True, timing=timing))
        yield f"fuzz/{seed}", run


def run_audit(corpora=("zluda", "cuda", "tinygrad"), limit: int | dict | None = None,
              progress=None, names: dict | None = None, arch: str = "sm_89", fuzz: tuple = ()) -> Audit:
    """Audit the launches of `corpora` compiled by ptxas for `arch` against that arch's
    latency model; `limit`: at most that many launches per corpus (an even spread), or a
    dict corpus → limit; `names`: corpus → the launches to take; `fuzz`: (seeds, opcodes)
    [, program arch] of the `fuzz` corpus (see _fuzz_launches)."""
    audit = Audit(arch=arch)
    model = audit_model(audit)
    for corpus in corpora:
        for name, runner in launches(corpus, limit.get(corpus) if isinstance(limit, dict) else limit,
                                     names=(names or {}).get(corpus), arch=arch, fuzz=fuzz):
            try:
                outcome = runner(model, lambda cubin: _decoder(cubin, audit))
            except EmuFault as e:
                audit.skipped.append((name, str(e)[:100]))
                continue
            if outcome is None:
                audit.skipped.append((name, "ptxas rejects"))
                continue
            ok = getattr(outcome, "passed", getattr(outcome, "ok", False))
            if not ok and outcome.reason.startswith("not run"):
                continue
            if not ok and "fault" in (outcome.reason or ""):
                audit.skipped.append((name, outcome.reason[:100]))
                continue
            audit.kernels += 1
            if outcome.result is not None:
                audit.hazards += [str(h) for h in outcome.result.hazards]
            if progress:
                progress(name)
    return audit


# --------------------------------------------------------------------------- judging

def table_latency(key: tuple, lat: LatencyModel) -> int:
    """What the latency model says for a sample key (producer opcode.MODS, result file, part,
    reader class, reader opcode); for a merged key without the reader, the least over the
    readers seen is not known here: the producer's own-pipe latency."""
    prod, file = key[0], key[1]
    opcode, *mods = prod.split(".")
    if len(key) < 5:
        return lat.fixed_latency(opcode, tuple(mods), predicate=file in ("P", "UP"),
                                 uniform=file in ("UR", "UP"))
    return lat.read_latency(opcode, tuple(mods), file, key[4], key[3] in ("guard", "branch-guard"),
                            key[2], key[3] == "addend")


def merge(stats: dict, width: int) -> dict:
    """Stats merged over the key's fields beyond `width` (3: per producer and result
    register; 4: per consumer class as well)."""
    out: dict = defaultdict(Stat)
    for key, st in stats.items():
        m = out[key[:width]]
        if st.min < m.min:
            m.min, m.at_min, m.tight, m.example = st.min, st.at_min, st.tight, st.example
            m.sites = set(st.sites)
        elif st.min == m.min:
            m.at_min += st.at_min
            m.tight += st.tight
            m.sites |= st.sites
        m.n += st.n
    return out


def by_producer(stats: dict) -> dict:
    return merge(stats, 3)


def findings(audit: Audit, min_sites: int = 3) -> tuple[list, list]:
    """(too_low, too_high).

    too_low: rows (group, ours, ptxas min, Stat) where a value of our table is below what
    ptxas ever leaves. A group is every sample our table treats alike: one producer opcode,
    result file, and the latency `read_latency` gives (so IADD3→STG and IADD3→LDG, both 5,
    are one group: a table value is too low only if ptxas leaves more for every reader it
    covers). It counts only with at least `min_sites` distinct static pairs at the minimum
    where ptxas visibly padded (the step before the reader stalled more than 1 cycle): a
    minimum that ptxas merely happened to leave is no evidence.

    too_high: rows (key, ours, ptxas min, Stat) per producer and reader where our latency
    exceeds a distance ptxas relies on (the hazard checker flags those in ptxas's cubins).
    """
    groups: dict = defaultdict(dict)
    high = []
    for key, st in sorted(audit.raw.items()):
        ours = table_latency(key, audit.lat)
        groups[(key[0].split(".")[0], key[1], reader_group(key, audit.lat), ours)][key] = st
        if ours > st.min:
            high.append((key, ours, st.min, st))
    low = []
    for g, rows in sorted(groups.items()):
        st = merge(rows, 0)[()]
        if g[2] == "variable":
            # Readers of the variable-latency units (MUFU, I2F, F2I ...): ptxas's gaps before
            # them vary with the unit's issue rate, not with the producer (FMUL→MUFU and
            # IADD3→F2I are 4 on thousands of pairs, HMUL2→MUFU 6 in one kernel): no evidence
            # about the table either way.
            continue
        if g[3] < st.min and len(st.sites) >= min_sites:
            low.append((g, g[3], st.min, st))
    return low, high


def reader_group(key: tuple, lat: LatencyModel) -> str:
    """How a reader uses a result, independently of the table: as a guard, or by the kind of
    unit reading it (memory, FP64, tensor core, another variable-latency unit, the uniform
    datapath, or the ALU/FMA/FP16 pipe)."""
    cls, reader = key[3], key[4]
    if cls in ("guard", "branch-guard"):
        return "guard"
    if reader in lat.MEMORY_READERS or cls in ("addr", "data"):
        return "memory"
    if reader.startswith("D") and reader[1:] in ("ADD", "MUL", "FMA", "SETP", "MNMX"):
        return "fp64"
    if reader in ("HMMA", "IMMA", "QMMA"):
        return "mma"
    if lat.is_variable(reader):
        return "variable"
    if reader.startswith("U"):
        return "uniform"
    if reader in BRANCHES:
        return "control"
    return lat.pipe(reader)


def scoreboard_findings(audit: Audit) -> tuple[list, list]:
    """(fixed_but_scoreboarded, variable_without_scoreboard) per opcode."""
    fixed_sb, var_nosb = [], []
    lat = audit.lat
    for op, (with_sb, without) in sorted(audit.wr_sb.items()):
        if not lat.is_variable(op) and with_sb and op not in lat.SCOREBOARD_OPTIONAL:
            fixed_sb.append((op, with_sb, without))
        if lat.is_variable(op) and without:
            var_nosb.append((op, with_sb, without, audit.unguarded_reads.get(op, 0)))
    return fixed_sb, var_nosb


def _fmt_key(key) -> str:
    return f"{key[0]} {key[1]}{'+' + str(key[2]) if key[2] else ''}"


def report(audit: Audit, detail: bool = False, out=sys.stdout, min_sites: int = 3) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"{audit.kernels} launches audited; {len(audit.skipped)} skipped; "
      f"{audit.listing_fallback} kernel texts read through nvdisasm (codec gaps); "
      f"hazards the checker flags in these ptxas cubins: {len(audit.hazards)}")
    for h in audit.hazards[:10]:
        p(f"  {h}")
    low, high = findings(audit, min_sites)
    prods = by_producer(audit.raw)
    p(f"\nfixed-latency producers (opcode.key-modifiers, result register): {len(prods)}; "
      f"RAW samples {sum(s.n for s in audit.raw.values())} uncovered, "
      f"{sum(s.n for s in audit.raw_covered.values())} covered by a scoreboard wait; "
      f"(producer, reader) rows {len(audit.raw)}")
    hdr = (f"{'producer':<28} {'reader':<20} {'ours':>4} {'ptxas':>5} {'n':>8} {'at min':>7} "
           f"{'sites':>5}  example")

    def row(key, ours, mn, st):
        p(f"{_fmt_key(key):<28} {key[4] + ' ' + key[3]:<20} {ours:>4} {mn:>5} {st.n:>8} {st.at_min:>7} "
          f"{len(st.sites):>5}  {st.example}")
    p(f"\nOUR LATENCY LOWER than ptxas's minimum distance over every reader it applies to, with "
      f">= {min_sites} padded static sites at the minimum (suspect: too optimistic): {len(low)} groups")
    p(f"{'producer':<12} {'file':<4} {'readers':<9} {'ours':>4} {'ptxas':>5} {'n':>8} {'at min':>7} "
      f"{'sites':>5}  example")
    for g, ours, mn, st in low:
        p(f"{g[0]:<12} {g[1]:<4} {g[2]:<9} {ours:>4} {mn:>5} {st.n:>8} {st.at_min:>7} {len(st.sites):>5}  "
          f"{st.example}")
    p(f"\nOUR LATENCY HIGHER than ptxas's minimum distance (the hazard checker flags these in "
      f"ptxas's cubins; we may also waste cycles): {len(high)} rows")
    p(hdr)
    for r in high:
        row(*r)
    lower = [(k, table_latency(k, audit.lat), st.min, st) for k, st in sorted(audit.raw.items())
             if table_latency(k, audit.lat) < st.min and (detail or len(st.sites) >= min_sites)]
    p(f"\nsingle (producer, reader) rows where ours is lower (other readers of the same table "
      f"value may need less; {'all' if detail else f'>= {min_sites} padded sites'}): {len(lower)} rows")
    p(hdr)
    for r in lower:
        row(*r)
    fixed_sb, var_nosb = scoreboard_findings(audit)
    p("\nscoreboards: opcodes our table calls FIXED that ptxas gives a write scoreboard "
      "(executed instances with / without):")
    for op, w, wo in fixed_sb:
        p(f"  {op:<10} {w:>7} / {wo}")
    p("opcodes our table calls VARIABLE executed without a write scoreboard "
      "(with / without; reads of such a result never covered by a same-queue scoreboard):")
    for op, w, wo, bad in var_nosb:
        p(f"  {op:<10} {w:>7} / {wo:<7} uncovered reads {bad}")
    if detail:
        p("\nWAW (fixed producer, later writer): producer, file, part, later kind → min distance")
        for key, st in sorted(audit.waw.items()):
            p(f"  {_fmt_key(key):<28} {key[3]:<6} ours {table_latency(key, audit.lat):>3} min {st.min:>3} "
              f"n {st.n:>7}  {st.example}")
        p("\nall RAW rows (uncovered): producer, reader → ours / min (n, at min, padded sites)")
        for key, st in sorted(audit.raw.items()):
            p(f"  {_fmt_key(key):<28} {key[3]:<13} {key[4]:<8} {table_latency(key, audit.lat):>3} / {st.min:<3} "
              f"({st.n}, {st.at_min}, {len(st.sites)})  {st.example}")
        if audit.skipped:
            p("\nskipped:")
            for name, why in audit.skipped:
                p(f"  {name}: {why}")


def to_json(audit: Audit) -> dict:
    def rows(stats):
        return [{"key": list(k), "min": s.min, "n": s.n, "at_min": s.at_min, "tight": s.tight,
                 "sites": len(s.sites), "example": s.example} for k, s in sorted(stats.items())]
    return {"arch": audit.arch, "kernels": audit.kernels, "raw": rows(audit.raw), "raw_covered": rows(audit.raw_covered),
            "waw": rows(audit.waw), "wr_sb": dict(audit.wr_sb),
            "unguarded_reads": dict(audit.unguarded_reads), "skipped": audit.skipped}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="sm_89", help="ptxas compiles for it; its latency table is audited")
    ap.add_argument("--corpus", action="append", choices=("zluda", "cuda", "tinygrad", "operand_kinds",
                                                               "triton", "llvm", "fuzz"))
    ap.add_argument("--fuzz-seeds", default="", help="the fuzz corpus's seeds (A:B, lists: as a campaign's)")
    ap.add_argument("--fuzz-opcodes", default="",
                    help="comma-separated: run only the fuzz programs whose ptxas cubin has all of them")
    ap.add_argument("--limit", type=int, default=None, help="at most N launches per corpus (even spread)")
    ap.add_argument("--detail", action="store_true", help="every RAW/WAW row, skipped launches")
    ap.add_argument("--json", type=Path, help="write the raw statistics here")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--min-sites", type=int, default=3,
                    help="padded static sites at ptxas's minimum for a LOW row to count (default 3)")
    args = ap.parse_args(argv)
    corpora = args.corpus or ["zluda", "cuda", "tinygrad"]
    progress = None if args.quiet else (lambda name: print(f"  {name}", file=sys.stderr))
    from ptx2sass.fuzz.campaign import parse_seeds
    fuzz = (parse_seeds(args.fuzz_seeds) if args.fuzz_seeds else [],
            tuple(o for o in args.fuzz_opcodes.split(",") if o))
    audit = run_audit(corpora, args.limit, progress, arch=args.arch, fuzz=fuzz)
    report(audit, args.detail, min_sites=args.min_sites)
    if args.json:
        args.json.write_text(json.dumps(to_json(audit), indent=1))
    low, high = findings(audit, args.min_sites)
    return 1 if low or high else 0


if __name__ == "__main__":
    sys.exit(main())
