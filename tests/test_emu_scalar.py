"""emu/scalar.py: the one-thread interpreter computes what the machine computes.

Each scalar form found in the ZLUDA corpus and a slice of the tinygrad one (every opcode,
modifier set and operand kind once) runs on a one-thread state filled with edge values
(signed zeros, denormals, the largest finite values, infinities, quiet and signalling NaNs,
integer extremes) and random ones, and so does the instruction's semantics handler on the
machine's NumPy arrays: registers, predicates, uniform registers, memory and the next PC
must be equal. Then whole launches: every one-thread ZLUDA launch with the scalar path and
without it gives the same outputs, instruction counts and faults."""

import numpy as np
import pytest

from tools import emu_testing as testing
from ptx2sass.emu import scalar
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.loader import load_program
from ptx2sass.emu.machine import _ONE_WARP, EXITED, Group, Machine
from ptx2sass.emu.memory import GLOBAL_BASE
from ptx2sass.encoder.model import Mem


@pytest.fixture(autouse=True)
def _as_in_a_launch():
    """Steps called here directly run as a launch runs them: under one np.errstate (emu/fp.py)."""
    with np.errstate(all="ignore"):
        yield


MEM_BYTES = 1 << 12
# FP32 bits, FP64 high words and integers at the edges
EDGES = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
         0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
         0x7FFFFFFF, 0xFFFFFFFF, 0x3F800000, 0xBF800000, 0x4B800000, 0x7FF00000, 0xFFF00000,
         0x7FF80000, 0x000FFFFF, 0x7FEFFFFF, 0x3FF00000, 0x00100000, 0x0000FFFF, 0x00008000]


ONE_THREAD = testing.zluda_one_thread_programs()


def _tinygrad_programs():
    kernels = sorted(testing.tinygrad_manifest(), key=lambda k: k["sha256"])[:60]
    out = []
    for entry in kernels:
        cubin = testing.tinygrad_cubin(entry)
        if cubin is not None:
            out.append(load_program(cubin, entry["entry"], testing.cubin_listing_decoder(cubin)))
    return out


SHARED_BYTES = 256      # dynamic shared memory of the form tests' launches


def _launch(program, rng_seed: int):
    launch = Launch(program, (1,), (1,), SHARED_BYTES, hazard_check=False)
    rng = np.random.default_rng(rng_seed)
    mem = launch.gmem.allocate("mem", MEM_BYTES, rng.integers(0, 256, MEM_BYTES, dtype=np.uint8).tobytes())
    layout = sorted(getattr(program, "params", []))
    params = [Param(buffer="mem") if size == 8 else Param(type="u32", value=int(rng.integers(0, 64)))
              for _, _, size in layout]
    launch.set_params(params, {"mem": mem})
    return launch, mem


def _forms():
    """(program, offset) of one instance of each scalar form that is not the machine's
    handler run through the bridge."""
    seen = {}
    programs = [p for _, p in ONE_THREAD] + (_tinygrad_programs() if ONE_THREAD else [])
    for program in programs:
        launch = Launch(program, (1,), (1,), hazard_check=False)
        x = scalar.lists(launch.regcount_limit)
        for off in launch.decoded.at:
            e = scalar._entry(launch.decoded, off, x)
            if e is False or e[0].__name__ == "bridged":
                continue
            ins = launch.decoded.step(off).ins
            kinds = tuple((type(o).__name__, getattr(o, "file", None), getattr(o, "neg", None),
                           getattr(o, "inv", None), getattr(o, "abs", None), getattr(o, "index", None) in (255, 7))
                          for o in ins.operands)
            seen.setdefault((ins.opcode, ins.modifiers, kinds), (program, off))
    return list(seen.values())


FORMS = _forms()


def _values(rng, n):
    pick = rng.integers(0, 2, n).astype(bool)
    edge = np.array(EDGES, dtype=np.uint64)[rng.integers(0, len(EDGES), n)]
    rand = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    return [int(v) for v in np.where(pick, edge, rand)]


def _aim_shared(ins, R, UR, rng, shared_bytes):
    """Point a shared access into the CTA's shared memory (a uniform base beside a register
    one zeroed); most states then run on the scalar path, the rest fault in both."""
    for op in ins.operands:
        if isinstance(op, Mem) and ins.opcode in ("LDS", "STS"):
            addr = int(rng.integers(0, max(shared_bytes // 16, 1))) * 16 - op.offset
            reg_base = op.base is not None and not op.base.is_zero
            if op.ubase is not None and not op.ubase.is_zero:
                UR[op.ubase.index] = 0 if reg_base else addr & 0xFFFFFFFF
            if reg_base:
                R[op.base.index] = addr & 0xFFFFFFFF


def _aim(ins, R, rng):
    for op in ins.operands:
        if isinstance(op, Mem) and op.base is not None and not op.base.is_zero:
            addr = GLOBAL_BASE + int(rng.integers(0, MEM_BYTES // 32)) * 16 - op.offset
            R[op.base.index] = addr & 0xFFFFFFFF
            if op.base.index + 1 < 255:
                R[op.base.index + 1] = addr >> 32 & 0xFFFFFFFF


def _shared_fill(launch, seed):
    """Random bytes for the CTA's shared memory (16-byte padded, as the machine has it)."""
    size = -(-launch.shared_total // 16) * 16
    return np.random.default_rng([seed, 7]).integers(0, 256, size, dtype=np.uint8).tobytes()


def _by_handler(program, off, state, seed):
    launch, mem = _launch(program, seed)
    R, P, UR, UP = state
    m = Machine(launch, [(0, 0, 0)])
    m.shared_data = np.frombuffer(bytearray(_shared_fill(launch, seed)), dtype=np.uint8)
    m.R[:, 0], m.P[:, 0], m.UR[0, :], m.UP[0, :] = R, P, UR, UP
    step = launch.decoded.step(off)
    g = Group(m, m._live_lanes, _ONE_WARP, off)
    m.pc[0] = off + 16
    try:
        if step.vector:
            step.handler(g, step, g.active, g.active)
        else:
            m._per_warp(g, step, off)
    except EmuFault as e:
        return "fault", str(e)
    nxt = -1 if m.state[0] == EXITED else int(m.pc[0])
    return (m.R[:, 0].tolist(), m.P[:, 0].tolist(), m.UR[0, :].tolist(), m.UP[0, :].tolist(),
            mem.data.tobytes(), nxt, m.shared_data.tobytes())


def _by_scalar(program, off, state, seed):
    launch, mem = _launch(program, seed)
    t = scalar.Thread(launch)
    t.shared[:] = _shared_fill(launch, seed)
    t.R, t.P, t.UR, t.UP = (list(v) for v in state)
    f, _, _, control = scalar._entry(launch.decoded, off, scalar.lists(launch.regcount_limit))
    try:
        nxt = f(t) if control else (f(t, None, True, True), off + 16)[1]
    except (EmuFault, scalar._Off):
        return "off", None
    shared = t.bridge[0].shared_data.tobytes() if t.bridge is not None else bytes(t.shared)
    return t.R, t.P, t.UR, t.UP, mem.data.tobytes(), nxt, shared


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f"{f[0].name}@{f[1]:x}")
def test_scalar_form_matches_handler(form):
    program, off = form
    ins = Launch(program, (1,), (1,), hazard_check=False).decoded.step(off).ins
    ran = 0
    for seed in range(48):
        rng = np.random.default_rng([seed, off])
        R = _values(rng, 256)
        R[255] = 0
        _aim(ins, R, rng)
        P = [bool(b) for b in rng.integers(0, 2, 8)]
        P[7] = True
        UR = _values(rng, 256)
        UR[255] = 0
        _aim_shared(ins, R, UR, rng, Launch(program, (1,), (1,), SHARED_BYTES, hazard_check=False).shared_total)
        UP = [bool(b) for b in rng.integers(0, 2, 8)]
        UP[7] = True
        state = (R, P, UR, UP)
        got = _by_scalar(program, off, state, seed)
        if got[0] == "off":
            continue            # the scalar path hands this one to the machine
        want = _by_handler(program, off, state, seed)
        assert want[0] != "fault", f"{ins.mnemonic}: the handler faults ({want[1]}), the scalar form does not"
        ran += 1
        for label, a, b in zip(("R", "P", "UR", "UP", "memory", "next PC", "shared memory"), got, want):
            if a != b:
                k = next(i for i in range(len(a)) if a[i] != b[i]) if isinstance(a, (list, bytes)) else None
                pytest.fail(f"{ins.mnemonic} seed {seed}: {label}[{k}] = {a if k is None else a[k]!r}, "
                            f"handler {b if k is None else b[k]!r}")
    assert ran >= 24, f"{ins.mnemonic}: the scalar form ran on only {ran} of 48 states"


def test_forms_cover_the_hot_opcodes():
    """The sweep above sees the forms it is meant to check."""
    ops = {Launch(p, (1,), (1,), hazard_check=False).decoded.step(off).ins.opcode for p, off in FORMS}
    assert {"MOV", "IMAD", "IADD3", "LD", "ST", "BRA", "EXIT", "ULDC", "FFMA", "FSETP", "DFMA", "CALL",
            "RET", "LOP3", "SEL", "PRMT"} <= ops, ops
    assert len(FORMS) > 40


def _outcome(entry, program, budget=None):
    if budget is None:
        o = testing.run_zluda(entry, hazard_check=False, program=program)
        r = o.result
        return o.passed, o.reason, r and (r.buffers, r.instructions, r.thread_instructions)
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"],
                    budget=budget, hazard_check=False)
    out = launch.gmem.allocate("output", entry["output_alloc_bytes"])
    buffers = {"output": out}
    if entry["input"] is not None:
        buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"], bytes.fromhex(entry["input"]["hex"]))
    launch.set_params([Param(buffer=p) for p in entry["params"]], buffers)
    try:
        launch.run()
    except EmuFault as e:
        return "fault", str(e), launch.budget.used
    return "ok", out.data.tobytes(), launch.budget.used


@pytest.mark.skipif(not ONE_THREAD, reason="no ZLUDA corpus")
def test_one_thread_launches_match_the_machine(monkeypatch):
    """Every one-thread ZLUDA launch: outputs, counts and faults equal with and without the
    scalar path (twice each, the second with the kernel's scalar code kept), and with a budget
    that runs out half-way; the scalar path ran most of their instructions."""
    handed = []
    orig_machine = scalar._machine

    def machine(launch, t, pc, executed):
        handed.append(launch.program.name)
        return orig_machine(launch, t, pc, executed)
    for entry, program in ONE_THREAD:
        monkeypatch.setattr(scalar, "suits", lambda launch: False)
        want = [_outcome(entry, program)]
        half = max(want[0][2][1] // 2, 1)
        want.append(_outcome(entry, program, half))
        monkeypatch.undo()
        monkeypatch.setattr(scalar, "_machine", machine)
        got = [_outcome(entry, program), _outcome(entry, program)]
        monkeypatch.undo()
        got.append(_outcome(entry, program, half))
        assert got[0] == want[0] and got[1] == want[0], entry["name"]
        assert got[2] == want[1], f"{entry['name']}: budget {half}"
    assert len(handed) < len(ONE_THREAD) // 4, handed


def test_fchk_form_at_exponent_edges():
    """FCHK's form against the handler where its answer turns: b's biased exponent at 0, 1,
    252, 253, 255; a's at 0 (a zero or a denormal), 24, 25, 252, 253; differences of -125,
    -124, 125, 126 (random states rarely land there)."""
    at = [(p, off) for p, off in FORMS if Launch(p, (1,), (1,), hazard_check=False).decoded.step(off).ins.opcode == "FCHK"]
    if not at:
        pytest.skip("no FCHK in the corpus")
    program, off = at[0]
    ins = Launch(program, (1,), (1,), hazard_check=False).decoded.step(off).ins
    _, a_op, b_op = ins.operands
    exps = sorted({0, 1, 24, 25, 26, 127, 128, 151, 152, 252, 253, 254, 255} | {e + d for e in (127, 128) for d in (-126, -125, -124, 124, 125, 126)})
    checked = 0
    for ea in exps:
        for eb in exps:
            for frac_a in (0, 1):
                R = [0] * 256
                R[a_op.index] = (ea << 23 | frac_a) | (0x80000000 if eb & 1 else 0)
                R[b_op.index] = eb << 23 | 0x1234
                state = (R, [False] * 7 + [True], [0] * 256, [False] * 7 + [True])
                got = _by_scalar(program, off, state, 0)
                assert got[0] != "off"
                want = _by_handler(program, off, state, 0)
                assert got[1] == want[1], (hex(R[a_op.index]), hex(R[b_op.index]))
                checked += 1
    assert checked > 500


WORD_EDGES = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF]


def _opcode(form) -> str:
    return Launch(form[0], (1,), (1,), hazard_check=False).decoded.step(form[1]).ins.opcode


@pytest.mark.parametrize("form", [f for f in FORMS if _opcode(f) in ("LEA", "IMAD")],
                         ids=lambda f: f"{f[0].name}@{f[1]:x}")
def test_carry_forms_on_edge_words(form):
    """The LEA and IMAD forms (.HI/.WIDE with carries among them) against the handler with every register a word at the
    edges of the adder (all ones, the sign bit, 0, 1): the carries in and out that random
    words rarely make."""
    program, off = form
    ins = Launch(program, (1,), (1,), hazard_check=False).decoded.step(off).ins
    for seed in range(96):
        rng = np.random.default_rng([seed, off, 3])
        R = [WORD_EDGES[i] for i in rng.integers(0, len(WORD_EDGES), 256)]
        R[255] = 0
        P = [bool(b) for b in rng.integers(0, 2, 8)]
        P[7] = True
        state = (R, P, [0] * 256, [False] * 7 + [True])
        got = _by_scalar(program, off, state, seed)
        assert got[0] != "off", ins.mnemonic
        want = _by_handler(program, off, state, seed)
        assert got[:2] == want[:2], (ins.mnemonic, seed)


ZERO_SUM_WORDS = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x00000001, 0x80000001, 0x7F800000]


@pytest.mark.parametrize("form", [f for f in FORMS if _opcode(f) in ("FADD", "FFMA") and
                                  {"RZ", "RM", "RP"} & set(Launch(f[0], (1,), (1,), hazard_check=False).decoded.step(f[1]).ins.modifiers)],
                         ids=lambda f: f"{f[0].name}@{f[1]:x}")
def test_directed_add_forms_on_zero_sums(form):
    """FADD/FFMA's directed-rounding forms against the handler where the sum is an exact zero
    (x + -x, +0 + -0, 1 * -1 + 1: its sign turns on the mode) or an infinity: every register
    source each of a few words."""
    import itertools
    program, off = form
    ins = Launch(program, (1,), (1,), hazard_check=False).decoded.step(off).ins
    regs = sorted({op.index for op in ins.operands[1:] if op.__class__.__name__ == "Reg" and op.file == "R" and op.index != 255})
    for words in itertools.product(ZERO_SUM_WORDS, repeat=len(regs)):
        R = [0] * 256
        for i, v in zip(regs, words):
            R[i] = v
        state = (R, [False] * 7 + [True], [0] * 256, [False] * 7 + [True])
        got = _by_scalar(program, off, state, 0)
        assert got[0] != "off", ins.mnemonic
        want = _by_handler(program, off, state, 0)
        assert got[0] == want[0], (ins.mnemonic, [hex(w) for w in words])
