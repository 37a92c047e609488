"""The sm_90 latency rules fuzz campaign 28 taught (sched/latency/hopper.json, evidence
`campaign28_fuzz`), each on ptxas's own cubin of its reduced program (tests/fuzz_regressions,
where tests/test_fuzz_regressions.py also runs our cubin against it; one in
tests/ptxas_sm90_schedules):

- ptxas's cubin holds the pair at ptxas's distance and the checker reports no hazard there
  (before branch hopper30 it flagged each one);
- the same cubin with the stall counts between the pair lowered to one cycle below that
  distance still gets a hazard at the reader naming the producer: the rule is ptxas's
  distance, not a loosened check.
"""
from dataclasses import replace
from pathlib import Path

import pytest

from ptx2sass.emu.errors import EmuFault
from ptx2sass.fuzz.inputs import read_case
from ptx2sass.fuzz.runner import compile_ptxas, execute, load, load_from_listing
from ptx2sass.sched.latency import model_for

DIR = Path(__file__).parent / "fuzz_regressions"
# (too long for tests/fuzz_regressions: with the ptxas schedules of tests/test_sm90_ptxas_schedules.py)
SCHEDULES = {f"emu_fail_{rule}_s{seed}": Path(__file__).parent / "ptxas_sm90_schedules" / f"s{seed}.ptx"
             for rule, seed in (("uisetp_guard_to_s2ur", 40002046), ("syncs_source_order", 40002967))}

# regression file -> (producer opcode, reader opcode, ptxas's distance in its cubin)
RULES = {
    "emu_fail_ushf_to_uimad_s40001671": ("USHF", "UIMAD", 4),
    "emu_fail_ubmsk_to_uimad_s40002039": ("UBMSK", "UIMAD", 4),
    "emu_fail_uisetp_guard_to_s2ur_s40002046": ("UISETP", "S2UR", 11),
    "emu_fail_cs2r_to_atom_s40002119": ("CS2R", "ATOM", 5),
    "emu_fail_cs2r_to_sured_s40002426": ("CS2R", "SURED", 4),
    "emu_fail_cs2r_to_sust_s40003641": ("CS2R", "SUST", 4),
    "emu_fail_hfma2_to_hadd2_s40003575": ("HFMA2", "HADD2", 4),
    "emu_fail_hset2_to_hsetp2_s40003376": ("HSET2", "HSETP2", 4),
}
SYNCS_ORDER = "emu_fail_syncs_source_order_s40002967"


def _ptxas(name):
    case = read_case(SCHEDULES.get(name, DIR / f"{name}.ptx").read_text())
    cubin, why = compile_ptxas(case)
    assert cubin is not None, why
    return case, cubin


def _program(case, cubin):
    try:
        return load(cubin, case.kernel)
    except EmuFault as e:
        if "cannot decode" not in str(e):
            raise
        return load_from_listing(cubin, case.kernel)


def _stall(ins, lat) -> int:
    """Cycles the checker lets pass after `ins` issues (`emu.hazards._StepFacts.stall`)."""
    return max(ins.control.stall, lat.ISSUE_CYCLES.get(ins.opcode, 1))


def _pairs(instructions, producer, reader, window=12):
    """(producer index, reader index, distance) of each producer and each `reader` after it in
    straight-line code (no branch between), the distance as the stall counts add up."""
    lat = model_for("sm_90")
    out = []
    for i, (_, p) in enumerate(instructions):
        if p.opcode != producer:
            continue
        dist = 0
        for j in range(i + 1, min(i + window, len(instructions))):
            dist += _stall(instructions[j - 1][1], lat)
            ins = instructions[j][1]
            if ins.opcode == reader:
                out.append((i, j, dist))
            if ins.opcode in ("BRA", "BSSY", "BSYNC", "EXIT", "CALL", "RET", "WARPSYNC"):
                break
    return out


def _shortened(instructions, i, j, distance):
    """The instructions with stalls from index i up to j lowered so that j issues `distance`
    cycles after i (None where one cycle per instruction is still too long)."""
    lat = model_for("sm_90")
    over = sum(_stall(ins, lat) for _, ins in instructions[i:j]) - distance
    if j - i > distance or over <= 0:
        return None
    out = list(instructions)
    for k in range(i, j):
        off, ins = out[k]
        cut = min(over, _stall(ins, lat) - 1, ins.control.stall - 1)
        if cut > 0:
            out[k] = (off, replace(ins, control=replace(ins.control, stall=ins.control.stall - cut)))
            over -= cut
    return out if over == 0 else None


@pytest.mark.parametrize("name", sorted(RULES))
def test_ptxas_distance_is_clean_and_one_less_is_caught(name):
    producer, reader, distance = RULES[name]
    case, cubin = _ptxas(name)
    prog = _program(case, cubin)
    assert execute(prog, case, True).hazards == []
    pairs = _pairs(list(prog.instructions), producer, reader)
    assert distance in [d for _, _, d in pairs], (pairs, "ptxas's cubin no longer shows the pair")
    caught = []
    for i, j, d in pairs:
        if d != distance:
            continue
        prog = _program(case, cubin)
        shorter = _shortened(list(prog.instructions), i, j, distance - 1)
        if shorter is None:
            continue
        p_off, r_off = shorter[i][0], shorter[j][0]
        prog.instructions = shorter
        hazards = execute(prog, case, True).hazards
        caught.append(any(h.offset == r_off and f"after {producer} at 0x{p_off:04x}" in h.message
                          for h in hazards))
    # (a pair whose reader reads another register is not flagged: one that is, is the rule's)
    assert any(caught), (name, pairs)


def test_syncs_reads_its_sources_before_a_later_syncs_writes():
    """ptxas: `SYNCS.ARRIVE.TRANS64.ART0 RZ, [R0+URZ+0x18], R4` (R4 under read scoreboard SB1),
    then `SYNCS.ARRIVE.TRANS64.A1T0 R4, [R0+URZ+0x18], RZ` with no wait on SB1: clean (store_queue
    SYNCS: a later SYNCS's result cannot land before an earlier one read). The ALU instruction
    that overwrites R4 after them waits on SB1; without that wait it is still flagged: the
    first SYNCS's read is only ordered before SYNCS results."""
    case, cubin = _ptxas(SYNCS_ORDER)
    prog = _program(case, cubin)
    assert execute(prog, case, True).hazards == []
    ins = list(prog.instructions)

    def data(i):
        return next((o.index for o in i.operands[2:] if getattr(o, "file", None) == "R" and o.index != 255), None)
    first = next(k for k, (_, i) in enumerate(ins) if i.opcode == "SYNCS" and i.control.rd_sb != 7
                 and data(i) is not None)
    reg, sb = data(ins[first][1]), ins[first][1].control.rd_sb
    later = next(k for k in range(first + 1, len(ins)) if ins[k][1].opcode == "SYNCS")
    assert getattr(ins[later][1].operands[0], "index", None) == reg          # the later SYNCS writes it
    assert not any(i.control.wait >> sb & 1 for _, i in ins[first + 1:later + 1])
    alu = next(k for k in range(later + 1, len(ins)) if ins[k][1].opcode != "SYNCS"
               and getattr(ins[k][1].operands[0], "file", None) == "R" and ins[k][1].operands[0].index == reg)
    off, i = ins[alu]
    assert i.control.wait >> sb & 1, "ptxas waits on the first SYNCS's read scoreboard there"
    ins[alu] = (off, replace(i, control=replace(i.control, wait=i.control.wait & ~(1 << sb))))
    prog = _program(case, cubin)
    prog.instructions = ins
    hazards = execute(prog, case, True).hazards
    assert any(h.offset == off and f"R{reg} while the instruction at 0x{ins[first][0]:04x}" in h.message
               for h in hazards), [str(h) for h in hazards]
