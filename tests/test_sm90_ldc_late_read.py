"""sm_90 LDC with a register index reads its index after issue, and a later LDC does not show
that it has (hopper.json `late_source_reads` + `unordered_late_reads`): the H200
(docs/gpu/2026-11-26-h200-sm90-run2.md) got 30 lanes of cuda/constant_mem wrong where our
cubin overwrote an indexed LDC's address with the next LDC. The emulator's hazard check must
flag that cubin, ptxas's must stay clean, and ours must wait on the LDC's read scoreboard."""
import copy
import json

import pytest

from ptx2sass import codegen
from ptx2sass.sched.latency import model_for
from tools.emu_testing import CUDA_DIR, cuda_reference_module, run_cuda_launch


def _entry():
    manifest = json.loads((CUDA_DIR / "manifest.json").read_text())
    entries = manifest if isinstance(manifest, list) else manifest.get("launches", manifest.get("entries"))
    return next(e for e in entries if e["name"] == "constant_mem")


def _compile(ldc_late: bool):
    """Our sm_90 compiler; `ldc_late=False`: control codes from a model that believes LDC
    reads its index at issue (what main emitted before the fix)."""
    import ptx2sass

    def compile_(ptx, name):
        if ldc_late:
            return ptx2sass.compile(ptx, "sm_90", name)
        real = codegen.assign_controls

        def early(slots, lat=None, **options):
            lat = copy.copy(lat or model_for("sm_90"))
            lat.LATE_SOURCE_READS = lat.LATE_SOURCE_READS - {"LDC"}
            return real(slots, lat, **options)
        codegen.assign_controls = early
        try:
            return ptx2sass.compile(ptx, "sm_90", name)
        finally:
            codegen.assign_controls = real
    return compile_



def test_hopper_table_lists_ldc():
    lat = model_for("sm_90")
    assert "LDC" in lat.LATE_SOURCE_READS and "LDC" in lat.UNORDERED_LATE_READS
    lat89 = model_for("sm_89")        # ptxas's sm_8x cubins obey it too (ampere.json's evidence)
    assert "LDC" in lat89.LATE_SOURCE_READS and "LDC" in lat89.UNORDERED_LATE_READS


def test_ptxas_cubin_is_clean():
    res = run_cuda_launch(_entry(), cuda_reference_module(), arch="sm_90")
    assert res.passed, res.reason
    assert not res.result.hazards, [str(h) for h in res.result.hazards[:3]]


def _run_with_later_ldc(unordered: bool):
    """ptxas's sm_90 cubin with a later LDC writing the index of the indexed `LDC R11,
    c[0x3][R8+0x14]` one cycle after it, without a wait (a mutation of the IMAD.WIDE that
    follows, so the kernel still runs); `unordered=False`: with a model where a later LDC
    shows the earlier one has read its index."""
    from dataclasses import replace
    from ptx2sass import oracle
    from ptx2sass.emu.hazards import TimingModel
    from ptx2sass.emu.launch import Launch
    from ptx2sass.emu.loader import load_program
    from ptx2sass.encoder.model import ConstRef, Reg
    from tools.emu_testing import cubin_listing_decoder
    entry = _entry()
    cubin = oracle.ptxas((CUDA_DIR / entry["ptx"]).read_text(), "sm_90", name=entry["ptx"]).output
    program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
    listing = list(program.instructions)
    k = next(i for i, (_, ins) in enumerate(listing)
             if ins.opcode == "LDC" and any(isinstance(o, ConstRef) and o.ureg is not None and o.ureg.index == 8
                                            for o in ins.operands))
    off, nxt = listing[k + 1]
    listing[k + 1] = (off, replace(nxt, opcode="LDC", modifiers=(), operands=(Reg("R", 8), ConstRef(0, 0x228)),
                                   control=replace(nxt.control, wait=0)))
    program.instructions = listing
    ref = cuda_reference_module()
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"])
    timing = TimingModel(launch)
    if not unordered:
        timing.lat = copy.copy(timing.lat)
        timing.lat.UNORDERED_LATE_READS = frozenset()
    launch.timing_model = timing
    from ptx2sass.emu.launch import Param
    placed = {n: launch.gmem.allocate(n, a.nbytes, a.tobytes()) for n, a in ref.make_inputs(entry).items()}
    launch.set_params([Param(buffer=p["buffer"]) if "buffer" in p else Param(type=p["type"], value=p["value"])
                       for p in entry["params"]], placed)
    launch.run()
    return [str(h) for h in timing.hazards]


def test_emulator_flags_index_overwritten_by_a_later_ldc():
    flagged = _run_with_later_ldc(unordered=True)
    assert [h for h in flagged if "may still read" in h or "no read scoreboard" in h], flagged[:3]
    assert not _run_with_later_ldc(unordered=False)      # the later LDC is what the rule is about


def test_our_cubin_waits_for_the_ldc_read():
    res = run_cuda_launch(_entry(), cuda_reference_module(), compiler=_compile(True), arch="sm_90")
    assert res.passed, res.reason
    assert not res.result.hazards, [str(h) for h in res.result.hazards[:3]]
