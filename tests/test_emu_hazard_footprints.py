"""The hazard checker's per-instruction facts (emu/hazards.py `_footprint`, the landing
cycle kept in a `ready` entry): an instruction's footprint kept from its last execution must
not stand in for another one, and the kept landing cycle must be the latency model's.

Expected verdicts come from the latency model (`sched.latency`: `read_latency`,
`result_lands`), not from the checker. The instructions are ptxas's (the ZLUDA `add` kernel,
sm_89); the checker is called directly with the registers each execution touched."""
from types import SimpleNamespace

import pytest

from ptx2sass.emu.hazards import TimingModel
from ptx2sass.emu.launch import Launch
from ptx2sass.emu.loader import load_program
from ptx2sass.sched.latency import model_for
from tools.emu_testing import cubin_listing_decoder, zluda_cubin, zluda_manifest


@pytest.fixture(scope="module")
def kernel():
    entry = next(e for e in zluda_manifest() if e["name"] == "add")
    cubin = zluda_cubin(entry)
    program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
    return entry, program


def _model(kernel):
    entry, program = kernel
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"])
    tm = TimingModel(launch)
    tm._keep = launch           # (the model holds its launch weakly)
    return tm


def _steps(program, **want):
    """Fresh steps (their own facts) for the first instruction of each wanted opcode/modifiers,
    fixed-latency, waiting on nothing, setting no scoreboard."""
    got = {}
    for off, ins in program.instructions:
        c = ins.control
        for name, (op, mods) in want.items():
            if name not in got and ins.opcode == op and tuple(ins.modifiers) == mods and not c.wait \
                    and c.wr_sb == 7 and c.rd_sb == 7:
                got[name] = lambda ins=ins, off=off: SimpleNamespace(ins=ins, offset=off, aux={})
    assert set(got) == set(want), got
    return got


def _reads(tm, producer, reader, reg):
    """Whether the checker flags `reader` reading `reg` one cycle after `producer` wrote it."""
    clock = tm.new_clock()
    before = len(tm.hazards)
    tm.end(clock, producer, 1, [], [reg])
    clock.t = 1
    tm.end(clock, reader, 1, [reg], [("R", 8)])
    return tm.hazards[before:]


def test_a_changed_footprint_is_judged_afresh(kernel):
    """The reader's kept footprint (R2 from an earlier run) must not stand in for its next
    run's (R4, written one cycle before): the model says whether that read is too early."""
    _, program = kernel
    make = _steps(program, mov=("MOV", ()), imadx=("IMAD", ("X",)))
    lat = model_for(program.arch)
    need = lat.read_latency("MOV", lat.latency_modifiers(make["mov"]().ins), "R", "IMAD", False, 0,
                            ("R", 4) in lat.addend_registers(make["imadx"]().ins))
    assert need > 1                     # (so that a read one cycle after is a hazard)
    tm = _model(kernel)
    reader = make["imadx"]()
    other = tm.new_clock()
    tm.end(other, make["mov"](), 1, [], [("R", 2)])
    other.t = 100
    tm.end(other, reader, 1, [("R", 2)], [("R", 8)])     # long after: nothing to flag
    assert tm.hazards == []
    found = _reads(tm, make["mov"](), reader, ("R", 4))
    assert len(found) == 1 and "reads R4 1 cycles after MOV" in found[0].message, found
    # and back to the first footprint, on a clock where R4 was written, R2 not
    clock = tm.new_clock()
    tm.end(clock, make["mov"](), 1, [], [("R", 4)])
    clock.t = 1
    before = len(tm.hazards)
    tm.end(clock, reader, 1, [("R", 2)], [("R", 8)])
    assert tm.hazards[before:] == []


def test_a_guard_read_is_keyed_apart(kernel):
    """The same register read once as a plain source and once among several: each run's
    own list decides (a repeated register counts once)."""
    _, program = kernel
    make = _steps(program, mov=("MOV", ()), imadx=("IMAD", ("X",)))
    tm = _model(kernel)
    reader = make["imadx"]()
    clock = tm.new_clock()
    tm.end(clock, make["mov"](), 1, [], [("R", 4)])
    clock.t = 1
    tm.end(clock, reader, 1, [("R", 4), ("R", 4), ("R", 5)], [("R", 8)])
    assert [h.message.split(" cycles")[0] for h in tm.hazards] == ["reads R4 1"]


@pytest.fixture(scope="module")
def mma_kernel():
    entry = next(e for e in zluda_manifest() if e["name"] == "mma_m16n8k16_f32_f16_f16_f32")
    cubin = zluda_cubin(entry)
    program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
    return entry, program


@pytest.mark.parametrize("gap", range(0, 26, 3))
def test_overwrite_of_a_result_in_flight_follows_the_landing_cycles(mma_kernel, gap):
    """A write `gap` cycles after an HMMA's write of the same register is a WAW hazard
    exactly when it would land first (`result_lands` of each); the kept landing cycle is the
    producer's issue plus its `result_lands`."""
    _, program = mma_kernel
    mods = {ins.opcode: tuple(ins.modifiers) for _, ins in program.instructions}
    make = _steps(program, hmma=("HMMA", mods["HMMA"]), mov=("IADD3", ()))
    lat = model_for(program.arch)
    lands = {k: lat.result_lands(s().ins.opcode, lat.latency_modifiers(s().ins), "R") for k, s in make.items()}
    assert lands["hmma"] > lands["mov"] + 3, lands
    tm = _model(mma_kernel)
    clock = tm.new_clock()
    clock.t = 10
    tm.end(clock, make["hmma"](), 1, [], [("R", 6), ("R", 7)])
    assert clock.ready[("R", 6)][6] == 10 + lands["hmma"]
    assert clock.ready[("R", 7)][6] == 10 + lands["hmma"]
    clock.t = 10 + gap
    tm.end(clock, make["mov"](), 1, [], [("R", 7)])
    waw = [h for h in tm.hazards if "(WAW)" in h.message]
    assert bool(waw) == (10 + gap + lands["mov"] < 10 + lands["hmma"]), (lands, gap, tm.hazards)
    if waw:
        assert f"lands {lands['hmma']} cycles after issue, this one's {lands['mov']}" in waw[0].message
    assert clock.ready[("R", 7)][6] == 10 + gap + lands["mov"]
