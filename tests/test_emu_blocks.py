"""Fused straight-line runs (emu/blocks.py): a run does what the machine's per-instruction loop
does, step for step: the same results, instruction counts, faults at the same offset, the
budget exceeded at the same instruction."""
import numpy as np
import pytest

from ptx2sass.emu import blocks
from ptx2sass.emu import machine as machine_module
from ptx2sass.emu import scalar
from ptx2sass.emu.blocks import Run
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.program import KernelProgram
from ptx2sass.encoder.sass_text import parse_instruction


def _program(lines: list[str]) -> KernelProgram:
    ins = [(16 * i, parse_instruction(text)) for i, text in enumerate(lines)]
    program = KernelProgram("k", "sm_89", ins, param_base=0x160, param_bytes=8)
    program.params = [(0, 0, 8)]
    return program


def _launch(program, block=(1,), words: int = 4, budget: int = 5_000_000):
    launch = Launch(program, (1,), block, budget=budget, hazard_check=False)
    out = launch.gmem.allocate("out", 4 * words)
    launch.set_params([Param(buffer="out")], {"out": out})
    return launch, out


def _runs(program) -> list:
    return [r for r in program._decoded.__dict__.get("runs", {}).values() if isinstance(r, Run)]


@pytest.fixture(autouse=True)
def machine_only(monkeypatch):
    """One-thread launches on the machine, whose runs these tests check (emu/scalar.py runs
    them otherwise; tests/test_emu_scalar.py checks it against the machine)."""
    monkeypatch.setattr(scalar, "suits", lambda launch: False)


@pytest.fixture
def unfused(monkeypatch):
    """The machine without fused runs: its per-instruction loop alone."""
    def off():
        monkeypatch.setattr(machine_module, "runs_of", lambda decoded, launch=None: None)
    return off


@pytest.fixture(params=["default", 0, 2])
def hot(request, monkeypatch):
    """Runs as loops for their first uses (blocks.HOT as committed: in these few launches,
    loops only), generated on first use (0), or a loop for two uses and generated after."""
    if request.param != "default":
        monkeypatch.setattr(blocks, "HOT", request.param)
    return request.param


STRAIGHT = [
    "S2R R0, SR_TID.X",
    "IMAD.MOV.U32 R1, RZ, RZ, 0x7",
    "IADD3 R1, R1, R0, RZ",
    "LOP3.LUT R2, R1, 0xff, RZ, 0xc0, !PT",
    "ISETP.GT.U32.AND P0, PT, R0, 0x20, PT",
    "@!P0 IMAD R2, R2, 0x3, R0",
    "MOV R4, c[0x0][0x160]",
    "MOV R5, c[0x0][0x164]",
    "IMAD.WIDE.U32 R4, R0, 0x4, R4",
    "STG.E [R4.64], R2",
    "EXIT",
]


@pytest.mark.parametrize("threads", [1, 48])
def test_a_run_computes_what_the_loop_computes(threads, hot):
    """Thread t writes (7 + t) & 0xff, times 3 plus t where t <= 32 (exact arithmetic), on
    every launch: the third and later ones run the straight line as one fused run (one lane,
    and two warps: the vector closures)."""
    program = _program(STRAIGHT)
    t = np.arange(threads, dtype=np.uint32)
    want = (7 + t) & 0xFF
    want = np.where(t > 32, want, want * 3 + t).astype(np.uint32)
    for _ in range(4):
        launch, out = _launch(program, (threads,), threads)
        launch.run()
        assert list(out.data.view(np.uint32)) == list(want)
        assert launch.budget.used == len(STRAIGHT) * -(-threads // 32)
    runs = _runs(program)
    assert [(r.start, r.n) for r in runs] == [(0, len(STRAIGHT) - 1)]


FAULTING = [
    "MOV R2, 0x1",
    "MOV R3, 0x2",
    "MOV R4, c[0x0][0x160]",
    "MOV R5, c[0x0][0x164]",
    "LDG.E R6, [R4.64+0x3]",          # misaligned: faults
    "IADD3 R6, R6, 0x1, RZ",
    "STG.E [R4.64], R6",
    "EXIT",
]


def test_a_fault_inside_a_run_is_located_at_its_instruction(hot):
    program = _program(FAULTING)
    for _ in range(3):
        launch, _ = _launch(program)
        with pytest.raises(EmuFault, match="misaligned") as fault:
            launch.run()
        assert fault.value.offset == 0x40
        assert launch.budget.used == 5
    assert [(r.start, r.n) for r in _runs(program)] == [(0, 5)]


LOOP = [
    "MOV R0, 0x0",
    "IADD3 R0, R0, 0x1, RZ",
    "IADD3 R1, R0, 0x2, RZ",
    "IADD3 R2, R1, 0x3, RZ",
    "BRA 0x10",
]


@pytest.mark.parametrize("budget", [1, 2, 3, 5, 40, 41, 42, 43, 44, 257, 1000])
@pytest.mark.parametrize("fused", [True, False])
def test_the_budget_runs_out_at_the_same_instruction(budget, fused, unfused, hot):
    """A loop of four instructions after one: warp-instruction budget + 1 is where it stops,
    0x10 + 16 * ((budget - 1) % 4), with and without fused runs."""
    if not fused:
        unfused()
    program = _program(LOOP)
    want = 0x10 + 16 * ((budget - 1) % 4)
    for _ in range(3):
        launch, _ = _launch(program, budget=budget)
        with pytest.raises(EmuFault, match="budget") as fault:
            launch.run()
        assert fault.value.offset == want
    assert bool(_runs(program)) == fused


def test_zluda_corpus_with_and_without_runs(unfused):
    """ZLUDA's kernels (their hardware-verified outputs) launched three times with fused runs
    (the second with the hazard checker, which runs take no part in), and the instruction
    counts, cycles and hazards those launches give without runs."""
    from tools import emu_testing as testing
    from ptx2sass.emu import loader
    kernels = []
    for entry in testing.zluda_manifest():
        cubin = testing.zluda_cubin(entry)
        if cubin is not None:
            kernels.append((entry, loader.load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin))))
    assert len(kernels) > 150

    def record(entry, program, hz):
        outcome = testing.run_zluda(entry, program=program, hazard_check=hz)
        assert outcome.passed, (entry["name"], outcome.reason)
        r = outcome.result
        return r.instructions, r.thread_instructions, r.cycles, tuple(map(str, r.hazards))

    seen = {}
    for hz in (False, True, False):
        for entry, program in kernels:
            seen.setdefault((entry["name"], hz), set()).add(record(entry, program, hz))
    fused = sum(len(_runs(p)) for _, p in kernels)
    assert fused > 100
    unfused()
    for hz in (False, True):
        for entry, program in kernels:
            assert seen[entry["name"], hz] == {record(entry, program, hz)}, (entry["name"], hz)


def test_a_run_that_does_not_fit_makes_no_run_at_each_following_step():
    """60 straight-line adds and a budget of 30: the run from the start never fits, and the
    steps after it, run one by one, make no runs of their own (each made one, every launch:
    code generation quadratic in a straight line's length); the budget runs out at the 31st
    instruction, offset 30 * 16."""
    program = _program([f"IADD3 R{k % 8}, R{(k + 1) % 8}, 0x{k + 1:x}, RZ" for k in range(60)] + ["EXIT"])
    for _ in range(4):
        launch, _ = _launch(program, budget=30)
        with pytest.raises(EmuFault, match="budget") as fault:
            launch.run()
        assert fault.value.offset == 30 * 16
    assert [(r.start, r.n) for r in _runs(program)] == [(0, 31)]


INLINE = [
    "MOV R0, 0x10",
    "IMAD.MOV.U32 R1, RZ, RZ, 0x3",
    "IADD3 R2, -R1, R0, RZ",
    "IADD3 R3, -R0, -R1, 0x20",
    "IADD3 R6, R2, -RZ, R3",
    "MOV R4, c[0x0][0x160]",
    "MOV R5, c[0x0][0x164]",
    "STG.E.64 [R4.64], R2",
    "STG.E [R4.64+0x8], R6",
    "EXIT",
]


def test_one_lane_runs_write_simple_steps_inline(hot):
    """MOV, IMAD.MOV and IADD3 (negated sources: -x as ~x + 1, -RZ wrapping to 0) written out
    in a one-lane run: 0x10 - 3, -0x10 - 3 + 0x20, their sum (exact arithmetic)."""
    program = _program(INLINE)
    for _ in range(4):
        launch, out = _launch(program, (1,), 3)
        launch.run()
        assert list(out.data.view(np.uint32)) == [13, 13, 26]
    assert [(r.start, r.n) for r in _runs(program)] == [(0, 9)]


@pytest.mark.parametrize("fused", [True, False])
def test_a_register_past_the_kernels_count_faults_at_the_same_step(fused, unfused, hot):
    """A kernel of 4 registers: the first write past R3 (IADD3 R6, offset 0x40) faults,
    with the written-out steps as with the closures."""
    if not fused:
        unfused()
    program = _program(INLINE)
    program.regcount = 4
    for _ in range(3):
        launch, _ = _launch(program, (1,), 3)
        with pytest.raises(EmuFault, match="register count") as fault:
            launch.run()
        assert fault.value.offset == 0x40


CLOCKS = [
    "MOV R0, 0x1",
    "IADD3 R0, R0, 0x1, RZ",
    "IMAD.MOV.U32 R1, RZ, RZ, 0x2",
    "S2R R2, SR_CLOCKLO",
    "MOV R4, c[0x0][0x160]",
    "MOV R5, c[0x0][0x164]",
    "CS2R.32 R3, SR_CLOCKLO",
    "STG.E.64 [R4.64], R2",
    "EXIT",
]


@pytest.mark.parametrize("threads", [1, 64])
def test_a_clock_read_inside_a_run_counts_the_instructions_before_it(threads, hot):
    """The emulated clock is 4 cycles per instruction the warp issued, itself included: the
    4th and 7th instructions read 16 and 28, launch after launch (runs from the third)."""
    program = _program(CLOCKS)
    for _ in range(4):
        launch, out = _launch(program, (threads,), 2)
        launch.run()
        assert list(out.data.view(np.uint32)) == [16, 28]
    assert [(r.start, r.n) for r in _runs(program)] == [(0, 8)]


COUNTED = [
    "S2R R3, SR_TID.X",
    "MOV R0, 0x0",
    "IADD3 R0, R0, 0x1, RZ",
    "IADD3 R1, R0, 0x2, RZ",
    "IADD3 R2, R1, 0x3, RZ",
    "ISETP.GE.AND P0, PT, R0, {trips}, PT",
    "@!P0 BRA 0x20",
    "MOV R4, c[0x0][0x160]",
    "MOV R5, c[0x0][0x164]",
    "IMAD.WIDE.U32 R4, R3, 0x4, R4",
    "STG.E [R4.64], R2",
    "EXIT",
]


def _kinds(monkeypatch, program, threads, launches, want):
    """After each launch: what the run's function for the group's width is (None, "loop",
    "generated") and how many runs' code was generated so far; every launch stores `want`."""
    compiled = []
    generate = blocks._generate
    monkeypatch.setattr(blocks, "_generate", lambda *a, **k: compiled.append(a[1]) or generate(*a, **k))
    kind = "one" if threads == 1 else "many"
    seen, counts = [], []
    for _ in range(launches):
        launch, out = _launch(program, (threads,), threads)
        launch.run()
        assert list(out.data.view(np.uint32)) == list(want)
        runs = _runs(program)
        fn = getattr(runs[0], kind) if runs else None
        seen.append(None if fn is None else "generated" if fn.__code__.co_filename.startswith("<emu run")
                    else "loop")
        counts.append(len(compiled))
    assert set(compiled) <= {"run1" if threads == 1 else "run"}
    return seen, counts


@pytest.mark.parametrize("threads", [1, 48])
def test_a_run_is_a_loop_in_the_first_launch_until_hot(threads, monkeypatch):
    """With HOT 3, a loop of 10 trips: its body's run is made on the second trip and runs as
    the loop on the second and third, then from its code (generated on the third use), in
    that launch and the next (one generation: one lane's variant with the closures, for a
    kernel with too few registers, is made only where such a kernel needs it). The straight
    lines before and after the loop, run once a launch, become runs on the second launch
    and are generated there at once (the next test)."""
    monkeypatch.setattr(blocks, "HOT", 3)
    program = _program([line.format(trips="0xa") for line in COUNTED])
    seen, counts = _kinds(monkeypatch, program, threads, 3, [15] * threads)
    assert seen == ["generated"] * 3 and counts == [1, 3, 3]
    assert sorted((r.start, r.n) for r in _runs(program)) == [(0, 6), (0x20, 4), (0x70, 4)]


@pytest.mark.parametrize("threads", [1, 48])
def test_a_run_cold_in_the_first_launch_is_generated_on_its_first_use_in_the_next(threads, monkeypatch):
    """With HOT 5, a loop of 3 trips: its run, used twice in the first launch, stays the loop
    there; the second launch (the program is launched again) generates its code at the first
    use (not at the fifth use, in the third launch), and later launches run that code.
    Results the same each launch (3 + 2 + 3)."""
    monkeypatch.setattr(blocks, "HOT", 5)
    program = _program([line.format(trips="0x3") for line in COUNTED])
    seen, counts = _kinds(monkeypatch, program, threads, 4, [8] * threads)
    # (+ 2: the straight lines before and after the loop, generated on the second launch)
    assert seen == ["loop", "generated", "generated", "generated"] and counts == [0, 3, 3, 3]


@pytest.mark.parametrize("threads", [1, 48])
def test_a_run_made_after_the_first_launch_is_generated_at_once(threads, monkeypatch):
    """A straight line run once a launch: its run is made on the second launch (the second
    visit), which is not the program's first, so its code is generated there, at once (a
    loop until HOT uses would move the generation into a later launch: emu32's caveat)."""
    monkeypatch.setattr(blocks, "HOT", 3)
    program = _program(STRAIGHT)
    t = np.arange(threads, dtype=np.uint32)
    want = np.where(t > 32, (7 + t) & 0xFF, ((7 + t) & 0xFF) * 3 + t).astype(np.uint32)
    seen, counts = _kinds(monkeypatch, program, threads, 4, want)
    assert seen == [None, "generated", "generated", "generated"] and counts == [0, 1, 1, 1]


def _filler(k: int) -> str:
    """A step one-lane runs write out (an IADD3 among R8-R15), or a plain closure call."""
    return f"IADD3 R{8 + k % 8}, R{8 + (k + 1) % 8}, 0x{k + 1:x}, RZ" if k % 3 else f"LOP3.LUT R{8 + k % 8}, R9, 0x{k:x}, RZ, 0xc0, !PT"


@pytest.mark.parametrize("threads", [1, 48])
@pytest.mark.parametrize("at", [2, 7, 8, 9, 16, 25, 33])
def test_a_fault_in_a_later_piece_of_a_long_run_is_located_at_its_instruction(at, threads, hot):
    """A run longer than blocks.CHUNK is made of pieces: a misaligned load at index `at`
    (in the first, second, third... piece) faults at offset 16 * at after `at` + 1
    instructions per warp, launch after launch."""
    lines = ["MOV R4, c[0x0][0x160]", "MOV R5, c[0x0][0x164]"] + [_filler(k) for k in range(2, 40)]
    lines[at] = "LDG.E R6, [R4.64+0x3]"
    program = _program(lines + ["STG.E [R4.64], R6", "EXIT"])
    warps = -(-threads // 32)
    for _ in range(4):
        launch, _ = _launch(program, (threads,))
        with pytest.raises(EmuFault, match="misaligned") as fault:
            launch.run()
        assert fault.value.offset == 16 * at
        assert launch.budget.used == (at + 1) * warps
    assert [(r.start, r.n) for r in _runs(program)] == [(0, at + 1)]      # the steps decoded


@pytest.mark.parametrize("threads", [1, 64])
@pytest.mark.parametrize("first, second", [(3, 12), (8, 9), (17, 30)])
def test_clock_reads_in_later_pieces_count_the_instructions_before_them(first, second, threads, hot):
    """4 cycles per instruction the warp issued, itself included (tests above): clock reads
    at indices `first` and `second` of a 40-step run read 4 * (index + 1)."""
    lines = ["MOV R4, c[0x0][0x160]", "MOV R5, c[0x0][0x164]"] + [_filler(k) for k in range(2, 40)]
    lines[first] = "S2R R2, SR_CLOCKLO"
    lines[second] = "CS2R.32 R3, SR_CLOCKLO"
    program = _program(lines + ["STG.E.64 [R4.64], R2", "EXIT"])
    for _ in range(5):
        launch, out = _launch(program, (threads,), 2)
        launch.run()
        assert list(out.data.view(np.uint32)) == [4 * (first + 1), 4 * (second + 1)]
    assert [(r.start, r.n) for r in _runs(program)] == [(0, 41)]          # the STG too


def test_runs_of_one_shape_share_their_code(monkeypatch):
    """Two kernels whose straight lines differ only in registers and immediates: their runs'
    generated functions (one lane: IADD3/MOV written out) run one code object per piece, each
    with its own registers and immediates bound: the sums are each kernel's (exact)."""
    monkeypatch.setattr(blocks, "HOT", 0)

    def kernel(r: int, imms: list[int]):
        lines = ["MOV R4, c[0x0][0x160]", "MOV R5, c[0x0][0x164]", f"MOV R{r}, 0x0"]
        lines += [f"IADD3 R{r}, R{r}, 0x{v:x}, RZ" for v in imms]
        return _program(lines + [f"STG.E [R4.64], R{r}", "EXIT"])

    a, b = kernel(6, list(range(1, 21))), kernel(9, [3 * v for v in range(1, 21)])
    for program, want in ((a, 210), (b, 630)):
        for _ in range(3):
            launch, out = _launch(program, (1,), 1)
            launch.run()
            assert list(out.data.view(np.uint32)) == [want]
    (ra,), (rb,) = _runs(a), _runs(b)
    assert ra.n == rb.n == 24 and ra.one is not rb.one

    def pieces(fn):                     # each piece's last default: the next piece, if any
        out = [fn]
        while fn.__code__.co_varnames[fn.__code__.co_argcount - 1] == "nxt":
            fn = fn.__defaults__[-1]
            out.append(fn)
        return out
    pieces_a, pieces_b = pieces(ra.one), pieces(rb.one)
    assert len(pieces_a) == len(pieces_b) == -(-24 // blocks.CHUNK) > 1      # 23 and the STG
    assert all(p.__code__ is q.__code__ and p is not q for p, q in zip(pieces_a, pieces_b))
