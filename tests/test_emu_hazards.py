"""The hazard checker: silent on ptxas's own cubins, and it catches hazards planted into
them (a stall count lowered below a producer's latency, a scoreboard wait dropped)."""
from dataclasses import replace

import pytest

from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.loader import load_program
from ptx2sass.emu.hazards import TimingModel
from tools.emu_testing import cubin_listing_decoder, run_zluda, zluda_cubin, zluda_manifest
from ptx2sass.sched.latency import model_for

ENTRIES = {e["name"]: e for e in zluda_manifest()}
SAMPLE = ["add", "call", "fma", "popc_b64", "rcp_f64", "shfl_sync_mode_b32", "shared_unify_extern",
          "bar_red_and_pred", "mma_m16n8k16_f32_f16_f16_f32", "div_noftz", "atom_add", "vote_all_sub"]


@pytest.mark.parametrize("name", SAMPLE)
def test_no_hazards_in_ptxas_cubins(name):
    outcome = run_zluda(ENTRIES[name], hazard_check=True)
    assert outcome.passed, outcome.reason
    assert outcome.result.hazards == [], [str(h) for h in outcome.result.hazards]
    assert outcome.result.cycles > 0


def _run_mutated(name, mutate):
    """Run a zluda kernel with `mutate(instructions)` applied; return its hazards."""
    entry = ENTRIES[name]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
    program.instructions = mutate(list(program.instructions))
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"])
    launch.timing_model = TimingModel(launch)
    buffers = {}
    if entry["input"] is not None:
        buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"], bytes.fromhex(entry["input"]["hex"]))
    buffers["output"] = launch.gmem.allocate("output", entry["output_alloc_bytes"])
    launch.set_params([Param(buffer=p) for p in entry["params"]], buffers)
    launch.run()
    return launch.timing_model.hazards


def _with_control(ins_list, offset, **changes):
    return [(off, replace(ins, control=replace(ins.control, **changes)) if off == offset else ins)
            for off, ins in ins_list]


def _consumers_of_waits(name):
    entry = ENTRIES[name]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
    return [(off, ins) for off, ins in program.instructions if ins.control.wait]


@pytest.mark.parametrize("name", ["add", "popc_b64", "shfl_sync_mode_b32", "rcp_f64"])
def test_dropped_wait_is_caught(name):
    """Every wait mask in these kernels guards a read of a scoreboarded result (or a
    register a store still reads): clearing it must produce a hazard at that instruction."""
    caught = 0
    waits = _consumers_of_waits(name)
    assert waits
    for off, ins in waits:
        hazards = _run_mutated(name, lambda l: _with_control(l, off, wait=0))
        if any(h.offset >= off for h in hazards):
            caught += 1
    assert caught >= 1
    # The first consumer of a load's scoreboard is always caught.
    off = waits[0][0]
    hazards = _run_mutated(name, lambda l: _with_control(l, off, wait=0))
    assert any("without waiting on scoreboard" in h.message or "may still" in h.message for h in hazards), \
        [str(h) for h in hazards]


def test_lowered_stall_is_caught():
    """`add`: IADD3 R6, P0, ... (stall 5) feeds IMAD.X's carry P0: with stall 1 the carry is
    read before the fixed latency has passed."""
    entry = ENTRIES["add"]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, "add", cubin_listing_decoder(cubin))
    iadd = next(off for off, ins in program.instructions if ins.opcode == "IADD3")
    assert not _run_mutated("add", lambda l: l)
    hazards = _run_mutated("add", lambda l: _with_control(l, iadd, stall=1))
    assert any(h.offset == iadd + 16 and "P0" in h.message for h in hazards), [str(h) for h in hazards]


def test_lowered_stalls_in_fma_are_caught():
    """Lower each stall of `fma` to 1 in turn: whenever that puts a consumer closer to its
    fixed-latency producer than the table allows, a hazard is reported."""
    entry = ENTRIES["fma"]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, "fma", cubin_listing_decoder(cubin))
    caught = 0
    for off, ins in program.instructions:
        if ins.control.stall > model_for("sm_89").DEFAULT_FIXED and ins.opcode not in ("EXIT", "BRA", "NOP"):
            if _run_mutated("fma", lambda l: _with_control(l, off, stall=1)):
                caught += 1
    assert caught >= 1


# Kernels (codegen_harness bodies: inputs %a0.., output %o) in which ptxas relies on a
# distance or an ordering the checker wrongly flagged; each names the pair.
PTXAS_SCHEDULES = {
    # HFMA2's result read by HADD2 4 cycles later
    "hfma2_to_hadd2": ("fma.rn.f16x2 %x0, %a0, %a1, %a0; add.f16x2 %o, %x0, %a1;", 32, 2, 32),
    # HMUL2's result read by HADD2 4 cycles later (campaign 9 seed 20000273: HMUL2.FTZ then
    # HADD2.FTZ -R.H0_H0, -RZ.H0_H0 at 4)
    "hmul2_to_hadd2": ("{ .reg .b16 %h<4>; mul.f16x2 %x0, %a0, %a1; mov.b32 {%h0, %h1}, %x0;"
                       "add.f16 %h2, %h0, %h1; neg.f16 %h3, %h0; mov.b32 %o, {%h2, %h3}; }", 32, 2, 32),
    # CS2R R, SR_CLOCKLO stored 5 cycles later
    "cs2r_to_stg": ("mov.u64 %rd3, %clock64; st.global.u64 [%rd4], %rd3; mov.u64 %o, 1;", 64, 2, 64),
    # F2I without a scoreboard overwritten by a guarded F2I of the same in-order unit
    "f2i_write_after_write": ("cvt.u32.u64 %x0, %a0; cvt.u32.u64 %x1, %a1; setp.lt.u32 %p0, %x0, %x1;"
                              "cvt.rzi.s32.f32 %x2, %x0; @%p0 cvt.rmi.s32.f32 %x2, %x1; cvt.u64.u32 %o, %x2;",
                              64, 2, 64),
    # UIADD3.X's result read by UIMAD.WIDE.U32 4 cycles later (registers never written are
    # warp-uniform to ptxas, which computes on them in the uniform datapath)
    "uiadd3_to_uimad": ("add.cc.u32 %x0, %x0, %x1; addc.u32 %x1, %x1, %x0; mad.lo.cc.u32 %x2, %x0, %x1, %x0;"
                        "madc.hi.u32 %x3, %x0, %x1, %x1; cvt.u64.u32 %o, %x3; add.u64 %o, %o, %a0;", 64, 2, 64),
    # UISETP's predicate guarding a uniform instruction 11 cycles later
    "uisetp_to_uniform_guard": ("ld.param.u64 %rd3, [in]; cvt.u32.u64 %x0, %rd3; ld.param.u64 %rd5, [out];"
                                "cvt.u32.u64 %x1, %rd5; vabsdiff.u32.u32.u32.add %x2, %x0, %x1, %x0;"
                                "cvt.u64.u32 %rd3, %x2; add.s64 %o, %a0, %rd3;", 64, 1, 64),
    # USEL's result read by UIMAD 4 cycles later (`USEL UR4, UR5, 0x4d, !UP0` then
    # `UIMAD UR4, UR4, UR6, UR5`: selp then mad.lo of parameters)
    "usel_to_uimad": ("ld.param.u64 %rd3, [in]; cvt.u32.u64 %x0, %rd3; ld.param.u64 %rd5, [out];"
                      "cvt.u32.u64 %x1, %rd5; setp.lt.u32 %p0, %x0, %x1; selp.b32 %x2, %x0, 77, %p0;"
                      "mad.lo.u32 %x3, %x2, %x1, %x0; cvt.u64.u32 %rd3, %x3; add.s64 %o, %a0, %rd3;", 64, 1, 64),
    # ULOP3's result read by UIMAD 4 cycles later (xor of parameters, then mad.lo)
    "ulop3_to_uimad": ("ld.param.u64 %rd3, [in]; cvt.u32.u64 %x0, %rd3; ld.param.u64 %rd5, [out];"
                       "cvt.u32.u64 %x1, %rd5; xor.b32 %x2, %x0, %x1; mad.lo.u32 %x3, %x2, %x1, %x0;"
                       "cvt.u64.u32 %rd3, %x3; add.s64 %o, %a0, %rd3;", 64, 1, 64),
}


@pytest.mark.parametrize("name", list(PTXAS_SCHEDULES))
def test_ptxas_schedules_the_checker_once_flagged(name):
    """Zero hazards on ptxas's cubins where it relies on these distances and orders (each
    latency set to ptxas's own distance, not loosened beyond it)."""
    import numpy as np
    from codegen_harness import inputs, kernel
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    body, ib, n, ob = PTXAS_SCHEDULES[name]
    run_ = oracle.ptxas(kernel(body, ib, n, ob))
    assert run_.ok, run_.stderr
    out = np.zeros(64, dtype={32: np.uint32, 64: np.uint64}[ob])
    res = run(run_.output, "k", 1, 64, [out, inputs(ib, n)])
    assert res.hazards == [], [str(h) for h in res.hazards]


def test_facts_follow_the_model_that_judges():
    """The checker keeps what it works out per instruction on the decoded program: a second
    launch of the same program judged by another latency model (a subclass's `self.lat`,
    as tests/test_sm8x_h200_rules.py swaps in) must use that model's facts, not the first's.
    Here the other model makes every opcode one issue group taking one instruction per 64
    cycles; ptxas's stalls are at most 15, so each later instruction is flagged."""
    import copy

    entry = ENTRIES["add"]

    class OneGroup(TimingModel):
        def __init__(self, launch):
            super().__init__(launch)
            self.lat = copy.copy(self.lat)
            self.lat.ISSUE_INTERVAL = {ins.opcode: (0, 64) for _, ins in launch.program.instructions}

    def program():
        cubin = zluda_cubin(entry)
        return load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))

    fresh = run_zluda(entry, hazard_check=True, program=program(), timing=OneGroup).result.hazards
    assert fresh and all("it takes one every 64" in h.message for h in fresh)
    shared = program()
    assert run_zluda(entry, hazard_check=True, program=shared).result.hazards == []
    assert run_zluda(entry, hazard_check=True, program=shared, timing=OneGroup).result.hazards == fresh
    assert run_zluda(entry, hazard_check=True, program=shared).result.hazards == []
