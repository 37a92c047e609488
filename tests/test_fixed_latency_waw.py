"""A fixed-latency result still on its way must land before a later write of the same register
(WAW across pipes). On an H200 (GPU runs 21-23, docs/gpu/2026-11-27-h200-sm90-run21.md) five of
our sm_90 cubins went wrong where an MMA's unread result (HMMA/IMMA/BMMA: 16-24 cycles) was
overwritten 1-9 cycles after the MMA issued by an ALU result into the same register: the MMA's
result landed afterwards (fuzz 9400186 hung: its loop counter was such a register; the
hmma_f32_probe program raised ILLEGAL_INSTRUCTION; 9400163/333 faulted on addresses; 9400354
gave wrong words). The same programs compiled before quality8's per-part register colouring
ran right on the same GPU: that colouring reuses a dead MMA result's registers at once.
`sched.control` now delays such a write; the emulator's hazard checker flags it."""
from ptx2sass.encoder.model import Instruction
from ptx2sass.sched.control import Slot, assign_controls
from ptx2sass.sched.latency import model_for


def _issue_cycles(slots):
    out, t = {}, 0
    for s in slots:
        out[id(s)] = t
        t += s.stall
    return out


def _mma_then_overwrite(arch: str, mma: Instruction, writer: Instruction):
    quad = [("R", 4 + k) for k in range(4)]
    first = Slot(mma, reads=[("R", 8 + k) for k in range(8)], writes=quad)
    second = Slot(writer, reads=[("R", 20)], writes=[("R", 5)])
    slots = assign_controls([first, second], model_for(arch))
    at = _issue_cycles(slots)
    return at[id(second)] - at[id(first)]


def test_alu_write_into_an_unread_hmma_result_waits_for_it_to_land():
    lat = model_for("sm_90")
    hmma = Instruction("HMMA", ("16816", "F32"))
    lop = Instruction("LOP3", ("LUT",))
    gap = _mma_then_overwrite("sm_90", hmma, lop)
    assert gap + lat.result_lands("LOP3", ("LUT",)) >= lat.result_lands("HMMA", ("16816", "F32"))
    assert gap > 1


def test_same_pipe_rewrite_needs_no_delay():
    """Two ALU results in issue order land in that order: no extra stall."""
    lat = model_for("sm_90")
    first = Slot(Instruction("IADD3"), reads=[("R", 1)], writes=[("R", 4)])
    second = Slot(Instruction("LOP3", ("LUT",)), reads=[("R", 2)], writes=[("R", 4)])
    slots = assign_controls([first, second], lat)
    assert [s.ins.opcode for s in slots] == ["IADD3", "LOP3"] and slots[0].stall == 1


def test_ptxas_distance_is_accepted():
    """ptxas's own sm_90 code (fuzz 9400186): PRMT R21 12 cycles after `HMMA.1684.F32.TF32 R20`
    whose result is never read; the H200 ran it right, so 12 must be enough for the model."""
    lat = model_for("sm_90")
    mods = ("1684", "F32", "TF32")
    assert 12 + lat.result_lands("PRMT") >= lat.result_lands("HMMA", mods)


def test_ptxas_distances_after_two_pass_mmas_are_accepted():
    """ptxas's sm_90 cubins of fuzz 25000799 / 25000898 (campaign 13): an ALU write 12 cycles
    after an HMMA.16816.F32 and 17 after an IMMA.16832 into a register of the MMA's unread
    result (`mma_result_write_early`); and the H200's failures stay flagged: 7 cycles after
    an HMMA.16816.F32 (run 21, 9400163)."""
    lat = model_for("sm_90")
    assert 12 + lat.result_lands("LOP3", ("LUT",)) >= lat.result_lands("HMMA", ("16816", "F32"))
    assert 17 + lat.result_lands("IADD3") >= lat.result_lands("IMMA", ("16832", "S8", "S8"))
    assert 7 + lat.result_lands("IADD3") < lat.result_lands("HMMA", ("16816", "F32"))


def test_single_pass_mma_result_lands_at_its_fixed_latency():
    """GPU run 24 (H200): 9400186's `HMMA.1684.F32.TF32 R60` result, unread, landed over a
    `LOP3 R60` issued 4 cycles after it (240 words wrong) although the two-pass MMAs' early
    landing allowed it; a single-pass MMA's result counts as landing at its fixed latency."""
    lat = model_for("sm_90")
    mods = ("1684", "F32", "TF32")
    assert lat.mma_single_pass("HMMA", mods)
    assert lat.result_lands("HMMA", mods) == lat.fixed_latency("HMMA", mods)
    assert 4 + lat.result_lands("LOP3", ("LUT",)) < lat.result_lands("HMMA", mods)
