"""Run one Case both ways and classify the outcome.

    pass       ours computes what ptxas's cubin computes, with no hazard in ours
    invalid    ptxas rejects the PTX (a generator bug: should never happen)
    ptxas_ice  ptxas fails on the PTX with an internal compiler error (`(C7907) Internal
               compiler error`) or crashes: its own bug, not the generator's. There is no
               cubin to compare with, so ours is compiled and run alone (its refusal, crash,
               fault or hazard is reported as such instead)
    refuse     ptx2sass refuses it (CompileError) though ptxas accepts it
    crash      ptx2sass raises anything else (an internal error)
    timeout    a compile or run overran its time, or ptxas's cubin ran out of budget
    emu_fail   the emulator cannot run ptxas's cubin, or finds hazards in it (an emulator
               bug: ptxas's code runs on hardware), reported apart from ours
    mismatch   our cubin faults, or an output differs from ptxas's (floats: NaN = NaN;
               approximate instructions within their bound)
    ptxas_wrong  the first differing output is one of ptxas's pinned departures from the
               manual (fuzz/departures.py: ours gives the manual's value), not our bug
    hazard     outputs equal, but the emulator's hazard checker flags our control codes, or
               our warp-collective instructions run with member lanes apart when rerun with
               explicit reconvergence (what the hardware guarantees: lanes meet only at a
               BSYNC, WARPSYNC or barrier, and a YIELD may release a BSYNC early)

Each non-pass outcome carries a signature: the class plus a normalised message (numbers,
registers and line numbers taken out), or for a mismatch the instruction key of the
statement that last wrote the first differing output. The reducer keeps a program failing
with the same signature.
"""
from __future__ import annotations

import math
import re
import signal
import struct
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ptx2sass.fuzz.inputs import Case, launch_data
from ptx2sass.fuzz.program import COUNTER_BYTES, GLOBAL_COUNTER_OPS, PRIVATE_BYTES, SLOT_BYTES

CLASSES = ("pass", "invalid", "refuse", "crash", "timeout", "emu_fail", "mismatch", "hazard", "ptxas_wrong",
           "ptxas_ice")
# When one run finds several things, the report's class is the first of these it found.
PRIORITY = ("invalid", "crash", "refuse", "timeout", "mismatch", "emu_fail", "hazard", "ptxas_wrong", "ptxas_ice",
            "pass")
# ptxas's own failures on PTX it does not reject: an internal error, or a crash (a signal)
_PTXAS_ICE = re.compile(r"Internal compiler error|^ptxas crashed")
ARCH = "sm_89"
COMPILE_SECONDS = 120
RUN_SECONDS = 120
BUDGET = 2_000_000


class Timeout(Exception):
    pass


@contextmanager
def time_limit(seconds: int, *, cpu: bool = True):
    """Raise Timeout after `seconds` of this process's CPU time, or of wall-clock time with
    cpu=False (waits on a subprocess, which use no CPU here). CPU time is the default: a campaign
    at nice 15 on a loaded machine, or one paused between sessions, must not turn waiting into
    timeouts. Main thread of a process only; elsewhere no limit."""
    which, timer = (signal.SIGPROF, signal.ITIMER_PROF) if cpu else (signal.SIGALRM, signal.ITIMER_REAL)

    def handler(signum, frame):
        raise Timeout(f"over {seconds} s")
    try:
        old = signal.signal(which, handler)
    except ValueError:
        yield
        return
    signal.setitimer(timer, seconds)
    try:
        yield
    finally:
        signal.setitimer(timer, 0)
        signal.signal(which, old)


_NORMALISE = [
    (re.compile(r"^[^,;]*\.ptx, line \d+; (error|warning)\s*:\s*"), ""),
    (re.compile(r"^[^,;]*\.ptx; (error|warning)\s*:\s*kernel \w+: "), ""),
    (re.compile(r"(?<![\w.])[-+]?\d+\.\d*(e[-+]?\d+)?(?![\w])"), "#"),
    (re.compile(r"\bline \d+\b"), "line #"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x#"),
    (re.compile(r"(%[a-zA-Z_]+)\d+"), r"\1#"),
    (re.compile(r"\b(U?R|U?P|B|SR_)\d+\b"), r"\1#"),
    (re.compile(r"\$L\d+_\w+"), "$L"),
    (re.compile(r"\bfn\d+\b"), "fn#"),
    (re.compile(r"(?<![\w.])-?\d+(\.\d+)?(?![\w])"), "#"),
    (re.compile(r"\s+"), " "),
]


def renormalise(signature: str) -> str:
    """A signature recorded by an older normalisation, in today's form (reports merge them)."""
    cls, sep, rest = signature.partition(": ")
    if not sep:
        return signature
    rest = re.sub(r"#\.\d+(e[-+]?#)?", "#", rest)
    return f"{cls}: {normalise(rest)}"


def normalise(message: str) -> str:
    msg = message.strip().splitlines()[0] if message.strip() else ""
    for pattern, repl in _NORMALISE:
        msg = pattern.sub(repl, msg)
    return msg[:200]


@dataclass
class Outcome:
    cls: str
    sig: str = ""
    detail: str = ""
    findings: list = field(default_factory=list)       # [(class, signature)] all that was found
    ours: dict = field(default_factory=dict)            # registers, instructions, cycles, hazards
    theirs: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"class": self.cls, "sig": self.sig, "detail": self.detail, "findings": self.findings,
                "ours": self.ours, "theirs": self.theirs, "seconds": self.seconds}


_UNDECODABLE = re.compile(r"cannot decode instruction word (0x[0-9a-fA-F]+)")


def ptx_for(case: Case) -> str:
    """The program as both compilers get it: its `.target sm_89` lowered to the case's arch
    where that is older (ptxas refuses a newer `.target`; newer archs take sm_89 PTX)."""
    from ptx2sass.encoder.arch import target
    if target(case.arch).sm < 89:
        return case.text.replace(".target sm_89", f".target {case.arch}", 1)
    return case.text


def emu_signature(reason: str, arch: str = ARCH) -> str:
    """A fault's signature; for a word the emulator cannot decode, nvdisasm's reading of it
    (registers and numbers taken out), which names the form to add."""
    m = _UNDECODABLE.search(reason)
    if m:
        word = int(m.group(1), 16)
        try:
            from ptx2sass import oracle
            run = oracle.nvdisasm_raw(word.to_bytes(16, "little"), arch)
            text = next((ln.split("*/", 1)[-1].split("/*")[0].strip(" ;") for ln in run.stdout.splitlines()
                         if "/*0000*/" in ln), "")
            if text:
                return f"cannot decode {normalise(text)}"
        except Exception:  # noqa: BLE001 - no oracle: fall back to the message
            pass
    return normalise(reason)


def _crash_signature(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    where = ""
    for fr in reversed(frames):
        if "/ptx2sass/" in fr.filename.replace("\\", "/") or "/frontend/" in fr.filename or \
                "/encoder/" in fr.filename or "/regalloc/" in fr.filename or "/sched/" in fr.filename or \
                "/emu/" in fr.filename or "/isel/" in fr.filename or "/opt/" in fr.filename:
            parts = fr.filename.replace("\\", "/").split("/")
            where = f"{'/'.join(parts[-2:])}:{fr.name}"
            break
    return f"{type(err).__name__}: {normalise(str(err))} @ {where}"


def compile_ptxas(case: Case) -> tuple[bytes | None, str]:
    from ptx2sass import oracle
    opts = () if case.fmad else ("--fmad=false",)
    try:
        run = oracle.ptxas(ptx_for(case), case.arch, opts, name="fuzz.ptx")
    except oracle.OracleFailed as e:       # ptxas itself crashed: no cubin to compare with
        return None, f"ptxas crashed: {e}"
    if not run.ok:
        first = next((ln for ln in run.stderr.splitlines() if "error" in ln or "fatal" in ln), run.stderr)
        return None, first.strip()
    return run.output, ""


def compile_ours(case: Case) -> bytes:
    import ptx2sass
    return ptx2sass.compile(ptx_for(case), case.arch, filename="fuzz.ptx", fmad=case.fmad, verify_ir=True)


def load(cubin: bytes, kernel: str):
    from ptx2sass.emu.loader import load_program
    return load_program(cubin, kernel)


def load_from_listing(cubin: bytes, kernel: str):
    """ptxas's cubin decoded from nvdisasm's listing, where our decoder has a gap."""
    from ptx2sass.emu.listing_decoder import cubin_listing_decoder
    from ptx2sass.emu.loader import load_program
    return load_program(cubin, kernel, cubin_listing_decoder(cubin))


def execute(program, case: Case, hazard_check: bool = True, reconverge: str = "optimistic", timing=None):
    from ptx2sass.emu.launch import run_buffers
    data = launch_data(case)
    return run_buffers(program, case.grid, case.block, data.params, data.buffers,
                       budget=BUDGET, hazard_check=hazard_check, objects=data.objects, reconverge=reconverge,
                       timing=timing)


def stats(program, result) -> dict:
    return {"registers": program.regcount, "instructions": len(program.instructions),
            "executed": result.instructions, "cycles": result.cycles, "hazards": len(result.hazards)}


# ------------------------------------------------------------------------------ comparing

def _nan(bits: int, width: int) -> bool:
    if width == 16:
        return (bits & 0x7C00) == 0x7C00 and (bits & 0x3FF) != 0
    if width == 32:
        return (bits & 0x7F800000) == 0x7F800000 and (bits & 0x7FFFFF) != 0
    return (bits & 0x7FF0000000000000) == 0x7FF0000000000000 and (bits & 0xFFFFFFFFFFFFF) != 0


def _bf16_nan(bits: int) -> bool:
    return (bits & 0x7F80) == 0x7F80 and (bits & 0x7F) != 0


def _as_float(bits: int, view: str) -> float:
    if view == "f32":
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if view == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if view == "f16":
        return float(np.array([bits & 0xFFFF], dtype=np.uint16).view(np.float16)[0])
    if view == "bf16":
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    raise ValueError(view)


def _lanes(view: str, width: int) -> list[tuple[int, int, str]]:
    """(shift, bits, scalar view) of each float lane of a slot of `width` bits."""
    if view in ("f16x2", "bf16x2"):
        if width < 32:
            return []
        return [(0, 16, view[:-2]), (16, 16, view[:-2])]
    size = {"f32": 32, "f64": 64, "f16": 16, "bf16": 16}[view]
    return [(0, size, view)] if size == width else []


def _close(x: int, y: int, view: str, tolerance: float) -> bool:
    a, b = _as_float(x, view), _as_float(y, view)
    if math.isnan(a) and math.isnan(b):
        return True
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return a == b
    scale = max(abs(a), abs(b))
    return abs(a - b) <= tolerance * max(scale, 1e-30) + (1e-35 if view == "f32" else 0) or \
        abs(a - b) <= tolerance * 1e-4


def equal_slot(x: int, y: int, width: int, floats: tuple, tolerance: float) -> bool:
    if x == y:
        return True
    for view in floats:
        lanes = _lanes(view, width)
        if not lanes:
            continue
        ok = True
        for shift, bits, scalar in lanes:
            mask = (1 << bits) - 1
            a, b = (x >> shift) & mask, (y >> shift) & mask
            if a == b:
                continue
            nan = _bf16_nan if scalar == "bf16" else (lambda v, w=bits: _nan(v, w))
            if nan(a) and nan(b):
                continue
            if tolerance and _close(a, b, scalar, tolerance):
                continue
            ok = False
            break
        if ok:
            return True
    return False


SLOT_WIDTH = {"pred": 32, "b16": 16, "b32": 32, "b64": 64}


@dataclass
class SlotDifference:
    """The first output slot where ours and ptxas's differ (earliest slot, then thread)."""
    thread: int
    slot: int
    name: str
    key: str            # the instruction key of the statement that last wrote the slot
    where: str
    width: int
    ours: int           # the slot's value bits (`width` of them)
    theirs: int
    past: bool          # the bytes past the value differ, not the value


def first_slot_difference(case: Case, ours: dict, theirs: dict) -> SlotDifference | None:
    threads = case.threads
    nslots = max(1, len(case.slots))
    o = np.frombuffer(ours["out"], dtype=np.uint64).reshape(threads, nslots)
    t = np.frombuffer(theirs["out"], dtype=np.uint64).reshape(threads, nslots)
    diff = np.nonzero(o != t)
    if len(diff[0]):
        order = np.lexsort((diff[0], diff[1]))      # earliest slot first, then thread
        for i in order:
            th, sl = int(diff[0][i]), int(diff[1][i])
            name, kind, floats, tol, key, where = case.slots[sl]
            width = SLOT_WIDTH[kind]
            mask = (1 << width) - 1
            x, y = int(o[th, sl]) & mask, int(t[th, sl]) & mask
            if (int(o[th, sl]) >> width) != (int(t[th, sl]) >> width):
                return SlotDifference(th, sl, name, key, where, width, int(o[th, sl]), int(t[th, sl]), True)
            if not equal_slot(x, y, width, tuple(floats), tol):
                return SlotDifference(th, sl, name, key, where, width, x, y, False)
    return None


def compare(case: Case, ours: dict, theirs: dict) -> tuple[str, str] | None:
    """(signature, detail) of the first difference, or None."""
    d = first_slot_difference(case, ours, theirs)
    if d is not None:
        if d.past:
            return (f"mismatch: {d.key} (bytes past the value)",
                    f"thread {d.thread} slot {d.slot} ({d.name}, {d.where}): ours {d.ours:#x}, ptxas {d.theirs:#x}")
        digits = d.width // 4 + 2
        return (f"mismatch: {d.key}",
                f"thread {d.thread}, {d.name} ({d.where} slot {d.slot}, last written by {d.key}): "
                f"ours {d.ours:#0{digits}x}, ptxas {d.theirs:#0{digits}x}")
    a = first_atom_difference(ours, theirs)
    if a is None:
        return None
    if a.thread is None:
        return (f"mismatch: contended atom.global.{a.what}", f"counter {a.word} ({a.what}): ours {a.ours:#x}, ptxas {a.theirs:#x}")
    return (f"mismatch: {a.key}", f"thread {a.thread} private word {a.word}: ours {a.ours:#x}, ptxas {a.theirs:#x}")


@dataclass(frozen=True)
class AtomDifference:
    """The first 64-bit word of the atomics buffer where ours and ptxas's differ (NaN = NaN
    per 32- and 64-bit view): a contended counter (`thread` None, `what` its operation) or a
    word of a thread's private block (`what`: the atomic words, then the vector stores')."""
    thread: int | None
    word: int
    what: str
    ours: int
    theirs: int

    @property
    def key(self) -> str:
        return f"private {self.what} word"


def first_atom_difference(ours: dict, theirs: dict) -> AtomDifference | None:
    oa = np.frombuffer(ours["atom"], dtype=np.uint64)
    ta = np.frombuffer(theirs["atom"], dtype=np.uint64)
    for i in np.nonzero(oa != ta)[0]:
        x, y = int(oa[i]), int(ta[i])
        if _nan(x, 64) and _nan(y, 64) or all(_nan(a, 32) and _nan(b, 32) or a == b for a, b in
                                              ((x & 0xFFFFFFFF, y & 0xFFFFFFFF), (x >> 32, y >> 32))):
            continue
        if i < COUNTER_BYTES // 8:
            op = GLOBAL_COUNTER_OPS[i] if i < len(GLOBAL_COUNTER_OPS) else "?"
            return AtomDifference(None, int(i), op, x, y)
        word = (i - COUNTER_BYTES // 8) % (PRIVATE_BYTES // 8)
        thread = (i - COUNTER_BYTES // 8) // (PRIVATE_BYTES // 8)
        return AtomDifference(int(thread), int(word), "atomic" if word < 4 else "vector store", x, y)
    return None


# ------------------------------------------------------------------------------ the run

def _ours(case: Case, seconds: dict):
    """(cubin, None) or (None, the Outcome of a refusal, crash or timeout)."""
    from ptx2sass.errors import CompileError
    t0 = time.perf_counter()
    try:
        with time_limit(COMPILE_SECONDS):
            cubin = compile_ours(case)
    except Timeout:
        return None, Outcome("timeout", "timeout: ptx2sass compile", seconds=seconds)
    except CompileError as e:
        seconds["ours"] = round(time.perf_counter() - t0, 3)
        if "internal error" in str(e):     # the compiler's own consistency checks: a crash
            return None, Outcome("crash", f"crash: {normalise(str(e))}", str(e), seconds=seconds)
        return None, Outcome("refuse", f"refuse: {normalise(str(e))}", str(e), seconds=seconds)
    except RecursionError as e:
        return None, Outcome("crash", "crash: " + _crash_signature(e), "RecursionError", seconds=seconds)
    except Exception as e:  # noqa: BLE001 - an internal error is what this class counts
        return None, Outcome("crash", "crash: " + _crash_signature(e), f"{type(e).__name__}: {e}", seconds=seconds)
    seconds["ours"] = round(time.perf_counter() - t0, 3)
    return cubin, None


def run_case(case: Case, *, hazard_check: bool = True, known_valid: bool = False) -> Outcome:
    """Compile both ways, run both, compare. `known_valid`: the PTX is known to be accepted
    by ptxas (a program that lost statements of one ptxas accepted), so a refusal needs no
    ptxas run."""
    from ptx2sass.emu.errors import EmuFault
    seconds = {}
    findings = []
    if known_valid:
        ours_cubin, early = _ours(case, seconds)
        if early is not None and early.cls == "refuse":
            return early
    t0 = time.perf_counter()
    try:
        with time_limit(COMPILE_SECONDS, cpu=False):
            theirs_cubin, why = compile_ptxas(case)
    except Timeout:
        return Outcome("timeout", "timeout: ptxas", seconds=seconds)
    seconds["ptxas"] = round(time.perf_counter() - t0, 3)
    if theirs_cubin is None:
        if _PTXAS_ICE.search(why):
            return _ours_alone(case, ours_cubin if known_valid else None, why, hazard_check, seconds)
        return Outcome("invalid", f"invalid: {normalise(why)}", why, seconds=seconds)
    if not known_valid:
        ours_cubin, early = _ours(case, seconds)
    if early is not None:
        return early

    # ptxas's cubin in the emulator: a fault there is the emulator's. A word our decoder
    # cannot read is reported, and the cubin run again decoded from nvdisasm's listing, so
    # that ours is still compared with it.
    t0 = time.perf_counter()
    fell_back = False
    try:
        with time_limit(RUN_SECONDS):
            try:
                theirs_prog = load(theirs_cubin, case.kernel)
            except EmuFault as e:
                if not _UNDECODABLE.search(e.reason):
                    raise
                findings.append(("emu_fail", f"emu_fail: {emu_signature(e.reason, case.arch)}"))
                fell_back = True
                theirs_prog = load_from_listing(theirs_cubin, case.kernel)
            theirs = execute(theirs_prog, case, hazard_check)
    except Timeout:
        return Outcome("timeout", "timeout: emulator on ptxas's cubin", seconds=seconds)
    except EmuFault as e:
        if "budget" in e.reason:
            return Outcome("timeout", "timeout: budget on ptxas's cubin", str(e), seconds=seconds)
        if not fell_back:       # a second fault of the fallback decoding is the same gap
            findings.append(("emu_fail", f"emu_fail: {emu_signature(e.reason, case.arch)}"))
        return _finish(findings, str(e), {}, {}, seconds)
    except Exception as e:  # noqa: BLE001
        if not fell_back:
            findings.append(("emu_fail", "emu_fail: " + _crash_signature(e)))
        return _finish(findings, f"{type(e).__name__}: {e}", {}, {}, seconds)
    seconds["run_ptxas"] = round(time.perf_counter() - t0, 3)
    theirs_stats = stats(theirs_prog, theirs)
    if theirs.hazards:
        findings.append(_their_hazard(theirs.hazards[0]))

    t0 = time.perf_counter()
    try:
        with time_limit(RUN_SECONDS):
            ours_prog = load(ours_cubin, case.kernel)
            ours = execute(ours_prog, case, hazard_check)
    except Timeout:
        return Outcome("timeout", "timeout: emulator on our cubin", seconds=seconds, theirs=theirs_stats,
                       findings=findings)
    except EmuFault as e:
        findings.insert(0, ("mismatch", f"mismatch: ours faults: {emu_signature(e.reason, case.arch)}"))
        return _finish(findings, str(e), {}, theirs_stats, seconds)
    except Exception as e:  # noqa: BLE001
        findings.insert(0, ("mismatch", "mismatch: ours faults: " + _crash_signature(e)))
        return _finish(findings, f"{type(e).__name__}: {e}", {}, theirs_stats, seconds)
    seconds["run_ours"] = round(time.perf_counter() - t0, 3)
    ours_stats = stats(ours_prog, ours)
    detail = ""
    after = []
    diff = compare(case, ours.buffers, theirs.buffers)
    if diff is not None:
        listing = _listing_of(theirs_cubin)
        known = known_departure(case, ours.buffers, theirs.buffers, theirs_cubin, listing)
        if known is not None:
            findings.insert(0, ("ptxas_wrong", f"ptxas_wrong: {known.name}"))
            detail = f"{diff[1]} (ptxas departs from the manual: {known.test})"
            after = _hazards_of_the_departure(known, listing, theirs_prog, theirs.hazards, findings)
        else:
            findings.insert(0, ("mismatch", diff[0]))
            detail = diff[1]
    if ours.hazards:
        findings.append(("hazard", f"hazard: {normalise(ours.hazards[0].message)}"))
        detail = detail or str(ours.hazards[0])
    apart = collectives_apart(ours_prog, case)
    if apart:
        findings.append(("hazard", f"hazard: {apart[0]}"))
        detail = detail or apart[1]
    return _finish(findings, detail, ours_stats, theirs_stats, seconds, after)


def _ours_alone(case: Case, ours_cubin, why: str, hazard_check: bool, seconds: dict) -> Outcome:
    """The outcome where ptxas failed on its own (`_PTXAS_ICE`): ours compiled and run
    without a cubin to compare with; a refusal, crash, fault or hazard of ours outranks it."""
    from ptx2sass.emu.errors import EmuFault
    if ours_cubin is None:
        ours_cubin, early = _ours(case, seconds)
        if early is not None:
            return early
    findings = [("ptxas_ice", f"ptxas_ice: {normalise(why)}")]
    t0 = time.perf_counter()
    try:
        with time_limit(RUN_SECONDS):
            ours_prog = load(ours_cubin, case.kernel)
            ours = execute(ours_prog, case, hazard_check)
    except Timeout:
        return Outcome("timeout", "timeout: emulator on our cubin", seconds=seconds, findings=findings)
    except EmuFault as e:
        findings.insert(0, ("mismatch", f"mismatch: ours faults: {emu_signature(e.reason, case.arch)}"))
        return _finish(findings, str(e), {}, {}, seconds)
    except Exception as e:  # noqa: BLE001
        findings.insert(0, ("mismatch", "mismatch: ours faults: " + _crash_signature(e)))
        return _finish(findings, f"{type(e).__name__}: {e}", {}, {}, seconds)
    seconds["run_ours"] = round(time.perf_counter() - t0, 3)
    if ours.hazards:
        findings.append(("hazard", f"hazard: {normalise(ours.hazards[0].message)}"))
    return _finish(findings, why, stats(ours_prog, ours), {}, seconds)


def _their_hazard(hazard) -> tuple[str, str]:
    return ("emu_fail", f"emu_fail: hazard in ptxas's cubin: {normalise(hazard.message)}")


def _listing_of(cubin: bytes):
    """A function giving ptxas's SASS listing of `cubin`, disassembled once on first call."""
    memo = []

    def listing() -> str:
        if not memo:
            from ptx2sass import oracle
            memo.append(oracle.cuobjdump_sass(cubin))
        return memo[0]
    return listing


def _hazards_of_the_departure(known, listing, program, hazards, findings) -> list:
    """Take the emulator's hazard finding on ptxas's cubin out of `findings` where the
    departure `known` explains it: the hazard is on a read the departure names (ptxas's
    VABSDIFF4 reads R8 for UR8, one cycle after R8's IMAD). Returned to be listed after the
    departure, which then ranks first; a hazard elsewhere stays an emu_fail of its own."""
    if not hazards or known.reads is None:
        return []
    sites = {program.code_bases[f".text.{fn}"] + pc for fn, pc in known.reads(listing())
             if f".text.{fn}" in program.code_bases}
    explained = [h for h in hazards if h.offset in sites]
    if not explained:
        return []
    findings.remove(_their_hazard(hazards[0]))
    rest = [h for h in hazards if h.offset not in sites]
    if rest:
        findings.append(_their_hazard(rest[0]))
    return [_their_hazard(explained[0])]


def known_departure(case: Case, ours: dict, theirs: dict, theirs_cubin: bytes, listing=None):
    """The pinned ptxas departure (fuzz/departures.py) that explains the first difference,
    or None. `listing`: a function giving ptxas's SASS listing (`_listing_of`)."""
    from ptx2sass.fuzz.departures import recognise

    listing = listing or _listing_of(theirs_cubin)
    d = first_slot_difference(case, ours, theirs)
    if d is not None:
        return None if d.past else recognise(d.key, d.ours, d.theirs, d.width, case.text, listing,
                                             reg=d.name)
    # no slot differs: the first differing word of a thread's private atomics block, whose
    # key names the block ("private atomic word"), or a contended counter (campaign 23, seed
    # 34001441: ptxas skipped an `atom.dec` on a predicate it never wrote): rules keyed on
    # any instruction read it
    a = first_atom_difference(ours, theirs)
    if a is None:
        return None
    if a.thread is not None:
        return recognise(a.key, a.ours, a.theirs, 64, case.text, listing)
    return recognise(f"contended atom.global.{a.what}", a.ours, a.theirs, 64, case.text, listing, counter=True)


def collectives_apart(program, case: Case) -> tuple[str, str] | None:
    """(signature, detail) if `program`'s warp collectives run apart from member lanes
    under explicit reconvergence, else None.

    The fuzzer's own runs are optimistic (lanes at the lowest PC run together), which
    reconverges at once where the hardware need not: a warp split by a divergent loop whose
    YIELD released the BSYNC after it runs the next full-mask MATCH in two halves on an
    H200, and the optimistic schedule never shows it (GPU run 12, fuzz 9300296). Only our
    cubin is checked: the explicit mode still flags some of ptxas's WARPSYNC.EXCLUSIVE slow
    paths, which are right on hardware."""
    from ptx2sass.emu.convergence import MEMBER_MASK_OPS, WHOLE_WARP_OPS
    from ptx2sass.emu.errors import EmuFault
    collective = MEMBER_MASK_OPS | WHOLE_WARP_OPS
    if not any(ins.opcode in collective for _, ins in program.instructions):
        return None
    try:
        with time_limit(RUN_SECONDS):
            result = execute(program, case, hazard_check=False, reconverge="explicit")
    except (Timeout, EmuFault) as e:
        return "convergence: explicit reconvergence faults", str(e)
    if not result.convergence_hazards:
        return None
    first = result.convergence_hazards[0]
    return normalise(first.message), str(first)


def _finish(findings, detail, ours, theirs, seconds, after=()) -> Outcome:
    """The outcome of a run's findings: the class and signature of the first by PRIORITY.
    `after`: findings listed too but not ranked (explained by one in `findings`)."""
    if not findings:
        return Outcome("pass", "", "", [], ours, theirs, seconds)
    cls, sig = min(findings, key=lambda f: PRIORITY.index(f[0]))
    return Outcome(cls, sig, detail, [list(f) for f in [*findings, *after]], ours, theirs, seconds)
