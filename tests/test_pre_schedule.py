"""Scheduling before allocation (sched/pre_schedule): the dependences it may reorder across,
and the blocks whose source order needs more registers than the file has.

tinygrad writes unrolled kernels that load every operand first and then run hundreds of
FMAs; in that order the values alone need more than 255 registers. ptxas interleaves the
loads with their readers and spills nothing; so must we, and the reordered code must still
give ptxas's outputs bit for bit."""
import re

import pytest

from codegen_harness import assert_tinygrad_matches_ptxas
from ptx2sass import codegen, oracle
from tools.emu_testing import TINYGRAD_DIR, tinygrad_manifest
from ptx2sass.mir import MInstr, VMem, VOp, VReg
from ptx2sass.sched import pre_schedule

# --- the dependence graph --------------------------------------------------------------------

_REGS = [VReg(i, "R", 2 if i >= 100 else 1) for i in range(200)]


def _load(dst: int, base: int, *modifiers: str) -> MInstr:
    return MInstr("LDG", ("E", *modifiers), [VOp(_REGS[dst]), VMem(VOp(_REGS[base]))], ndefs=1)


def _store(base: int, src: int) -> MInstr:
    return MInstr("STG", ("E",), [VMem(VOp(_REGS[base])), VOp(_REGS[src])], ndefs=0)


def _ordered_pairs(region: list[MInstr], loads_pass: bool) -> set[tuple[int, int]]:
    """(a, b) for every pair where b must follow a (transitively)."""
    succs, _ = pre_schedule._dependences(region, {r.id: "R" for r in _REGS}, loads_pass,
                                         pre_schedule.latency_model("ampere"))
    after = [set() for _ in region]
    for a in range(len(region) - 1, -1, -1):
        for b, _ in succs[a]:
            after[a] |= {b} | after[b]
    return {(a, b) for a in range(len(region)) for b in after[a]}


# loads of independent addresses: 0, 1 plain; 2 strong (ld.volatile); 3 plain; a store; 5 plain
_MEMORY_REGION = [_load(1, 101), _load(2, 102), _load(3, 103, "STRONG", "SYS"), _load(4, 104),
                  _store(105, 1), _load(6, 106)]


def test_plain_loads_pass_each_other_when_scheduling_for_pressure():
    pairs = _ordered_pairs(_MEMORY_REGION, loads_pass=True)
    assert (0, 1) not in pairs and (1, 0) not in pairs
    assert {(0, 2), (1, 2)} <= pairs           # a strong load orders the loads before it
    assert (2, 3) in pairs                     # ... and after it
    assert {(0, 4), (1, 4), (3, 4)} <= pairs   # a store follows every load before it
    assert (4, 5) in pairs                     # ... and every load after it waits for it
    assert (0, 4) in pairs and (4, 0) not in pairs


def test_memory_keeps_its_order_when_scheduling_for_latency():
    pairs = _ordered_pairs(_MEMORY_REGION, loads_pass=False)
    assert {(i, j) for i in range(6) for j in range(i + 1, 6)} <= pairs


# --- kernels whose source order needs more than the register file ----------------------------

_HIGH_PRESSURE = ["conv2d_f32_1x1__r_4_2_8_16_4_4_32.ptx", "matmul_f32_tall__r_8_32_2_4_4_32.ptx",
                  "matmul_f16_tc_shape_only__r_32_2_2_2_4_4_4_2_2_2_2.ptx"]
_PTXAS_PROPERTIES = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads\n.*Used (\d+) registers")


def _entry(name: str) -> dict:
    if not (TINYGRAD_DIR / "manifest.json").is_file():
        pytest.skip("no tinygrad corpus")
    return next(k for k in tinygrad_manifest() if k["file"] == name)


@pytest.mark.parametrize("name", _HIGH_PRESSURE)
def test_high_pressure_kernel_needs_no_spill_and_matches_ptxas(name):
    entry = _entry(name)
    ptx = (TINYGRAD_DIR / name).read_text()
    run = oracle.ptxas(ptx, "sm_89", options=("-v",), name=name)
    stores, loads, ptxas_registers = map(int, _PTXAS_PROPERTIES.search(run.stderr).groups())
    assert stores == loads == 0, "the premise: ptxas needs no spill here"
    report: dict = {}
    cubin, codes = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", name), "sm_89",
                                           {"spill_report": report}, name)
    assert report[entry["entry"]] == (0, 0)
    # the source order needs over 255; ptxas takes 64-254 for these (we: 86, 86, 241)
    assert codes[0].regcount <= max(1.5 * ptxas_registers, 96)
    assert_tinygrad_matches_ptxas(entry, cubin)


# --- work that grows with the block, not with its square ---------------------------------

def _compares_beside_adds(n: int) -> tuple[list[MInstr], dict[int, str], set[int]]:
    """Eight compares whose predicates live past the region (the predicate file fills after
    six) and n independent adds, all ready from the start."""
    preds = [VReg(1000 + i, "P", 1) for i in range(8)]
    regs = [VReg(i, "R", 1) for i in range(2 * n + 8)]
    region = [MInstr("ISETP", ("GE", "AND"), [VOp(p), VOp(regs[i])], ndefs=1)
              for i, p in enumerate(preds)]
    region += [MInstr("FADD", (), [VOp(regs[8 + 2 * i]), VOp(regs[9 + 2 * i]), VOp(regs[0])],
                      ndefs=1) for i in range(n)]
    vfile = {**{r.id: "R" for r in regs}, **{p.id: "P" for p in preds}}
    return region, vfile, {p.id for p in preds}


def test_predicate_aware_choice_is_linear_in_the_region(monkeypatch):
    """With the predicate file full, each step looked at every ready instruction and walked
    its operands (sin's software path, 3k instructions: 25 of 46 profiled seconds went
    there). Counted, not timed: the operand walks for 4x the region stay near 4x."""
    calls = [0]
    real = pre_schedule.register_operands

    def counting(ins):
        calls[0] += 1
        return real(ins)
    monkeypatch.setattr(pre_schedule, "register_operands", counting)
    counts = []
    for n in (100, 400):
        region, vfile, live_after = _compares_beside_adds(n)
        calls[0] = 0
        order = pre_schedule._schedule_region(region, vfile, pre_schedule.latency_model("ampere"),
                                              live_after)
        counts.append(calls[0])
        assert sorted(map(id, order)) == sorted(map(id, region))
    assert counts[1] <= 4.5 * counts[0], counts


def _shared_store(base: int, src: int) -> MInstr:
    return MInstr("STS", (), [VMem(VOp(_REGS[base])), VOp(_REGS[src])], ndefs=0)


def test_accesses_of_disjoint_spaces_may_pass_each_other():
    # a global load, a shared store, a global load, a generic load, a strong global load
    region = [_load(1, 101), _shared_store(102, 1), _load(3, 103),
              MInstr("LD", ("E",), [VOp(_REGS[4]), VMem(VOp(_REGS[104]))], ndefs=1),
              _load(5, 105, "STRONG", "GPU")]
    pairs = _ordered_pairs(region, loads_pass=False)
    assert (1, 2) not in pairs and (2, 1) not in pairs     # LDG and STS: disjoint windows
    assert (1, 3) in pairs                                  # a generic load may read shared memory
    assert {(0, 4), (1, 4), (2, 4), (3, 4)} <= pairs        # a strong access meets every space


def test_implicit_def_opens_its_live_range_just_before_its_first_writer():
    """An IMPLICIT_DEF has no sources; scheduled by latency it went first and kept its pair
    live across the whole region (local_histogram: 135 registers at once, 81 without)."""
    from ptx2sass.mir import IMPLICIT_DEF
    pair = _REGS[150]
    region = [_load(1, 101), _load(2, 102), MInstr("IADD3", (), [VOp(_REGS[3]), VOp(_REGS[1]), VOp(_REGS[2])], ndefs=1),
              MInstr(IMPLICIT_DEF, (), [VOp(pair)], ndefs=1),
              MInstr("MOV", (), [VOp(pair, 0), VOp(_REGS[3])], ndefs=1),
              MInstr("MOV", (), [VOp(pair, 1), VOp(_REGS[3])], ndefs=1),
              _store(150, 3)]
    out = pre_schedule._schedule_region(region, {r.id: "R" for r in _REGS},
                                        pre_schedule.latency_model("ampere"))
    assert sorted(map(id, out)) == sorted(map(id, region))
    k = out.index(region[3])
    assert out[k + 1].opcode == "MOV" and out[k + 1].operands[0].reg is pair
    assert out.index(region[2]) < k            # not hoisted above the work before its writers


# --- registers the latency order may add -----------------------------------------------------

@pytest.mark.xfail(strict=True, reason="the latency order holds both rows' chains at once: 30 "
                   "registers, ptxas 26 (open: issue 20, branch quality10's rows in docs/STATUS.md)")
def test_int64_rows_registers_at_most_ptxas():
    """Triton's int64_rows runs two 64-bit chains (x * (2^32+1) >> 7, x / 13, |x|, x >> 3) on two
    loaded rows: the source order needs 22 registers before allocation, the latency order, both
    chains issued at once, 32 (30 allocated; ptxas 26)."""
    from ptx2sass.encoder.cubin import read_cubin
    from tools.corpora import corpus_dirs
    ptx = (corpus_dirs()["triton"] / "int64_rows.ptx").read_text()
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "int64_rows.ptx"), "sm_89",
                                      filename="int64_rows.ptx")
    theirs = oracle.ptxas(ptx).output
    count = lambda cubin: [k.regcount for k in read_cubin(cubin).kernels if k.name == "int64_rows"][0]  # noqa: E731
    assert count(ours) <= count(theirs), (count(ours), count(theirs))
